"""How much a backfill commit leaves to its flush: at most one part-filled batch per partition."""

from __future__ import annotations

from mirror.jobs.backfill.copy import drain_limit


def test_big_records_fill_a_batch_by_bytes() -> None:
    # 1 KB records, 1 MB batches: about 976 records a batch, one batch per partition
    assert drain_limit(4, 1000, 1024 * 1000, 1_000_000, 10_000) == 4 * 976


def test_small_records_fill_a_batch_by_count() -> None:
    assert drain_limit(3, 5000, 10 * 5000, 1_000_000, 10_000) == 3 * 10_000


def test_records_bigger_than_a_batch_still_allow_one_each() -> None:
    assert drain_limit(2, 10, 10 * 5_000_000, 1_000_000, 10_000) == 2


def test_empty_records_or_no_records_count_as_a_full_batch_by_count() -> None:
    assert drain_limit(2, 0, 0, 1_000_000, 500) == 1000
    assert drain_limit(2, 100, 0, 1_000_000, 500) == 1000
