"""The truncation decision: a partition's end below an offset already mirrored, within one incarnation."""

from __future__ import annotations

from mirror.client.formats import TopicPartition
from mirror.connectors.source_truncation import REASON_TRUNCATED, Truncation, truncation

TP = TopicPartition("events", 1)


def test_an_end_below_the_mirrored_position_is_a_truncation_counted_exactly() -> None:
    found = truncation(TP, mirrored_through=99, end_offset=90, topic_id_then="id1", topic_id_now="id1")
    assert found == Truncation(TP, 99, 90)
    assert found.count == 10  # offsets 90..99 were mirrored and are gone
    line = found.describe("A->B")
    assert line.startswith("A->B: source topic events partition 1 was truncated: it ends at offset 90")
    assert "10 mirrored records (offsets 90 to 99)" in line
    assert REASON_TRUNCATED == "truncated"


def test_the_end_right_at_the_last_mirrored_offset_means_that_record_is_gone() -> None:
    found = truncation(TP, 99, 99)
    assert found is not None and found.count == 1


def test_an_end_past_the_mirrored_position_is_no_truncation() -> None:
    assert truncation(TP, 99, 100) is None  # caught up
    assert truncation(TP, 99, 150) is None  # behind


def test_a_new_topic_id_is_a_recreation_not_a_truncation() -> None:
    assert truncation(TP, 99, 10, topic_id_then="id1", topic_id_now="id2") is None


def test_nothing_mirrored_or_no_end_known_decides_nothing() -> None:
    assert truncation(TP, -1, 0) is None
    assert truncation(TP, 99, -1) is None


def test_an_unknown_id_on_either_side_still_compares_offsets() -> None:
    assert truncation(TP, 99, 50, topic_id_then=None, topic_id_now="id1") == Truncation(TP, 99, 50)
