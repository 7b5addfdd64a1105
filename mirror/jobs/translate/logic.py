"""What ``mm2 translate-offsets`` decides for one consumer group (pure; no I/O, no Spark).

Given the group's committed offsets on the source, a translation function, the target's end offsets,
the group's state and committed offsets on the target, :func:`plan_group` returns one row per
partition with its status and the offsets ``--apply`` may write:

* ``ok``: translated, and writing it would not move the target group backwards;
* ``no-sync``: no translation (never mirrored, or older than everything mirrored and retained);
* ``active-on-target``: the group has live members on the target: it is reported and left alone;
* ``behind-target``: the translation is behind the target group's committed offset: written only with
  ``--force``;
* ``old-incarnation``: the group's last position is in an incarnation of a source topic that was since
  deleted and recreated (issue 38): there is nothing to translate it to in the new one; reported, never
  written (see :mod:`mirror.jobs.translate.incarnations`).

The group is written only when it has no active members on the target (state Empty, or no group
there), which the job checks itself: some brokers accept commits for groups with members.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mirror.client.formats import OffsetAndMetadata, TopicPartition

OK = "ok"
NO_SYNC = "no-sync"
ACTIVE_ON_TARGET = "active-on-target"
BEHIND_TARGET = "behind-target"
OLD_INCARNATION = "old-incarnation"
STATUSES = (OK, NO_SYNC, ACTIVE_ON_TARGET, BEHIND_TARGET, OLD_INCARNATION)

#: Target group states in which the job may write offsets (no member could be disturbed).
WRITABLE_STATES = frozenset({"EMPTY", "DEAD"})


@dataclass(frozen=True)
class Translated:
    """A translated offset on the target topic; ``reread``: records the group would read again (None: unknown)."""

    target_topic: str
    offset: int | None  # None or < 0: no translation
    reread: int | None


#: (source topic-partition, committed source offset) -> translation on the target.
TranslateFn = Callable[[TopicPartition, int], Translated]


@dataclass
class PartitionRow:
    topic: str
    partition: int
    source_offset: int
    target_topic: str
    target_offset: int | None
    target_end_offset: int | None
    target_committed: int | None
    reread: int | None
    status: str
    applied: bool = False
    error: str | None = None
    checkpoint_age_s: float | None = None  # placed from a checkpoint: how long ago the source offsets were read

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "topic": self.topic,
            "partition": self.partition,
            "source_offset": self.source_offset,
            "target_topic": self.target_topic,
            "target_offset": self.target_offset,
            "target_end_offset": self.target_end_offset,
            "target_committed": self.target_committed,
            "reread": self.reread,
            "status": self.status,
            "applied": self.applied,
            "checkpoint_age_s": None if self.checkpoint_age_s is None else round(self.checkpoint_age_s, 3),
        }
        if self.error is not None:
            out["error"] = self.error
        return out


@dataclass
class GroupPlan:
    group: str
    target_state: str
    partitions: list[PartitionRow] = field(default_factory=list)
    #: Why the group was placed from its checkpoints on the target (the source could not be read); None: it was not.
    source_unreachable: str | None = None

    def writes(self, force: bool) -> dict[TopicPartition, OffsetAndMetadata]:
        """Offsets ``--apply`` writes for this group (empty when it is active on the target)."""
        if self.target_state not in WRITABLE_STATES:
            return {}
        allowed = (OK, BEHIND_TARGET) if force else (OK,)
        out: dict[TopicPartition, OffsetAndMetadata] = {}
        for row in self.partitions:
            if row.status in allowed and row.target_offset is not None and row.target_offset != row.target_committed:
                out[TopicPartition(row.target_topic, row.partition)] = OffsetAndMetadata(row.target_offset)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group,
            "target_state": self.target_state,
            "source_unreachable": self.source_unreachable,
            "partitions": [p.to_json() for p in self.partitions],
        }


def plan_group(
    group: str,
    source_offsets: Mapping[TopicPartition, OffsetAndMetadata | None],
    translate: TranslateFn,
    target_state: str,
    target_committed: Mapping[TopicPartition, OffsetAndMetadata | None],
    target_end_offsets: Mapping[TopicPartition, int],
) -> GroupPlan:
    """The rows of one group, sorted by topic and partition."""
    plan = GroupPlan(group, target_state)
    active = target_state not in WRITABLE_STATES
    for tp in sorted(source_offsets):
        oam = source_offsets[tp]
        if oam is None or oam.offset < 0:
            continue  # no valid committed offset on the source: nothing to translate
        t = translate(tp, oam.offset)
        target_tp = TopicPartition(t.target_topic, tp.partition)
        committed = target_committed.get(target_tp)
        current = None if committed is None else committed.offset
        end = target_end_offsets.get(target_tp)
        offset = t.offset if t.offset is not None and t.offset >= 0 else None
        if offset is None:
            status = NO_SYNC
        elif active:
            status = ACTIVE_ON_TARGET
        elif current is not None and current > offset:
            status = BEHIND_TARGET
        else:
            status = OK
        plan.partitions.append(
            PartitionRow(
                tp.topic,
                tp.partition,
                oam.offset,
                t.target_topic,
                offset,
                end,
                current,
                t.reread if offset is not None else None,
                status,
            )
        )
    return plan


def record_results(plan: GroupPlan, results: Mapping[TopicPartition, str | None]) -> None:
    """Mark each written partition applied, or with its error (every partition's result is checked)."""
    for row in plan.partitions:
        key = TopicPartition(row.target_topic, row.partition)
        if key in results:
            err = results[key]
            row.applied = err is None
            row.error = err


__all__ = [
    "ACTIVE_ON_TARGET",
    "BEHIND_TARGET",
    "NO_SYNC",
    "OK",
    "STATUSES",
    "WRITABLE_STATES",
    "GroupPlan",
    "PartitionRow",
    "TranslateFn",
    "Translated",
    "plan_group",
    "record_results",
]
