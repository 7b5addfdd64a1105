"""Kafka's read_committed rule, applied from the transaction markers in the log itself (pure: no I/O).

A read_committed consumer normally relies on the broker listing the aborted transactions in each
fetch answer. Some Kafka-protocol brokers (Tansu) never list them, yet write correct COMMIT/ABORT
control batches; reading raw batches (read_uncommitted) and deciding visibility from those markers
gives the same answer as Apache Kafka on both:

* a non-transactional record is visible;
* a transactional record is visible once a COMMIT marker of its producer id follows it, and dropped
  when an ABORT marker of its producer id follows;
* nothing at or after the first record of a still-open transaction is readable (the last stable
  offset), even records whose own fate is known.

:class:`ReadCommittedFilter` applies the rule incrementally, one partition's batches fed in log order
(the offset store catches up from where it stopped); :func:`apply_read_committed` runs it over a whole
partition (the test suite's reader). Batches are kafka-python's ``kafka.record`` batches, or anything
with the same attributes.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol


class RecordLike(Protocol):
    """What the rule reads of a record (kafka-python's ``DefaultRecord``; ``commit`` on control records)."""

    @property
    def offset(self) -> int: ...


class BatchLike(Protocol):
    """What the rule reads of a record batch (kafka-python's ``DefaultRecordBatch``)."""

    @property
    def producer_id(self) -> int: ...

    @property
    def is_transactional(self) -> bool: ...

    @property
    def is_control_batch(self) -> bool: ...

    def __iter__(self) -> Iterator[Any]: ...


@dataclass(frozen=True)
class CommittedRecord:
    """A record a read_committed consumer would see (headers as (key, value) pairs)."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


@dataclass
class PartitionLog:
    """What one partition holds, split by the transaction rule."""

    committed: list[CommittedRecord] = field(default_factory=list)
    aborted: int = 0  # records dropped because an ABORT marker of their producer follows them
    open: int = 0  # records of transactions with no marker yet, and every record after the first of them
    undecided: list[CommittedRecord] = field(default_factory=list)  # the records of transactions still open
    markers: list[tuple[int, int, bool]] = field(default_factory=list)  # (offset, producer id, commit?)
    high_watermark: int = 0


@dataclass
class _Held:
    """A data batch waiting behind the last stable offset; ``fate`` None while its transaction is open."""

    records: list[CommittedRecord]
    fate: bool | None


class ReadCommittedFilter:
    """The rule over one partition, fed batch by batch in log order; keeps only what is still undecided.

    :meth:`add` returns the records that became readable, in offset order. Held back are the batches
    from the first still-open transaction on (one list entry per batch, plus the open transactions by
    producer id), so the state stays small however long the log is.
    """

    def __init__(self, keep_markers: bool = True) -> None:
        """``keep_markers``: list every marker seen in :attr:`markers` (a whole-partition report); a
        long-lived reader passes False, as the list would grow with every transaction."""
        self._keep_markers = keep_markers
        self._held: deque[_Held] = deque()
        self._open: dict[int, list[_Held]] = {}  # producer id -> its batches waiting for a marker
        self.aborted = 0
        self.markers: list[tuple[int, int, bool]] = []

    @property
    def open(self) -> int:
        """Records not readable yet (past the last stable offset)."""
        return sum(len(h.records) for h in self._held)

    def undecided(self) -> list[CommittedRecord]:
        """The records of transactions with no marker yet, in offset order."""
        return [r for held in self._held if held.fate is None for r in held.records]

    def add(self, batch: BatchLike) -> list[CommittedRecord]:
        """Take the next batch of the log; the records this makes readable."""
        if batch.is_control_batch:
            for marker in batch:
                commit = bool(marker.commit)
                if self._keep_markers:
                    self.markers.append((int(marker.offset), batch.producer_id, commit))
                for waiting in self._open.pop(batch.producer_id, []):
                    waiting.fate = commit
        else:
            records = [CommittedRecord(r.offset, r.key, r.value, tuple(r.headers), r.timestamp) for r in batch]
            if batch.is_transactional:
                held = _Held(records, None)
                self._open.setdefault(batch.producer_id, []).append(held)
            else:
                held = _Held(records, True)
            self._held.append(held)
        return self._release()

    def _release(self) -> list[CommittedRecord]:
        readable: list[CommittedRecord] = []
        while self._held and self._held[0].fate is not None:
            held = self._held.popleft()
            if held.fate:
                readable.extend(held.records)
            else:
                self.aborted += len(held.records)
        return readable


def apply_read_committed(batches: Iterable[BatchLike]) -> PartitionLog:
    """Kafka's read_committed rule over a partition's batches in log order."""
    rule = ReadCommittedFilter()
    log = PartitionLog()
    for batch in batches:
        log.committed.extend(rule.add(batch))
    log.aborted, log.open, log.markers, log.undecided = rule.aborted, rule.open, rule.markers, rule.undecided()
    return log
