"""The batch copy's wire layer against real brokers: batches written by confluent-kafka on a source, fetched
as bytes, produced to a target by the batch producer, read back raw: the record bytes (after the 61-byte
header) equal the source's and every CRC is right, whoever produced the source batch."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from connect_core.kafka.batch_fetcher import READ_COMMITTED, BatchFetcher
from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.crc_patch import PATCH_MIN
from connect_core.kafka.record_batch import RawBatch
from embedded_kafka import KafkaCluster
from tests.raw_batch_bytes import data_batches

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]


def _write(cluster: KafkaCluster, topic: str, count: int, **producer: Any) -> None:
    """``count`` records in a few multi-record batches: null keys, empty and null values, repeated/null
    headers, old explicit timestamps."""
    p = cluster.producer(**{"linger.ms": 50, "batch.num.messages": 10_000, **producer})
    for i in range(count):
        value = None if i % 17 == 5 else (b"" if i % 13 == 3 else b"value-%d" % i * (1 + i % 4))
        p.produce(
            topic,
            value=value,
            key=None if i % 3 else b"k%d" % i,
            partition=0,
            timestamp=1_000_000 + i,
            headers=[("h", b"1"), ("h", None), ("x", b"%d" % i)],
        )
        if i % 30 == 29:
            assert p.flush(30) == 0  # a new batch every 30 records
    assert p.flush(30) == 0


def _fetch_all(fetcher: BatchFetcher, topic: str, high_watermark: int) -> list[RawBatch]:
    batches: list[RawBatch] = []
    position = 0
    for _ in range(1000):
        if position >= high_watermark:
            return batches
        answer = fetcher.fetch({(topic, 0): position}, 500).get((topic, 0))
        if answer is None:
            continue
        for batch in answer.batches:
            batches.append(batch)
            position = batch.next_offset
    raise AssertionError(f"stuck at {position} of {high_watermark}")


@pytest.mark.parametrize(
    ("codec", "idempotent"), [("none", False), ("lz4", True), ("zstd", False), ("gzip", True), ("snappy", False)]
)
def test_batches_copied_keep_their_record_bytes(
    cluster_factory: ClusterFactory, unique_name: Callable[[str], str], codec: str, idempotent: bool
) -> None:
    source, target = cluster_factory(["A", "B"])
    topic = source.create_topic(unique_name("wire"), partitions=1)
    target_topic = target.create_topic(unique_name("wire-copy"), partitions=1)
    # an idempotent source producer leaves its producer id and sequences in each batch: rewritten, CRC redone
    _write(
        source,
        topic,
        120,
        **{
            "compression.type": codec,
            "enable.idempotence": idempotent,
            "max.in.flight.requests.per.connection": 5 if idempotent else 1,
        },
    )
    source_batches = data_batches(source.bootstrap_servers, topic, 0)
    assert len(source_batches) > 1 and all(b.crc_ok for b in source_batches)
    assert (source_batches[0].producer_id >= 0) == idempotent

    fetcher = BatchFetcher(source.bootstrap_servers, {}, "wire-test-fetch", isolation_level=READ_COMMITTED)
    producer = BatchProducer(target.bootstrap_servers, {}, "wire-test-produce")
    try:
        fetched = _fetch_all(fetcher, topic, source_batches[-1].base_offset + source_batches[-1].last_offset_delta + 1)
        acks: list[tuple[int, BaseException | None]] = []
        for batch in fetched:
            producer.send(target_topic, 0, batch, lambda base, err: acks.append((base, err)))
        assert producer.flush(60)
    finally:
        fetcher.close()
        producer.close()

    assert [err for _, err in acks] == [None] * len(fetched)
    copied = data_batches(target.bootstrap_servers, target_topic, 0)
    assert [b.base_offset for b in copied] == [base for base, _ in acks] == [b.base_offset for b in source_batches]
    assert all(b.crc_ok for b in copied)
    assert [b.records for b in copied] == [b.records for b in source_batches]
    fields = [
        (b.attributes, b.last_offset_delta, b.base_timestamp, b.max_timestamp, b.record_count) for b in source_batches
    ]
    assert [
        (b.attributes, b.last_offset_delta, b.base_timestamp, b.max_timestamp, b.record_count) for b in copied
    ] == fields
    assert {b.producer_id for b in copied} == {producer.producer_id}
    # and a plain consumer reads the same records
    assert [(r.key(), r.value(), r.headers(), r.timestamp()[1]) for r in _consume(target, target_topic, 120)] == [
        (r.key(), r.value(), r.headers(), r.timestamp()[1]) for r in _consume(source, topic, 120)
    ]


def test_a_second_producer_continues_after_the_first(
    cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    """Two producer ids, each with its own sequences, append to the same partition in turn."""
    source, target = cluster_factory(["A", "B"])
    topic = source.create_topic(unique_name("seq"), partitions=1)
    target_topic = target.create_topic(unique_name("seq-copy"), partitions=1)
    _write(source, topic, 40)
    fetcher = BatchFetcher(source.bootstrap_servers, {}, "seq-test-fetch")
    try:
        batches = _fetch_all(fetcher, topic, 40)
    finally:
        fetcher.close()
    offsets: list[int] = []
    for half in (batches[: len(batches) // 2], batches[len(batches) // 2 :]):
        producer = BatchProducer(target.bootstrap_servers, {}, "seq-test-produce")
        try:
            for batch in half:
                producer.send(target_topic, 0, batch, lambda base, err: offsets.append(base if err is None else -2))
            assert producer.flush(60)
        finally:
            producer.close()
    assert offsets == [b.base_offset for b in batches]
    assert [b.records for b in data_batches(target.bootstrap_servers, target_topic, 0)] == [
        bytes(b.records) for b in batches
    ]


def _consume(cluster: KafkaCluster, topic: str, count: int) -> list[Any]:
    consumer = cluster.consumer()
    consumer.assign([_tp(topic)])
    out: list[Any] = []
    try:
        for _ in range(600):
            if len(out) >= count:
                break
            for msg in consumer.consume(500, 0.1):
                if msg.error() is None:
                    out.append(msg)
    finally:
        consumer.close()
    assert len(out) == count
    return out


def _tp(topic: str) -> Any:
    from confluent_kafka import TopicPartition

    return TopicPartition(topic, 0, 0)


def test_batches_in_flight_keep_their_bytes_while_later_answers_arrive(
    cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    """Fetched batches are produced as views of their Fetch answer's buffer, and answers are received into
    buffers the connection reuses (connect_core.kafka.frame_pool). Each answer's batches are sent and left
    unacknowledged while the next answers arrive; what the target stores is still the source's bytes, and
    the CRCs patched for the producer's fields (connect_core.kafka.crc_patch) are right."""
    source, target = cluster_factory(["A", "B"])
    topic = source.create_topic(unique_name("inflight"), partitions=1)
    target_topic = target.create_topic(unique_name("inflight-copy"), partitions=1)
    p = source.producer(**{"linger.ms": 5000, "batch.num.messages": 10_000})
    count = 1500
    pattern = bytes(range(251)) * 8
    for i in range(count):
        p.produce(topic, value=pattern[i % 251 : i % 251 + 1000], key=b"%d" % i, partition=0)
        if i % 300 == 299:
            # batches of ~300 KB: every answer is a pooled frame, and each CRC is patched, not recomputed
            assert p.flush(30) == 0
    assert p.flush(30) == 0
    source_batches = data_batches(source.bootstrap_servers, topic, 0)
    assert len(source_batches) >= 5 and all(b.crc_ok for b in source_batches)
    assert min(len(b.records) for b in source_batches) >= PATCH_MIN

    fetcher = BatchFetcher(source.bootstrap_servers, {}, "inflight-fetch", max_bytes=256 * 1024)
    producer = BatchProducer(target.bootstrap_servers, {}, "inflight-produce")
    acks: list[tuple[int, BaseException | None]] = []
    answers = 0
    try:
        position = 0
        for _ in range(1000):
            if position >= count:
                break
            answer = fetcher.fetch({(topic, 0): position}, 500).get((topic, 0))
            if answer is None or not answer.batches:
                continue
            answers += 1
            for batch in answer.batches:
                producer.send(target_topic, 0, batch, lambda base, err: acks.append((base, err)))
                position = batch.next_offset
            producer.poll(0)  # sent or queued, not acknowledged: the views stay in use while fetching on
        assert position == count
        assert producer.flush(60)
    finally:
        fetcher.close()
        producer.close()

    assert answers >= 2
    assert [err for _, err in acks] == [None] * len(acks)
    copied = data_batches(target.bootstrap_servers, target_topic, 0)
    assert all(b.crc_ok for b in copied)
    assert [b.records for b in copied] == [b.records for b in source_batches]
