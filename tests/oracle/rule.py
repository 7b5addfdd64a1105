"""Kafka's read_committed rule over one partition's batches, written for the suite alone.

What a read_committed consumer of Apache Kafka returns, decided from the log itself rather than from the
broker's aborted-transactions list (which Tansu leaves empty, broker-notes.md):

* a record of a non-transactional batch is visible;
* a transactional batch belongs to the open transaction of its producer id; the next control record of
  that producer id decides it: COMMIT makes its records visible, ABORT drops them;
* the last stable offset is the first offset of the earliest transaction with no marker yet: nothing at or
  after it is readable, whatever its own fate;
* control batches are never returned.

Deliberately not the product's algorithm (:mod:`connect_core.kafka.transaction_markers` holds batches in a
queue as they arrive): here every transaction's fate is settled first, then the log is cut at the last
stable offset. Two ways to the same answer let the suite catch a mistake in either.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from tests.oracle.batches import ABORT, COMMIT, Batch, Record

#: A record a read_committed consumer would see: offset, key, value, headers ((key, value) pairs), timestamp.
CommittedRecord = Record


@dataclass
class PartitionLog:
    """One partition split by the rule."""

    committed: list[CommittedRecord] = field(default_factory=list)
    aborted: int = 0  # records below the last stable offset that an ABORT of their producer drops
    open: int = 0  # records at or after the last stable offset (none readable yet)
    undecided: list[CommittedRecord] = field(default_factory=list)  # records of transactions with no marker yet
    markers: list[tuple[int, int, bool]] = field(default_factory=list)  # (offset, producer id, commit?)
    high_watermark: int = 0
    last_stable_offset: int | None = None  # None: no transaction is open


def apply_read_committed(batches: Iterable[Batch]) -> PartitionLog:
    """The rule over a partition's batches given in log order."""
    log = PartitionLog()
    data: list[Batch] = []
    fate: dict[int, bool] = {}  # index into ``data`` -> committed?
    waiting: dict[int, list[int]] = {}  # producer id -> indexes of its batches with no marker yet
    for batch in batches:
        if batch.is_control_batch:
            for offset, kind in batch.control_types():
                if kind not in (ABORT, COMMIT):
                    continue  # a control record that ends no transaction
                log.markers.append((offset, batch.producer_id, kind == COMMIT))
                for index in waiting.pop(batch.producer_id, []):
                    fate[index] = kind == COMMIT
            continue
        if batch.is_transactional:
            waiting.setdefault(batch.producer_id, []).append(len(data))
        data.append(batch)
    still_open = frozenset(index for indexes in waiting.values() for index in indexes)
    if still_open:
        log.last_stable_offset = data[min(still_open)].base_offset
    for index, batch in enumerate(data):
        records = batch.records
        if index in still_open:
            log.undecided.extend(records)
        if log.last_stable_offset is not None and batch.base_offset >= log.last_stable_offset:
            log.open += len(records)
        elif not batch.is_transactional or fate[index]:
            log.committed.extend(records)
        else:
            log.aborted += len(records)
    return log
