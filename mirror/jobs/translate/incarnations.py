"""Groups left on an old incarnation of a recreated source topic, for ``mm2 translate-offsets`` (issue 38).

Why: deleting a topic deletes its committed offsets on the source (Kafka and the test broker do), so a group that
had not moved to the new incarnation is no longer listed there, and the job would silently say nothing
about it. Its last position survives in the flow's checkpoints on the target. A checkpoint of a recreated
partition written before the flow found the new incarnation, for a group with no offset on the source for
that partition now, is a group left on the old incarnation: it is reported (status ``old-incarnation``),
never translated into the new one. Groups that committed in the new incarnation translate as usual, with
the new incarnation's mappings only (its offset syncs restart at 0, which ends the old ones).

:func:`old_incarnation_rows` and :func:`merge_plans` are pure; the job reads the flow's committed offsets
(where a recreation is recorded) and, only when there is one, its checkpoints.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

from mirror.client.formats import OffsetAndMetadata, TopicPartition
from mirror.connectors.source_incarnation import RecreatedEvent
from mirror.jobs.translate.checkpoints import Checkpointed
from mirror.jobs.translate.logic import OLD_INCARNATION, GroupPlan, PartitionRow

log = logging.getLogger(__name__)

#: The target group's state is not read for these rows: nothing is ever written for them.
NOT_CHECKED = "NOT_CHECKED"


def old_incarnation_rows(
    checkpoints: Mapping[str, Mapping[TopicPartition, Checkpointed]],
    source_offsets: Mapping[str, Mapping[TopicPartition, OffsetAndMetadata | None]],
    recreated: Mapping[tuple[str, int], RecreatedEvent],
    upstream_of: Callable[[TopicPartition], TopicPartition],
) -> dict[str, list[PartitionRow]]:
    """Per group, a row for each recreated partition its last checkpoint places in the old incarnation."""
    out: dict[str, list[PartitionRow]] = {}
    for group, cps in sorted(checkpoints.items()):
        committed = source_offsets.get(group) or {}
        for remote, found in sorted(cps.items(), key=lambda kv: (kv[0].topic, kv[0].partition)):
            upstream = upstream_of(remote)
            event = recreated.get((upstream.topic, upstream.partition))
            if event is None or committed.get(upstream) is not None:
                continue  # not recreated, or the group has a position in the new incarnation
            if found.read_at_ms is not None and found.read_at_ms >= event.detected_at_ms:
                continue  # checkpointed since the new incarnation was found: not a position of the old one
            cp = found.checkpoint
            out.setdefault(group, []).append(
                PartitionRow(
                    upstream.topic,
                    upstream.partition,
                    cp.upstream_offset,
                    remote.topic,
                    None,
                    None,
                    None,
                    None,
                    OLD_INCARNATION,
                )
            )
    return out


def merge_plans(plans: list[GroupPlan], rows: Mapping[str, list[PartitionRow]]) -> list[GroupPlan]:
    """The job's plans with the old-incarnation rows added (a group without a plan gets one), sorted by group."""
    by_group = {p.group: p for p in plans}
    for group, extra in rows.items():
        plan = by_group.get(group)
        if plan is None:
            plan = by_group[group] = GroupPlan(group, NOT_CHECKED)
        plan.partitions.extend(extra)
    return sorted(by_group.values(), key=lambda p: p.group)


__all__ = ["NOT_CHECKED", "merge_plans", "old_incarnation_rows"]
