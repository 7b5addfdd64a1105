"""``mm2 backfill`` at fleet width: 400 topics x 5 partitions with a small backlog each, on ``local[2]``.

The job cuts the 2,000 partitions into one task per partition of the flow's offsets topic (25 tasks of
about 80; a transaction spans its task's partitions, and no two tasks' transactions share one), so none
outlives the producer's timeout (asserted from the job's report), no task is retried, and the operator's
terminal shows the job's own output only: no Python traceback, no Java stack (Spark's logs go to their own
file). Every one of the 2,000 target partitions is then read as a read_committed consumer sees it (the
suite's oracle) and compared with its source partition, and a plain consumer (read_committed, librdkafka's
default) reads every record of every partition on B: the job leaves no partition's last stable offset below
its high watermark. The time is printed (README: about 2 minutes here, most of it the test broker's
transaction handling).
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka.admin import NewTopic

from connect_core.kafka.client_logging import RDKAFKA_LOG
from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import mm2_command, mm2_properties, write_properties
from tests.e2e.test_backfill_cli import COPY_PATHS
from tests.oracle.committed_reader import PartitionLog, read_topics_committed

TOPICS, PARTITIONS, PER_PARTITION = 400, 5, 40
#: how long a plain consumer may take to read the target (2,000 partitions) on a busy machine
PLAIN_READ_DEADLINE_S = 300.0
_JAVA_FRAME = re.compile(r"^\s+at [\w$.]+\(.*\)$|^Caused by: |^\s*\.\.\. \d+ more$", re.MULTILINE)


def create_topics(cluster: KafkaCluster, names: list[str], partitions: int) -> None:
    admin = cluster.admin()
    futures = admin.create_topics([NewTopic(n, partitions, 1) for n in names], request_timeout=60)
    for future in futures.values():
        future.result(60)


def produce_small_backlogs(cluster: KafkaCluster, names: list[str], partitions: int, per_partition: int) -> None:
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 20,
            "logger": RDKAFKA_LOG,
            "allow.auto.create.topics": False,
        }
    )
    for name in names:
        for p in range(partitions):
            for i in range(per_partition):
                while True:
                    try:
                        producer.produce(name, f"{name}-{p}-{i}".encode(), f"k{i}".encode(), partition=p)
                        break
                    except BufferError:
                        producer.poll(0.05)
    assert producer.flush(60) == 0


def plain_consumer_counts(cluster: KafkaCluster, wanted: dict[tuple[str, int], int]) -> dict[tuple[str, int], int]:
    """Records per partition a plain confluent-kafka consumer reads (librdkafka's default isolation,
    read_committed, as most users read), until every partition reaches ``wanted`` or the deadline passes."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": f"plain-{time.time_ns()}",
            "enable.auto.commit": False,
            "logger": RDKAFKA_LOG,
            "allow.auto.create.topics": False,
        }
    )
    counts = dict.fromkeys(wanted, 0)
    short = set(wanted)
    try:
        consumer.assign([ClientPartition(t, p, 0) for t, p in wanted])
        deadline = time.monotonic() + PLAIN_READ_DEADLINE_S
        while short and time.monotonic() < deadline:
            for msg in consumer.consume(5000, 0.5):
                if msg.error() is None:
                    tp = (msg.topic(), msg.partition())
                    counts[tp] += 1
                    if counts[tp] >= wanted[tp]:
                        short.discard(tp)
    finally:
        consumer.close()
    return counts


def assert_plain_consumer_reads_everything(b: KafkaCluster, names: list[str]) -> None:
    """Every record of every partition of every remote topic, for a read_committed consumer: a transaction
    the target broker still held (last stable offset below the high watermark) would hide a partition."""
    wanted = {(f"A.{name}", p): PER_PARTITION for name in names for p in range(PARTITIONS)}
    counts = plain_consumer_counts(b, wanted)
    short = sorted((tp, n) for tp, n in counts.items() if n != wanted[tp])
    assert not short, f"{len(short)} of {len(wanted)} partitions read short by a plain consumer, e.g. {short[:5]}"


@pytest.mark.e2e
@pytest.mark.spark
@pytest.mark.timeout(900)  # about 2 minutes alone on 2 cores (README): room for a busy machine and the read
@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_two_thousand_partitions_on_two_cores_no_retry_no_stack_on_the_terminal(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, path: str
) -> None:
    a, b = two_clusters
    names = [f"fleet-{i:03d}" for i in range(TOPICS)]
    create_topics(a, names, PARTITIONS)
    produce_small_backlogs(a, names, PARTITIONS, PER_PARTITION)
    props = {**mm2_properties({"A": a, "B": b}, ["A->B"], topics="fleet-.*"), **COPY_PATHS[path]}
    config = write_properties(tmp_path / "mm2.properties", props)
    started = time.monotonic()
    run = mm2_command(
        "backfill", str(config), "--source", "A", "--target", "B", "--master", "local[2]", "--json", timeout=540
    )
    took = time.monotonic() - started
    terminal = run.stdout + run.stderr
    assert run.returncode == 0, run.stderr[-3000:]
    assert "Traceback" not in terminal, run.stderr[-3000:]
    assert not _JAVA_FRAME.search(terminal), run.stderr[-3000:]
    report = json.loads(run.stdout)
    totals = report["totals"]
    assert totals["partitions"] == TOPICS * PARTITIONS
    assert totals["records_copied"] == TOPICS * PARTITIONS * PER_PARTITION
    assert totals["tasks_retried"] == 0 and report["copy_path"] == path, totals
    print(
        f"\n{TOPICS * PARTITIONS} partitions backfilled in {took:.1f} s (job {report['seconds']} s, "
        f"longest transaction {totals['longest_transaction_seconds']} s, "
        f"copy {report['copy_seconds']} s, {totals['tasks']} tasks)"
    )
    # every transaction committed within the producer's transaction.timeout.ms (Kafka would abort it after)
    assert 0 < totals["longest_transaction_seconds"] * 1000 < totals["transaction_timeout_ms"], totals

    started = time.monotonic()
    sources = read_topics_committed(a, names, timeout_s=120)
    copies = read_topics_committed(b, [f"A.{name}" for name in names], timeout_s=120)
    print(f"all {TOPICS * PARTITIONS} partitions read on both sides in {time.monotonic() - started:.1f} s")
    assert all(len(log.committed) == PER_PARTITION for logs in sources.values() for log in logs.values())
    differing = [
        f"A.{name}-{p}"
        for name in names
        for p in range(PARTITIONS)
        if view(copies[f"A.{name}"][p]) != view(sources[name][p])
    ]
    assert not differing, f"{len(differing)} of {TOPICS * PARTITIONS} target partitions differ: {differing[:10]}"
    assert_plain_consumer_reads_everything(b, names)


def view(log: PartitionLog) -> list[tuple[object, ...]]:
    return [(r.key, r.value, r.headers, r.timestamp) for r in log.committed]
