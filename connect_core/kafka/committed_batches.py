"""read_committed over raw batches (pure: no I/O): which fetched batches a copy may pass on, in log order.

The fetch itself asks for read_committed, so the broker stops at the last stable offset (nothing of an
open transaction comes back). What it leaves to the client is dropping the batches of aborted
transactions; two ways, one per kind of broker:

* **the aborted list** (Apache Kafka): each answer lists (producer id, first offset) of the aborted
  transactions in its range. A transactional batch at or after such a first offset is dropped until
  that producer's ABORT marker; everything else below the last stable offset is committed and passes
  at once.
* **the markers** (Tansu never fills the list): a transactional batch is held until the COMMIT (pass)
  or ABORT (drop) marker of its producer follows; later batches wait behind it, so order is kept.

A filter starts with the markers and switches to the list for good once an answer carries a non-empty
one (the broker has shown it fills it): a broker that filters correctly stops paying for the hold.
Control batches never pass. Whole batches are kept or dropped: a transactional batch never spans two
transactions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable

from kafka.record import MemoryRecords  # type: ignore[import-untyped]

from connect_core.kafka.record_batch import RawBatch


class _Held:
    __slots__ = ("batch", "fate")

    def __init__(self, batch: RawBatch, fate: bool | None) -> None:
        self.batch = batch
        self.fate = fate  # None: its transaction has no marker yet


class CommittedBatches:
    """One partition's batches in, the batches a read_committed consumer would see out (see module doc)."""

    def __init__(self) -> None:
        self.trusts_aborted_list = False
        self._held: deque[_Held] = deque()
        self._open: dict[int, list[_Held]] = {}  # producer id -> its batches waiting for a marker
        self._aborting: dict[int, int] = {}  # producer id -> first offset of its aborted transaction (list mode)
        self.aborted_batches = 0
        self.control_batches = 0

    @property
    def holding(self) -> int:
        """Batches waiting behind a transaction with no marker yet."""
        return len(self._held)

    def first_held_offset(self) -> int | None:
        """The base offset of the oldest batch not passed yet (a position must not be committed past it)."""
        return self._held[0].batch.base_offset if self._held else None

    def add(self, batches: Iterable[RawBatch], aborted: list[tuple[int, int]]) -> list[RawBatch]:
        """The next batches of the partition (one Fetch answer, log order) and the answer's aborted list;
        returns the batches that may now be copied, in log order."""
        if aborted and not self.trusts_aborted_list and not self._held:
            self.trusts_aborted_list = True
        if self.trusts_aborted_list:
            return self._with_list(batches, aborted)
        out: list[RawBatch] = []
        for batch in batches:
            header = batch.header
            if header is not None and header.is_control:
                self.control_batches += 1
                commit = _is_commit(batch)
                for waiting in self._open.pop(header.producer_id, []):
                    waiting.fate = commit
            elif header is not None and header.is_transactional:
                held = _Held(batch, None)
                self._open.setdefault(header.producer_id, []).append(held)
                self._held.append(held)
            elif self._held:
                self._held.append(_Held(batch, True))
            else:
                out.append(batch)
            while self._held and self._held[0].fate is not None:
                first = self._held.popleft()
                if first.fate:
                    out.append(first.batch)
                else:
                    self.aborted_batches += 1
        return out

    def _with_list(self, batches: Iterable[RawBatch], aborted: list[tuple[int, int]]) -> list[RawBatch]:
        pending = sorted(aborted, key=lambda a: a[1])
        out: list[RawBatch] = []
        for batch in batches:
            header = batch.header
            while pending and pending[0][1] <= batch.base_offset:
                pid, first = pending.pop(0)
                self._aborting[pid] = first
            if header is None or not header.is_transactional:
                out.append(batch)
            elif header.is_control:
                self.control_batches += 1
                if not _is_commit(batch):
                    self._aborting.pop(header.producer_id, None)
            elif header.producer_id in self._aborting:
                self.aborted_batches += 1
            else:
                out.append(batch)
        return out


def _is_commit(batch: RawBatch) -> bool:
    """The control record's type (0 ABORT, 1 COMMIT); a control batch is never compressed."""
    decoded = MemoryRecords(bytes(batch.data)).next_batch()
    for marker in decoded:
        return bool(marker.commit)
    return False


__all__ = ["CommittedBatches"]
