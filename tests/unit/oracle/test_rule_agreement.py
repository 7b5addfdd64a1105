"""The suite's oracle and the product's rule, fed the same hand-built logs, against Kafka's rule by hand.

Each case is a partition's log written batch by batch (tests/unit/oracle/hand_built.py) with what a
read_committed consumer of Apache Kafka returns from it spelt out: the visible values in order, how many
records an ABORT drops below the last stable offset, how many wait at or after it, and which records
belong to transactions still open. The oracle reads the bytes with its own parser; the product's rule
(connect_core.kafka.transaction_markers) reads them as the product does, through kafka-python's batches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from kafka.record import MemoryRecords  # type: ignore[import-untyped]

from connect_core.kafka import transaction_markers as product
from tests.oracle import rule as oracle
from tests.oracle.batches import parse_batches
from tests.unit.oracle.hand_built import HandLog


@dataclass(frozen=True)
class Expected:
    visible: list[str]
    aborted: int = 0
    open: int = 0
    undecided: tuple[str, ...] = ()


CASES: dict[str, tuple[Callable[[], HandLog], Expected]] = {
    "plain records only": (lambda: HandLog().plain("p0", "p1").plain("p2"), Expected(["p0", "p1", "p2"])),
    "a committed transaction of two batches": (
        lambda: HandLog().txn(1, "a0", "a1").txn(1, "a2").commit(1),
        Expected(["a0", "a1", "a2"]),
    ),
    "an aborted transaction": (
        lambda: HandLog().plain("p0").txn(1, "a0", "a1").abort(1).plain("p1"),
        Expected(["p0", "p1"], aborted=2),
    ),
    "an open transaction holds back what follows it": (
        lambda: HandLog().plain("p0").txn(1, "a0").plain("p1"),
        Expected(["p0"], open=2, undecided=("a0",)),
    ),
    "an open transaction holds back a later committed one": (
        lambda: HandLog().txn(1, "a0").txn(2, "b0").commit(2),
        Expected([], open=2, undecided=("a0",)),
    ),
    "interleaved producers, one committed and one aborted": (
        lambda: (
            HandLog().txn(1, "a0").txn(2, "b0").plain("p0").txn(1, "a1").commit(1).txn(2, "b1").abort(2).plain("p1")
        ),
        Expected(["a0", "p0", "a1", "p1"], aborted=2),
    ),
    "a control batch of another producer decides nothing": (
        lambda: HandLog().txn(1, "a0").abort(2).plain("p0"),
        Expected([], open=2, undecided=("a0",)),
    ),
    "another producer's marker, then the right one": (
        lambda: HandLog().txn(1, "a0").abort(2).plain("p0").commit(1),
        Expected(["a0", "p0"]),
    ),
    "after an abort, the same producer id with a new epoch commits": (
        lambda: HandLog().txn(7, "old0", "old1").abort(7, epoch=1).txn(7, "new0", epoch=1).commit(7, epoch=1),
        Expected(["new0"], aborted=2),
    ),
    "after an abort, the same producer id's next transaction is still open": (
        lambda: HandLog().txn(7, "old0").abort(7, epoch=1).plain("p0").txn(7, "new0", epoch=1).plain("p1"),
        Expected(["p0"], aborted=1, open=2, undecided=("new0",)),
    ),
    "transactions back to back, commit then abort then commit": (
        lambda: HandLog().txn(3, "t0").commit(3).txn(3, "t1").abort(3).txn(3, "t2").commit(3),
        Expected(["t0", "t2"], aborted=1),
    ),
    "a log of markers only": (lambda: HandLog().commit(4).abort(5), Expected([])),
    "an empty log": (lambda: HandLog(), Expected([])),
}


def _by_oracle(log: HandLog) -> oracle.PartitionLog:
    return oracle.apply_read_committed(parse_batches(log.raw()))


def _by_product(log: HandLog) -> product.PartitionLog:
    records = MemoryRecords(log.raw())
    batches = []
    while (found := records.next_batch()) is not None:
        batches.append(found)
    return product.apply_read_committed(batches)


@pytest.mark.parametrize("case", list(CASES))
def test_oracle_and_product_agree_with_kafkas_rule(case: str) -> None:
    build, expected = CASES[case]
    log = build()
    for name, seen in (("oracle", _by_oracle(log)), ("product", _by_product(log))):
        assert [r.value.decode() for r in seen.committed if r.value is not None] == expected.visible, name
        assert (seen.aborted, seen.open) == (expected.aborted, expected.open), name
        assert tuple(r.value.decode() for r in seen.undecided if r.value is not None) == expected.undecided, name
        assert seen.markers == log.markers, name


def test_visible_records_keep_offsets_keys_headers_and_timestamps() -> None:
    from tests.unit.oracle.hand_built import BASE_TIMESTAMP, TRANSACTIONAL, batch

    log = HandLog()
    log.parts.append(
        batch(
            0,
            [(b"k0", b"v0", (("h", b"x"), ("null", None))), (None, None, ())],
            attributes=TRANSACTIONAL,
            producer_id=9,
            producer_epoch=0,
        )
    )
    log.next_offset = 2
    log.commit(9)
    seen = _by_oracle(log)
    product_seen = _by_product(log)
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in seen.committed] == [
        (0, b"k0", b"v0", (("h", b"x"), ("null", None)), BASE_TIMESTAMP),
        (1, None, None, (), BASE_TIMESTAMP + 1),
    ]
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in product_seen.committed] == [
        (r.offset, r.key, r.value, r.headers, r.timestamp) for r in seen.committed
    ]
    assert seen.markers == [(2, 9, True)]
