"""MirrorSourceTask driven directly against two real clusters (the test plays the Connect worker)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from confluent_kafka import Producer

from connect_core.api.records import RecordMetadata, SourceRecord
from embedded_kafka import KafkaCluster
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.connectors.source_metrics import SourceMetricsBase
from mirror.connectors.source_task import MirrorSourceTask

NameFn = Callable[[str], str]


class DictOffsetReader:
    """The task's view of stored Connect offsets (what the worker's offset store would return)."""

    def __init__(self, offsets: dict[tuple[str, int], int] | None = None) -> None:
        self.stored = offsets or {}

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        found = self.stored.get((partition["topic"], partition["partition"]))
        return None if found is None else {"offset": found}

    def offsets(self, partitions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(p, self.offset(p)) for p in partitions]


class FakeContext:
    def __init__(self, reader: DictOffsetReader) -> None:
        self.reader = reader

    def offset_storage_reader(self) -> DictOffsetReader:
        return self.reader

    def configs(self) -> dict[str, str]:
        return {}


class RecordingMetrics(SourceMetricsBase):
    def __init__(self) -> None:
        self.polled_records = 0
        self.polled_bytes = 0
        self.acked = 0
        self.lags: dict[tuple[str, int], int] = {}

    def polled(self, topic: str, partition: int, records: int, value_bytes: int, max_age_ms: float) -> None:
        self.polled_records += records
        self.polled_bytes += value_bytes
        assert max_age_ms >= 0

    def acknowledged(self, topic: str, partition: int, records: int, max_latency_ms: float) -> None:
        self.acked += records

    def lag(self, topic: str, partition: int, records: int, last_timestamp_ms: int | None) -> None:
        self.lags[(topic, partition)] = records

    def throughput(self, limit: float | None, rate: float) -> None:
        assert limit is None or limit > 0


def task_props(a: KafkaCluster, topic: str, partitions: int, **extra: str) -> dict[str, str]:
    props = {
        "name": "MirrorSourceConnector",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a.bootstrap_servers,
        "consumer.poll.timeout.ms": "200",
        "task.assigned.partitions": ",".join(f"{topic}-{p}" for p in range(partitions)),
        "task.index": "0",
    }
    props.update(extra)
    return props


def poll_until(task: MirrorSourceTask, count: int, timeout: float = 20.0) -> list[SourceRecord]:
    out: list[SourceRecord] = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        out.extend(task.poll() or [])
    assert len(out) >= count, f"polled {len(out)} of {count} records"
    return out


def deliver(b: KafkaCluster, task: MirrorSourceTask, records: list[SourceRecord]) -> None:
    """What the worker does: produce each record to the target, then commit_record with its metadata."""
    producer: Producer = b.producer()
    acks: list[tuple[SourceRecord, RecordMetadata]] = []
    for rec in records:

        def cb(err: Any, msg: Any, rec: SourceRecord = rec) -> None:
            assert err is None, err
            acks.append((rec, RecordMetadata(msg.topic(), msg.partition(), msg.offset(), msg.timestamp()[1])))

        producer.produce(
            rec.topic,
            value=rec.value,
            key=rec.key,
            partition=rec.kafka_partition or 0,
            headers=rec.headers,
            timestamp=rec.timestamp or 0,
            on_delivery=cb,
        )  # type: ignore[arg-type]
        producer.poll(0)
    assert producer.flush(30) == 0
    for rec, md in acks:
        task.commit_record(rec, md)


def read_syncs(a: KafkaCluster, topic: str) -> list[OffsetSync]:
    return [OffsetSync.decode(m.key(), m.value()) for m in a.read_all(topic)[0]]


def test_copies_records_and_emits_offset_syncs(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    syncs_topic = "mm2-offset-syncs.B.internal"
    a.create_topic(topic, partitions=3)
    a.create_topic(syncs_topic, partitions=1, config={"cleanup.policy": "compact"})
    b.create_topic(f"A.{topic}", partitions=3)
    base_ts = 1_700_000_000_000
    specs: list[dict[str, Any]] = []
    for i in range(30):
        p = i % 3
        spec: dict[str, Any] = {
            "key": f"k{i}".encode(),
            "value": f"v{i}".encode(),
            "partition": p,
            "timestamp": base_ts + i,
            "headers": [("h", b"1"), ("h", b"2"), ("n", None)] if i % 2 else None,
        }
        if i % 7 == 0:
            spec["value"] = None  # tombstone
        specs.append(spec)
    a.produce(topic, specs)

    metrics = RecordingMetrics()
    task = MirrorSourceTask(metrics)
    task.initialize(FakeContext(DictOffsetReader()))  # type: ignore[arg-type]
    task.start(task_props(a, topic, 3, **{"offset.lag.max": "5"}))
    try:
        records = poll_until(task, 30)
        assert len(records) == 30
        by_partition: dict[int, list[SourceRecord]] = {0: [], 1: [], 2: []}
        for r in records:
            assert r.topic == f"A.{topic}"
            assert r.kafka_partition is not None
            by_partition[r.kafka_partition].append(r)
        for p, recs in by_partition.items():
            expected = [s for s in specs if s["partition"] == p]
            assert [r.key for r in recs] == [s["key"] for s in expected]
            assert [r.value for r in recs] == [s["value"] for s in expected]
            assert [r.timestamp for r in recs] == [s["timestamp"] for s in expected]
            assert [r.headers or [] for r in recs] == [s["headers"] or [] for s in expected]
            # the source topic's id rides along in every offset (see mirror.connectors.source_incarnation)
            topic_id = recs[0].source_offset["mm2.topic.id"] if recs[0].source_offset else None
            assert topic_id
            assert [r.source_offset for r in recs] == [
                {"offset": o, "mm2.topic.id": topic_id} for o in range(len(expected))
            ]
            assert all(r.source_partition == {"topic": topic, "partition": p, "cluster": "A"} for r in recs)
        assert metrics.polled_records == 30
        # Everything read, nothing on the target yet: the lag is the records in flight.
        assert metrics.lags == {(f"A.{topic}", p): 10 for p in range(3)}
        assert metrics.polled_bytes == sum(len(s["value"]) for s in specs if s["value"] is not None)
        assert task.poll() is None  # caught up: empty polls return None

        deliver(b, task, records)
        task.commit()
        assert metrics.acked == 30
        assert metrics.lags == {(f"A.{topic}", p): 0 for p in range(3)}  # acknowledged: caught up with the source
        producer = task.offset_sync_producer
        assert producer is not None and producer.flush(10) == 0
        syncs = read_syncs(a, syncs_topic)
        latest = {}
        for s in syncs:
            latest[s.topic_partition] = s
        # 10 records per partition, same offsets upstream and downstream; the commit flushed the newest.
        assert {tp: (s.upstream_offset, s.downstream_offset) for tp, s in latest.items()} == {
            TopicPartition(topic, p): (9, 9) for p in range(3)
        }
        assert {(s.upstream_offset, s.downstream_offset) for s in syncs if s.partition == 0} >= {(0, 0), (6, 6)}
        on_target = b.read_all(f"A.{topic}")
        for p in range(3):
            assert [m.value() for m in on_target[p]] == [s["value"] for s in specs if s["partition"] == p]
            assert [m.headers() or [] for m in on_target[p]] == [
                s["headers"] or [] for s in specs if s["partition"] == p
            ]
    finally:
        task.stop()


def test_restart_resumes_after_stored_offsets(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, _b = two_clusters
    topic = unique_name("resume")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [{"value": f"{p}-{i}".encode(), "partition": p} for i in range(5) for p in range(2)])

    task = MirrorSourceTask()
    # Partition 0 replicated up to offset 2 (resume at 3); partition 1 never replicated (earliest).
    task.initialize(FakeContext(DictOffsetReader({(topic, 0): 2})))  # type: ignore[arg-type]
    task.start(task_props(a, topic, 2, **{"emit.offset-syncs.enabled": "false"}))
    try:
        records = poll_until(task, 7)
        got = {(r.kafka_partition, r.source_offset["offset"]) for r in records if r.source_offset}
        assert got == {(0, 3), (0, 4)} | {(1, i) for i in range(5)}
        assert task.offset_sync_producer is None
    finally:
        task.stop()
    assert task.poll() is None  # stopped tasks return nothing
