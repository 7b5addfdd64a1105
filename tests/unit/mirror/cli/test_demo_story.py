"""The demo's failover check reads positions as offsets: on B, commit markers and a retried backfill's aborted
records take offsets that no committed record has, so a list index is not an offset there."""

from __future__ import annotations

from mirror.cli.demo_story import split_at_position


def test_a_position_splits_by_offset_across_the_gaps_markers_and_aborted_records_leave() -> None:
    # offsets 2 (a marker) and 5-7 (an aborted attempt and its marker) hold no committed record
    log = [(0, ("a",)), (1, ("b",)), (3, ("c",)), (4, ("d",)), (8, ("e",))]
    assert split_at_position(log, 0) == ([], ("a",))
    assert split_at_position(log, 2) == ([("a",), ("b",)], ("c",))  # at a marker: the next record is after it
    assert split_at_position(log, 4) == ([("a",), ("b",), ("c",)], ("d",))
    assert split_at_position(log, 6) == ([("a",), ("b",), ("c",), ("d",)], ("e",))
    assert split_at_position(log, 9) == ([("a",), ("b",), ("c",), ("d",), ("e",)], None)  # at the end
