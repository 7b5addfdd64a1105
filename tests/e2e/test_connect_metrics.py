"""``mm2 connect ... --metrics-port``: Connect's sink-task metrics over real HTTP while a sink runs.

A FileStreamSink reads a topic a producer keeps writing to; ``/metrics`` is scraped twice and the Java
sink-task metrics (read/send totals, offset commits, partitions) must have moved in between. When the
producer stops, the send total equals the records the file holds: the counters count records, not batches.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.metrics_harness import Mm2Connect, Samples, matching, total
from tests.e2e.test_connect_standalone_cli import run_to_end

pytestmark = pytest.mark.e2e

WAIT_S = 120.0
TASK = {"source": "", "target": "", "connector": "file-sink", "task": "0"}


def write_worker(path: Path, kafka: KafkaCluster, rest_port: int) -> Path:
    path.write_text(
        f"bootstrap.servers={kafka.bootstrap_servers}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={path.parent / 'offsets'}\n"
        "offset.flush.interval.ms=1000\n"  # sink offsets are committed every second: commits to count
        # The test bed's broker joins groups in about session.timeout.ms/2 (broker-notes.md).
        "consumer.session.timeout.ms=6000\n"
        "consumer.heartbeat.interval.ms=1000\n"
        f"listeners=http://127.0.0.1:{rest_port}\n"
    )
    return path


def write_file_sink(path: Path, topic: str, out: Path) -> Path:
    path.write_text(f"name=file-sink\nconnector.class=FileStreamSink\ntopics={topic}\nfile={out}\ntasks.max=1\n")
    return path


@contextmanager
def producing(kafka: KafkaCluster, topic: str, partitions: int, every_s: float = 0.05) -> Iterator[list[int]]:
    """A record every ``every_s`` until the block ends; yields [records acknowledged so far]."""
    stop = threading.Event()
    sent = [0]

    def acked(err: object, _msg: object) -> None:
        if err is None:
            sent[0] += 1

    def run() -> None:
        producer = kafka.producer()
        i = 0
        while not stop.wait(every_s):
            producer.produce(topic, value=b"rec-%d" % i, partition=i % partitions, on_delivery=acked)
            producer.poll(0)
            i += 1
        producer.flush(30)

    thread = threading.Thread(target=run, name="producing", daemon=True)
    thread.start()
    try:
        yield sent
    finally:
        stop.set()
        thread.join(45)


def sink(samples: Samples, name: str) -> float:
    return total(samples, name, **TASK)


def test_sink_metrics_move_while_records_flow(
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    topic = unique_name("metrics-sink")
    kafka_cluster.create_topic(topic, partitions=2)
    out = tmp_workdir / "out.txt"
    worker = write_worker(tmp_workdir / "worker.properties", kafka_cluster, free_port())
    connector = write_file_sink(tmp_workdir / "sink.properties", topic, out)
    metrics_port = free_port()

    with Mm2Connect(worker, [connector], metrics_port, tmp_workdir / "mm2.log") as mm2:
        with producing(kafka_cluster, topic, 2) as sent:
            first = mm2.wait_for(
                lambda s: (
                    sink(s, "mm2_sink_record_read_total") > 0
                    and sink(s, "mm2_sink_offset_commit_completion_total") > 0
                    and sink(s, "mm2_sink_partition_count") == 2
                ),
                WAIT_S,
                "the sink task reading both partitions and committing offsets",
            )
            second = mm2.wait_for(
                lambda s: (
                    sink(s, "mm2_sink_record_read_total") > sink(first, "mm2_sink_record_read_total")
                    and sink(s, "mm2_sink_record_send_total") > sink(first, "mm2_sink_record_send_total")
                    and sink(s, "mm2_sink_offset_commit_completion_total")
                    > sink(first, "mm2_sink_offset_commit_completion_total")
                ),
                WAIT_S,
                "read, send and commit totals to increase between two scrapes",
            )
        # Same task series in both scrapes, labelled as Connect's sink-task group (no mirror flow here).
        assert set(matching(second, "mm2_sink_record_read_total")) == {frozenset(TASK.items())}
        for samples in (first, second):
            # read counts records as polled, before put: never behind what was put
            assert sink(samples, "mm2_sink_record_read_total") >= sink(samples, "mm2_sink_record_send_total")
        assert sink(second, "mm2_sink_offset_commit_seq_no") > sink(first, "mm2_sink_offset_commit_seq_no") > 0
        assert sink(second, "mm2_sink_offset_commit_seq_no") >= sink(second, "mm2_sink_offset_commit_completion_total")
        put_max, put_avg = (sink(second, f"mm2_sink_put_batch_{s}_time_seconds") for s in ("max", "avg"))
        assert put_max >= put_avg >= 0
        assert sink(second, "mm2_sink_record_active_count") >= 0
        assert sink(second, "mm2_sink_record_active_count_max") >= sink(second, "mm2_sink_record_active_count_avg") >= 0
        # the task-level offset-commit metrics count the same completions
        assert total(second, "mm2_offset_commits_total", result="success", **TASK) >= sink(
            first, "mm2_sink_offset_commit_completion_total"
        )
        assert total(second, "mm2_task_state", state="RUNNING", **TASK) == 1

        # Producer stopped: every record reaches the file, and the send total says exactly how many.
        produced = sent[0]
        assert produced > 0
        done = mm2.wait_for(
            lambda s: sink(s, "mm2_sink_record_send_total") >= produced,
            WAIT_S,
            f"{produced} records put to the sink task",
        )
        assert sink(done, "mm2_sink_record_send_total") == produced
        assert sink(done, "mm2_sink_record_read_total") == produced
        lines = out.read_text().splitlines()
        assert len(lines) == produced and len(set(lines)) == produced
        # with nothing left to read, the commits catch up: no record stays active
        mm2.wait_for(lambda s: sink(s, "mm2_sink_record_active_count") == 0, WAIT_S, "every read record committed")
    assert mm2.proc is not None and mm2.proc.returncode == 0, mm2.log_tail()


@pytest.mark.parametrize("mode", ["standalone", "distributed"])
def test_metrics_port_in_use_is_one_line_and_nonzero(tmp_workdir: Path, mode: str) -> None:
    worker = tmp_workdir / "worker.properties"
    worker.write_text(
        "bootstrap.servers=127.0.0.1:1\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "group.id=g\nconfig.storage.topic=c\noffset.storage.topic=o\nstatus.storage.topic=s\n"
        f"listeners=http://127.0.0.1:{free_port()}\n"
    )
    with socket.socket() as taken:
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_to_end("connect", mode, str(worker), "--metrics-port", str(port), cwd=tmp_workdir)
    assert result.returncode != 0, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("mm2:")]
    assert len(lines) == 1 and f"cannot serve metrics on port {port}" in lines[0], result.stderr
    assert "Traceback" not in result.stderr
