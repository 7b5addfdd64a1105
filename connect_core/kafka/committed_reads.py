"""Partitions of a transactional log read to their end as a read_committed consumer sees them, on any broker.

Both the exactly-once offset store (which reads its offsets topic again and again) and one-off checks of a
copy (``mm2 demo``) need what a read_committed consumer reads, and some brokers hand aborted records to
every reader. So the read goes over raw read_committed Fetch answers and decides per answer: where the
cluster is known to list aborted transactions (:mod:`connect_core.kafka.broker_capabilities`) it drops
what the answer lists, as Kafka's consumer does; otherwise, the unknown case included, it applies the
rule from the transaction markers (:mod:`connect_core.kafka.transaction_markers`). Every answer also
feeds the cluster's capability evidence. A :class:`CommittedCursor` keeps a partition's place between
reads, so a long-lived reader catches up from where it stopped.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from typing import Any

from connect_core.kafka.aborted_list import listed_read_committed
from connect_core.kafka.broker_capabilities import record_fetch_answer
from connect_core.kafka.raw_fetch import FetchedBatches, RawFetcher
from connect_core.kafka.transaction_markers import CommittedRecord, ReadCommittedFilter

#: The broker's wait for a partition with nothing new: every read pays it once when all is read (some
#: brokers wait it out even then); a partition of many batches that answered nothing gets a longer one.
FIRST_WAIT_MS = 20
LONGEST_WAIT_MS = 5000


class CommittedReadTimeout(TimeoutError):
    """Partitions not read to their end in time (``behind``: their numbers)."""

    def __init__(self, topic: str, behind: list[int], timeout_s: float) -> None:
        super().__init__(f"{topic} not read to its end within {timeout_s:g} s (partitions {behind} behind)")
        self.behind = behind


class CommittedCursor:
    """One partition's place in a committed read: the next offset to fetch and the batches held for a marker."""

    def __init__(self) -> None:
        self.position = 0
        self.rule = ReadCommittedFilter(keep_markers=False)

    def readable(self, answer: FetchedBatches, broker_filters: bool) -> list[CommittedRecord]:
        """What this answer makes readable: by the broker's list where it filters and no batch is still
        held for a marker (a switch never splits a transaction), else by the markers."""
        if broker_filters and self.rule.open == 0:
            return listed_read_committed(answer.batches, answer.aborted_transactions)
        return [record for batch in answer.batches for record in self.rule.add(batch)]


def read_committed_to_end(
    fetcher: RawFetcher,
    topic: str,
    cursors: Mapping[int, CommittedCursor],
    cluster: Mapping[str, Any],
    timeout_s: float,
) -> Iterator[tuple[int, CommittedRecord]]:
    """Each (partition, record) that became readable, until every cursor's partition is read to its current
    end (the last stable offset); raises :class:`CommittedReadTimeout` when that takes over ``timeout_s``.

    ``fetcher`` must fetch read_committed (its answers' ``end_offset`` is then the last stable offset, and
    a broker's list of aborted transactions is only meaningful there). ``cluster``: client properties
    naming the cluster (its ``bootstrap.servers``), whose capabilities decide how answers are read.
    """
    deadline = time.monotonic() + timeout_s
    behind = dict(cursors)
    wait_ms = FIRST_WAIT_MS
    while behind:
        answers = fetcher.fetch(topic, {p: cursor.position for p, cursor in behind.items()}, wait_ms)
        progressed = False
        for partition, answer in answers.items():
            cursor = behind[partition]
            cursor.position = max(cursor.position, answer.log_start_offset)
            capabilities = record_fetch_answer(cluster, answer.batches, answer.aborted_transactions)
            for record in cursor.readable(answer, capabilities.filters_aborted_transactions):
                yield partition, record
            if answer.batches:
                cursor.position = answer.batches[-1].next_offset
                progressed = True
            if cursor.position >= answer.end_offset:
                del behind[partition]
        if not behind:
            return
        if time.monotonic() >= deadline:
            raise CommittedReadTimeout(topic, sorted(behind), timeout_s)
        if not progressed:  # nothing below the end: a broker that stopped scanning when its wait ran out
            wait_ms = min(wait_ms * 4, LONGEST_WAIT_MS)


__all__ = [
    "FIRST_WAIT_MS",
    "LONGEST_WAIT_MS",
    "CommittedCursor",
    "CommittedReadTimeout",
    "read_committed_to_end",
]
