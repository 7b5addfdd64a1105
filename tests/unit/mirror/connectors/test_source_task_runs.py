"""MirrorSourceTask's per-run callbacks: which offset syncs a run yields, and the metrics it reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mirror.client.formats import OffsetSync, TopicPartition
from mirror.client.offset_mappings import OffsetMapping, decode_mappings
from mirror.connectors import source_task
from mirror.connectors.offset_sync_producer import OffsetSyncProducer
from mirror.connectors.source_metrics import SourceMetricsBase
from mirror.connectors.source_task import MirrorSourceTask

TP = TopicPartition("orders", 0)


class SyncSink:
    """Stands in for the offset-syncs producer: records what is sent, acknowledges on poll."""

    def __init__(self) -> None:
        self.sent: list[OffsetSync] = []
        self._callbacks: list[Any] = []

    def produce(self, topic: str, value: bytes, key: bytes, partition: int, on_delivery: Any) -> None:
        self.sent.append(OffsetSync.decode(key, value))
        self._callbacks.append(on_delivery)

    def poll(self, timeout: float = 0) -> int:
        callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(None, None)
        return len(callbacks)

    def flush(self, timeout: float = 0) -> int:
        self.poll()
        return 0


@dataclass
class Run:
    route: Any
    count: int
    first_upstream: int
    last_upstream: int
    first_downstream: int
    last_downstream: int
    upstream_offsets: list[int] | None = None
    skipped: int = 0
    value_bytes: int = 0
    first_timestamp: int = -1
    last_timestamp: int = -1
    delivered: int = 0


class Metrics(SourceMetricsBase):
    def __init__(self) -> None:
        self.polls: list[tuple[str, int, int, int]] = []
        self.acked: list[tuple[str, int, int]] = []

    def polled(self, topic: str, partition: int, records: int, value_bytes: int, max_age_ms: float) -> None:
        self.polls.append((topic, partition, records, value_bytes))

    def acknowledged(self, topic: str, partition: int, records: int, max_latency_ms: float) -> None:
        self.acked.append((topic, partition, records))


def task_with_syncs(max_offset_lag: int = 100) -> tuple[MirrorSourceTask, SyncSink]:
    task = MirrorSourceTask()
    sink = SyncSink()
    task._offset_syncs = OffsetSyncProducer({}, "mm2-offset-syncs.B.internal", max_offset_lag, producer=sink)  # type: ignore[arg-type]
    task._source_alias = "A"
    from mirror.client.policy import DefaultReplicationPolicy

    task._policy = DefaultReplicationPolicy()
    return task, sink


def pairs(sink: SyncSink) -> list[tuple[int, int]]:
    return [(s.upstream_offset, s.downstream_offset) for s in sink.sent]


def test_contiguous_runs_sync_as_kafka_does_per_record() -> None:
    task, sink = task_with_syncs(100)
    route = task.route("orders", 0)
    assert (route.topic, route.partition) == ("A.orders", 0)
    assert route.source_partition == {"cluster": "A", "partition": 0, "topic": "orders"}
    task._run_acknowledged(route, Run(route, 250, 1000, 1249, 0, 249))  # type: ignore[arg-type]
    assert pairs(sink) == [(1000, 0), (1101, 101), (1202, 202)]
    task._run_acknowledged(route, Run(route, 10, 1250, 1259, 250, 259))  # type: ignore[arg-type]
    assert pairs(sink) == [(1000, 0), (1101, 101), (1202, 202)]  # 259 - 203 < 100: delayed
    task.commit()  # the offset flush sends the newest position
    assert pairs(sink)[-1] == (1259, 259)


def test_upstream_gaps_sync_at_each_gap() -> None:
    task, sink = task_with_syncs(100)
    route = task.route("orders", 0)
    run = Run(route, 4, 0, 9, 0, 3, upstream_offsets=[0, 1, 8, 9])
    task._run_acknowledged(route, run)  # type: ignore[arg-type]
    assert pairs(sink) == [(0, 0), (8, 2)]


def test_foreign_writes_downstream_sync_only_exact_pairs() -> None:
    task, sink = task_with_syncs(100)
    route = task.route("orders", 0)
    task._run_acknowledged(route, Run(route, 5, 0, 4, 0, 4))  # type: ignore[arg-type]
    # 5 records took downstream offsets 10..16: something else wrote in between.
    task._run_acknowledged(route, Run(route, 5, 5, 9, 10, 16))  # type: ignore[arg-type]
    task.commit()
    assert pairs(sink) == [(0, 0), (9, 16)]
    assert all(d - u in (0, 7) for u, d in pairs(sink))


def test_a_run_with_skipped_records_yields_no_sync() -> None:
    task, sink = task_with_syncs(100)
    route = task.route("orders", 0)
    task._run_acknowledged(route, Run(route, 3, 0, 2, 0, 1, skipped=1))  # type: ignore[arg-type]
    task.commit()
    assert pairs(sink) == []


def test_runs_feed_the_metrics_once_each() -> None:
    metrics = Metrics()
    task = MirrorSourceTask()
    task.metrics = metrics
    task._source_alias = "A"
    from mirror.client.policy import DefaultReplicationPolicy

    task._policy = DefaultReplicationPolicy()
    route = task.route("orders", 2)
    run = Run(route, 7, 0, 6, 0, 6, value_bytes=700, first_timestamp=1, last_timestamp=2)
    task._run_dispatched(route, run)  # type: ignore[arg-type]
    assert task._unacknowledged == 7
    task._run_acknowledged(route, run)  # type: ignore[arg-type]
    assert task._unacknowledged == 0
    assert metrics.polls == [("A.orders", 2, 7, 700)]
    assert metrics.acked == [("A.orders", 2, 7)]


class TopicSink(SyncSink):
    """Also knows topics (for the mappings-topic check) and keeps mappings apart from syncs."""

    def __init__(self, topics: set[str]) -> None:
        super().__init__()
        self.topics = dict.fromkeys(topics)
        self.mappings: list[OffsetMapping] = []  # the runs of every record, in order
        self.mapping_records: list[bytes | None] = []  # the records' values (None: a tombstone)
        self.mapping_keys: list[bytes] = []

    def list_topics(self, timeout: float = 0) -> Any:
        return self

    def produce(self, topic: str, value: bytes, key: bytes, partition: int, on_delivery: Any) -> None:
        if topic.startswith("mm2-offset-mappings"):
            self.mappings.extend(decode_mappings(key, value))
            self.mapping_records.append(value)
            self.mapping_keys.append(key)
            self._callbacks.append(on_delivery)
        else:
            super().produce(topic, value, key, partition, on_delivery)


def task_with_mappings(exists: bool = True) -> tuple[MirrorSourceTask, TopicSink]:
    task, _ = task_with_syncs(100)
    sink = TopicSink({"mm2-offset-mappings.B.internal"} if exists else set())
    task._offset_syncs = OffsetSyncProducer(
        {},
        "mm2-offset-syncs.B.internal",
        100,
        producer=sink,  # type: ignore
        mappings_topic="mm2-offset-mappings.B.internal",
    )
    return task, sink


def test_runs_become_offset_mappings_at_discontinuities_and_flushes() -> None:
    task, sink = task_with_mappings()
    route = task.route("orders", 0)
    route.copy.resume_after(999)  # as assigned after stored offset 999
    task._run_acknowledged(route, Run(route, 250, 1000, 1249, 40, 289))  # type: ignore[arg-type]
    task._run_acknowledged(route, Run(route, 10, 1250, 1259, 290, 299))  # type: ignore[arg-type]
    assert sink.mappings == []  # one contiguous run so far: nothing until the offset flush
    task.commit()
    assert sink.mappings == [OffsetMapping(TP, 1000, 1000, 40, 260)]
    # an upstream gap (1260..1261: transaction markers) inside the next run, then foreign writes downstream
    task._run_acknowledged(
        route,
        Run(
            route,
            3,
            1260,
            1264,
            300,
            302,  # type: ignore[arg-type]
            upstream_offsets=[1262, 1263, 1264],
        ),
    )
    task._run_acknowledged(route, Run(route, 3, 1265, 1267, 310, 314))  # type: ignore[arg-type]
    task.commit()
    # The gap run starts a mapping covering the gap; the next run's records took 310..314 for 3 records
    # (foreign writes inside it): its first record is known, then nothing is claimed until its last.
    assert sink.mappings[1:] == [
        OffsetMapping(TP, 1260, 1262, 300, 3),
        OffsetMapping(TP, 1265, 1265, 310, 1),
        OffsetMapping(TP, 1267, 1267, 314, 1),
    ]
    assert len(sink.mapping_records) == 2  # one record per partition per publication, however many runs


def test_no_mappings_without_their_topic() -> None:
    task, sink = task_with_mappings(exists=False)
    route = task.route("orders", 0)
    task._run_acknowledged(route, Run(route, 5, 0, 4, 0, 4))  # type: ignore[arg-type]
    task.commit()
    assert sink.mappings == [] and pairs(sink) == [(0, 0), (4, 4)]


class IdleConsumer:
    """A consumer with nothing to return: records how long each poll would have waited."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def poll(self, timeout: float) -> None:
        self.waits.append(timeout)


def test_acknowledged_copies_are_published_without_waiting_for_the_offset_flush() -> None:
    task, sink = task_with_mappings()
    consumer = IdleConsumer()
    task._consumer = consumer  # type: ignore[assignment]
    route = task.route("orders", 0)
    task._run_acknowledged(route, Run(route, 250, 0, 249, 0, 249))  # type: ignore[arg-type]
    assert sink.mappings == [] and pairs(sink)[-1] == (202, 202)  # 249 is delayed: due at a publication
    task.poll()  # the partition went idle: the next poll publishes (no commit() ran)
    assert sink.mappings == [OffsetMapping(TP, 0, 0, 0, 250)]
    assert pairs(sink)[-1] == (249, 249)
    assert consumer.waits == [task._poll_timeout_s]  # nothing left to publish: the usual wait

    task._run_acknowledged(route, Run(route, 10, 250, 259, 250, 259))  # type: ignore[arg-type]
    task.poll()  # just published: not again before the interval, but the wait ends when it is due
    assert sink.mappings == [OffsetMapping(TP, 0, 0, 0, 250)]
    assert 0 < consumer.waits[-1] <= source_task.PUBLISH_INTERVAL_S
    task._publish_due = 0.0  # the interval has passed
    task.poll()
    assert sink.mappings[-1] == OffsetMapping(TP, 0, 0, 0, 260) and pairs(sink)[-1] == (259, 259)
    sent = len(sink.sent) + len(sink.mappings)
    task._publish_due = 0.0
    task.poll()  # nothing acknowledged since: nothing written
    assert len(sink.sent) + len(sink.mappings) == sent


def test_nothing_is_published_beyond_what_was_acknowledged() -> None:
    task, sink = task_with_mappings()
    task._consumer = IdleConsumer()  # type: ignore[assignment]
    route = task.route("orders", 0)
    run = Run(route, 10, 0, 9, 0, 9)
    task._run_dispatched(route, run)  # type: ignore[arg-type]  # handed to the producer, not acknowledged
    task.poll()
    assert sink.mappings == [] and pairs(sink) == []
    task._run_acknowledged(route, run)  # type: ignore[arg-type]
    task.poll()
    assert sink.mappings == [OffsetMapping(TP, 0, 0, 0, 10)] and pairs(sink) == [(0, 0), (9, 9)]
