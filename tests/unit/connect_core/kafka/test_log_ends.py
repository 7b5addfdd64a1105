"""Which partitions a read_to_end barrier still waits for, given where the log ends and where the tail is."""

from __future__ import annotations

from connect_core.kafka.log_ends import still_to_read


def test_a_tail_at_or_past_each_end_has_nothing_left_to_read() -> None:
    assert still_to_read({0: 5, 1: 7}, {0: (5, 0), 1: (6, 0)}) == {}


def test_a_tail_behind_an_end_waits_for_that_partition_only() -> None:
    assert still_to_read({0: 5, 1: 2}, {0: (5, 0), 1: (6, 0)}) == {1: 6}


def test_a_tail_that_has_read_nothing_yet_waits_for_every_partition_holding_records() -> None:
    assert still_to_read({0: -2, 1: -2}, {0: (3, 0), 1: (9, 4)}) == {0: 3, 1: 9}


def test_an_empty_partition_or_one_emptied_by_retention_holds_nothing_to_read() -> None:
    assert still_to_read({0: -2, 1: -2}, {0: (0, 0), 1: (40, 40)}) == {}


def test_a_partition_the_tail_does_not_know_yet_is_waited_for() -> None:
    assert still_to_read({}, {0: (2, 0)}) == {0: 2}
