"""What ``mm2 backfill`` copies: work units, chunks and totals (pure logic, no I/O).

One work unit is one source partition's backlog ``[start, end)``: Spark runs one task per unit, so a
partition's records are copied by one producer in order. ``start`` is where the flow stands (the
MirrorSource offset it committed + 1) or the log start; ``end`` the source's high watermark when the
plan was made. A unit is copied in chunks, one transaction each, each carrying the unit's progress.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from mirror.driver.backfill_leases import with_topics_excluded  # re-exported: the lease merge owns it

#: Records per transaction: large enough that commits cost little, small enough that a retry redoes little.
DEFAULT_CHUNK_RECORDS = 50_000


@dataclass(frozen=True)
class WorkUnit:
    """Copy source ``topic``-``partition`` offsets ``[start, end)`` to ``target_topic``, same partition."""

    topic: str
    partition: int
    target_topic: str
    start: int
    end: int

    @property
    def records(self) -> int:
        """Offsets in the range (an upper bound of records: transaction markers take offsets too)."""
        return max(0, self.end - self.start)

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass(frozen=True)
class BackfillPlan:
    """Every unit of one run, plus the average record size used to estimate bytes (overall, and per
    topic where the sample reached it)."""

    source: str
    target: str
    units: tuple[WorkUnit, ...]
    avg_record_bytes: float
    topic_record_bytes: Mapping[str, float] = field(default_factory=dict)

    def unit_bytes(self, unit: WorkUnit) -> float:
        """A unit's estimated size: its offsets times its topic's sampled record size (else the average)."""
        return unit.records * (self.topic_record_bytes.get(unit.topic) or self.avg_record_bytes or 1.0)

    @property
    def records(self) -> int:
        return sum(u.records for u in self.units)

    @property
    def estimated_bytes(self) -> int:
        return int(self.records * self.avg_record_bytes)

    @property
    def topics(self) -> list[str]:
        return sorted({u.topic for u in self.units})


def start_offset(log_start: int, committed: int | None) -> int:
    """First offset to copy: after the flow's committed offset (the last copied record), never below the log."""
    if committed is None or committed < 0:
        return log_start
    return max(log_start, committed + 1)


def plan_units(
    partitions: Iterable[tuple[str, int]],
    log_starts: Mapping[tuple[str, int], int],
    ends: Mapping[tuple[str, int], int],
    committed: Mapping[tuple[str, int], int],
    remote_topic: Mapping[str, str],
) -> list[WorkUnit]:
    """One unit per partition with records left to copy, sorted by topic and partition."""
    units = []
    for topic, partition in sorted(set(partitions)):
        tp = (topic, partition)
        start = start_offset(log_starts.get(tp, 0), committed.get(tp))
        end = ends.get(tp, start)
        if end > start:
            units.append(WorkUnit(topic, partition, remote_topic[topic], start, end))
    return units


def partition_transactional_id(source: str, target: str, topic: str, partition: int) -> str:
    return f"mm2-backfill-{source}-{target}-{topic}-{partition}"


def transactional_id(source: str, target: str, unit: WorkUnit) -> str:
    """Stable across attempts of one unit, so a retried or speculative attempt fences the previous one."""
    return partition_transactional_id(source, target, unit.topic, unit.partition)


def assigned_partitions(task_partitions: str | None) -> set[tuple[str, int]]:
    """(topic, partition) pairs of a MirrorSource task's ``task.assigned.partitions`` (``topic-N,...``)."""
    out: set[tuple[str, int]] = set()
    for item in (task_partitions or "").split(","):
        item = item.strip()
        topic, sep, number = item.rpartition("-")
        if sep and topic and number.isdigit():
            out.add((topic, int(number)))
    return out


__all__ = [
    "DEFAULT_CHUNK_RECORDS",
    "BackfillPlan",
    "WorkUnit",
    "assigned_partitions",
    "plan_units",
    "start_offset",
    "transactional_id",
    "with_topics_excluded",
]
