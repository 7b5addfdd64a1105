"""When the source cluster is gone: each group resumes at its last checkpoint on the target (pure; no I/O).

Why: an unplanned failover is the case a DR tool exists for, and then neither the groups' committed
offsets nor (by default) the offset-syncs and mappings topics on the source can be read. The
checkpoint task wrote each group's translated position to ``<source>.checkpoints.internal`` on the
target - exact where mm2's offset mappings covered it - stamped with the time it listed the group's
offsets on the source. That position is where the group stood at that time; what the group consumed
on the source after it is read again, so the plan carries each checkpoint's age for the operator.

Failback needs nothing else: the reverse flow's checkpoints already name the original topic (a group
on B consuming ``A.orders`` is checkpointed on A for ``orders``, see
:func:`~mirror.connectors.checkpoint_logic.rename_topic_partition`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mirror.client.errors import RecordFormatError
from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.policy import ReplicationPolicy
from mirror.jobs.translate.logic import GroupPlan, Translated, plan_group

#: (upstream topic-partition, upstream offset) -> a translation; ``reread == 0`` marks an exact one.
Confirm = Callable[[TopicPartition, int], Translated]


@dataclass(frozen=True)
class Checkpointed:
    """A group's last checkpoint for one target partition; ``read_at_ms``: when its offsets were read on the source."""

    checkpoint: Checkpoint
    read_at_ms: int | None


class LatestCheckpoints:
    """The last checkpoint per group and target partition of a checkpoints topic, fed in log order."""

    def __init__(self) -> None:
        self.groups: dict[str, dict[TopicPartition, Checkpointed]] = {}
        self.ignored_records = 0

    def on_record(self, key: bytes | None, value: bytes | None, timestamp_ms: int | None) -> None:
        try:
            cp = Checkpoint.decode(key, value)
        except RecordFormatError:
            self.ignored_records += 1
            return
        self.groups.setdefault(cp.consumer_group_id, {})[cp.topic_partition] = Checkpointed(cp, timestamp_ms)


def upstream_topic_partition(tp: TopicPartition, policy: ReplicationPolicy, source: str, target: str) -> TopicPartition:
    """The source topic-partition a checkpoint of flow ``source -> target`` was taken for (inverse of the rename):
    ``A.orders`` -> ``orders``; for failback ``orders`` -> ``B.orders`` (flow B -> A)."""
    if policy.topic_source(tp.topic) == source:
        upstream = policy.upstream_topic(tp.topic)
        if upstream is not None:
            return TopicPartition(upstream, tp.partition)
    return TopicPartition(policy.format_remote_topic(target, tp.topic), tp.partition)


def plan_from_checkpoints(
    group: str,
    checkpoints: Mapping[TopicPartition, Checkpointed],
    upstream_of: Callable[[TopicPartition], TopicPartition],
    confirm: Confirm | None,
    target_state: str,
    target_committed: Mapping[TopicPartition, OffsetAndMetadata | None],
    target_end_offsets: Mapping[TopicPartition, int],
    now_ms: int,
    unreachable: str,
) -> GroupPlan:
    """The group's plan from its last checkpoints: each partition at the checkpoint's target offset.

    ``confirm`` translates with whatever mappings and syncs the target holds: an exact answer for the
    checkpoint's upstream offset is used (and reported as 0 re-read); otherwise the checkpoint's own
    offset stands, with an unknown re-read. ``unreachable`` is the line saying why the source was not used.
    """
    by_upstream = {upstream_of(tp): c for tp, c in checkpoints.items()}
    offsets = {
        tp: OffsetAndMetadata(c.checkpoint.upstream_offset, c.checkpoint.metadata) for tp, c in by_upstream.items()
    }

    def translate(tp: TopicPartition, offset: int) -> Translated:
        cp = by_upstream[tp].checkpoint
        if confirm is not None:
            exact = confirm(tp, offset)
            if exact.reread == 0 and exact.offset is not None and exact.offset >= 0:
                return Translated(cp.topic_partition.topic, exact.offset, 0)
        return Translated(cp.topic_partition.topic, cp.downstream_offset, None)

    plan = plan_group(group, offsets, translate, target_state, target_committed, target_end_offsets)
    plan.source_unreachable = unreachable
    for row in plan.partitions:
        read_at = by_upstream[TopicPartition(row.topic, row.partition)].read_at_ms
        row.checkpoint_age_s = None if read_at is None else max(0.0, (now_ms - read_at) / 1000.0)
    return plan


__all__ = ["Checkpointed", "Confirm", "LatestCheckpoints", "plan_from_checkpoints", "upstream_topic_partition"]
