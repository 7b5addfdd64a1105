"""read_committed as Kafka's consumer applies it: from the aborted transactions a Fetch answer lists (pure).

For brokers that list them (:attr:`~connect_core.kafka.broker_capabilities.BrokerCapabilities.
filters_aborted_transactions`). A read_committed answer stops at the last stable offset and lists, as
(producer id, first offset), every aborted transaction overlapping its range, so each answer is decided
on its own: a producer becomes aborted at its listed first offset, its transactional batches are
dropped until its ABORT marker, and control batches are never records. Where the broker does not list
them, :mod:`connect_core.kafka.transaction_markers` decides from the markers instead.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable

from connect_core.kafka.transaction_markers import BatchLike, CommittedRecord


def listed_read_committed(
    batches: Iterable[BatchLike], aborted_transactions: Iterable[tuple[int, int]]
) -> list[CommittedRecord]:
    """The records of one partition's read_committed answer a consumer returns, in offset order."""
    pending = [(first_offset, producer_id) for producer_id, first_offset in aborted_transactions]
    heapq.heapify(pending)
    aborted: set[int] = set()
    readable: list[CommittedRecord] = []
    for batch in batches:
        records = list(batch)
        if not records:
            continue
        last_offset = int(records[-1].offset)
        while pending and pending[0][0] <= last_offset:
            aborted.add(heapq.heappop(pending)[1])
        if batch.is_control_batch:
            if not any(bool(marker.commit) for marker in records):
                aborted.discard(batch.producer_id)
        elif not (batch.is_transactional and batch.producer_id in aborted):
            readable.extend(CommittedRecord(r.offset, r.key, r.value, tuple(r.headers), r.timestamp) for r in records)
    return readable


__all__ = ["listed_read_committed"]
