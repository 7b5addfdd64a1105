"""Which jumps in the offsets read are records deleted before they were mirrored (no broker)."""

from __future__ import annotations

from mirror.client.formats import TopicPartition
from mirror.connectors.source_gaps import GapTracker, LostRange, LostTotal

TP = TopicPartition("orders", 0)


def test_a_jump_below_the_log_start_is_lost_exactly_up_to_it() -> None:
    gaps = GapTracker()
    gaps.jumped(TP, 3, 9)
    assert gaps.partitions() == [TP]
    # offsets 3..5 are gone; 6..8 exist above the log start but were skipped (compaction, markers)
    assert gaps.resolve({TP: 6}) == [LostRange(TP, 3, 6, 6)]
    assert gaps.pending == {}


def test_a_jump_above_the_log_start_is_no_loss() -> None:
    gaps = GapTracker()
    gaps.jumped(TP, 5, 6)  # a transaction marker
    assert gaps.resolve({TP: 0}) == []
    assert gaps.pending == {}


def test_each_jump_is_settled_on_its_own_and_a_later_log_start_counts_only_what_was_never_read() -> None:
    gaps = GapTracker()
    gaps.jumped(TP, 3, 6)
    gaps.jumped(TP, 10, 12)  # offsets 6..9 were read between the two jumps
    lost = gaps.resolve({TP: 11})
    assert [(r.first, r.end, r.count) for r in lost] == [(3, 6, 3), (10, 11, 1)]


def test_jumps_of_partitions_without_an_answer_wait() -> None:
    other = TopicPartition("orders", 1)
    gaps = GapTracker()
    gaps.jumped(TP, 0, 4)
    gaps.jumped(other, 0, 4)
    assert gaps.resolve({TP: 4}) == [LostRange(TP, 0, 4, 4)]
    assert gaps.partitions() == [other]


def test_the_total_adds_up_and_round_trips_through_the_offset_value() -> None:
    total = LostTotal()
    total.add(LostRange(TP, 3, 6, 6), 100)
    total.add(LostRange(TP, 10, 11, 11), 200)
    assert LostTotal.decode(total.encode()) == LostTotal(4, 10, 11, 200)
    assert LostTotal.decode("junk") is None and LostTotal.decode(None) is None
