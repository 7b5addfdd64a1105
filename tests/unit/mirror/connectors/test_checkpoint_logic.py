"""Checkpoint store, monotonicity, renaming and group-offset sync decisions
(Kafka's CheckpointStoreTest and the pure parts of MirrorCheckpointTaskTest)."""

from __future__ import annotations

from collections.abc import Callable

from mirror.client.filters import DefaultTopicFilter
from mirror.client.formats import Checkpoint, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.client.policy import DefaultReplicationPolicy, IdentityReplicationPolicy
from mirror.connectors.checkpoint_logic import (
    CheckpointEmitter,
    CheckpointStore,
    checkpoint_is_more_recent,
    group_offsets_to_sync,
    plan_group_offset_sync,
    rename_topic_partition,
)
from mirror.connectors.offset_sync_store import OffsetSyncStore

OAM = OffsetAndMetadata


def cp_record(group: str, topic: str, partition: int, up: int, down: int) -> tuple[bytes, bytes]:
    c = Checkpoint(group, TopicPartition(topic, partition), up, down, "")
    return c.record_key(), c.record_value()


def sync_store(
    initial: Callable[[OffsetSyncStore], None] | None = None, must_read_to_end: bool = True
) -> OffsetSyncStore:
    store = OffsetSyncStore()
    store.start(must_read_to_end)
    if initial is not None:
        initial(store)
    store.mark_read_to_end()
    return store


def emitter(
    store: OffsetSyncStore, checkpoints: CheckpointStore | None = None, source: str = "source1", target: str = "target2"
) -> CheckpointEmitter:
    return CheckpointEmitter(
        source,
        target,
        DefaultReplicationPolicy(),
        store,
        checkpoints if checkpoints is not None else CheckpointStore.of({}),
    )


def sync(store: OffsetSyncStore, tp: TopicPartition, up: int, down: int) -> None:
    store.on_sync(OffsetSync(tp, up, down))


# -- CheckpointStore ---------------------------------------------------------------------------


def test_read_checkpoints_topic() -> None:
    store = CheckpointStore({"group1"})
    assert not store.is_initialized
    ok = store.load(
        [
            cp_record("group1", "t1", 0, 0, 0),
            cp_record("group2", "t1", 0, 0, 0),  # not this task's group
            (b"", b""),  # malformed
            cp_record("group1", "t1", 0, 1, 1),
        ]
    )
    assert ok and store.load_success and store.is_initialized
    assert store.ignored_records == 1
    assert store.checkpoints_per_consumer_group == {
        "group1": {TopicPartition("t1", 0): Checkpoint("group1", TopicPartition("t1", 0), 1, 1, "")}
    }


def test_read_checkpoints_topic_error() -> None:
    store = CheckpointStore({"group1"})

    def records() -> object:
        yield cp_record("group1", "topic", 1, 0, 0)
        raise PermissionError("TopicAuthorizationException")

    assert not store.load(records())  # type: ignore[arg-type]
    assert store.is_initialized
    assert not store.load_success
    assert store.checkpoints_per_consumer_group == {}


def test_store_update_get_and_convert() -> None:
    store = CheckpointStore.of({})
    tp = TopicPartition("A.t", 0)
    assert store.get("g") is None
    store.update("g", {tp: Checkpoint("g", tp, 10, 5, "meta")})
    store.update("g", {TopicPartition("A.t", 1): Checkpoint("g", TopicPartition("A.t", 1), 3, 2, "")})
    store.update("g", {tp: Checkpoint("g", tp, 12, 7, "meta2")})
    assert store.last_checkpoint("g", tp) == Checkpoint("g", tp, 12, 7, "meta2")
    assert store.last_checkpoint("h", tp) is None
    assert store.compute_converted_upstream_offset() == {
        "g": {tp: OAM(7, "meta2"), TopicPartition("A.t", 1): OAM(2, "")}
    }


def test_store_without_group_restriction_keeps_all() -> None:
    store = CheckpointStore()
    store.on_record(*cp_record("x", "t", 0, 1, 1))
    store.on_record(*cp_record("y", "t", 0, 1, 1))
    assert set(store.checkpoints_per_consumer_group) == {"x", "y"}


# -- renaming ----------------------------------------------------------------------------------


def test_downstream_topic_renaming() -> None:
    p = DefaultReplicationPolicy()
    assert rename_topic_partition(TopicPartition("topic3", 4), p, "source1", "target2") == TopicPartition(
        "source1.topic3", 4
    )
    assert rename_topic_partition(TopicPartition("target2.topic3", 5), p, "source1", "target2") == TopicPartition(
        "topic3", 5
    )
    assert rename_topic_partition(TopicPartition("source6.topic7", 8), p, "source1", "target2") == TopicPartition(
        "source1.source6.topic7", 8
    )
    # multi-hop topic that started on the target: back to its original name
    assert rename_topic_partition(TopicPartition("target2.x.topic", 0), p, "source1", "target2") == TopicPartition(
        "topic", 0
    )


def test_renaming_with_identity_policy() -> None:
    p = IdentityReplicationPolicy()
    p.configure({"source.cluster.alias": "source1"})
    assert rename_topic_partition(TopicPartition("topic3", 4), p, "source1", "target2") == TopicPartition("topic3", 4)


# -- checkpoints -------------------------------------------------------------------------------


def test_checkpoint() -> None:
    store = sync_store()
    e = emitter(store)
    sync(store, TopicPartition("topic1", 2), 3, 4)
    sync(store, TopicPartition("target2.topic5", 6), 7, 8)

    c1 = e.checkpoint("group9", TopicPartition("topic1", 2), OAM(10, ""))
    assert c1 is not None
    assert c1.topic_partition == TopicPartition("source1.topic1", 2)
    assert c1.consumer_group_id == "group9"
    assert Checkpoint.unwrap_group(c1.connect_partition()) == "group9"
    assert (c1.upstream_offset, c1.downstream_offset) == (10, 5)

    c2 = e.checkpoint("group11", TopicPartition("target2.topic5", 6), OAM(12, ""))
    assert c2 is not None
    assert c2.topic_partition == TopicPartition("topic5", 6)
    assert (c2.upstream_offset, c2.downstream_offset) == (12, 9)

    c3 = e.checkpoint("group13", TopicPartition("target2.topic5", 6), OAM(7, ""))
    assert c3 is not None
    assert (c3.upstream_offset, c3.downstream_offset) == (7, 8)


def test_checkpoint_keeps_commit_metadata() -> None:
    store = sync_store()
    sync(store, TopicPartition("t", 0), 0, 0)
    c = emitter(store).checkpoint("g", TopicPartition("t", 0), OAM(1, "app-state"))
    assert c is not None and c.metadata == "app-state"


def test_no_checkpoint_for_topic_without_offset_syncs() -> None:
    store = sync_store()
    e = emitter(store)
    sync(store, TopicPartition("topic1", 0), 3, 4)
    assert e.checkpoint("group9", TopicPartition("topic1", 1), OAM(10)) is None
    assert e.checkpoint("group9", TopicPartition("topic1", 0), OAM(10)) is not None


def test_no_checkpoint_for_null_offset_and_metadata() -> None:
    store = sync_store()
    sync(store, TopicPartition("topic1", 0), 1, 3)
    assert emitter(store).checkpoint("g1", TopicPartition("topic1", 0), None) is None


def test_no_checkpoint_before_sync_store_loaded() -> None:
    store = OffsetSyncStore()
    store.start(True)
    sync(store, TopicPartition("t", 0), 1, 3)
    e = emitter(store)
    assert e.checkpoints_for_group({TopicPartition("t", 0): OAM(5)}, "g") == {}
    store.mark_read_to_end()
    assert len(e.checkpoints_for_group({TopicPartition("t", 0): OAM(5)}, "g")) == 1


def test_untranslatable_and_filtered_offsets_are_dropped() -> None:
    store = sync_store()
    sync(store, TopicPartition("keep", 0), 100, 100)
    sync(store, TopicPartition("skip", 0), 100, 100)
    e = CheckpointEmitter(
        "source1",
        "target2",
        DefaultReplicationPolicy(),
        store,
        CheckpointStore.of({}),
        DefaultTopicFilter({"topics": "keep"}),
    )
    out = e.checkpoints_for_group(
        {
            TopicPartition("keep", 0): OAM(5),  # older than every sync: -1
            TopicPartition("skip", 0): OAM(150),
            TopicPartition("keep", 1): None,
        },
        "g",
    )
    assert out == {}
    out = e.checkpoints_for_group({TopicPartition("keep", 0): OAM(150)}, "g")
    assert out == {TopicPartition("source1.keep", 0): Checkpoint("g", TopicPartition("source1.keep", 0), 150, 101)}


def test_callable_topic_filter() -> None:
    store = sync_store()
    sync(store, TopicPartition("a", 0), 0, 0)
    e = CheckpointEmitter("s", "t", DefaultReplicationPolicy(), store, CheckpointStore.of({}), lambda t: False)
    assert e.checkpoints_for_group({TopicPartition("a", 0): OAM(1)}, "g") == {}


def test_checkpoint_is_more_recent() -> None:
    tp = TopicPartition("A.t", 0)
    last = Checkpoint("g", tp, 100, 50)
    assert checkpoint_is_more_recent(Checkpoint("g", tp, 100, 50), None)
    assert not checkpoint_is_more_recent(Checkpoint("g", tp, 100, 50), last)  # repeat
    assert not checkpoint_is_more_recent(Checkpoint("g", tp, 120, 40), last)  # downstream rewind
    assert not checkpoint_is_more_recent(Checkpoint("g", tp, 120, 50), last)  # same downstream
    assert checkpoint_is_more_recent(Checkpoint("g", tp, 120, 51), last)  # advanced
    assert checkpoint_is_more_recent(Checkpoint("g", tp, 99, 10), last)  # upstream group rewind


def test_checkpoint_records_monotonic_if_store_rewinds() -> None:
    store = sync_store()
    cps = CheckpointStore.of({})
    e = emitter(store, cps)
    tp = TopicPartition("topic1", 0)
    target_tp = TopicPartition("source1.topic1", 0)

    upstream, downstream = 11, 4
    # syncs 0 and 1; sync 1 translates the group's offset
    for _ in range(2):
        sync(store, tp, upstream, downstream)
        upstream += 1
        downstream += 1
    group_offset, expected = upstream, downstream
    assert store.translate_downstream("g1", tp, group_offset) == expected
    out = e.checkpoints_for_group({tp: OAM(group_offset)}, "g1")
    assert target_tp in out
    cps.update("g1", out)

    # syncs 2-6 evict sync 1: translation of the same offset falls back to sync 0
    for _ in range(4):
        sync(store, tp, upstream, downstream)
        upstream += 1
        downstream += 1
    sync(store, tp, upstream, downstream)
    assert store.translate_downstream("g1", tp, group_offset) != expected
    # ... but no checkpoint moving the group backwards is emitted
    assert target_tp not in e.checkpoints_for_group({tp: OAM(group_offset)}, "g1")
    # an upstream rewind of the group is passed on
    assert target_tp in e.checkpoints_for_group({tp: OAM(group_offset - 1)}, "g1")


def test_checkpoints_task_restart_uses_existing_checkpoints() -> None:
    t1p0 = TopicPartition("t1", 0)
    source_t1p0 = TopicPartition("source1.t1", 0)

    def load_100_to_300(s: OffsetSyncStore) -> None:
        for i in range(100, 301, 100):
            sync(s, t1p0, i, i)

    store = sync_store(load_100_to_300, must_read_to_end=False)
    e = emitter(store)
    checkpoints = e.checkpoints_for_group({t1p0: OAM(250)}, "group1")
    assert checkpoints == {source_t1p0: Checkpoint("group1", source_t1p0, 250, 201, "")}

    # restart: the syncs topic now yields 175, 275, 375, 475 and 100 is gone
    def load_175_to_475(s: OffsetSyncStore) -> None:
        for i in range(175, 476, 100):
            sync(s, t1p0, i, i)

    store2 = sync_store(load_175_to_475, must_read_to_end=False)
    e2 = emitter(store2, CheckpointStore.of({"group1": checkpoints}))
    assert store2.translate_downstream(None, t1p0, 250) == 176
    assert store2.translate_downstream(None, t1p0, 370) == 176
    assert e2.checkpoints_for_group({t1p0: OAM(250)}, "group1") == {}
    assert e2.checkpoints_for_group({t1p0: OAM(370)}, "group1") == {}
    assert e2.checkpoints_for_group({t1p0: OAM(400)}, "group1") == {
        source_t1p0: Checkpoint("group1", source_t1p0, 400, 376, "")
    }


def test_emitter_does_not_update_store() -> None:
    store = sync_store()
    sync(store, TopicPartition("t", 0), 0, 0)
    cps = CheckpointStore.of({})
    emitter(store, cps).checkpoints_for_group({TopicPartition("t", 0): OAM(1)}, "g")
    assert cps.get("g") is None


# -- group offset sync -------------------------------------------------------------------------


def test_sync_offset() -> None:
    t1p0, t2p0 = TopicPartition("topic1", 0), TopicPartition("topic2", 0)
    idle = {"consumer1": {t1p0: OAM(100)}, "consumer2": {t2p0: OAM(50)}}
    cps = CheckpointStore.of(
        {
            "consumer1": {t1p0: Checkpoint("consumer1", t1p0, 200, 101, "metadata")},
            "consumer2": {t2p0: Checkpoint("consumer2", t2p0, 100, 51, "metadata")},
        }
    )
    plan = plan_group_offset_sync(cps.compute_converted_upstream_offset(), idle)
    assert plan["consumer1"][t1p0] == OAM(101, "metadata")
    assert plan["consumer2"][t2p0] == OAM(51, "metadata")


def test_sync_offset_for_target_group_with_null_offset() -> None:
    tp = TopicPartition("topic", 0)
    idle: dict[str, dict[TopicPartition, OAM | None]] = {"consumer": {tp: None}}  # reset to -1 by e.g. sarama
    converted = {"consumer": {tp: OAM(101, "metadata")}}
    assert plan_group_offset_sync(converted, idle)["consumer"][tp].offset == 101


def test_never_rewinds_target_group() -> None:
    tp = TopicPartition("A.t", 0)
    assert group_offsets_to_sync({tp: OAM(100)}, {tp: OAM(100)}) == {}
    assert group_offsets_to_sync({tp: OAM(100)}, {tp: OAM(150)}) == {}
    assert group_offsets_to_sync({tp: OAM(100)}, {tp: OAM(99)}) == {tp: OAM(100)}


def test_new_partition_and_new_group() -> None:
    a, b = TopicPartition("A.t", 0), TopicPartition("A.t", 1)
    converted = {a: OAM(10), b: OAM(20)}
    # partition absent in the target group: written
    assert group_offsets_to_sync(converted, {a: OAM(50)}) == {b: OAM(20)}
    # no idle snapshot (new group, or active on the target): everything
    assert group_offsets_to_sync(converted, None) == converted


def test_plan_skips_groups_with_nothing_to_write() -> None:
    tp = TopicPartition("A.t", 0)
    converted = {"up-to-date": {tp: OAM(5)}, "behind": {tp: OAM(5)}, "empty": {}}
    idle = {"up-to-date": {tp: OAM(5)}, "behind": {tp: OAM(1)}}
    assert plan_group_offset_sync(converted, idle) == {"behind": {tp: OAM(5)}}
