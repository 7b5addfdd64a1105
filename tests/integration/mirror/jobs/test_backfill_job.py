"""``mm2 backfill`` as a Spark job (local[2]) between two real clusters.

A backlog of 120,000 records over 6 partitions (keys, headers, create timestamps) is copied identical
per partition, with the flow's offsets committed in the same transactions; a unit that fails after
committing chunks is retried by Spark and resumes from its last commit; a dry run writes nothing;
every bad input is one error, with nothing written. One SparkContext serves the whole module.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Consumer, KafkaError, KafkaException, Producer

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.client_logging import RDKAFKA_LOG
from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster
from mirror.client.formats import TopicPartition
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig
from mirror.jobs.backfill.flow import committed_offsets, resolve_flow
from mirror.jobs.backfill.job import run_job
from mirror.jobs.backfill.plan import partition_transactional_id
from mirror.jobs.backfill.task_ids import decode_ids, encode_ids, record_key
from mirror.jobs.spark import spark_context
from mirror.jobs.translate.job import load_translator
from mirror.jobs.translate.logic import Translated
from tests.oracle.committed_reader import PartitionLog, read_topic_committed
from tests.raw_batch_bytes import data_batches

pytestmark = [pytest.mark.integration, pytest.mark.spark]

NameFn = Callable[[str], str]
Record = tuple[bytes | None, bytes | None, tuple[tuple[str, bytes], ...], int]


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with spark_context("mm2-backfill-tests", "local[2,4]") as session:
        yield session


#: The flow settings of each copy path: batch.copy.enabled on the flow copies the source's batches as bytes.
COPY_PATHS: dict[str, dict[str, str]] = {
    "record": {"A->B.batch.copy.enabled": "false"},
    "batch": {"A->B.batch.copy.enabled": "true"},
}


def mm2_config(a: KafkaCluster, b: KafkaCluster, **extra: str) -> MirrorMakerConfig:
    return make_config(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": a.bootstrap_servers,
            "B.bootstrap.servers": b.bootstrap_servers,
            "A->B.enabled": "true",
            "replication.factor": "1",
            "offset-syncs.topic.replication.factor": "1",
            "offset.storage.replication.factor": "1",
            "status.storage.replication.factor": "1",
            "config.storage.replication.factor": "1",
            "admin.timeout.ms": "15000",
            **extra,
        }
    )


def produce_backlog(
    cluster: KafkaCluster, topic: str, partitions: int, per_partition: int, batch_records: int = 10_000
) -> None:
    """Big batches (as real backlogs are written; at most ``batch_records`` records each); every 7th record
    has headers, every 11th no key."""
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 20,
            "batch.size": 1_000_000,
            "batch.num.messages": batch_records,
            "logger": RDKAFKA_LOG,
        }
    )
    for i in range(per_partition):
        for p in range(partitions):
            headers = [("h", f"{p}:{i}".encode()), ("empty", b"")] if i % 7 == 0 else None
            key = None if i % 11 == 0 else f"k{p}-{i}".encode()
            while True:
                try:
                    producer.produce(
                        topic,
                        f"value-{p}-{i}".encode() * 3,
                        key,
                        partition=p,
                        headers=headers,
                        timestamp=1_700_000_000_000 + i,
                    )
                    break
                except BufferError:
                    producer.poll(0.05)
    assert producer.flush(60) == 0


def read_partition(
    cluster: KafkaCluster, topic: str, partition: int, expected: int | None = None, timeout_s: float = 60.0
) -> list[Record]:
    """Every record of one (non-transactional source) partition, read to its end (fetch EOF)."""
    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": "backfill-reader",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "isolation.level": "read_committed",
            "logger": RDKAFKA_LOG,
        }
    )
    out: list[Record] = []
    try:
        consumer.assign([ClientPartition(topic, partition, 0)])
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            eof = False
            for msg in consumer.consume(5000, 1.0):
                err = msg.error()
                if err is not None:
                    eof = eof or err.code() == KafkaError._PARTITION_EOF
                    continue
                out.append((msg.key(), msg.value(), tuple(msg.headers() or ()), msg.timestamp()[1]))
            if eof and (expected is None or len(out) >= expected):
                return out
        raise AssertionError(f"{topic}-{partition}: read {len(out)} records, expected {expected}")
    finally:
        consumer.close()


def records_of(log: PartitionLog) -> list[Record]:
    """The records a read_committed consumer sees in one partition, as :func:`read_partition` gives them."""
    return [(r.key, r.value, r.headers, r.timestamp) for r in log.committed]


def committed_partition(cluster: KafkaCluster, topic: str, partition: int) -> list[Record]:
    """What a read_committed consumer sees, applied from the transaction markers by the suite's oracle."""
    return records_of(read_topic_committed(cluster, topic, [partition])[partition])


@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_backlog_copied_identical_per_partition_with_offsets_committed(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any, path: str
) -> None:
    a, b = two_clusters
    topic, partitions, per_partition = unique_name("orders"), 6, 20_000
    a.create_topic(topic, partitions=partitions)
    produce_backlog(a, topic, partitions, per_partition)
    config = mm2_config(a, b, **COPY_PATHS[path])

    dry = run_job(config, "A", "B", topic, dry_run=True, spark=spark)
    assert dry.plan.records == partitions * per_partition
    assert [(u.partition, u.start, u.end) for u in dry.plan.units] == [(p, 0, per_partition) for p in range(partitions)]
    assert f"A.{topic}" not in b.topic_names(), "a dry run writes nothing"

    seen: list[tuple[int, int]] = []
    # transactions smaller than a partition: a task's commit when they hold 7,000 records of its units
    # together, each unit's chunk a part of one, and their syncs must still be exact
    report = run_job(
        config, "A", "B", topic, spark=spark, progress=lambda d, t: seen.append((d, t)), chunk_records=7_000
    )
    assert report.records_copied == partitions * per_partition and report.copy_path == path
    assert seen and seen[-1] == (partitions * per_partition, partitions * per_partition)
    target_offsets: dict[int, list[int]] = {}
    copies = read_topic_committed(b, f"A.{topic}")  # as a read_committed consumer sees them (the oracle)
    for p in range(partitions):
        source = read_partition(a, topic, p, per_partition)
        assert records_of(copies[p]) == source, f"partition {p} differs"
        target_offsets[p] = [r.offset for r in copies[p].committed]
    flow = resolve_flow(config, "A", "B")
    assert committed_offsets(flow, b.topic_names()) == {(topic, p): per_partition - 1 for p in range(partitions)}

    # offset syncs and mappings of the copied ranges: a group committed inside the backfilled data
    # translates exactly, to the target offset of the same record (each commit's marker takes an offset
    # on the target, so the two sides' offsets drift apart by one per transaction)
    translator = load_translator(config, "A", "B")
    for p, committed in ((0, 0), (1, 12_345), (5, per_partition - 1), (3, per_partition)):
        at = target_offsets[p]
        expected = at[committed] if committed < len(at) else at[-1] + 1
        assert translator(TopicPartition(topic, p), committed) == Translated(f"A.{topic}", expected, 0)

    again = run_job(config, "A", "B", topic, spark=spark)
    assert again.plan.units == () and again.records_copied == 0, "a second run finds nothing left to copy"


@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_failed_unit_is_retried_from_its_last_committed_chunk(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any, path: str
) -> None:
    a, b = two_clusters
    topic, partitions, per_partition, chunk = unique_name("retried"), 2, 5_000, 1_000
    a.create_topic(topic, partitions=partitions)
    # batches of at most 300 records: on the batch path two chunks (each ending with the batch that fills
    # it) then end between 2,000 and 2,598, well before the partition's end
    produce_backlog(a, topic, partitions, per_partition, batch_records=300)
    report = run_job(
        mm2_config(a, b, **COPY_PATHS[path]),
        "A",
        "B",
        topic,
        spark=spark,
        chunk_records=chunk,
        fail_first_attempt=(f"{topic}-1", 2),
    )
    assert report.copy_path == path
    retried = {r.partition: r for r in report.results}
    assert retried[1].attempt == 1 and retried[1].records == per_partition - retried[1].resumed_from
    if path == "record":
        assert retried[1].resumed_from == 2 * chunk, "resumed after the 2 committed chunks"
    else:  # a chunk ends with the batch that fills it: resumed at the source batch boundary after 2 chunks
        boundaries = [batch.base_offset for batch in data_batches(a.bootstrap_servers, topic, 1)]
        assert 2 * chunk <= retried[1].resumed_from < per_partition and retried[1].resumed_from in boundaries
    if retried[0].task == retried[1].task:  # the job's cut put both in one task (it hashes the random topic name)
        assert retried[0].attempt == 1 and retried[0].resumed_from + retried[0].records == per_partition
    else:
        assert retried[0].attempt == 0 and retried[0].records == per_partition
    # no gap and no duplicate, as a read_committed consumer sees the target (the suite's oracle: Tansu shows
    # aborted records to consumers): the retried partition is exactly the source, nothing left open
    copies = read_topic_committed(b, f"A.{topic}")
    for p in range(partitions):
        assert records_of(copies[p]) == read_partition(a, topic, p, per_partition), f"partition {p} differs"
        assert copies[p].open == 0, f"partition {p}: {copies[p].open} records behind an open transaction"


@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_a_transaction_an_earlier_run_abandoned_is_aborted_and_its_producer_fenced(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any, path: str
) -> None:
    """An earlier run's task that copied partition 0 under partition 2's id (its first unit) died in a
    transaction, after that run recorded its tasks' ids. This run's tasks may group the units otherwise,
    yet the driver re-initialises the recorded ids before copying: the transaction is aborted
    (read_committed reads reach the end: on Tansu an open one holds the last stable offset back for
    ever) and the stray producer can no longer commit. This run then records its own tasks' ids."""
    a, b = two_clusters
    topic, partitions, per_partition = unique_name("abandoned"), 3, 2_000
    a.create_topic(topic, partitions=partitions)
    produce_backlog(a, topic, partitions, per_partition)
    b.create_topic(f"A.{topic}", partitions=partitions)
    earlier_id = partition_transactional_id("A", "B", topic, 2)
    b.create_topic("mm2-offsets.A.internal", partitions=25, config={"cleanup.policy": "compact"})
    recorder = Producer(
        {"bootstrap.servers": b.bootstrap_servers, "logger": RDKAFKA_LOG, "partitioner": "murmur2_random"}
    )  # as every mm2 client, Java's partitioner
    recorder.produce("mm2-offsets.A.internal", encode_ids([earlier_id]), record_key("A", "B"))
    assert recorder.flush(30) == 0
    stray = Producer({"bootstrap.servers": b.bootstrap_servers, "logger": RDKAFKA_LOG, "transactional.id": earlier_id})
    stray.init_transactions(30)
    stray.begin_transaction()
    stray.produce(f"A.{topic}", b"stray", partition=0)
    assert stray.flush(30) == 0

    report = run_job(mm2_config(a, b, **COPY_PATHS[path]), "A", "B", topic, spark=spark)
    assert report.records_copied == partitions * per_partition and report.copy_path == path
    source = read_partition(a, topic, 0, per_partition)
    target = read_partition(b, f"A.{topic}", 0, per_partition, timeout_s=30)  # not held back by the stray
    assert [r for r in target if r[1] != b"stray"] == source
    with pytest.raises(KafkaException):
        stray.commit_transaction(10)
    assert committed_partition(b, f"A.{topic}", 0) == source  # the stray record was aborted, not committed
    recorded = [
        decode_ids(m.value())
        for msgs in b.read_all("mm2-offsets.A.internal").values()
        for m in msgs
        if m.key() == record_key("A", "B")
    ]  # one partition (the same key): in the order written
    assert len(recorded[-1]) == len({r.task for r in report.results}), recorded  # one id per task of this run
    assert set(recorded[-1]) <= {partition_transactional_id("A", "B", topic, p) for p in range(partitions)}


def test_bad_inputs_are_one_error_and_write_nothing(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, b = two_clusters
    topic = unique_name("narrow")
    a.create_topic(topic, partitions=3)
    a.produce(topic, [{"value": b"x", "partition": p} for p in range(3)])
    b.create_topic(f"A.{topic}", partitions=2)
    config = mm2_config(a, b)
    before = b.topic_names()
    with pytest.raises(ConfigError, match="'C' is not a cluster"):
        run_job(config, "C", "B")
    with pytest.raises(ConfigError, match=r"flow B->A is not enabled"):
        run_job(config, "B", "A")
    with pytest.raises(ConfigError, match=re.escape("no topic of cluster 'A' matches --topics 'nothing-.*'")):
        run_job(config, "A", "B", "nothing-.*")
    with pytest.raises(ConfigError, match=rf"'A.{topic}' on 'B' has 2 partition\(s\), fewer than the 3"):
        run_job(config, "A", "B", topic)
    unreachable = make_config({**config.raw, "B.bootstrap.servers": "127.0.0.1:1"})
    with pytest.raises(ConnectError, match="target cluster 'B' is unreachable"):
        run_job(unreachable, "A", "B", topic)
    assert b.topic_names() == before, "nothing was written to the target"
