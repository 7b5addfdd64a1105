"""Kafka's read_committed rule, applied from markers (pure: batches are stand-ins for kafka-python's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from connect_core.embedded.committed_reader import apply_read_committed


@dataclass
class Rec:
    offset: int
    value: bytes | None = None
    key: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int = 0
    commit: bool = False  # control records only


@dataclass
class Batch:
    records: list[Rec]
    producer_id: int = -1
    is_transactional: bool = False
    is_control_batch: bool = False

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)


def data(pid: int, *offsets: int, txn: bool = True) -> Batch:
    return Batch([Rec(o, f"v{o}".encode()) for o in offsets], pid, txn)


def marker(pid: int, offset: int, commit: bool) -> Batch:
    return Batch([Rec(offset, commit=commit)], pid, True, True)


def values(batches: list[Batch]) -> list[bytes | None]:
    return [r.value for r in apply_read_committed(batches).committed]


def test_plain_records_are_visible_and_in_offset_order() -> None:
    assert values([data(-1, 0, 1, txn=False), data(-1, 2, txn=False)]) == [b"v0", b"v1", b"v2"]


def test_aborted_records_are_dropped_and_committed_ones_kept_at_their_offsets() -> None:
    batches = [data(7, 0, 1), data(8, 2), marker(7, 3, commit=False), data(-1, 4, txn=False),
               marker(8, 5, commit=True)]
    log = apply_read_committed(batches)
    assert [r.value for r in log.committed] == [b"v2", b"v4"]
    assert log.aborted == 2 and log.open == 0
    assert log.markers == [(3, 7, False), (5, 8, True)]


def test_nothing_at_or_after_an_open_transaction_is_readable() -> None:
    batches = [data(1, 0), marker(1, 1, commit=True), data(2, 2), data(-1, 3, txn=False), data(3, 4),
               marker(3, 5, commit=True)]
    log = apply_read_committed(batches)
    assert [r.value for r in log.committed] == [b"v0"]  # producer 2's transaction holds the stable offset at 2
    assert log.open == 3  # v2, v3 and v4 wait behind it, even those whose own fate is known


def test_a_marker_decides_only_the_batches_before_it() -> None:
    batches = [data(4, 0), marker(4, 1, commit=False), data(4, 2), marker(4, 3, commit=True)]
    assert values(batches) == [b"v2"]
