"""read_committed from a Fetch answer's aborted-transaction list, as Kafka's consumer applies it: on the
same hand-built logs it agrees with the rule applied from the markers whenever the list is the one an
Apache Kafka broker would send (each aborted transaction with data, at its first offset)."""

from __future__ import annotations

import pytest

from connect_core.kafka.aborted_list import listed_read_committed
from connect_core.kafka.transaction_markers import apply_read_committed
from tests.unit.connect_core.kafka.batches import Batch, data, marker


def values(batches: list[Batch], aborted: list[tuple[int, int]]) -> list[bytes | None]:
    return [r.value for r in listed_read_committed(batches, aborted)]


LOGS: dict[str, tuple[list[Batch], list[tuple[int, int]]]] = {
    "aborted then committed": ([data(7, 0, 1), marker(7, 2, False), data(7, 3), marker(7, 4, True)], [(7, 0)]),
    "interleaved producers": (
        [
            data(7, 0),
            data(8, 1),
            data(-1, 2, txn=False),
            data(7, 3),
            marker(7, 4, False),
            data(8, 5),
            marker(8, 6, True),
        ],
        [(7, 0)],
    ),
    "one producer aborts twice": (
        [data(7, 0), marker(7, 1, False), data(7, 2), marker(7, 3, True), data(7, 4, 5), marker(7, 6, False)],
        [(7, 0), (7, 4)],
    ),
    "a zombie fenced by its successor": ([data(5, 0), data(6, 1), marker(5, 2, False), marker(6, 3, True)], [(5, 0)]),
    "plain records only": ([data(-1, 0, 1, txn=False)], []),
}


@pytest.mark.parametrize("name", sorted(LOGS))
def test_agrees_with_the_marker_rule_given_kafkas_list(name: str) -> None:
    batches, aborted = LOGS[name]
    assert values(batches, aborted) == [r.value for r in apply_read_committed(batches).committed]


def test_a_listed_producer_is_dropped_from_its_first_offset_until_its_abort_marker() -> None:
    batches = [
        data(7, 0),
        marker(7, 1, True),
        data(7, 2),
        data(-1, 3, txn=False),
        marker(7, 4, False),
        data(7, 5),
        marker(7, 6, True),
    ]
    assert values(batches, [(7, 2)]) == [b"v0", b"v3", b"v5"]


def test_an_answer_starting_inside_an_aborted_transaction_drops_its_rest() -> None:
    """The broker lists a transaction that began before the fetched range; its first offset precedes it."""
    assert values([data(7, 10), data(8, 11), marker(7, 12, False), marker(8, 13, True)], [(7, 4)]) == [b"v11"]


def test_an_empty_list_hides_nothing() -> None:
    """What a broker that does not filter sends: the aborted records come through (hence the capability)."""
    assert values([data(7, 0), marker(7, 1, False)], []) == [b"v0"]
