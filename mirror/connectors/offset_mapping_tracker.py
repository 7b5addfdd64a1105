"""Turns acknowledged copies of one source partition into offset mappings (pure; no I/O).

The source task feeds each acknowledged run (or record) in copy order. Runs that continue the open
mapping on both sides (next upstream and next downstream offset) only extend it, so a steady flow
costs one integer addition per run and emits nothing until the task publishes what was acknowledged
(:meth:`flush`, within about a second, and at each offset flush; it re-emits the grown run under the
same key) or a discontinuity (:meth:`add_run` returns the closed mapping). An upstream gap between
two runs (transaction markers, compaction) starts a new mapping whose ``upstream_low`` covers the gap,
so groups committed inside it translate exactly too. Offsets after the last copied record that hold
no record (the commit marker that ends a transactional partition) are claimed by :meth:`trailing_gap`
once the consumer has read past them: a group committed at the end translates exactly too.
"""

from __future__ import annotations

from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import OffsetMapping


class OffsetMappingTracker:
    """The open mapping of one partition and the last upstream offset copied before it."""

    __slots__ = ("count", "down", "emitted", "first", "low", "previous", "tail", "tp")

    def __init__(self, topic_partition: TopicPartition, resume_after: int = -1) -> None:
        """``resume_after``: upstream offset of the last record already copied (the stored source
        offset the consumer resumes after), or -1 if unknown."""
        self.tp = topic_partition
        self.previous = resume_after  # last upstream offset copied, -1 if unknown
        self.low = self.first = self.down = -1
        self.count = 0
        self.emitted = 0  # records of the open mapping already emitted (by flush)
        self.tail = -1  # the end offset last claimed by trailing_gap

    def add_run(self, first_upstream: int, first_downstream: int, count: int) -> OffsetMapping | None:
        """``count`` records with consecutive offsets on both sides; returns a mapping closed by it, if any."""
        if count <= 0:
            return None
        n = self.count
        if n and first_upstream == self.first + n and first_downstream == self.down + n:
            self.count = n + count
            self.previous = first_upstream + count - 1
            return None
        closed = self._close()
        previous = self.previous
        self.low = previous + 1 if 0 <= previous < first_upstream else first_upstream
        self.first = first_upstream
        self.down = first_downstream
        self.count = count
        self.emitted = 0
        self.previous = first_upstream + count - 1
        return closed

    def add_pairs(self, pairs: list[tuple[int, int]]) -> list[OffsetMapping]:
        """Records' exact (upstream, downstream) offsets, in copy order; returns the mappings closed."""
        closed: list[OffsetMapping] = []
        i = 0
        n = len(pairs)
        while i < n:
            up, down = pairs[i]
            j = i + 1
            while j < n and pairs[j][0] == up + (j - i) and pairs[j][1] == down + (j - i):
                j += 1
            m = self.add_run(up, down, j - i)
            if m is not None:
                closed.append(m)
            i = j
        return closed

    def break_continuity(self) -> OffsetMapping | None:
        """Records were copied whose downstream offsets are unknown: close the open mapping and claim
        nothing about the offsets before the next one."""
        closed = self._close()
        self.previous = -1
        return closed

    def flush(self) -> OffsetMapping | None:
        """The open mapping if it grew since last emitted (publication: make the newest copies translatable)."""
        if self.count <= self.emitted:
            return None
        self.emitted = self.count
        return OffsetMapping(self.tp, self.low, self.first, self.down, self.count)

    def trailing_gap(self, end: int) -> OffsetMapping | None:
        """The consumer read to ``end`` and every record it returned was acknowledged: the offsets after
        the last copied record up to ``end`` hold no record (transaction markers). Returns a run of no
        records saying so - a group at any of them resumes at the next downstream offset - once per end."""
        n = self.count
        previous = self.previous
        if n == 0 or previous < 0 or previous != self.first + n - 1 or end <= previous + 1 or end == self.tail:
            return None
        self.tail = end
        return OffsetMapping(self.tp, previous + 1, end, self.down + n, 0)

    def _close(self) -> OffsetMapping | None:
        n = self.count
        if n == 0:
            return None
        self.count = 0
        if n <= self.emitted:
            return None
        return OffsetMapping(self.tp, self.low, self.first, self.down, n)


__all__ = ["OffsetMappingTracker"]
