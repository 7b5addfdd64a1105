"""translate-offsets with the source gone (pure): groups placed from their last checkpoints, with their ages."""

from __future__ import annotations

from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.policy import DefaultReplicationPolicy
from mirror.jobs.translate.checkpoints import (
    Checkpointed,
    LatestCheckpoints,
    plan_from_checkpoints,
    upstream_topic_partition,
)
from mirror.jobs.translate.logic import Translated
from mirror.jobs.translate.report import render_json, render_table

POLICY = DefaultReplicationPolicy()
R0, R1 = TopicPartition("A.t", 0), TopicPartition("A.t", 1)
WHY = "source cluster 'A' is unreachable: timed out"
NOW = 1_000_000


def cp(group: str, tp: TopicPartition, upstream: int, downstream: int) -> Checkpoint:
    return Checkpoint(group, tp, upstream, downstream, "meta")


def test_the_last_checkpoint_per_group_and_partition_wins_with_its_timestamp() -> None:
    latest = LatestCheckpoints()
    for c, ts in (
        (cp("g", R0, 5, 12), 100),
        (cp("g", R1, 3, 10), 200),
        (cp("g", R0, 9, 16), 300),
        (cp("h", R0, 1, 8), None),
    ):
        latest.on_record(c.record_key(), c.record_value(), ts)
    latest.on_record(b"junk", b"junk", 400)
    assert latest.groups == {
        "g": {R0: Checkpointed(cp("g", R0, 9, 16), 300), R1: Checkpointed(cp("g", R1, 3, 10), 200)},
        "h": {R0: Checkpointed(cp("h", R0, 1, 8), None)},
    }
    assert latest.ignored_records == 1


def test_upstream_names_forward_and_failback() -> None:
    assert upstream_topic_partition(R0, POLICY, "A", "B") == TopicPartition("t", 0)
    # flow B -> A checkpoints a group of B consuming A.t as t on A: its upstream is A.t on B
    assert upstream_topic_partition(TopicPartition("t", 2), POLICY, "B", "A") == TopicPartition("A.t", 2)


def test_plan_places_each_partition_at_its_checkpoint_exact_where_the_target_confirms_it() -> None:
    checkpoints = {R0: Checkpointed(cp("g", R0, 9, 16), NOW - 4_000), R1: Checkpointed(cp("g", R1, 3, 10), None)}

    def confirm(tp: TopicPartition, offset: int) -> Translated:
        # partition 0: mappings on the target say exactly 17 (the checkpoint was taken before they arrived)
        return Translated("A.t", 17, 0) if tp.partition == 0 else Translated("A.t", 9, 5)

    plan = plan_from_checkpoints(
        "g",
        checkpoints,
        lambda tp: upstream_topic_partition(tp, POLICY, "A", "B"),
        confirm,
        "DEAD",
        {},
        {R0: 20, R1: 10},
        NOW,
        WHY,
    )
    rows = [
        (r.topic, r.partition, r.source_offset, r.target_topic, r.target_offset, r.reread, r.status, r.checkpoint_age_s)
        for r in plan.partitions
    ]
    assert rows == [("t", 0, 9, "A.t", 17, 0, "ok", 4.0), ("t", 1, 3, "A.t", 10, None, "ok", None)]
    assert plan.source_unreachable == WHY
    assert plan.writes(force=False) == {R0: OffsetAndMetadata(17), R1: OffsetAndMetadata(10)}
    without = plan_from_checkpoints(
        "g", checkpoints, lambda tp: upstream_topic_partition(tp, POLICY, "A", "B"), None, "DEAD", {}, {}, NOW, WHY
    )
    assert [r.target_offset for r in without.partitions] == [16, 10]


def test_report_says_the_source_was_unreachable_and_how_old_each_checkpoint_is() -> None:
    checkpoints = {R0: Checkpointed(cp("g", R0, 9, 16), NOW - 75_000)}
    plan = plan_from_checkpoints(
        "g",
        checkpoints,
        lambda tp: upstream_topic_partition(tp, POLICY, "A", "B"),
        None,
        "EMPTY",
        {},
        {R0: 20},
        NOW,
        WHY,
    )
    lines = render_table([plan], applied=False).splitlines()
    assert lines[0].startswith(WHY + ": groups placed at their last checkpoints on the target")
    assert lines[1].split()[-1] == "checkpoint_age" and lines[2].split()[-1] == "75s"
    doc = render_json([plan], applied=False)
    assert doc["groups"][0]["source_unreachable"] == WHY
    assert doc["groups"][0]["partitions"][0]["checkpoint_age_s"] == 75.0
