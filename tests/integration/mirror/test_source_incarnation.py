"""MirrorSourceTask against a source topic deleted and recreated while the task was stopped (real broker).

The stored offsets carry the topic id the task last mirrored from; the test plays the worker's offset
store. The new incarnation holds more records than the old position: an offset comparison alone would
resume there and skip the new incarnation's first records without a word.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import pytest

from connect_core.api.records import SourceRecord
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster
from mirror.connectors.source_incarnation import (
    RECREATED_KEY,
    TOPIC_ID_KEY,
    RecreatedEvent,
    SourceTopicRecreatedError,
)
from mirror.connectors.source_task import MirrorSourceTask, NoOpSourceMetrics
from tests.integration.mirror.test_source_task import poll_until, task_props

NameFn = Callable[[str], str]
OLD_RECORDS = 6  # per partition, mirrored before the recreation
NEW_RECORDS = 9  # per partition of the new incarnation: more than the old position


class StoredOffsets:
    """The worker's offset store as the task reads it: whole offset values per (topic, partition)."""

    def __init__(self, values: dict[tuple[str, int], dict[str, Any]]) -> None:
        self.values = values

    def offsets(self, partitions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(p, self.values.get((p["topic"], p["partition"]))) for p in partitions]

    def offset_storage_reader(self) -> StoredOffsets:
        return self

    def configs(self) -> dict[str, str]:
        return {}


class Changes(NoOpSourceMetrics):
    """The metrics sink's ``source_changed`` hook (the rest of the sink measures nothing here)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int, str, int]] = []

    def source_changed(self, topic: str, partition: int, reason: str, count: int = 1) -> None:
        self.events.append((topic, partition, reason, count))


def topic_id(cluster: KafkaCluster, topic: str) -> str:
    return TopicAdmin({"bootstrap.servers": cluster.bootstrap_servers}).topic_ids([topic])[topic]


def recreated_topic(a: KafkaCluster, unique_name: NameFn) -> tuple[str, str, str]:
    """A 2-partition topic mirrored through OLD_RECORDS - 1, then deleted and recreated with NEW_RECORDS."""
    topic = unique_name("recreated")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [{"value": f"old-{p}-{i}", "partition": p} for i in range(OLD_RECORDS) for p in range(2)])
    old_id = topic_id(a, topic)
    a.delete_topic(topic)
    a.create_topic(topic, partitions=2)
    a.produce(topic, [{"value": f"new-{p}-{i}", "partition": p} for i in range(NEW_RECORDS) for p in range(2)])
    new_id = topic_id(a, topic)
    assert new_id != old_id  # the probe this test stands on: DeleteTopics + CreateTopics gives a new id
    return topic, old_id, new_id


def start(a: KafkaCluster, topic: str, old_id: str, changes: Changes, **extra: str) -> MirrorSourceTask:
    task = MirrorSourceTask(metrics=changes)
    stored = {(topic, p): {"offset": OLD_RECORDS - 1, TOPIC_ID_KEY: old_id} for p in range(2)}
    task.initialize(StoredOffsets(stored))  # type: ignore[arg-type]
    task.start(task_props(a, topic, 2, **{"emit.offset-syncs.enabled": "false", **extra}))
    return task


def by_partition(records: list[SourceRecord]) -> dict[int, list[SourceRecord]]:
    out: dict[int, list[SourceRecord]] = {0: [], 1: []}
    for r in records:
        out[r.kafka_partition or 0].append(r)
    return out


def test_a_new_incarnation_is_mirrored_from_its_start_said_once_and_marked(
    kafka_cluster: KafkaCluster, unique_name: NameFn, caplog: pytest.LogCaptureFixture
) -> None:
    topic, old_id, new_id = recreated_topic(kafka_cluster, unique_name)
    changes = Changes()
    caplog.set_level(logging.ERROR)
    task = start(kafka_cluster, topic, old_id, changes)
    try:
        records = by_partition(poll_until(task, 2 * NEW_RECORDS, timeout=60))
    finally:
        task.stop()
    for p in range(2):
        assert [r.value for r in records[p]] == [f"new-{p}-{i}".encode() for i in range(NEW_RECORDS)]
        assert [r.source_offset["offset"] for r in records[p] if r.source_offset] == list(range(NEW_RECORDS))
        offset = records[p][-1].source_offset
        assert offset is not None and offset[TOPIC_ID_KEY] == new_id
        event = RecreatedEvent.decode(topic, p, offset[RECREATED_KEY])
        assert event is not None and (event.previous_topic_id, event.topic_id, event.previous_offset) == (
            old_id,
            new_id,
            OLD_RECORDS - 1,
        )
    assert sorted(changes.events) == [(f"A.{topic}", p, "topic-recreated", 1) for p in range(2)]
    lines = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(lines) == 2, lines  # one per partition
    for p, line in enumerate(sorted(lines)):
        assert line.startswith(f"A->B: source topic {topic} was deleted and recreated")
        assert (
            f"partition {p}: the old incarnation was mirrored through offset {OLD_RECORDS - 1} "
            f"({OLD_RECORDS} records)" in line
        )


def test_the_same_incarnation_resumes_after_its_stored_offset(kafka_cluster: KafkaCluster, unique_name: NameFn) -> None:
    topic = unique_name("same")
    kafka_cluster.create_topic(topic, partitions=2)
    kafka_cluster.produce(topic, [{"value": f"v-{p}-{i}", "partition": p} for i in range(4) for p in range(2)])
    changes = Changes()
    task = MirrorSourceTask(metrics=changes)
    same = topic_id(kafka_cluster, topic)
    task.initialize(StoredOffsets({(topic, p): {"offset": 1, TOPIC_ID_KEY: same} for p in range(2)}))  # type: ignore[arg-type]
    task.start(task_props(kafka_cluster, topic, 2, **{"emit.offset-syncs.enabled": "false"}))
    try:
        records = by_partition(poll_until(task, 4, timeout=60))
    finally:
        task.stop()
    for p in range(2):
        assert [r.value for r in records[p]] == [f"v-{p}-{i}".encode() for i in (2, 3)]
        assert records[p][0].source_offset == {"offset": 2, TOPIC_ID_KEY: same}
    assert changes.events == []


def test_the_fail_choice_stops_the_task_with_one_clear_error(kafka_cluster: KafkaCluster, unique_name: NameFn) -> None:
    topic, old_id, new_id = recreated_topic(kafka_cluster, unique_name)
    changes = Changes()
    with pytest.raises(SourceTopicRecreatedError) as failure:
        start(kafka_cluster, topic, old_id, changes, **{"source.topic.recreated.action": "fail"})
    message = str(failure.value)
    assert f"Source topic {topic} was deleted and recreated (topic id {old_id} -> {new_id})" in message
    assert "source.topic.recreated.action=fail" in message
    assert changes.events == []  # nothing was mirrored or counted as handled


def test_keep_position_resumes_where_the_old_incarnation_stopped_and_says_what_it_skips(
    kafka_cluster: KafkaCluster, unique_name: NameFn, caplog: pytest.LogCaptureFixture
) -> None:
    topic, old_id, _new_id = recreated_topic(kafka_cluster, unique_name)
    changes = Changes()
    caplog.set_level(logging.ERROR)
    task = start(kafka_cluster, topic, old_id, changes, **{"source.topic.recreated.action": "keep-position"})
    try:
        records = by_partition(poll_until(task, 2 * (NEW_RECORDS - OLD_RECORDS), timeout=60))
    finally:
        task.stop()
    for p in range(2):
        assert [r.source_offset["offset"] for r in records[p] if r.source_offset] == list(
            range(OLD_RECORDS, NEW_RECORDS)
        )
    assert len(changes.events) == 2
    assert all(
        f"its {OLD_RECORDS} records below it are never mirrored" in r.getMessage()
        for r in caplog.records
        if r.levelno == logging.ERROR
    )


def test_offsets_that_go_back_while_the_task_runs_drop_the_topic_id_they_can_no_longer_vouch_for(
    kafka_cluster: KafkaCluster, unique_name: NameFn, caplog: pytest.LogCaptureFixture
) -> None:
    """On Kafka a consumer whose topic was recreated under it resets into the new incarnation (out of range),
    or, with a newer id in its metadata, goes on in it: records read after that must not carry the old id,
    or the next start would take them for the old incarnation's and copy the new one again. The seam: the
    task's own consumer is moved back, which the task itself never does."""
    topic = unique_name("back")
    kafka_cluster.create_topic(topic, partitions=1)
    kafka_cluster.produce(topic, [{"value": f"v{i}", "partition": 0} for i in range(5)])
    task = MirrorSourceTask()
    task.initialize(StoredOffsets({}))  # type: ignore[arg-type]
    task.start(task_props(kafka_cluster, topic, 1, **{"emit.offset-syncs.enabled": "false"}))
    caplog.set_level(logging.WARNING)
    try:
        first = poll_until(task, 5, timeout=60)
        assert all(TOPIC_ID_KEY in (r.source_offset or {}) for r in first)
        consumer = task._consumer
        assert consumer is not None
        consumer.seek(ClientPartition(topic, 0, 2))
        again = poll_until(task, 3, timeout=60)
    finally:
        task.stop()
    assert [r.source_offset for r in again] == [{"offset": o} for o in (2, 3, 4)]
    warnings = [r.getMessage() for r in caplog.records if "went back" in r.getMessage()]
    assert warnings == [
        f"A->B: source topic {topic} partition 0 went back from offset 4 to 2 (the topic was "
        "recreated or truncated); it is checked again at the task's next start"
    ]
