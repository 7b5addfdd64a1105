"""KIP-875 for sinks in ``mm2 connect``: a FileStreamSink's offsets are its consumer group's. Read over
HTTP, one partition PATCHed back by N records while STOPPED: exactly those N lines are written again on
resume; DELETEd: everything is written again. Mistakes get Java's error bodies. Standalone, and two
distributed workers (the PATCH sent to the follower, which forwards it; the group named by
``consumer.override.group.id``)."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import group_offsets
from tests.e2e.test_connect_distributed import Cluster, http
from tests.e2e.test_connect_distributed import wait_for as wait_distributed
from tests.e2e.test_connect_standalone_cli import mm2, wait_running

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(400)]

WAIT_S = 120.0
#: Java's REST request timeout: a distributed worker answers a change once its herder thread (busy in a
#: rebalance, say) has served it.
REQUEST_TIMEOUT_S = 90.0
PER_PARTITION = 20
REWIND = 5
NOT_STOPPED = "either because its tasks haven't stopped completely yet"


def _http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    return http(method, url, body, timeout=REQUEST_TIMEOUT_S)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _until(what: str, check: Callable[[], Any], proc: subprocess.Popen[Any] | None) -> Any:
    deadline = time.monotonic() + WAIT_S
    last: Any = None
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"mm2 exited early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        try:
            last = check()
        except OSError as e:  # a busy worker's answer late: asked again
            last = e
        if last and not isinstance(last, OSError):
            return last
        time.sleep(0.3)
    raise AssertionError(f"{what}: not in {WAIT_S}s (last: {last})")


def _offsets(topic: str, p0: int, p1: int) -> dict[str, Any]:
    return {"offsets": [
        {"partition": {"kafka_topic": topic, "kafka_partition": p}, "offset": {"kafka_offset": o}}
        for p, o in ((0, p0), (1, p1))
    ]}  # fmt: skip


def _state(base: str, name: str) -> str:
    code, body = _http("GET", f"{base}/connectors/{name}/status")
    return str(body["connector"]["state"]) if code == 200 else f"HTTP {code}"


def _modify(base: str, method: str, body: Any, proc: subprocess.Popen[str] | None) -> tuple[int, Any]:
    """PATCH/DELETE once the stopped tasks have left the group (Java answers 500 until then: retried)."""

    def attempt() -> tuple[int, Any] | None:
        code, answer = _http(method, f"{base}/connectors/files/offsets", body)
        return None if code == 500 and NOT_STOPPED in str(answer) else (code, answer)

    result: tuple[int, Any] = _until(f"{method} offsets", attempt, proc)
    return result


def _per_partition(lines: list[str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in lines:
        out.setdefault(line.split("-")[0], []).append(line)
    return out


def test_a_stopped_sinks_offsets_are_read_rewound_and_reset_over_http(
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    topic = kafka_cluster.create_topic(unique_name("sinkoff"), partitions=2)
    kafka_cluster.produce(topic, [{"value": f"p{p}-{i}", "partition": p}
                                  for i in range(PER_PARTITION) for p in range(2)])  # fmt: skip
    worker = tmp_workdir / "worker.properties"
    worker.write_text(
        f"bootstrap.servers={kafka_cluster.bootstrap_servers}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={tmp_workdir / 'offsets'}\n"
        "offset.flush.interval.ms=500\n"
        # the test bed's broker joins groups in about session.timeout.ms/2 (broker-notes.md)
        "consumer.session.timeout.ms=6000\nconsumer.heartbeat.interval.ms=1000\n"
        f"listeners=http://127.0.0.1:{port}\n"
    )
    out = tmp_workdir / "out.txt"
    sink = tmp_workdir / "sink.properties"
    sink.write_text(f"name=files\nconnector.class=FileStreamSink\ntopics={topic}\nfile={out}\ntasks.max=1\n")
    everything = sorted(f"p{p}-{i}" for i in range(PER_PARTITION) for p in range(2))
    all_committed = _offsets(topic, PER_PARTITION, PER_PARTITION)

    proc = mm2("connect", "standalone", str(worker), str(sink), cwd=tmp_workdir)
    try:
        wait_running(base, "files", proc, timeout=WAIT_S)
        _until("every record written", lambda: len(_lines(out)) >= 2 * PER_PARTITION, proc)
        assert sorted(_lines(out)) == everything
        _until("the group's offsets over GET", lambda: _http("GET", f"{base}/connectors/files/offsets")
               == (200, all_committed), proc)  # fmt: skip

        code, body = _http("PATCH", f"{base}/connectors/files/offsets", _offsets(topic, 0, 0))
        assert code == 400 and body["message"].startswith("Connectors must be in the STOPPED state"), body

        assert _http("PUT", f"{base}/connectors/files/stop")[0] == 204
        _until("STOPPED", lambda: _state(base, "files") == "STOPPED", proc)
        bad = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": "one"},
                            "offset": {"kafka_offset": 1}}]}  # fmt: skip
        assert _http("PATCH", f"{base}/connectors/files/offsets", bad) == (400, {
            "error_code": 400,
            "message": "Failed to parse the following Kafka partition value in the provided offsets: 'one'. "
                       "Partition values for sink connectors need to be integers.",
        })  # fmt: skip

        # partition 0 rewound by REWIND records; partition 1 left as it is
        rewind = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 0},
                               "offset": {"kafka_offset": PER_PARTITION - REWIND}}]}  # fmt: skip
        assert _modify(base, "PATCH", rewind, proc) == (
            200,
            {"message": "The offsets for this connector have been altered successfully"},
        )
        assert _http("GET", f"{base}/connectors/files/offsets") == (
            200,
            _offsets(topic, PER_PARTITION - REWIND, PER_PARTITION),
        )
        written = len(_lines(out))
        assert _http("PUT", f"{base}/connectors/files/resume")[0] == 202
        _until("the rewound records written again", lambda: len(_lines(out)) >= written + REWIND, proc)
        _until("caught up again", lambda: _http("GET", f"{base}/connectors/files/offsets") == (200, all_committed),
               proc)  # fmt: skip
        again = _lines(out)[written:]
        assert again == [f"p0-{i}" for i in range(PER_PARTITION - REWIND, PER_PARTITION)]

        # reset: the group is deleted, everything is written again
        assert _http("PUT", f"{base}/connectors/files/stop")[0] == 204
        _until("STOPPED", lambda: _state(base, "files") == "STOPPED", proc)
        assert _modify(base, "DELETE", None, proc) == (
            200,
            {"message": "The offsets for this connector have been reset successfully"},
        )
        assert _http("GET", f"{base}/connectors/files/offsets") == (200, {"offsets": []})
        written = len(_lines(out))
        assert _http("PUT", f"{base}/connectors/files/resume")[0] == 202
        _until("everything written again", lambda: len(_lines(out)) >= written + 2 * PER_PARTITION, proc)
        _until("caught up again", lambda: _http("GET", f"{base}/connectors/files/offsets") == (200, all_committed),
               proc)  # fmt: skip
        again = _lines(out)[written:]
        assert sorted(again) == everything
        assert _per_partition(again) == {f"p{p}": [f"p{p}-{i}" for i in range(PER_PARTITION)] for p in range(2)}
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    # nothing more than the two deliveries asked for
    assert len(_lines(out)) == 2 * PER_PARTITION + REWIND + 2 * PER_PARTITION


def test_distributed_workers_forward_a_sinks_offset_changes_to_the_leader(
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    prefix = unique_name("dsinkoff")
    topics = (f"{prefix}-configs", f"{prefix}-offsets", f"{prefix}-status")
    topic = kafka_cluster.create_topic(unique_name("dsinkoff-in"), partitions=2)
    group = unique_name("own-group")
    kafka_cluster.produce(topic, [{"value": f"p{p}-{i}", "partition": p}
                                  for i in range(PER_PARTITION) for p in range(2)])  # fmt: skip
    out = tmp_workdir / "out.txt"
    c = Cluster(kafka_cluster, tmp_workdir, topics[2])
    for _ in range(2):
        w = c.add_worker(prefix, topics)
        with w.props_file.open("a") as f:  # the test bed's broker joins groups in about session.timeout.ms/2
            f.write("consumer.session.timeout.ms=6000\nconsumer.heartbeat.interval.ms=1000\n")
    all_committed = _offsets(topic, PER_PARTITION, PER_PARTITION)
    try:
        for w in c.workers:
            w.start()
        for w in c.workers:
            wait_distributed(f"worker {w.port} REST", w.ready, WAIT_S)
        config = {"connector.class": "FileStreamSink", "tasks.max": "2", "topics": topic, "file": str(out),
                  "consumer.override.group.id": group}  # fmt: skip
        code, body = wait_distributed(
            "create",
            lambda: (lambda r: r if r[0] != 409 else None)(
                _http("POST", f"{c.workers[0].base}/connectors", {"name": "files", "config": config})
            ),
            WAIT_S,
        )
        assert code == 201, body
        _until("every record written", lambda: len(_lines(out)) >= 2 * PER_PARTITION, None)
        leader = c.leader()
        follower = next(w for w in c.workers if w is not leader)
        _until("the group's offsets over GET", lambda: _http("GET", f"{follower.base}/connectors/files/offsets")
               == (200, all_committed), None)  # fmt: skip

        assert _http("PUT", f"{follower.base}/connectors/files/stop")[0] == 204
        _until("STOPPED", lambda: _state(follower.base, "files") == "STOPPED", None)
        rewind = {"offsets": [{"partition": {"kafka_topic": topic, "kafka_partition": 1},
                               "offset": {"kafka_offset": PER_PARTITION - REWIND}}]}  # fmt: skip
        assert _modify(follower.base, "PATCH", rewind, None) == (
            200,
            {"message": "The offsets for this connector have been altered successfully"},
        )
        assert group_offsets(kafka_cluster, group, topic, 2) == {0: PER_PARTITION, 1: PER_PARTITION - REWIND}
        written = len(_lines(out))
        assert _http("PUT", f"{follower.base}/connectors/files/resume")[0] == 202
        _until("the rewound records written again", lambda: len(_lines(out)) >= written + REWIND, None)
        _until("caught up again", lambda: _http("GET", f"{leader.base}/connectors/files/offsets")
               == (200, all_committed), None)  # fmt: skip
        assert _lines(out)[written:] == [f"p1-{i}" for i in range(PER_PARTITION - REWIND, PER_PARTITION)]

        assert _http("PUT", f"{leader.base}/connectors/files/stop")[0] == 204
        _until("STOPPED", lambda: _state(leader.base, "files") == "STOPPED", None)
        assert _modify(follower.base, "DELETE", None, None) == (
            200,
            {"message": "The offsets for this connector have been reset successfully"},
        )
        assert _http("GET", f"{follower.base}/connectors/files/offsets") == (200, {"offsets": []})
        written = len(_lines(out))
        assert _http("PUT", f"{leader.base}/connectors/files/resume")[0] == 202
        _until("everything written again", lambda: len(_lines(out)) >= written + 2 * PER_PARTITION, None)
        _until("caught up again", lambda: _http("GET", f"{leader.base}/connectors/files/offsets")
               == (200, all_committed), None)  # fmt: skip
        again = _lines(out)[written:]
        assert _per_partition(again) == {f"p{p}": [f"p{p}-{i}" for i in range(PER_PARTITION)] for p in range(2)}
        assert len(_lines(out)) == 2 * PER_PARTITION + REWIND + 2 * PER_PARTITION
        for w in c.workers:
            assert "Traceback" not in w.log_file.read_text(errors="replace")
    finally:
        c.stop_all()
