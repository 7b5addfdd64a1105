"""``mm2 backfill``, the command: hand-off to live tailing with no gap and no duplicate at the seam.

(a) A fresh flow: the backlog is backfilled before ``mm2 run`` ever ran; records written after the
job are mirrored by ``mm2 run``, which starts from the offsets the job committed. (b) Beside a running
``mm2 run``: records are written before, during and after the job into the backfilled topic and into
another topic of the flow; the other topic keeps mirroring while the job runs. In both, the target
equals the source per partition. Plus the dry run and the command's mistakes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from connect_core.kafka.client_logging import RDKAFKA_LOG
from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import (
    Mm2Process,
    eventually,
    eventually_mirrored,
    mirrored_identically,
    mm2_command,
    mm2_properties,
    write_properties,
)

PARTITIONS = 3
#: The flow settings of each copy path: with batch.copy.enabled the backfill (and mm2 run) copy record batches.
COPY_PATHS: dict[str, dict[str, str]] = {
    "record": {"A->B.batch.copy.enabled": "false"},
    "batch": {"A->B.batch.copy.enabled": "true"},
}


def mm2_backfill(config: Path, *args: str, timeout: float = 240) -> subprocess.CompletedProcess[str]:
    return mm2_command("backfill", str(config), *args, timeout=timeout)


def produce(cluster: KafkaCluster, topic: str, first: int, count: int, producer: Producer | None = None) -> None:
    """Records ``first`` .. ``first + count - 1`` of ``topic``, acknowledged (``producer``: one to reuse)."""
    producer = producer or Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 10, "logger": RDKAFKA_LOG}
    )
    for i in range(first, first + count):
        producer.produce(
            topic, f"{topic}-{i}".encode(), f"k{i}".encode(), partition=i % PARTITIONS, headers=[("n", str(i).encode())]
        )
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(60) == 0


class Trickle(threading.Thread):
    """Writes a few records a second to each topic until stopped (records "during" the job)."""

    def __init__(self, cluster: KafkaCluster, topics: list[str], first: int) -> None:
        super().__init__(daemon=True)
        self.cluster, self.topics, self.next = cluster, topics, first
        self.stopped = threading.Event()

    def run(self) -> None:
        # one producer for the whole trickle: a client per round cost about 3 CPU-seconds a test
        producer = Producer(
            {"bootstrap.servers": self.cluster.bootstrap_servers, "linger.ms": 10, "logger": RDKAFKA_LOG}
        )
        while not self.stopped.wait(0.05):
            for topic in self.topics:
                produce(self.cluster, topic, self.next, PARTITIONS, producer)
            self.next += PARTITIONS

    def stop(self) -> int:
        self.stopped.set()
        self.join(30)
        return self.next


@pytest.mark.spark
@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_fresh_flow_is_backfilled_then_mm2_run_continues_without_gap_or_duplicate(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    produce(a, "orders", 0, 9_000)
    props = {**mm2_properties({"A": a, "B": b}, ["A->B"], topics="orders"), **COPY_PATHS[path]}
    config = write_properties(tmp_path / "mm2.properties", props)

    plan = mm2_backfill(config, "--source", "A", "--target", "B", "--dry-run", "--json")
    assert plan.returncode == 0, plan.stderr
    doc = json.loads(plan.stdout)
    assert doc["dry_run"] is True and doc["totals"]["records_planned"] == 9_000
    assert [(p["partition"], p["from"], p["until"]) for p in doc["partitions"]] == [
        (0, 0, 3000),
        (1, 0, 3000),
        (2, 0, 3000),
    ]
    assert doc["totals"]["estimated_bytes"] > 0
    assert "A.orders" not in b.topic_names(), "a dry run writes nothing"

    run = mm2_backfill(config, "--source", "A", "--target", "B", "--master", "local[2]", "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    summary = json.loads(run.stdout)
    assert summary["totals"]["records_copied"] == 9_000 and summary["handed_off_from_live"] is False
    assert summary["copy_path"] == path
    assert mirrored_identically(a, "orders", b, "A.orders")

    produce(a, "orders", 9_000, 300)  # after the job: live tailing's
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually_mirrored(a, "orders", b, "A.orders", mm2, 9_300)
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        mm2.close()


@pytest.mark.spark
@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_backfill_beside_a_running_mm2_run_hands_the_topic_back(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    a, b = two_clusters
    for topic in ("big", "other"):
        a.create_topic(topic, PARTITIONS)
    produce(a, "other", 0, 300)
    props = {**mm2_properties({"A": a, "B": b}, ["A->B"], topics="big, other"), **COPY_PATHS[path]}
    # Offsets flushed only when a task stops: the job's plan cannot have caught up with the live task on its
    # own, so the hand-off always happens (and the seam is the position the released task flushed).
    props["B.offset.flush.interval.ms"] = "600000"
    config = write_properties(tmp_path / "mm2.properties", props)
    mm2 = Mm2Process(config, log_dir=tmp_path)
    trickle: Trickle | None = None
    try:
        eventually(lambda: mirrored_identically(a, "other", b, "A.other", at_least=300), 120, "other mirrored", mm2)
        produce(a, "big", 0, 30_000)  # before the job: a backlog the live task has only begun on
        trickle = Trickle(a, ["big", "other"], 1_000_000)
        trickle.start()
        other_before = sum(len(v) for v in b.read_all("A.other").values())
        run = mm2_backfill(
            config, "--source", "A", "--target", "B", "--topics", "big", "--master", "local[2]", "--json"
        )
        assert run.returncode == 0, run.stderr[-3000:] + mm2.output()[-3000:]
        summary = json.loads(run.stdout)
        assert summary["handed_off_from_live"] is True and summary["copy_path"] == path
        other_during = sum(len(v) for v in b.read_all("A.other").values())
        assert other_during > other_before, "the flow's other topic kept mirroring during the job"
        last = trickle.stop()
        trickle = None
        produce(a, "big", 2_000_000, 300)  # after the job
        produce(a, "other", 2_000_000, 300)
        expected = 30_000 + 300 + (last - 1_000_000)
        eventually_mirrored(a, "big", b, "A.big", mm2, expected)
        eventually(lambda: mirrored_identically(a, "other", b, "A.other"), 120, "other mirrored identically", mm2)
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        if trickle is not None:
            trickle.stop()
        mm2.close()


def test_mistakes_are_one_line_and_a_nonzero_exit(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    produce(a, "orders", 0, 30)
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"]))
    cases = [
        (["--source", "X", "--target", "B"], "--source 'X' is not a cluster"),
        (["--source", "B", "--target", "A"], "flow B->A is not enabled"),
        (["--source", "A", "--target", "B", "--topics", "nope.*"], "no topic of cluster 'A' matches"),
        (
            ["--source", "A", "--target", "B", "--topics", "orders", "--master", "spark://127.0.0.1:1"],
            "Spark master spark://127.0.0.1:1 is unreachable",
        ),
    ]
    for args, message in cases:
        run = mm2_backfill(config, *args)
        assert run.returncode != 0, args
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and message in lines[0], (args, run.stderr)
        assert "Traceback" not in run.stderr
    assert "A.orders" not in b.topic_names(), "nothing was written"

    props = mm2_properties({"A": a, "B": b}, ["A->B", "A->C"])
    props["clusters"] = "A, B, C"
    props["C.bootstrap.servers"] = f"127.0.0.1:{free_port()}"  # nobody listens there
    props["admin.timeout.ms"] = "3000"  # its admin calls give up after 3 s, not 30
    unreachable = mm2_backfill(
        write_properties(tmp_path / "unreachable.properties", props),
        "--source",
        "A",
        "--target",
        "C",
        "--topics",
        "orders",
    )
    lines = unreachable.stderr.strip().splitlines()
    assert unreachable.returncode == 2, unreachable.stderr
    assert len(lines) == 1 and "target cluster 'C' is unreachable" in lines[0], unreachable.stderr


def test_no_java_is_one_line_and_exit_2_before_anything_is_written(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """Spark's launcher runs $JAVA_HOME/bin/java, else java on PATH: with neither, the job stops before it
    creates a topic (it used to fail after creating topics, as an internal error)."""
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    produce(a, "orders", 0, 30)
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"]))
    empty = tmp_path / "no-java"
    empty.mkdir()
    before = b.topic_names()
    for java_home, message in (
        (None, "no java on PATH and JAVA_HOME is not set"),
        (str(empty), f"JAVA_HOME={empty} has no bin/java"),
    ):
        env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
        env.update({"PATH": str(empty), "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"})
        if java_home is not None:
            env["JAVA_HOME"] = java_home
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "mirror",
                "backfill",
                str(config),
                "--source",
                "A",
                "--target",
                "B",
                "--master",
                "local[1]",
            ],
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
            env=env,
        )
        lines = run.stderr.strip().splitlines()
        assert run.returncode == 2, run.stderr
        assert len(lines) == 1 and "Spark needs Java" in lines[0] and message in lines[0], run.stderr
    assert b.topic_names() == before, "nothing was written to the target"


def test_target_partitions_holding_foreign_records_are_reported_and_refused_without_force(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """A target written by something else (a lost offsets topic, another mirror): the flow holds no position
    for the partitions, yet they hold records. The dry run names them; the run refuses them, one line and
    exit 2, nothing written; --force gets past the refusal (to the next check here: no java)."""
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    produce(a, "orders", 0, 30)
    b.create_topic("A.orders", PARTITIONS)
    b.produce("A.orders", [{"value": b"not ours", "partition": p} for p in (0, 2)])
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"]))
    before = b.topic_names()

    plan = mm2_backfill(config, "--source", "A", "--target", "B", "--dry-run", "--json")
    assert plan.returncode == 0, plan.stderr
    assert json.loads(plan.stdout)["foreign_partitions"] == [
        {"topic": "A.orders", "partition": 0},
        {"topic": "A.orders", "partition": 2},
    ]
    table = mm2_backfill(config, "--source", "A", "--target", "B", "--dry-run")
    assert "Target partition(s) A.orders-0, A.orders-2 already hold records" in table.stdout, table.stdout

    run = mm2_backfill(config, "--source", "A", "--target", "B")
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2, run.stderr
    assert len(lines) == 1 and "A.orders-0, A.orders-2" in lines[0] and "--force" in lines[0], run.stderr
    assert b.topic_names() == before, "nothing was written to the target"
    assert {p: len(v) for p, v in b.read_all("A.orders").items()} == {0: 1, 1: 0, 2: 1}

    env = {**{k: v for k, v in os.environ.items() if k != "JAVA_HOME"}, "PATH": str(tmp_path)}
    forced = subprocess.run(
        [sys.executable, "-m", "mirror", "backfill", str(config), "--source", "A", "--target", "B", "--force"],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert forced.returncode == 2 and "Spark needs Java" in forced.stderr, forced.stderr


def solo_backfilled_beside_mm2_run(
    a: KafkaCluster, b: KafkaCluster, tmp_path: Path, settings: dict[str, str], backlog: int
) -> tuple[Mm2Process, dict[str, Any]]:
    """``mm2 run`` on a flow of one topic ``solo`` (offsets flushed only when a task stops), its first 300
    records mirrored, then ``backlog`` more and ``mm2 backfill`` beside it: the running mm2 and the job's report."""
    a.create_topic("solo", PARTITIONS)
    produce(a, "solo", 0, 300)
    props = {**mm2_properties({"A": a, "B": b}, ["A->B"], topics="solo"), **settings}
    props["B.offset.flush.interval.ms"] = "600000"
    config = write_properties(tmp_path / "mm2.properties", props)
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(lambda: mirrored_identically(a, "solo", b, "A.solo", at_least=300), 120, "solo mirrored", mm2)
        produce(a, "solo", 300, backlog)
        run = mm2_backfill(config, "--source", "A", "--target", "B", "--master", "local[2]", "--json")
        assert run.returncode == 0, run.stderr[-3000:] + mm2.output()[-3000:]
        return mm2, json.loads(run.stdout)
    except BaseException:
        mm2.close()
        raise


@pytest.mark.spark
@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_backfill_of_the_flows_only_topic_beside_mm2_run(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    """Excluding every topic leaves the connector no task: the old task's stop still gates the copy.

    Offsets are flushed only when a task stops (10-minute interval), so whatever the live task copied
    before the job is known only from the flush its release makes: the job must wait for it, plan again
    from it, and leave no duplicate.
    """
    a, b = two_clusters
    mm2, summary = solo_backfilled_beside_mm2_run(a, b, tmp_path, COPY_PATHS[path], 20_000)
    try:
        assert summary["handed_off_from_live"] is True and summary["copy_path"] == path
        produce(a, "solo", 30_000, 300)
        # A live task that overran task.shutdown.graceful.timeout.ms (a starved machine) was abandoned: it never
        # committed its last positions, so no one can keep the seam free of repeats; the job says so, and then
        # the promise is at least once (every record, in order). Otherwise: identical.
        abandoned = summary["live_tasks_abandoned"] != []
        eventually_mirrored(a, "solo", b, "A.solo", mm2, 20_600, at_least_once=abandoned)
        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        mm2.close()


@pytest.mark.spark
def test_a_live_task_abandoned_at_the_hand_off_is_reported_and_nothing_is_lost(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    """A worker that abandons the stopping task (here: no graceful time at all) leaves its last positions
    uncommitted and the leader deletes its status: the job must not take that for a stop (it once did,
    silently copying again what the task had copied), but wait out the graceful timeout and then say so."""
    a, b = two_clusters
    # what this test is about: every stop is abandoned
    settings = {**COPY_PATHS["record"], "B.task.shutdown.graceful.timeout.ms": "1"}
    mm2, summary = solo_backfilled_beside_mm2_run(a, b, tmp_path, settings, 3_000)
    try:
        assert summary["handed_off_from_live"] is True
        assert summary["live_tasks_abandoned"] == [0], summary
        # the live task committed nothing: the job planned from the log start and copies all again
        assert [p["from"] for p in summary["partitions"]] == [0, 0, 0], summary["partitions"]
        produce(a, "solo", 30_000, 30)
        eventually_mirrored(a, "solo", b, "A.solo", mm2, 3_330, at_least_once=True)
    finally:
        mm2.close()


def produce_wide(cluster: KafkaCluster, topic: str, partitions: int, per_partition: int) -> None:
    """A backlog over many partitions, written in big batches (as real backlogs are)."""
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "logger": RDKAFKA_LOG,
        }
    )
    for i in range(per_partition):
        for p in range(partitions):
            while True:
                try:
                    producer.produce(topic, f"{topic}-{p}-{i}".encode() * 4, f"k{i}".encode(), partition=p)
                    break
                except BufferError:
                    producer.poll(0.05)
    assert producer.flush(60) == 0


@pytest.mark.spark
@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_64_partitions_on_one_core_commit_within_a_short_transaction_timeout(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    """One task holds all 64 partitions: its transactions close on records, bytes or age, never on one
    partition's chunk filling up, so none stays open past the producer's transaction.timeout.ms (the age
    bound is a third of it) and the job's report says how long the longest one was."""
    a, b = two_clusters
    partitions, per_partition = 64, 3_000
    a.create_topic("wide", partitions)
    produce_wide(a, "wide", partitions, per_partition)
    props = {**mm2_properties({"A": a, "B": b}, ["A->B"], topics="wide"), **COPY_PATHS[path]}
    props["B.producer.transaction.timeout.ms"] = "5000"
    config = write_properties(tmp_path / "mm2.properties", props)
    run = mm2_backfill(config, "--source", "A", "--target", "B", "--master", "local[1]", "--json")
    assert run.returncode == 0, run.stderr[-3000:]
    totals = json.loads(run.stdout)["totals"]
    assert totals["records_copied"] == partitions * per_partition
    assert json.loads(run.stdout)["copy_path"] == path
    assert totals["transaction_timeout_ms"] == 5000
    assert totals["transaction_seconds_bound"] == pytest.approx(5.0 / 3, abs=0.01)
    assert 0 < totals["longest_transaction_seconds"] < 5.0, totals
    assert totals["chunks_committed"] > partitions, "more than one transaction held each partition's records"
    assert mirrored_identically(a, "wide", b, "A.wide")
