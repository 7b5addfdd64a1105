"""``mm2 connect distributed`` with ``exactly.once.source.support=enabled``: a FileStreamSource connector
with ``transaction.boundary=interval`` commits where it says.

One worker (the CLI, as a subprocess) tails a file that the test appends a line to every 100 ms. The
topic is read with the suite's read_committed reader (it applies the transaction markers itself):
records wait in an open transaction - written to the topic but not readable - until the interval's
commit makes a whole run of polls visible at once. Commits are never closer than the interval, so
``n`` transactions whose records were polled over ``span`` seconds satisfy ``n < span / interval + 2``,
and a transaction holds records polled more than a second apart (several polls); every line is on the
topic exactly once, in order, and the offset committed with the last transaction is the end of the file.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port, unique_name
from tests.e2e.test_connect_distributed import WorkerProc, http, wait_for
from tests.oracle.committed_reader import PartitionLog, read_topic_committed

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

INTERVAL_MS = 3000
LINE_EVERY_S = 0.1
COMMITS = 3  # the writer goes on until this many transactions committed


@pytest.fixture
def eos_worker(kafka_cluster: KafkaCluster, tmp_workdir: Path) -> Iterator[tuple[WorkerProc, str]]:
    prefix = unique_name("eosdist")
    port = free_port()
    props = tmp_workdir / "worker.properties"
    props.write_text(
        f"bootstrap.servers={kafka_cluster.bootstrap_servers}\ngroup.id={prefix}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"config.storage.topic={prefix}-configs\noffset.storage.topic={prefix}-offsets\n"
        f"status.storage.topic={prefix}-status\n"
        "config.storage.replication.factor=-1\noffset.storage.replication.factor=-1\n"
        "status.storage.replication.factor=-1\n"
        # Tansu holds every group join for half the session timeout (broker-notes.md)
        "session.timeout.ms=6000\nheartbeat.interval.ms=1000\n"
        f"listeners=http://127.0.0.1:{port}\n"
        "exactly.once.source.support=enabled\n"  # what the test is about
    )
    worker = WorkerProc(port, props, tmp_workdir / "worker.log")
    worker.start()
    try:
        wait_for("the worker's REST API", worker.ready, 90)
        yield worker, f"{prefix}-offsets"
    finally:
        assert worker.proc is not None
        worker.proc.terminate()
        try:
            worker.proc.wait(30)
        except Exception:
            worker.proc.kill()
            worker.proc.wait(5)


def commits(log: PartitionLog) -> list[int]:
    return [offset for offset, _pid, commit in log.markers if commit]


def test_interval_boundary_commits_a_run_of_polls_every_interval(
    eos_worker: tuple[WorkerProc, str], kafka_cluster: KafkaCluster, tmp_workdir: Path
) -> None:
    worker, offsets_topic = eos_worker
    topic = unique_name("lines")
    kafka_cluster.create_topic(topic, 1)
    source = tmp_workdir / "input.txt"
    source.write_text("")
    config = {
        "connector.class": "FileStreamSource",
        "file": str(source),
        "topic": topic,
        "tasks.max": "1",
        "exactly.once.support": "required",
        "transaction.boundary": "interval",
        "transaction.boundary.interval.ms": str(INTERVAL_MS),
    }
    code, body = http("PUT", f"{worker.base}/connectors/lines/config", config, timeout=60)
    assert code == 201, body

    def task_running() -> bool:
        code, st = http("GET", f"{worker.base}/connectors/lines/status")
        return code == 200 and [t["state"] for t in st["tasks"]] == ["RUNNING"]

    wait_for("the connector's task running", task_running, 90)

    def log() -> PartitionLog:
        return read_topic_committed(kafka_cluster, topic)[0]

    written: list[str] = []
    seen_open = False  # some records on the topic, not readable yet: their transaction waits for the interval
    deadline = time.monotonic() + 120
    with source.open("a") as f:
        while True:
            assert worker.alive(), worker.log_file.read_text()[-3000:]
            line = f"line-{len(written)}"
            f.write(line + "\n")
            f.flush()
            written.append(line)
            if len(written) % 5 == 0:
                current = log()
                seen_open = seen_open or (current.open > 0 and len(commits(current)) >= 1)
                if len(commits(current)) >= COMMITS and seen_open:
                    break
            assert time.monotonic() < deadline, f"{len(commits(log()))} commits after {len(written)} lines"
            time.sleep(LINE_EVERY_S)  # the writer's pace, not a wait for the system under test
    wait_for("every line committed", lambda: len(log().committed) == len(written) and log().open == 0, 60)

    final = log()
    assert [r.value for r in final.committed] == [w.encode() for w in written]  # once each, in order
    assert final.aborted == 0
    n = len(commits(final))
    stamps = [r.timestamp for r in final.committed]  # when the task polled each line
    span_s = (stamps[-1] - stamps[0]) / 1000
    assert 2 <= n < span_s / (INTERVAL_MS / 1000) + 2, (n, span_s)
    # a transaction holds a run of polls (the task polls at least every second), not one poll each
    marks = commits(final)
    spread: dict[int, list[int]] = {}
    for r in final.committed:
        spread.setdefault(sum(1 for m in marks if m < r.offset), []).append(r.timestamp)
    assert max(max(ts) - min(ts) for ts in spread.values()) >= 1000, spread

    # the source offsets travelled in the same transactions: the last one committed is the end of the file
    offsets = [
        json.loads(r.value)
        for log_ in read_topic_committed(kafka_cluster, offsets_topic).values()
        for r in log_.committed
        if r.key and json.loads(r.key)[0] == "lines" and r.value
    ]
    assert offsets and offsets[-1] == {"position": source.stat().st_size}


def test_connector_boundaries_commit_and_abort_where_the_task_asks(
    eos_worker: tuple[WorkerProc, str], kafka_cluster: KafkaCluster, tmp_workdir: Path
) -> None:
    """No connector of the product defines its own transaction boundaries (as in Apache Kafka: neither
    FileStreamSource nor MirrorMaker's do), so a FileStreamSource asked for them is refused with Java's
    message, and a test connector (``tests.distributed_plugins``) ends its own transactions: 100 records,
    10 per poll, a commit asked for every 20 records, except the third transaction, which it aborts."""
    worker, offsets_topic = eos_worker
    topic = unique_name("numbers")
    kafka_cluster.create_topic(topic, 1)
    refused = {
        "connector.class": "FileStreamSource",
        "file": str(tmp_workdir / "in.txt"),
        "topic": topic,
        "transaction.boundary": "connector",
    }
    code, body = http("PUT", f"{worker.base}/connectors/lines/config", refused, timeout=60)
    assert code == 400, body
    assert (
        "The connector does not support connector-defined transaction boundaries with the given "
        "configuration. Please reconfigure it to use a different transaction boundary definition." in body["message"]
    ), body

    config = {
        "connector.class": "tests.distributed_plugins:BoundarySourceConnector",
        "topic": topic,
        "tasks.max": "1",
        "records": "100",
        "batch": "10",
        "commit.every": "20",
        "abort.at": "3",
        "exactly.once.support": "required",
        "transaction.boundary": "connector",
    }
    code, body = http("PUT", f"{worker.base}/connectors/numbers/config", config, timeout=60)
    assert code == 201, body

    def last_offset() -> int | None:
        found = [
            json.loads(r.value)["n"]
            for log_ in read_topic_committed(kafka_cluster, offsets_topic).values()
            for r in log_.committed
            if r.key and json.loads(r.key)[0] == "numbers" and r.value
        ]
        return found[-1] if found else None

    wait_for("the last record's offset committed", lambda: last_offset() == 99, 90)
    log = read_topic_committed(kafka_cluster, topic)[0]
    assert log.open == 0
    # transactions 1, 2, 4 and 5 committed (a COMMIT marker after each), the third aborted (its ABORT marker)
    # with its offsets kept in a transaction of their own: its records are never produced again
    assert [r.value for r in log.committed] == [f"v-{n}".encode() for n in [*range(40), *range(60, 100)]]
    assert log.aborted == 20
    assert [commit for _offset, _pid, commit in log.markers] == [True, True, False, True, True]
    assert [offset for offset, _pid, _commit in log.markers] == [20, 41, 62, 83, 104]
