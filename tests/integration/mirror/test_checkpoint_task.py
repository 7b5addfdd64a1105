"""MirrorCheckpointTask against two real clusters: offset-sync tailing, checkpoints, group offset sync."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from confluent_kafka import Consumer

from connect_core.api.records import SourceRecord
from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import Checkpoint, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.connectors.checkpoint_task import MirrorCheckpointTask
from mirror.connectors.mirror_admin import MirrorAdmin

NameFn = Callable[[str], str]


def close_without_hanging(consumer: Consumer, timeout_s: float = 30.0) -> None:
    """Close a group member, waiting at most ``timeout_s``: librdkafka 2.16's close once served a revoke by
    calling assign and never got the reply, which held a whole suite run for 16 minutes (run 59; pytest's
    timeout cannot interrupt a call blocked in C). This member only keeps a group active; the test's claims
    are about the checkpoint task, so a close that hangs is left behind in its daemon thread."""

    def close() -> None:
        try:
            consumer.close()
        except RuntimeError:  # already closed
            pass

    closer = threading.Thread(target=close, name="close-group-member", daemon=True)
    closer.start()
    closer.join(timeout_s)


def props(a: KafkaCluster, b: KafkaCluster, groups: list[str], **extra: str) -> dict[str, str]:
    out = {
        "name": "MirrorCheckpointConnector",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a.bootstrap_servers,
        "target.cluster.bootstrap.servers": b.bootstrap_servers,
        "emit.checkpoints.interval.seconds": "1",
        "consumer.poll.timeout.ms": "100",
        "task.assigned.groups": ",".join(groups),
        "task.index": "0",
        "admin.timeout.ms": "15000",
    }
    out.update(extra)
    return out


def write_syncs(a: KafkaCluster, syncs: list[OffsetSync]) -> None:
    a.produce(
        "mm2-offset-syncs.B.internal",
        [{"key": s.record_key(), "value": s.record_value(), "partition": 0} for s in syncs],
    )


def commit(cluster: KafkaCluster, group: str, offsets: dict[TopicPartition, int]) -> None:
    admin = MirrorAdmin({"bootstrap.servers": cluster.bootstrap_servers}, cluster.name, 15)
    result = admin.alter_consumer_group_offsets(group, {tp: OffsetAndMetadata(o) for tp, o in offsets.items()})
    assert all(err is None for err in result.values()), result


def poll_checkpoints(task: MirrorCheckpointTask, timeout: float = 20.0) -> list[SourceRecord]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        records = task.poll()
        if records:
            return records
    raise AssertionError("no checkpoints emitted")


def emit(b: KafkaCluster, records: list[SourceRecord]) -> None:
    b.produce("A.checkpoints.internal", [{"key": r.key, "value": r.value, "partition": 0} for r in records])


def target_offsets(b: KafkaCluster, group: str) -> dict[TopicPartition, int]:
    admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, b.name, 15)
    return {tp: oam.offset for tp, oam in admin.list_consumer_group_offsets([group])[group].items() if oam}


def test_checkpoints_and_group_offset_sync(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, b = two_clusters
    topic = unique_name("t")
    group, busy = unique_name("g"), unique_name("busy")
    tp = TopicPartition(topic, 0)
    a.create_topic(topic)
    a.create_topic("mm2-offset-syncs.B.internal", config={"cleanup.policy": "compact"})
    b.create_topic(f"A.{topic}")
    b.create_topic("A.checkpoints.internal", config={"cleanup.policy": "compact"})
    write_syncs(a, [OffsetSync(tp, 0, 100), OffsetSync(tp, 10, 110)])
    commit(a, group, {tp: 15})
    commit(a, busy, {tp: 10})
    # Another group is active on the target: its offsets must never be touched.
    member = Consumer(
        {
            "bootstrap.servers": b.bootstrap_servers,
            "group.id": busy,
            "session.timeout.ms": 6000,
            "allow.auto.create.topics": False,
            "enable.auto.commit": False,
        }
    )
    member.subscribe([f"A.{topic}"])

    task = MirrorCheckpointTask()
    # Count the completed group-offset sync rounds (the scheduler picks the method up when the stores are
    # loaded), so the negative checks below wait for rounds that ran, not for a fixed time.
    sync_rounds = [0]
    real_sync = task.sync_group_offsets

    def counted_sync() -> dict[str, dict[TopicPartition, OffsetAndMetadata]]:
        try:
            return real_sync()
        finally:
            sync_rounds[0] += 1

    def two_more_sync_rounds() -> None:
        start = sync_rounds[0]
        wait_for(lambda: sync_rounds[0] >= start + 2, 30, message="group offset sync rounds")

    setattr(task, "sync_group_offsets", counted_sync)  # noqa: B010 - an instance attribute shadows the method
    task.start(
        props(a, b, [group, busy], **{"sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "1"})
    )
    try:
        assert task.stores_loaded.wait(30)
        wait_for(
            lambda: (
                member.poll(0.2) is None
                and MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 10)
                .consumer_group_states([busy])
                .get(busy)
                == "STABLE"
            ),
            30,
            message="busy group not STABLE",
        )
        records = poll_checkpoints(task)
        checkpoints = {
            Checkpoint.decode(r.key, r.value).consumer_group_id: Checkpoint.decode(r.key, r.value) for r in records
        }
        cp = checkpoints[group]
        assert cp.topic_partition == TopicPartition(f"A.{topic}", 0)
        assert (cp.upstream_offset, cp.downstream_offset) == (15, 111)  # never estimates forward: +1 rule
        assert (checkpoints[busy].upstream_offset, checkpoints[busy].downstream_offset) == (10, 110)
        assert all(r.topic == "A.checkpoints.internal" and r.kafka_partition == 0 for r in records)
        assert records[0].source_partition is not None and records[0].source_offset == {"offset": 0}
        emit(b, records)
        assert task.poll() is None  # nothing new: repeats are not emitted

        # Group offset sync: the absent group gets the translated offset; the active one is left alone.
        wait_for(
            lambda: target_offsets(b, group).get(TopicPartition(f"A.{topic}", 0)) == 111,
            20,
            message="translated offset not synced to the target group",
        )
        two_more_sync_rounds()
        assert target_offsets(b, busy) == {}

        # Never backwards: a target group ahead of the translation keeps its position.
        close_without_hanging(member)
        commit(b, group, {TopicPartition(f"A.{topic}", 0): 500})
        two_more_sync_rounds()
        assert target_offsets(b, group)[TopicPartition(f"A.{topic}", 0)] == 500

        # New syncs move the checkpoint forward.
        write_syncs(a, [OffsetSync(tp, 15, 130)])
        wait_for(
            lambda: any(Checkpoint.decode(r.key, r.value).downstream_offset == 130 for r in (task.poll() or [])),
            20,
            message="checkpoint did not advance",
        )
    finally:
        task.stop()
        close_without_hanging(member)

    # A restarted task reloads its checkpoints from the checkpoints topic.
    restarted = MirrorCheckpointTask()
    restarted.start(props(a, b, [group]))
    try:
        assert restarted.stores_loaded.wait(30)
        last = restarted.checkpoint_store.last_checkpoint(group, TopicPartition(f"A.{topic}", 0))
        assert last is not None and last.downstream_offset == 111
        assert restarted.offset_sync_store.translate_downstream(group, tp, 15) == 130
    finally:
        restarted.stop()


def test_no_checkpoints_without_offset_syncs(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, b = two_clusters
    topic, group = unique_name("t"), unique_name("g")
    a.create_topic(topic)
    a.create_topic("mm2-offset-syncs.B.internal", config={"cleanup.policy": "compact"})
    b.create_topic("A.checkpoints.internal", config={"cleanup.policy": "compact"})
    commit(a, group, {TopicPartition(topic, 0): 3})
    task = MirrorCheckpointTask()
    task.start(props(a, b, [group]))
    try:
        assert task.stores_loaded.wait(30)
        assert task.poll() is None
        assert task.poll() is None
    finally:
        task.stop()
