"""Exact offset translation from offset mappings (pure; no I/O).

:class:`OffsetMappingIndex` holds, per upstream topic-partition, the mappings read from the mappings
topic (see :mod:`mirror.client.offset_mappings`) as sorted, disjoint upstream intervals. A later
mapping wins over an earlier one where they overlap (records re-sent after a crash: the newest copy is
where a group should continue), and a mapping that ends below what is already known (an upstream
rewind: the task restarted from an older stored offset, or the topic was recreated) also drops
everything above it, as Kafka's offset-sync store forgets its history on a rewind. Memory is one
interval per discontinuity of the copy (not per record); at most ``max_intervals`` are kept per
partition, oldest dropped first.

:meth:`OffsetMappingIndex.translate` answers the downstream offset of exactly the first record a
group committed at upstream offset ``o`` has not consumed, or None when no mapping covers ``o``;
:class:`ExactOffsetTranslator` then falls back to Kafka's offset-sync translation, which is always on
the safe side (it may re-read, never skip).

:meth:`OffsetMappingIndex.translate_back` is the inverse used for failback (a group consuming the
remote topic on the target goes back to the original topic on the source).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from mirror.client.errors import RecordFormatError
from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import OffsetMapping

DEFAULT_MAX_INTERVALS = 200_000


class _Interval(NamedTuple):
    lo: int  # lowest upstream offset translated by it
    hi: int  # highest (inclusive): the offset after the run's last record
    first: int  # upstream offset of the run's first record
    down: int  # its downstream offset


class Translation(NamedTuple):
    """A translated offset and whether it is exact (False: a safe estimate that may re-read)."""

    offset: int
    exact: bool


class _Partition:
    """One upstream partition's intervals (forward) and runs by downstream offset (backward)."""

    __slots__ = ("by_down", "down_keys", "ivs", "los", "max_intervals")

    def __init__(self, max_intervals: int) -> None:
        self.los: list[int] = []
        self.ivs: list[_Interval] = []
        self.by_down: dict[int, OffsetMapping] = {}
        self.down_keys: list[int] | None = None  # sorted keys of by_down, rebuilt lazily
        self.max_intervals = max_intervals

    def add(self, m: OffsetMapping) -> None:
        lo, hi = m.upstream_low, m.upstream_end
        ivs, los = self.ivs, self.los
        if ivs and hi < ivs[-1].hi:
            # Rewind: nothing above this mapping is known any more.
            cut = bisect_right(los, hi)
            del ivs[cut:], los[cut:]
            if ivs and ivs[-1].hi > hi:
                last = ivs[-1]
                ivs[-1] = last._replace(hi=hi)
        new = _Interval(lo, hi, m.upstream_offset, m.downstream_offset)
        end = bisect_right(los, hi)
        start = end
        while start > 0 and ivs[start - 1].hi >= lo:
            start -= 1
        replacement: list[_Interval] = []
        if start < end:
            left, right = ivs[start], ivs[end - 1]
            if left.lo < lo:
                replacement.append(left._replace(hi=lo - 1))
            replacement.append(new)
            if right.hi > hi:
                replacement.append(right._replace(lo=hi + 1))
        else:
            replacement.append(new)
        ivs[start:end] = replacement
        los[start:end] = [iv.lo for iv in replacement]
        if len(ivs) > self.max_intervals:
            drop = len(ivs) - self.max_intervals
            del ivs[:drop], los[:drop]
        known = self.by_down.get(m.downstream_offset)
        if known is None or known.count < m.count:
            if known is None:
                self.down_keys = None
            self.by_down[m.downstream_offset] = m
            if len(self.by_down) > self.max_intervals:
                oldest = min(self.by_down)
                del self.by_down[oldest]
                self.down_keys = None

    def translate(self, upstream: int) -> int | None:
        i = bisect_right(self.los, upstream) - 1
        if i < 0:
            return None
        iv = self.ivs[i]
        if upstream > iv.hi:
            return None
        return iv.down if upstream <= iv.first else iv.down + upstream - iv.first

    def translate_back(self, downstream: int) -> Translation | None:
        keys = self.down_keys
        if keys is None:
            keys = self.down_keys = sorted(self.by_down)
        j = bisect_right(keys, downstream) - 1
        if j < 0:
            return None  # before every mirrored record we know of
        prev = self.by_down[keys[j]]
        if downstream < prev.downstream_end:
            return Translation(prev.upstream_offset + downstream - prev.downstream_offset, True)
        if j + 1 < len(keys):
            nxt = self.by_down[keys[j + 1]]
            if nxt.upstream_low <= prev.upstream_end:
                # Nothing mirrored lies between the two runs: the records between are not from upstream.
                return Translation(max(nxt.upstream_offset, prev.upstream_end), True)
            return Translation(prev.upstream_end, False)
        return Translation(prev.upstream_end, downstream == prev.downstream_end)

    def intervals(self) -> list[tuple[int, int, int, int]]:
        return [tuple(iv) for iv in self.ivs]  # type: ignore[misc]


class OffsetMappingIndex:
    """Offset mappings of many upstream partitions; feed records in the order of the mappings topic."""

    def __init__(self, max_intervals: int = DEFAULT_MAX_INTERVALS) -> None:
        self._partitions: dict[TopicPartition, _Partition] = {}
        self._max_intervals = max_intervals
        self.ignored_records = 0

    def on_record(self, key: bytes | None, value: bytes | None) -> OffsetMapping | None:
        """Decode and apply one record; a malformed one is counted and skipped."""
        try:
            mapping = OffsetMapping.decode(key, value)
        except RecordFormatError:
            self.ignored_records += 1
            return None
        self.on_mapping(mapping)
        return mapping

    def on_records(self, records: Iterable[tuple[bytes | None, bytes | None]]) -> None:
        for key, value in records:
            self.on_record(key, value)

    def on_mapping(self, mapping: OffsetMapping) -> None:
        tp = mapping.topic_partition
        part = self._partitions.get(tp)
        if part is None:
            part = self._partitions[tp] = _Partition(self._max_intervals)
        part.add(mapping)

    def translate(self, topic_partition: TopicPartition, upstream_offset: int) -> int | None:
        """Downstream offset of the first record not consumed by a group at ``upstream_offset``; None if unknown."""
        part = self._partitions.get(topic_partition)
        return None if part is None else part.translate(upstream_offset)

    def translate_back(self, topic_partition: TopicPartition, downstream_offset: int) -> Translation | None:
        """Upstream offset a group at ``downstream_offset`` of the remote topic continues from (failback).

        ``topic_partition`` is the UPSTREAM topic-partition. None: no mirrored record known at or
        before that position; inexact answers are on the safe side (lower upstream offset).
        """
        part = self._partitions.get(topic_partition)
        return None if part is None else part.translate_back(downstream_offset)

    def topic_partitions(self) -> list[TopicPartition]:
        return list(self._partitions)

    def copied_through(self, topic_partition: TopicPartition) -> int:
        """The upstream offset after the newest copied record the mappings know of (-1: none)."""
        part = self._partitions.get(topic_partition)
        return part.ivs[-1].hi if part is not None and part.ivs else -1

    def intervals(self, topic_partition: TopicPartition) -> list[tuple[int, int, int, int]]:
        """(lo, hi, first upstream, first downstream) per interval, for tests and diagnostics."""
        part = self._partitions.get(topic_partition)
        return [] if part is None else part.intervals()

    def __len__(self) -> int:
        return sum(len(p.ivs) for p in self._partitions.values())


class SyncTranslator(Protocol):
    """Kafka's offset-sync translation (:class:`~mirror.connectors.offset_sync_store.OffsetSyncStore`)."""

    @property
    def read_to_end(self) -> bool: ...

    def translate_downstream(self, group: str | None, topic_partition: TopicPartition,
                             upstream_offset: int) -> int | None: ...


class ExactOffsetTranslator:
    """Exact translation where a mapping covers the offset, else Kafka's offset-sync translation.

    Answers nothing until the offset-sync store finished its initial read, exactly like the store
    alone, so checkpoints start at the same moment as in Kafka.
    """

    def __init__(self, index: OffsetMappingIndex, syncs: SyncTranslator) -> None:
        self.index = index
        self.syncs = syncs

    def translate_downstream(self, group: str | None, topic_partition: TopicPartition,
                             upstream_offset: int) -> int | None:
        return self.translate(group, topic_partition, upstream_offset)[0]

    def translate(self, group: str | None, topic_partition: TopicPartition,
                  upstream_offset: int) -> tuple[int | None, bool]:
        """(downstream offset or None/-1 as the store answers, exact?)."""
        if not self.syncs.read_to_end:
            return None, False
        exact = self.index.translate(topic_partition, upstream_offset)
        if exact is not None:
            return exact, True
        return self.syncs.translate_downstream(group, topic_partition, upstream_offset), False


__all__ = ["DEFAULT_MAX_INTERVALS", "ExactOffsetTranslator", "OffsetMappingIndex", "SyncTranslator", "Translation"]
