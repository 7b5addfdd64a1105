"""read_committed over raw batches: hand-built logs of committed, aborted and open transactions give what
a read_committed consumer reads, from the markers (Tansu) and from the aborted list (Apache Kafka)."""

from __future__ import annotations

import struct

from kafka.record._crc32c import crc as independent_crc32c  # type: ignore[import-untyped]

from connect_core.kafka.committed_batches import CommittedBatches
from connect_core.kafka.record_batch import RawBatch, split_batches


def _batch(
    base: int, count: int = 2, pid: int = -1, transactional: bool = False, control: bool = False, records: bytes = b"r"
) -> bytes:
    attributes = (0x10 if transactional or control else 0) | (0x20 if control else 0)
    tail = struct.pack(">hiqqqhii", attributes, count - 1, 0, 0, pid, 0, 0, count) + records
    return struct.pack(">qiibI", base, 9 + len(tail), 0, 2, independent_crc32c(tail)) + tail


def _marker(offset: int, pid: int, commit: bool) -> bytes:
    """A control batch: one control record, key (version 0, type 1 COMMIT / 0 ABORT), value version+epoch."""
    body = b"\x00\x00\x00\x08" + struct.pack(">hh", 0, 1 if commit else 0) + b"\x0c" + b"\x00" * 6 + b"\x00"
    record = bytes([len(body) << 1]) + body
    return _batch(offset, 1, pid, control=True, records=record)


def _log(*parts: bytes) -> list[RawBatch]:
    return split_batches(b"".join(parts))


def _bases(batches: list[RawBatch]) -> list[int]:
    return [b.base_offset for b in batches]


def test_markers_pass_committed_drop_aborted_and_keep_order() -> None:
    log = _log(
        _batch(0),
        _batch(2, pid=7, transactional=True),
        _batch(4),
        _batch(6, pid=8, transactional=True),
        _marker(8, 7, commit=True),
        _batch(9, pid=7, transactional=True),
        _marker(11, 8, commit=False),
        _marker(12, 7, commit=False),
        _batch(13),
    )
    rule = CommittedBatches()
    assert _bases(rule.add(log, [])) == [0, 2, 4, 13]
    assert rule.aborted_batches == 2 and rule.control_batches == 3 and rule.holding == 0
    assert not rule.trusts_aborted_list


def test_an_open_transaction_holds_later_batches_until_its_marker_comes_in_a_later_answer() -> None:
    rule = CommittedBatches()
    first = _log(_batch(0), _batch(2, pid=5, transactional=True), _batch(4))
    assert _bases(rule.add(first, [])) == [0]
    assert rule.holding == 2 and rule.first_held_offset() == 2
    assert _bases(rule.add(_log(_marker(6, 5, commit=True), _batch(7)), [])) == [2, 4, 7]
    assert rule.first_held_offset() is None


def test_the_aborted_list_is_trusted_once_a_broker_fills_it() -> None:
    log = _log(
        _batch(0, pid=3, transactional=True),
        _batch(2, pid=4, transactional=True),
        _marker(4, 3, False),
        _batch(5, pid=3, transactional=True),
        _marker(7, 4, True),
        _marker(8, 3, True),
    )
    rule = CommittedBatches()
    # Kafka lists producer 3's aborted transaction starting at 0; no hold: 4's batch passes at once
    assert _bases(rule.add(log, [(3, 0)])) == [2, 5]
    assert rule.trusts_aborted_list and rule.aborted_batches == 1 and rule.holding == 0
    # afterwards even an answer with an empty list is read with the list rule
    assert _bases(rule.add(_log(_batch(9, pid=6, transactional=True)), [])) == [9]


def test_a_transaction_aborted_before_the_answer_started_is_dropped_from_its_first_batch_on() -> None:
    rule = CommittedBatches()
    rule.add(_log(_batch(0)), [(1, 0)])  # the list is filled: list mode
    log = _log(_batch(10, pid=1, transactional=True), _batch(12, pid=2, transactional=True), _marker(14, 1, False))
    assert _bases(rule.add(log, [(1, 10)])) == [12]
