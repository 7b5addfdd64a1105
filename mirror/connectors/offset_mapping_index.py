"""Exact offset translation from offset mappings (pure; no I/O).

:class:`OffsetMappingIndex` holds, per upstream topic-partition, the mappings read from the mappings
topic (see :mod:`mirror.client.offset_mappings`) as sorted, disjoint upstream intervals. A later
mapping wins over an earlier one where they overlap (records re-sent after a crash: the newest copy is
where a group should continue), and a mapping that ends below what is already known (an upstream
rewind: the task restarted from an older stored offset, or the topic was recreated) also drops
everything above it, as Kafka's offset-sync store forgets its history on a rewind. Memory is one
interval per discontinuity of the copy (not per record); at most ``max_intervals`` are kept per
partition (oldest dropped first, in batches), stored as int64 columns: about
``BYTES_PER_INTERVAL`` bytes each, so at most ``1.125 * max_intervals * 64`` bytes per partition
(~14 MB at the default 200,000). Insert and lookup are O(log n) (see :class:`_Partition`).

:meth:`OffsetMappingIndex.translate` answers the downstream offset of exactly the first record a
group committed at upstream offset ``o`` has not consumed, or None when no mapping covers ``o``;
:class:`ExactOffsetTranslator` then falls back to Kafka's offset-sync translation, which is always on
the safe side (it may re-read, never skip).

:meth:`OffsetMappingIndex.translate_back` is the inverse used for failback (a group consuming the
remote topic on the target goes back to the original topic on the source).
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from mirror.client.errors import RecordFormatError
from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import OffsetMapping, decode_mappings

DEFAULT_MAX_INTERVALS = 200_000
#: Bytes per kept interval: four int64 forward and four backward (array storage, no object per interval).
BYTES_PER_INTERVAL = 64


class Translation(NamedTuple):
    """A translated offset and whether it is exact (False: a safe estimate that may re-read)."""

    offset: int
    exact: bool


def _trim(arrays: tuple[array[int], ...], cap: int) -> None:
    """Drop the oldest entries when more than ``cap`` plus an eighth are kept (amortised O(1) per insert)."""
    n = len(arrays[0])
    if n > cap + cap // 8:
        drop = n - cap
        for a in arrays:
            del a[:drop]


class _Partition:
    """One upstream partition's intervals by upstream offset (forward) and its runs by downstream offset (back).

    Parallel ``array('q')`` columns sorted by their first column: lookups bisect (O(log n)); inserts land
    at the tail in practice (a mapping never ends below the newest without being a rewind, which cuts the
    tail first), so they cost O(log n) plus the intervals they replace; the oldest entries are dropped in
    batches beyond ``max_intervals``. Memory: at most ``1.125 * max_intervals * BYTES_PER_INTERVAL``.
    """

    __slots__ = ("dcount", "dfirst", "dkeys", "dlow", "downs", "firsts", "his", "los", "max_intervals")

    def __init__(self, max_intervals: int) -> None:
        # forward: [lo, hi] translated from the run that starts at upstream ``first``, downstream ``down``
        self.los: array[int] = array("q")
        self.his: array[int] = array("q")
        self.firsts: array[int] = array("q")
        self.downs: array[int] = array("q")
        # backward: per downstream start, the longest run known there
        self.dkeys: array[int] = array("q")
        self.dcount: array[int] = array("q")
        self.dlow: array[int] = array("q")
        self.dfirst: array[int] = array("q")
        self.max_intervals = max_intervals

    def add(self, m: OffsetMapping) -> None:
        self._add_forward(m.upstream_low, m.upstream_offset + m.count, m.upstream_offset, m.downstream_offset)
        self._add_backward(m)

    def _add_forward(self, lo: int, hi: int, first: int, down: int) -> None:
        los, his, firsts, downs = self.los, self.his, self.firsts, self.downs
        if his and lo > his[-1]:  # the common case: the copy moved on
            los.append(lo)
            his.append(hi)
            firsts.append(first)
            downs.append(down)
            _trim((los, his, firsts, downs), self.max_intervals)
            return
        if his and hi < his[-1]:
            # Rewind: nothing above this mapping is known any more.
            cut = bisect_right(los, hi)
            for a in (los, his, firsts, downs):
                del a[cut:]
            if his and his[-1] > hi:
                his[-1] = hi
        # Replace the tail intervals this one overlaps (hi >= every kept hi here, so it ends the list).
        start = len(his)
        while start > 0 and his[start - 1] >= lo:
            start -= 1
        rows: list[tuple[int, int, int, int]] = []
        if start < len(his) and los[start] < lo:
            rows.append((los[start], lo - 1, firsts[start], downs[start]))
        rows.append((lo, hi, first, down))
        for a in (los, his, firsts, downs):
            del a[start:]
        for r_lo, r_hi, r_first, r_down in rows:
            los.append(r_lo)
            his.append(r_hi)
            firsts.append(r_first)
            downs.append(r_down)
        _trim((los, his, firsts, downs), self.max_intervals)

    def _add_backward(self, m: OffsetMapping) -> None:
        if m.count == 0:
            return  # no record there to go back to
        keys, down = self.dkeys, m.downstream_offset
        j = len(keys) if not keys or down > keys[-1] else bisect_left(keys, down)
        if j < len(keys) and keys[j] == down:
            if self.dcount[j] < m.count:
                self.dcount[j] = m.count
                self.dlow[j] = m.upstream_low
                self.dfirst[j] = m.upstream_offset
            return
        keys.insert(j, down)
        self.dcount.insert(j, m.count)
        self.dlow.insert(j, m.upstream_low)
        self.dfirst.insert(j, m.upstream_offset)
        _trim((keys, self.dcount, self.dlow, self.dfirst), self.max_intervals)

    def translate(self, upstream: int) -> int | None:
        i = bisect_right(self.los, upstream) - 1
        if i < 0 or upstream > self.his[i]:
            return None
        first, down = self.firsts[i], self.downs[i]
        return down if upstream <= first else down + upstream - first

    def translate_back(self, downstream: int) -> Translation | None:
        keys = self.dkeys
        j = bisect_right(keys, downstream) - 1
        if j < 0:
            return None  # before every mirrored record we know of
        prev_down, prev_first, prev_count = keys[j], self.dfirst[j], self.dcount[j]
        prev_end = prev_first + prev_count
        if downstream < prev_down + prev_count:
            return Translation(prev_first + downstream - prev_down, True)
        if j + 1 < len(keys):
            if self.dlow[j + 1] <= prev_end:
                # Nothing mirrored lies between the two runs: the records between are not from upstream.
                return Translation(max(self.dfirst[j + 1], prev_end), True)
            return Translation(prev_end, False)
        return Translation(prev_end, downstream == prev_down + prev_count)

    def copied_through(self) -> int:
        return self.his[-1] if self.his else -1

    def intervals(self) -> list[tuple[int, int, int, int]]:
        return list(zip(self.los, self.his, self.firsts, self.downs, strict=True))

    def memory_bytes(self) -> int:
        """Bytes held by the columns (allocation included)."""
        return sum(
            sys.getsizeof(a)
            for a in (self.los, self.his, self.firsts, self.downs, self.dkeys, self.dcount, self.dlow, self.dfirst)
        )

    def __len__(self) -> int:
        return len(self.los)


class OffsetMappingIndex:
    """Offset mappings of many upstream partitions; feed records in the order of the mappings topic."""

    def __init__(self, max_intervals: int = DEFAULT_MAX_INTERVALS) -> None:
        self._partitions: dict[TopicPartition, _Partition] = {}
        self._max_intervals = max_intervals
        self.ignored_records = 0

    def on_record(self, key: bytes | None, value: bytes | None) -> OffsetMapping | None:
        """Decode and apply one record (one run, or a segment of runs); returns its last run.

        A malformed record is counted and skipped; a tombstone (a record removed below the source's
        log start) changes nothing here: what it removed is older than anything a group can resume from.
        """
        try:
            runs = decode_mappings(key, value)
        except RecordFormatError:
            self.ignored_records += 1
            return None
        for mapping in runs:
            self.on_mapping(mapping)
        return runs[-1] if runs else None

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

    def subset(self, topic_partitions: Iterable[TopicPartition]) -> OffsetMappingIndex:
        """An index of only these partitions (sharing their state): what one task of a batch job needs."""
        out = OffsetMappingIndex(self._max_intervals)
        out._partitions = {tp: self._partitions[tp] for tp in topic_partitions if tp in self._partitions}
        return out

    def copied_through(self, topic_partition: TopicPartition) -> int:
        """The upstream offset after the newest copied record the mappings know of (-1: none)."""
        part = self._partitions.get(topic_partition)
        return -1 if part is None else part.copied_through()

    def intervals(self, topic_partition: TopicPartition) -> list[tuple[int, int, int, int]]:
        """(lo, hi, first upstream, first downstream) per interval, for tests and diagnostics."""
        part = self._partitions.get(topic_partition)
        return [] if part is None else part.intervals()

    def memory_bytes(self, topic_partition: TopicPartition) -> int:
        """What one partition's intervals take (bounded by ``max_intervals``, see the module docstring)."""
        part = self._partitions.get(topic_partition)
        return 0 if part is None else part.memory_bytes()

    def __len__(self) -> int:
        return sum(len(p) for p in self._partitions.values())


class SyncTranslator(Protocol):
    """Kafka's offset-sync translation (:class:`~mirror.connectors.offset_sync_store.OffsetSyncStore`)."""

    @property
    def read_to_end(self) -> bool: ...

    def translate_downstream(
        self, group: str | None, topic_partition: TopicPartition, upstream_offset: int
    ) -> int | None: ...


class ExactOffsetTranslator:
    """Exact translation where a mapping covers the offset, else Kafka's offset-sync translation.

    Answers nothing until the offset-sync store finished its initial read, exactly like the store
    alone, so checkpoints start at the same moment as in Kafka.
    """

    def __init__(self, index: OffsetMappingIndex, syncs: SyncTranslator) -> None:
        self.index = index
        self.syncs = syncs

    def translate_downstream(
        self, group: str | None, topic_partition: TopicPartition, upstream_offset: int
    ) -> int | None:
        return self.translate(group, topic_partition, upstream_offset)[0]

    def translate(
        self, group: str | None, topic_partition: TopicPartition, upstream_offset: int
    ) -> tuple[int | None, bool]:
        """(downstream offset or None/-1 as the store answers, exact?)."""
        if not self.syncs.read_to_end:
            return None, False
        exact = self.index.translate(topic_partition, upstream_offset)
        if exact is not None:
            return exact, True
        return self.syncs.translate_downstream(group, topic_partition, upstream_offset), False


__all__ = [
    "BYTES_PER_INTERVAL",
    "DEFAULT_MAX_INTERVALS",
    "ExactOffsetTranslator",
    "OffsetMappingIndex",
    "SyncTranslator",
    "Translation",
]
