"""Groups left on an old incarnation of a recreated source topic: reported, never translated (no broker)."""

from __future__ import annotations

from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.connectors.source_incarnation import RecreatedEvent
from mirror.jobs.translate.checkpoints import Checkpointed
from mirror.jobs.translate.incarnations import NOT_CHECKED, merge_plans, old_incarnation_rows
from mirror.jobs.translate.logic import OLD_INCARNATION, GroupPlan

FOUND_AT = 1_000
RECREATED = {("orders", 0): RecreatedEvent("orders", 0, "id-1", "id-2", 19, FOUND_AT)}
REMOTE = TopicPartition("A.orders", 0)


def upstream_of(tp: TopicPartition) -> TopicPartition:
    return TopicPartition(tp.topic.removeprefix("A."), tp.partition)


def checkpoint(group: str, upstream: int, downstream: int, at_ms: int | None) -> dict[TopicPartition, Checkpointed]:
    return {REMOTE: Checkpointed(Checkpoint(group, REMOTE, upstream, downstream, ""), at_ms)}


def test_a_group_checkpointed_before_the_recreation_and_gone_from_the_source_is_left_on_the_old_one() -> None:
    rows = old_incarnation_rows({"old": checkpoint("old", 12, 12, FOUND_AT - 1)}, {}, RECREATED, upstream_of)
    assert [
        (r.topic, r.partition, r.source_offset, r.target_topic, r.target_offset, r.status, r.applied)
        for r in rows["old"]
    ] == [("orders", 0, 12, "A.orders", None, OLD_INCARNATION, False)]


def test_a_group_with_an_offset_in_the_new_incarnation_translates_as_usual() -> None:
    offsets = {"moved": {TopicPartition("orders", 0): OffsetAndMetadata(30)}}
    assert (
        old_incarnation_rows({"moved": checkpoint("moved", 12, 12, FOUND_AT - 1)}, offsets, RECREATED, upstream_of)
        == {}
    )


def test_checkpoints_since_the_recreation_was_found_and_topics_never_recreated_are_not_reported() -> None:
    assert old_incarnation_rows({"late": checkpoint("late", 3, 23, FOUND_AT)}, {}, RECREATED, upstream_of) == {}
    assert old_incarnation_rows({"other": checkpoint("other", 3, 3, 0)}, {}, {}, upstream_of) == {}


def test_the_rows_join_the_job_s_plans_and_are_never_written() -> None:
    rows = old_incarnation_rows({"old": checkpoint("old", 12, 12, None)}, {}, RECREATED, upstream_of)
    plans = merge_plans([GroupPlan("a-group", "EMPTY")], rows)
    assert [(p.group, p.target_state) for p in plans] == [("a-group", "EMPTY"), ("old", NOT_CHECKED)]
    plans[1].target_state = "EMPTY"
    assert plans[1].writes(force=True) == {}
