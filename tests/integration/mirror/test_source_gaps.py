"""MirrorSourceTask when records were deleted on the source before it mirrored them (real broker).

Tansu runs no retention and has no DeleteRecords; on its durable (S3) storage, removing a partition's
oldest record-batch objects moves its log start as retention would (ListOffsets EARLIEST reports it).
A fetch below the new start is then served from the next batch Tansu still holds, where Kafka answers
OFFSET_OUT_OF_RANGE and the task's consumer resets to the log start: both end in the same jump of the
offsets read, which the task checks against the log start. Transaction markers leave jumps too, and
must not be counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import pytest

from connect_core.api.records import SourceRecord
from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster
from embedded_kafka.cluster import EmbeddedKafkaCluster
from mirror.connectors.source_gaps import LOST_KEY, LostTotal
from mirror.connectors.source_task import MirrorSourceTask, NoOpSourceMetrics
from tests.integration.mirror.test_source_task import task_props

NameFn = Callable[[str], str]
ClusterFactory = Callable[[list[str]], list[KafkaCluster]]


class Stored:
    """The worker's offset store as the task reads it."""

    def __init__(self, values: dict[tuple[str, int], dict[str, Any]]) -> None:
        self.values = values

    def offsets(self, partitions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(p, self.values.get((p["topic"], p["partition"]))) for p in partitions]

    def offset_storage_reader(self) -> Stored:
        return self

    def configs(self) -> dict[str, str]:
        return {}


class Losses(NoOpSourceMetrics):
    def __init__(self) -> None:
        self.events: list[tuple[str, int, str]] = []
        self.lost: dict[tuple[str, int], int] = {}

    def source_changed(self, topic: str, partition: int, reason: str, count: int = 1) -> None:
        self.events.append((topic, partition, reason))

    def records_lost(self, topic: str, partition: int, count: int) -> None:
        self.lost[(topic, partition)] = self.lost.get((topic, partition), 0) + count


def poll_offsets(
    task: MirrorSourceTask, until: Callable[[list[SourceRecord]], bool], timeout: float = 60.0
) -> list[SourceRecord]:
    """Poll (as the worker does) until ``until(records so far)``; deadline generous for a busy machine."""
    out: list[SourceRecord] = []
    deadline = time.monotonic() + timeout
    while not until(out):
        assert time.monotonic() < deadline, f"gave up after {[r.source_offset for r in out]}"
        out.extend(task.poll() or [])
    return out


def offsets_of(records: list[SourceRecord]) -> list[int]:
    return [int(r.source_offset["offset"]) for r in records if r.source_offset]


def lost_line(topic: str, count: int, first: int, start: int) -> str:
    return (
        f"A->B: {count} records of source topic {topic} partition 0 (offsets {first} to {start - 1}) were "
        f"deleted on the source (retention or deleted records; log start now {start}) before they were "
        "mirrored: they are not on the target"
    )


def carried(record: SourceRecord) -> tuple[int, int, int] | None:
    """What a record's source offset says the partition lost so far: (count, first, end) of the last range."""
    total = LostTotal.decode(record.source_offset.get(LOST_KEY) if record.source_offset else None)
    return None if total is None else (total.count, total.last_first, total.last_end)


def test_records_deleted_while_the_task_was_stopped_are_counted_exactly_at_its_start(
    durable_cluster_factory: ClusterFactory, unique_name: NameFn, caplog: pytest.LogCaptureFixture
) -> None:
    (a,) = durable_cluster_factory(["A"])
    assert isinstance(a, EmbeddedKafkaCluster)
    topic = unique_name("retained")
    a.create_topic(topic, partitions=1)
    a.produce(topic, [{"value": f"v{i}", "partition": 0} for i in range(10)])  # one batch per record
    # mirrored through offset 2 before the task stopped; then offsets 3..5 go (retention would, on Kafka)
    assert a.delete_records_below(topic, 0, 6) == 6
    losses = Losses()
    caplog.set_level(logging.ERROR)
    task = MirrorSourceTask(metrics=losses)
    task.initialize(Stored({(topic, 0): {"offset": 2}}))  # type: ignore[arg-type]
    task.start(task_props(a, topic, 1, **{"emit.offset-syncs.enabled": "false"}))
    try:
        records = poll_offsets(task, lambda rs: 9 in offsets_of(rs))
    finally:
        task.stop()
    assert offsets_of(records) == [6, 7, 8, 9]
    assert losses.lost == {(f"A.{topic}", 0): 3}  # offsets 3, 4 and 5: exactly the ones never mirrored
    assert losses.events == [(f"A.{topic}", 0, "records-lost")]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [lost_line(topic, 3, 3, 6)]
    # carried with every offset from the first record on, so mm2 status and a restarted task know
    assert {carried(r) for r in records} == {(3, 3, 6)}


def test_records_deleted_while_the_task_runs_are_found_from_the_jump_and_counted_exactly(
    durable_cluster_factory: ClusterFactory, unique_name: NameFn, caplog: pytest.LogCaptureFixture
) -> None:
    (a,) = durable_cluster_factory(["A"])
    assert isinstance(a, EmbeddedKafkaCluster)
    topic = unique_name("retained")
    a.create_topic(topic, partitions=1)
    a.produce(topic, [{"value": f"v{i}", "partition": 0} for i in range(5)])
    losses = Losses()
    caplog.set_level(logging.ERROR)
    task = MirrorSourceTask(metrics=losses)
    task.initialize(Stored({}))  # type: ignore[arg-type]
    task.start(task_props(a, topic, 1, **{"emit.offset-syncs.enabled": "false"}))
    try:
        assert offsets_of(poll_offsets(task, lambda rs: 4 in offsets_of(rs))) == [0, 1, 2, 3, 4]
        # The seam: the task's consumer stops fetching the partition while records 5..14 are written and
        # 5..9 deleted, as retention can outrun a slow mirror; then it fetches on from its position (5).
        consumer = task._consumer
        assert consumer is not None
        consumer.pause([ClientPartition(topic, 0)])
        a.produce(topic, [{"value": f"v{i}", "partition": 0} for i in range(5, 15)])
        assert a.delete_records_below(topic, 0, 10) == 10
        consumer.resume([ClientPartition(topic, 0)])
        records = poll_offsets(task, lambda rs: 14 in offsets_of(rs))
        assert offsets_of(records) == [10, 11, 12, 13, 14]
        poll_offsets(task, lambda rs: bool(losses.lost))  # settled on a later poll, never blocking the copy
        a.produce(topic, [{"value": "after", "partition": 0}])
        after = poll_offsets(task, lambda rs: 15 in offsets_of(rs))
    finally:
        task.stop()
    assert losses.lost == {(f"A.{topic}", 0): 5}
    assert losses.events == [(f"A.{topic}", 0, "records-lost")]
    assert [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR] == [lost_line(topic, 5, 5, 10)]
    assert carried(after[-1]) == (5, 5, 10)


def test_transaction_markers_are_jumps_but_no_loss(
    kafka_cluster: KafkaCluster, unique_name: NameFn, caplog: pytest.LogCaptureFixture
) -> None:
    topic = unique_name("txn")
    kafka_cluster.create_topic(topic, partitions=1)
    producer = kafka_cluster.producer(
        **{
            "transactional.id": unique_name("txn-producer"),
            "enable.idempotence": True,
            "max.in.flight.requests.per.connection": 5,
        }
    )
    producer.init_transactions(30)
    for batch in range(3):  # each commit leaves a marker: offsets 0-1, marker 2, 3-4, marker 5, 6-7, marker 8
        producer.begin_transaction()
        for i in range(2):
            producer.produce(topic, value=f"t{batch}-{i}".encode(), partition=0)
        producer.commit_transaction(30)
    losses = Losses()
    caplog.set_level(logging.ERROR)
    task = MirrorSourceTask(metrics=losses)
    task.initialize(Stored({(topic, 0): {"offset": 0}}))  # type: ignore[arg-type]
    task.start(task_props(kafka_cluster, topic, 1, **{"emit.offset-syncs.enabled": "false"}))
    try:
        records = poll_offsets(task, lambda rs: 7 in offsets_of(rs))
        # give the jumps' log-start lookups time to settle, polling as the worker would
        deadline = time.monotonic() + 10
        while task._gaps.pending and time.monotonic() < deadline:
            records += task.poll() or []
    finally:
        task.stop()
    assert offsets_of(records) == [1, 3, 4, 6, 7]
    assert not task._gaps.pending  # every jump was checked ...
    assert losses.lost == {} and losses.events == []  # ... and none was a loss
    assert [r for r in caplog.records if r.levelno == logging.ERROR] == []
