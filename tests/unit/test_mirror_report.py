"""The restart e2e's judge (tests/e2e/sequenced_producer.compare): a checker that cannot fail proves
nothing, so each verdict is shown on hand-made sequences."""

from __future__ import annotations

from tests.e2e.sequenced_producer import compare, decode, encode


def test_an_identical_copy_and_an_at_least_once_replay_are_whole_and_in_order() -> None:
    source = {0: [0, 1, 2, 3, 4], 1: [0, 1]}
    assert compare(source, {0: [0, 1, 2, 3, 4], 1: [0, 1]}).summary().startswith("records 7")
    replayed = compare(source, {0: [0, 1, 2, 3, 1, 2, 3, 4], 1: [0, 1, 0, 1]})
    assert not replayed.lost and not replayed.out_of_order
    assert replayed.duplicates == {0: 3, 1: 2}


def test_a_missing_record_is_lost_and_a_swap_is_out_of_order() -> None:
    source = {0: [0, 1, 2, 3]}
    lost = compare(source, {0: [0, 1, 3]})
    assert lost.lost == {0: [2]} and not lost.out_of_order
    swapped = compare(source, {0: [0, 2, 1, 3]})
    assert not swapped.lost and swapped.out_of_order
    assert compare(source, {}).lost == {0: [0, 1, 2, 3]}


def test_producer_duplicates_on_the_source_are_not_blamed_on_the_mirror() -> None:
    report = compare({0: [0, 1, 1, 2]}, {0: [0, 1, 1, 2]})
    assert report.source_duplicates == {0: 1} and report.duplicates == {0: 0}


def test_values_carry_partition_and_sequence() -> None:
    assert decode(encode(2, 41)) == (2, 41)
