"""The marker-aware view of an offsets topic catches up incrementally: each lookup fetches only from where
the previous one stopped, and records wait behind an open transaction until its marker arrives. The
fetcher is a stand-in serving batches like kafka-python's (the I/O is tested against a broker)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
    def next_offset(self) -> int:
        return self.records[-1].offset + 1

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)


class Log:
    """One partition; each fetch answers at most ``per_fetch`` batches, as a broker bounds its answers."""

    def __init__(self, per_fetch: int = 2) -> None:
        self.batches: list[Batch] = []
        self.per_fetch = per_fetch
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
            after = [b for b in self.batches if b.next_offset > offset][: self.per_fetch]
        end = self.batches[-1].next_offset if self.batches else 0
        return {0: FetchedBatches(list(after), end, 0)}

    def close(self) -> None:
        pass


def view(log: Log) -> CommittedOffsetView:
    fetcher: Any = log
    return CommittedOffsetView("offsets", fetcher, timeout_s=5)


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
