"""MIRRORED from the freshest evidence: offset sync + target end offset beats an older flush."""

from __future__ import annotations

from mirror.client.formats import OffsetSync, TopicPartition
from mirror.driver.status_lag import OffsetSyncFold, partition_lags, target_position

NOW = 1_000_000


def remote(topic: str) -> str:
    return "A." + topic


def test_target_position_steps_both_logs_together() -> None:
    assert target_position((10, 40), 41) == 11  # the synced record is the last on the target
    assert target_position((10, 40), 50) == 20  # 9 more records after it
    assert target_position((10, 40), 40) is None  # the synced record is not on the target (truncated)
    assert target_position(None, 50) is None
    assert target_position((10, 40), None) is None


def test_fully_mirrored_backlog_reads_lag_0_before_any_flush() -> None:
    # 300 records per partition, on the target at the same offsets; first-record syncs only, no flush yet
    rows = partition_lags(
        {("orders", 0): 300, ("orders", 1): 300},
        {},
        remote,
        syncs={("orders", 0): (0, 0), ("orders", 1): (0, 0)},
        target_ends={("orders", 0): 300, ("orders", 1): 300},
        now_ms=NOW,
    )
    assert [(r.mirrored_offset, r.lag, r.evidence, r.age_s, r.flushed_offset) for r in rows] == [
        (300, 0, "target", 0.0, None),
        (300, 0, "target", 0.0, None),
    ]


def test_the_newer_of_flush_and_target_wins_and_the_flush_age_is_kept() -> None:
    rows = partition_lags(
        {("t", 0): 100, ("t", 1): 100, ("t", 2): 100, ("t", 3): 100},
        {("t", 0): 49, ("t", 1): 89, ("t", 2): 9},
        remote,
        committed_at_ms={("t", 0): NOW - 30_000, ("t", 1): NOW - 5_000, ("t", 2): NOW - 61_000},
        syncs={("t", 0): (50, 1050), ("t", 1): (50, 1050), ("t", 3): (0, 7)},
        # t-0: target has 1050..1079 -> next upstream 80; t-1: flush (90) is newer than target (60)
        target_ends={("t", 0): 1080, ("t", 1): 1060, ("t", 3): 7},  # t-3: synced record gone from target
        now_ms=NOW,
    )
    got = {
        r.partition: (r.mirrored_offset, r.lag, r.evidence, r.age_s, r.flushed_offset, r.flushed_age_s) for r in rows
    }
    assert got == {
        0: (80, 20, "target", 0.0, 50, 30.0),
        1: (90, 10, "flushed", 5.0, 90, 5.0),
        2: (10, 90, "flushed", 61.0, 10, 61.0),
        3: (0, 100, "none", None, None, None),
    }


def test_target_evidence_never_goes_past_the_source_end() -> None:
    # e.g. duplicates re-sent after a task restart, before its new first-record sync is written
    rows = partition_lags({("t", 0): 100}, {}, remote, syncs={("t", 0): (90, 90)}, target_ends={("t", 0): 115})
    assert (rows[0].mirrored_offset, rows[0].lag) == (100, 0)


def test_vanished_source_topic_keeps_what_was_mirrored() -> None:
    rows = partition_lags({}, {("gone", 0): 4}, remote, syncs={("gone", 0): (2, 2)}, target_ends={("gone", 0): 9})
    assert (rows[0].source_end_offset, rows[0].mirrored_offset, rows[0].lag, rows[0].evidence) == (9, 9, 0, "target")


def test_offset_sync_fold_keeps_the_latest_per_partition_and_skips_junk() -> None:
    fold = OffsetSyncFold()
    for sync in (
        OffsetSync(TopicPartition("t", 0), 0, 0),
        OffsetSync(TopicPartition("t", 1), 3, 9),
        OffsetSync(TopicPartition("t", 0), 101, 101),
    ):
        fold.apply(sync.record_key(), sync.record_value())
    fold.apply(b"junk", b"\x00")
    fold.apply(None, None)
    assert fold.latest == {("t", 0): (101, 101), ("t", 1): (3, 9)}
