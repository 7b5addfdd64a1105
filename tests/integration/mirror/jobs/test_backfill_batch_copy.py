"""The backfill's batch path on real brokers (the per-task copy function, no Spark): the target's batches hold
the source's record bytes, and what cannot pass as it is goes re-encoded through the same transactions, in order.

One source partition holds, in this order: plain batches of every codec (some from an idempotent producer,
whose producer fields are rewritten), a committed, an aborted and a committed transaction of a
transactional producer (their markers), and a batch larger than the target topic's max.message.bytes. The
copy, in transactions of a few batches: a read_committed reader (the suite's oracle) sees on the target
exactly the source's committed records, in order; every target batch has a valid CRC; every source batch
but the too-large one is on the target with the same record bytes (after the 61-byte header), the aborted
transaction's never; the too-large one arrives as batches within the limit. With ``batch.copy.enabled`` off
the same flow copies record by record (its source without the aborted transaction: its consumer trusts the
broker to hide aborted records, which the embedded broker does not).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
from confluent_kafka import Producer

from connect_core.kafka.client_logging import RDKAFKA_LOG
from embedded_kafka import KafkaCluster
from mirror.jobs.backfill.batch_copy import copy_units_as_batches
from mirror.jobs.backfill.flow import batch_copy_clients, create_internal_topics, create_target_topics, prepare
from tests.integration.mirror.jobs.test_backfill_job import COPY_PATHS, mm2_config
from tests.oracle.committed_reader import read_topic_committed
from tests.raw_batch_bytes import StoredBatch, data_batches

pytestmark = pytest.mark.integration

TARGET_LIMIT = 40_000  # the target topic's max.message.bytes: the big batch below is above it
BIG = bytes(range(256)) * 40  # 10 KB per record, 8 of them in one batch


def _write(cluster: KafkaCluster, topic: str, codec: str, values: list[bytes], **conf: object) -> None:
    """One batch of ``values`` (flushed together) with ``codec``; null and empty values, repeated headers."""
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 1000,
            "compression.type": codec,
            "logger": RDKAFKA_LOG,
            **conf,
        }
    )
    for i, value in enumerate(values):
        producer.produce(
            topic,
            None if i % 5 == 4 else value,
            None if i % 3 else b"k%d" % i,
            partition=0,
            headers=[("h", b"1"), ("h", None)],
            timestamp=1_600_000_000_000 + i,
        )
    assert producer.flush(30) == 0


def _transaction(cluster: KafkaCluster, topic: str, tid: str, values: list[bytes], commit: bool) -> None:
    producer = Producer(
        {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": tid, "logger": RDKAFKA_LOG}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    for value in values:
        producer.produce(topic, value, partition=0)
    assert producer.flush(30) == 0  # written on the broker either way (an abort would drop them unsent)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)


def _source(a: KafkaCluster, topic: str, unique_name: Callable[[str], str], aborted: bool) -> None:
    for n, codec in enumerate(("none", "gzip", "snappy", "lz4", "zstd")):
        idempotent = {"enable.idempotence": True} if n % 2 else {}
        _write(a, topic, codec, [b"%s-%d" % (codec.encode(), i) * (1 + i % 4) for i in range(30)], **idempotent)
    tid = unique_name("source-txn")
    _transaction(a, topic, tid, [b"kept-1-%d" % i for i in range(10)], commit=True)
    if aborted:
        _transaction(a, topic, tid, [b"gone-%d" % i for i in range(10)], commit=False)
    _transaction(a, topic, tid, [b"kept-2-%d" % i for i in range(10)], commit=True)
    _write(a, topic, "none", [BIG + b"%d" % i for i in range(8)])  # about 80 KB: above the target's limit
    _write(a, topic, "gzip", [b"after-%d" % i for i in range(12)])


@pytest.mark.parametrize("path", sorted(COPY_PATHS))
def test_batches_copied_as_bytes_and_the_rest_in_order(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: Callable[[str], str], path: str
) -> None:
    a, b = two_clusters
    topic = unique_name("bytes")
    a.create_topic(topic, partitions=1)
    b.create_topic(f"A.{topic}", partitions=1, config={"max.message.bytes": str(TARGET_LIMIT)})
    # The record path's consumer trusts the broker to hide aborted records, which the embedded broker does
    # not (broker-notes.md): only the batch path, which applies the markers itself, gets an aborted one here.
    _source(a, topic, unique_name, aborted=path == "batch")

    prepared = prepare(mm2_config(a, b, **COPY_PATHS[path]), "A", "B", topic)
    assert prepared.clients.batch_copy == (path == "batch")
    create_target_topics(prepared.flow, prepared.missing_topics, prepared.source_counts)
    create_internal_topics(prepared.flow)
    units = list(prepared.plan.units)
    clients = batch_copy_clients(prepared.flow, replace(prepared.clients, chunk_records=50), units, 25)
    if path == "batch":
        results = copy_units_as_batches(clients, units)
    else:
        from mirror.jobs.backfill.copy import copy_units

        results = copy_units(clients, units)

    source_log = read_topic_committed(a, topic)[0]
    target_log = read_topic_committed(b, f"A.{topic}")[0]
    expected = [(r.key, r.value, r.headers, r.timestamp) for r in source_log.committed]
    assert len(expected) == 5 * 30 + 20 + 8 + 12 and source_log.aborted == (10 if path == "batch" else 0)
    assert [(r.key, r.value, r.headers, r.timestamp) for r in target_log.committed] == expected
    assert target_log.open == target_log.aborted == 0
    assert [r.records for r in results] == [len(expected)]
    assert sum(1 for *_, commit in target_log.markers if commit) >= 3  # several transactions

    copied = data_batches(b.bootstrap_servers, f"A.{topic}", 0)
    assert all(batch.crc_ok for batch in copied)
    if path == "batch":
        source = data_batches(a.bootstrap_servers, topic, 0)
        passed = [s.records for s in source if _passes(s)]
        too_large = [s for s in source if b"gone-" not in s.records and not _passes(s)]
        assert len(passed) >= 5 + 2 + 1 and too_large and all(s.crc_ok for s in source)
        assert [c.records for c in copied if c.records in passed] == passed  # the same bytes, in order
        rebuilt = [c for c in copied if c.records not in passed]
        assert len(rebuilt) > len(too_large) and all(len(c.records) + 61 <= TARGET_LIMIT for c in rebuilt)
        assert sum(c.record_count for c in rebuilt) == sum(s.record_count for s in too_large)
        assert not any(b"gone-" in c.records for c in copied)


def _passes(batch: StoredBatch) -> bool:
    """A source batch the batch path copies as it is: not aborted, not above the target's limit."""
    return b"gone-" not in batch.records and len(batch.records) + 61 <= TARGET_LIMIT
