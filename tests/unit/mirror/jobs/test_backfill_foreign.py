"""How the backfill names target partitions holding records the flow did not copy (one line)."""

from __future__ import annotations

from mirror.jobs.backfill.foreign import describe


def test_partitions_are_named_in_order_and_a_long_list_is_cut() -> None:
    assert describe([("A.orders", 2), ("A.orders", 0)]) == "A.orders-0, A.orders-2"
    many = describe([("A.t", p) for p in range(25)])
    assert many.startswith("A.t-0, A.t-1, ") and many.endswith("A.t-19 and 5 more")
