"""In-memory index of offset syncs, and offset translation with it (Kafka's ``OffsetSyncStore``).

Pure: whoever tails the offset-syncs topic (partition 0 only) feeds each record to
:meth:`OffsetSyncStore.on_record`/:meth:`on_sync`, calls :meth:`start` before the initial read and
:meth:`mark_read_to_end` once it reached the end. The checkpoint task and the Spark
``translate-offsets`` job share it.

For each upstream topic-partition the store keeps 64 slots (``syncs[i]``; two slots may hold the
same object, compared by identity), with these invariants:

* A: ``syncs[0]`` is the latest sync read.
* B: for ``i < j`` with distinct syncs, ``syncs[i].up <= syncs[j].up + 2^j - 2^i``
  (slots get older with the index, but never too old for their slot).
* C: for ``i < j`` with distinct syncs, ``syncs[i].up >= syncs[j].up + 2^max(i-2, 0)``
  (slots are spaced roughly exponentially).
* D: ``syncs[63]`` is the earliest sync usable for translation.

So translation is exact near the live end and coarser further back. Arithmetic on the bounds wraps
at 64 bits like Java's ``long`` (``1L << 63`` is negative), which the invariant checks depend on.

Translation (``translate_downstream``) returns ``None`` for "no answer" (not loaded yet, or no sync
for the partition), ``-1`` for "group is older than every retained sync", else the downstream
offset: ``sync.down`` when the group sits exactly at ``sync.up``, else ``sync.down + 1`` (never
estimates forward, so a translated group never skips a record).

Each update replaces the partition's list (copy-on-write) so a reader on another thread always
sees a consistent array.
"""

from __future__ import annotations

from collections.abc import Iterable

from mirror.client.formats import OffsetSync, TopicPartition

SYNCS_PER_PARTITION = 64

_MIN64 = -(1 << 63)
_MAX64 = (1 << 63) - 1
_POW = [1 << i for i in range(SYNCS_PER_PARTITION)]
_POW_C = [1 << max(i - 2, 0) for i in range(SYNCS_PER_PARTITION)]


def _s64(x: int) -> int:
    """Wrap to a signed 64-bit value (Java ``long`` overflow)."""
    if _MIN64 <= x <= _MAX64:
        return x
    return ((x - _MIN64) & 0xFFFFFFFFFFFFFFFF) + _MIN64


def _inv_b(i_sync: OffsetSync, j_sync: OffsetSync, i: int, j: int) -> bool:
    """Invariant B for (i, j): ``i_sync`` is recent enough relative to ``j_sync``."""
    if i_sync is j_sync:
        return True
    bound = _s64(j_sync.upstream_offset + _POW[j] - _POW[i])
    return bound < 0 or i_sync.upstream_offset <= bound


def _inv_c(i_sync: OffsetSync, j_sync: OffsetSync, i: int) -> bool:
    """Invariant C for (i, j): ``i_sync`` is separated enough from ``j_sync``."""
    if i_sync is j_sync:
        return True
    bound = _s64(j_sync.upstream_offset + _POW_C[i])
    return bound >= 0 and i_sync.upstream_offset >= bound


class OffsetSyncStore:
    """Latest-first, exponentially spaced offset syncs per upstream topic-partition."""

    def __init__(self) -> None:
        self._syncs: dict[TopicPartition, list[OffsetSync]] = {}
        self._initialization_must_read_to_end = True
        self._read_to_end = False

    # -- lifecycle -----------------------------------------------------------------------------

    def subset(self, topic_partitions: Iterable[TopicPartition]) -> OffsetSyncStore:
        """A store of only these partitions' syncs (sharing them), in the same state: for one batch-job task."""
        out = OffsetSyncStore()
        out._initialization_must_read_to_end = self._initialization_must_read_to_end
        out._read_to_end = self._read_to_end
        out._syncs = {tp: self._syncs[tp] for tp in topic_partitions if tp in self._syncs}
        return out

    def start(self, initialization_must_read_to_end: bool) -> None:
        """Call before feeding the initial read.

        With ``True`` (previous checkpoints unknown), every sync read before
        :meth:`mark_read_to_end` replaces the partition's history, so only offsets at or after the
        startup position translate and checkpoints cannot go backwards. With ``False`` history is
        kept, which lets lagging groups translate right after a restart.
        """
        self._initialization_must_read_to_end = initialization_must_read_to_end

    def mark_read_to_end(self) -> None:
        """The initial read reached the end of the topic: translation may start."""
        self._read_to_end = True

    @property
    def read_to_end(self) -> bool:
        return self._read_to_end

    @property
    def initialization_must_read_to_end(self) -> bool:
        return self._initialization_must_read_to_end

    # -- feeding -------------------------------------------------------------------------------

    def on_record(self, key: bytes | None, value: bytes | None) -> OffsetSync:
        """Decode an offset-syncs record and apply it; raises RecordFormatError if malformed."""
        sync = OffsetSync.decode(key, value)
        self.on_sync(sync)
        return sync

    def on_records(self, records: Iterable[tuple[bytes | None, bytes | None]]) -> None:
        for key, value in records:
            self.on_record(key, value)

    def on_sync(self, sync: OffsetSync) -> None:
        """Apply one sync read from the offset-syncs topic."""
        tp = sync.topic_partition
        old = self._syncs.get(tp)
        if old is None:
            self._syncs[tp] = [sync] * SYNCS_PER_PARTITION
            return
        if (not self._read_to_end and self._initialization_must_read_to_end) or sync.upstream_offset < old[
            0
        ].upstream_offset:
            # Loading the last sync only, or an upstream rewind: all previous syncs are invalid.
            self._syncs[tp] = [sync] * SYNCS_PER_PARTITION
            return
        self._syncs[tp] = self._updated(old, sync)

    @staticmethod
    def _updated(original: list[OffsetSync], sync: OffsetSync) -> list[OffsetSync]:
        n = SYNCS_PER_PARTITION
        syncs = list(original)
        replacement = sync
        ri = 0  # index into ``original`` of the next old value to consider promoting
        syncs[0] = sync  # invariant A
        for current in range(1, n):
            previous = current - 1
            prev_sync = syncs[previous]
            # Try to carry an old value forward as the replacement, so more distinct syncs survive.
            while True:
                old_value = original[ri]
                is_recent = _inv_b(prev_sync, old_value, previous, current)
                separated_from_previous = _inv_c(prev_sync, old_value, previous)
                nxt = current + 1
                separated_from_next = nxt >= n or _inv_c(old_value, syncs[nxt], current)
                duplicate = ri + 1 < n and old_value is original[ri + 1]
                promote = is_recent and separated_from_previous and separated_from_next
                if promote:
                    replacement = old_value
                skip = duplicate or not separated_from_previous
                if promote or skip:
                    ri += 1
                if not (ri < current and skip):
                    break
            if _inv_b(prev_sync, syncs[current], previous, current):
                break  # B holds here, hence for every later slot too
            syncs[current] = replacement  # repair B
        return syncs

    # -- reading -------------------------------------------------------------------------------

    def translate_downstream(
        self, group: str | None, topic_partition: TopicPartition, upstream_offset: int
    ) -> int | None:
        """Downstream offset for a group committed at ``upstream_offset`` (next record to read).

        ``None``: no answer (initial read unfinished, or no sync for the partition) - emit nothing.
        ``-1``: the offset is older than every retained sync - cannot translate accurately.
        ``group`` is only for the caller's logging symmetry with Kafka.
        """
        if not self._read_to_end:
            return None
        syncs = self._syncs.get(topic_partition)
        if syncs is None:
            return None
        found = syncs[-1]
        for s in syncs:
            if s.upstream_offset <= upstream_offset:
                found = s
                break
        if found.upstream_offset > upstream_offset:
            return -1
        if found.upstream_offset == upstream_offset:
            return found.downstream_offset
        return found.downstream_offset + 1

    def sync_for(self, topic_partition: TopicPartition, index: int) -> OffsetSync:
        """The sync in slot ``index`` (0 = latest); for tests and diagnostics."""
        syncs = self._syncs.get(topic_partition)
        if syncs is None:
            raise KeyError(f"No syncs present for {topic_partition}")
        return syncs[index]

    def syncs(self, topic_partition: TopicPartition) -> tuple[OffsetSync, ...] | None:
        """All 64 slots of a partition (a snapshot), or None if it has no sync."""
        syncs = self._syncs.get(topic_partition)
        return None if syncs is None else tuple(syncs)

    def distinct_syncs(self, topic_partition: TopicPartition) -> list[OffsetSync]:
        """The distinct syncs retained for a partition, latest first."""
        syncs = self._syncs.get(topic_partition)
        if syncs is None:
            return []
        out = [syncs[0]]
        for s in syncs[1:]:
            if s is not out[-1]:
                out.append(s)
        return out

    def topic_partitions(self) -> list[TopicPartition]:
        return list(self._syncs)

    def __repr__(self) -> str:
        return (
            f"OffsetSyncStore(partitions={len(self._syncs)}, read_to_end={self._read_to_end}, "
            f"initialization_must_read_to_end={self._initialization_must_read_to_end})"
        )


__all__ = ["SYNCS_PER_PARTITION", "OffsetSyncStore"]
