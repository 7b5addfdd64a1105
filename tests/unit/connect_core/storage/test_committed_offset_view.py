"""The read_committed view of an offsets topic catches up incrementally: each lookup fetches only from where
the previous one stopped, to the last stable offset. On a cluster not known to filter aborted records it
decides from the markers (records wait behind an open transaction until its marker arrives); on one
known to filter, from the answer's aborted-transaction list. The fetcher is a stand-in serving batches
like kafka-python's, as a broker that lists aborted transactions or as one that does not (the I/O is
tested against a broker)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

import pytest

from connect_core.api.errors import ConnectError
from connect_core.kafka.broker_capabilities import BrokerCapabilities, capabilities_for
from connect_core.kafka.raw_fetch import FetchedBatches
from connect_core.storage.committed_offsets import CommittedOffsetView
from connect_core.storage.offset_storage import serialize_offset_key

KEY = serialize_offset_key("src", {"p": 0})


@dataclass
class Rec:
    offset: int
    value: bytes | None = None
    key: bytes | None = KEY
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int = 0
    commit: bool = False


@dataclass
class Batch:
    records: list[Rec]
    producer_id: int = -1
    is_transactional: bool = True
    is_control_batch: bool = False

    @property
    def base_offset(self) -> int:
        return self.records[0].offset

    @property
    def next_offset(self) -> int:
        return self.records[-1].offset + 1

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)


class Log:
    """One partition; each fetch answers at most ``per_fetch`` batches, as a broker bounds its answers,
    up to the last stable offset; ``lists_aborted``: its answers list the aborted transactions of their
    range as Apache Kafka's do (or ``listed`` forces a list)."""

    def __init__(self, per_fetch: int = 2, lists_aborted: bool = False) -> None:
        self.batches: list[Batch] = []
        self.per_fetch = per_fetch
        self.lists_aborted = lists_aborted
        self.listed: list[tuple[int, int]] | None = None
        self.fetched_from: list[int] = []
        self.waits: list[int] = []
        self.starve = 0

    def append(self, value: bytes | None = None, pid: int = 1, marker: bool | None = None, txn: bool = True) -> None:
        at = self.batches[-1].next_offset if self.batches else 0
        if marker is None:
            self.batches.append(Batch([Rec(at, value)], pid, txn))
        else:
            self.batches.append(Batch([Rec(at, commit=marker)], pid, True, True))

    def partitions(self, topic: str) -> list[int]:
        return [0]

    def fetch(self, topic: str, positions: dict[int, int], max_wait_ms: int) -> dict[int, FetchedBatches]:
        self.waits.append(max_wait_ms)
        offset = positions[0]
        self.fetched_from.append(offset)
        if self.starve:  # a broker that ran out of its wait before reaching anything (Tansu)
            self.starve -= 1
            after: list[Batch] = []
        else:
            after = [b for b in self.batches if b.next_offset > offset and b.base_offset < self.stable()]
            after = after[: self.per_fetch]
        end = self.batches[-1].next_offset if self.batches else 0
        upper = after[-1].next_offset if after else offset
        return {0: FetchedBatches(list(after), end, 0, tuple(self.aborted_in(offset, upper)), self.stable())}

    def transactions(self) -> tuple[list[tuple[int, int, int]], dict[int, int]]:
        """(producer, first offset, ABORT marker offset) of aborted transactions with data, and the first
        offset of each producer's open transaction."""
        first: dict[int, int] = {}
        aborted: list[tuple[int, int, int]] = []
        for batch in self.batches:
            if batch.is_control_batch:
                start = first.pop(batch.producer_id, None)
                if start is not None and not batch.records[0].commit:
                    aborted.append((batch.producer_id, start, batch.base_offset))
            elif batch.is_transactional:
                first.setdefault(batch.producer_id, batch.base_offset)
        return aborted, first

    def stable(self) -> int:
        open_firsts = self.transactions()[1].values()
        return min(open_firsts, default=self.batches[-1].next_offset if self.batches else 0)

    def aborted_in(self, lower: int, upper: int) -> list[tuple[int, int]]:
        if self.listed is not None:
            return self.listed
        if not self.lists_aborted:
            return []
        return [(pid, start) for pid, start, end in self.transactions()[0] if end >= lower and start < upper]

    def close(self) -> None:
        pass


def cluster() -> dict[str, str]:
    return {"bootstrap.servers": f"{uuid.uuid4().hex}:9092"}


def view(log: Log, on: dict[str, str] | None = None) -> CommittedOffsetView:
    fetcher: Any = log
    return CommittedOffsetView("offsets", fetcher, timeout_s=5, cluster=on or cluster())


def test_lookups_catch_up_from_where_they_stopped() -> None:
    log = Log()
    committed = view(log)
    log.append(b'{"o":1}')
    log.append(marker=True)
    log.append(b'{"o":2}', pid=2, marker=None)
    log.append(marker=True, pid=2)
    log.append(b'{"o":3}')
    log.append(marker=True)
    assert committed.get([KEY]) == {KEY: b'{"o":3}'}
    assert log.fetched_from == [0, 2, 4]  # two batches per answer, up to the high watermark
    log.append(b'{"o":4}')
    log.append(marker=False)
    assert committed.get([KEY]) == {KEY: b'{"o":3}'}  # aborted
    assert log.fetched_from[3:] == [6]  # only the new part is read


def test_an_open_transaction_holds_back_what_follows_it_until_its_marker() -> None:
    log = Log(per_fetch=10)
    committed = view(log)
    log.append(b'{"o":1}', pid=1)
    log.append(marker=True, pid=1)
    log.append(b'{"o":9}', pid=7)  # a zombie's transaction, left open
    log.append(b'{"o":2}', pid=1)
    log.append(marker=True, pid=1)
    assert committed.get([KEY]) == {KEY: b'{"o":1}'}
    assert committed.connector_partitions("src") == [{"p": 0}]
    assert log.fetched_from == [0, 2]  # read to the last stable offset (2), no further
    log.append(marker=False, pid=7)  # the task's new instance fenced it
    assert committed.get([KEY]) == {KEY: b'{"o":2}'}


def test_a_broker_that_answers_nothing_below_its_high_watermark_is_asked_again_with_longer_waits() -> None:
    log = Log()
    committed = view(log)
    log.append(b'{"o":1}', pid=-1, txn=False)  # the worker's own plain write
    log.starve = 2
    assert committed.get([KEY]) == {KEY: b'{"o":1}'}
    assert log.waits == [20, 80, 320]
    assert committed.get([KEY]) == {KEY: b'{"o":1}'}
    assert log.waits[3:] == [20]  # at the end: one short wait


def zombie_log(lists_aborted: bool) -> Log:
    """A task's committed offset, then a fenced zombie's aborted one, then the successor's committed one."""
    log = Log(per_fetch=10, lists_aborted=lists_aborted)
    log.append(b'{"o":1}', pid=1)
    log.append(marker=True, pid=1)
    log.append(b'{"o":99}', pid=7)
    log.append(marker=False, pid=7)
    return log


def test_on_a_broker_that_lists_no_aborted_transactions_the_markers_decide_and_the_cluster_is_marked() -> None:
    on = cluster()
    assert view(zombie_log(lists_aborted=False), on).get([KEY]) == {KEY: b'{"o":1}'}
    assert capabilities_for(on) == BrokerCapabilities(filters_aborted_transactions=False, aborted_listing_checked=True)


def test_on_a_broker_that_lists_them_the_answers_list_decides() -> None:
    """Once an answer proved the broker filters, the view reads as Kafka's consumer does: shown by a
    (made-up) list naming a committed transaction, which only the list path drops."""
    on = cluster()
    log = zombie_log(lists_aborted=True)
    committed = view(log, on)
    assert committed.get([KEY]) == {KEY: b'{"o":1}'}
    assert capabilities_for(on).filters_aborted_transactions
    log.append(b'{"o":2}', pid=3)
    log.append(marker=True, pid=3)
    log.listed = [(3, 4)]
    assert committed.get([KEY]) == {KEY: b'{"o":1}'}  # the markers would have read {"o":2}


def test_a_transaction_held_for_its_marker_finishes_on_the_markers_before_the_list_takes_over() -> None:
    """The capability turns to "filters" while the marker rule holds an open transaction: its records
    are decided by its marker, never split between the two rules."""
    on = cluster()
    log = Log(per_fetch=2, lists_aborted=True)
    log.append(b'{"o":1}', pid=1)
    log.append(b'{"o":2}', pid=-1, txn=False)  # readable once producer 1's transaction ends
    log.append(b'{"o":5}', pid=5)
    log.append(marker=False, pid=5)  # this answer proves the broker lists aborted transactions
    log.append(marker=True, pid=1)  # the next answer: decided by the markers, as producer 1 is held
    committed = view(log, on)
    assert committed.get([KEY]) == {KEY: b'{"o":2}'}
    assert capabilities_for(on).filters_aborted_transactions
    assert log.fetched_from == [0, 2, 4]


def test_a_partition_never_read_to_its_end_fails_the_lookup_naming_it() -> None:
    log = Log()
    log.append(b'{"o":1}')
    log.append(marker=True)
    log.starve = 10**9  # answers nothing, forever
    fetcher: Any = log
    committed = CommittedOffsetView("offsets", fetcher, timeout_s=0.2, cluster=cluster())
    with pytest.raises(
        ConnectError, match=r"Timed out reading offsets topic offsets to its end \(partitions \[0\] behind\)"
    ):
        committed.get([KEY])
