"""PartitionCopy: the one acknowledgement rule of a source partition's copies (records, foreign records, runs,
batches) - which offset syncs fall due and which offset mappings close."""

from __future__ import annotations

from typing import Any

import pytest

from connect_core.api.message_copy import CopyRun
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.connectors.offset_sync_writer import OffsetSyncQueue, PartitionState
from mirror.connectors.partition_copy import PartitionCopy
from tests.unit.mirror.connectors.test_source_task_runs import Run

TP = TopicPartition("orders", 0)


def run_of(count: int, first_up: int, last_up: int, first_down: int, last_down: int, **more: Any) -> CopyRun:
    """A CopyRun as the worker reports a run of messages or a batch (its route plays no part here)."""
    return Run(None, count, first_up, last_up, first_down, last_down, **more)  # type: ignore[return-value]


def kafka_rule(pairs: list[tuple[int, int]], max_offset_lag: int) -> list[tuple[int, int]]:
    """Kafka's per-record rule, record by record, on a fresh partition: the pairs that sync at once."""
    state = PartitionState(max_offset_lag)
    return [pair for pair in pairs if state.should_emit(*pair)]


def test_a_record_syncs_first_then_when_stale_or_upstream_skips() -> None:
    queue = OffsetSyncQueue(max_offset_lag=3)
    copy = PartitionCopy(TP)
    assert copy.record(queue, 100, 0) is True  # the partition's first record
    assert queue.pending() == {TP: OffsetSync(TP, 100, 0)}
    queue.take_pending()
    assert [copy.record(queue, 100 + i, i) for i in range(1, 5)] == [False, False, False, True]  # 4 - (0 + 1) >= 3
    queue.take_pending()
    assert copy.record(queue, 105, 5) is False
    assert queue.delayed() == {TP: OffsetSync(TP, 105, 5)}  # the newest position waits for the publication
    assert copy.record(queue, 108, 6) is True  # upstream skipped 106-107
    assert queue.pending() == {TP: OffsetSync(TP, 108, 6)} and queue.delayed() == {}


def test_records_extend_one_mapping_run_until_a_discontinuity_closes_it() -> None:
    queue = OffsetSyncQueue(max_offset_lag=100)
    copy = PartitionCopy(TP, resume_after=99)
    for i in range(5):
        copy.record(queue, 100 + i, 10 + i)
    assert copy.closed == []  # one open run: nothing closed
    copy.record(queue, 107, 15)  # upstream gap (markers): the open run closes, the next one covers the gap
    assert copy.take_closed() == [OffsetMapping(TP, 100, 100, 10, 5)]
    assert copy.closed == [] and copy.take_closed() == []
    assert copy.mapping.flush() == OffsetMapping(TP, 105, 107, 15, 1)


def test_an_unknown_downstream_offset_claims_nothing_past_it() -> None:
    queue = OffsetSyncQueue(max_offset_lag=100)
    copy = PartitionCopy(TP)
    copy.record(queue, 0, 0)
    copy.record(queue, 1, 1)
    copy.unknown()  # a tolerated failure: record 2 is not on the target
    assert copy.take_closed() == [OffsetMapping(TP, 0, 0, 0, 2)]
    copy.record(queue, 3, 2)
    copy.unknown()
    # the run after the failure starts at its own first offset: no claim about offset 2
    assert copy.take_closed() == [OffsetMapping(TP, 3, 3, 2, 1)]


def test_a_foreign_record_shares_the_sync_state_and_breaks_mapping_continuity() -> None:
    queue = OffsetSyncQueue(max_offset_lag=100)
    copy = PartitionCopy(TP)
    assert copy.record(queue, 0, 0) is True
    queue.take_pending()
    assert copy.record(queue, 1, 1) is False
    assert copy.foreign_record(queue, 2, 2) is False  # continues the same sync state: not due
    assert queue.delayed() == {TP: OffsetSync(TP, 2, 2)}
    assert copy.take_closed() == [OffsetMapping(TP, 0, 0, 0, 2)]  # no continuity across the foreign copy
    assert copy.record(queue, 3, 3) is False  # the state saw offset 2: still contiguous for the sync rule
    assert copy.state(queue) is queue.state_for(TP)


@pytest.mark.parametrize("max_offset_lag", [0, 1, 3, 100])
@pytest.mark.parametrize(("first_up", "first_down", "count"), [(0, 0, 1), (1000, 40, 250), (7, 3, 9)])
def test_a_contiguous_run_syncs_exactly_where_kafkas_per_record_rule_does(
    max_offset_lag: int, first_up: int, first_down: int, count: int
) -> None:
    pairs = [(first_up + i, first_down + i) for i in range(count)]
    copy = PartitionCopy(TP)
    points = copy.run(OffsetSyncQueue(max_offset_lag), run_of(count, first_up, pairs[-1][0], first_down, pairs[-1][1]))
    assert points == kafka_rule(pairs, max_offset_lag)
    assert copy.closed == [] and copy.mapping.flush() == OffsetMapping(TP, first_up, first_up, first_down, count)


def test_runs_and_records_of_one_partition_continue_each_other() -> None:
    """The record path and the run/batch path are one rule: mixing them gives Kafka's per-record syncs."""
    queue = OffsetSyncQueue(max_offset_lag=10)
    copy = PartitionCopy(TP)
    seen: list[tuple[int, int]] = []
    for i in range(5):  # records
        if copy.record(queue, i, i):
            seen.extend((s.upstream_offset, s.downstream_offset) for s in queue.take_pending())
    seen.extend(copy.run(queue, run_of(30, 5, 34, 5, 34)) or [])  # a batch
    for i in range(35, 40):
        if copy.record(queue, i, i):
            seen.extend((s.upstream_offset, s.downstream_offset) for s in queue.take_pending())
    assert seen == kafka_rule([(i, i) for i in range(40)], 10)
    assert copy.closed == [] and copy.mapping.flush() == OffsetMapping(TP, 0, 0, 0, 40)


def test_a_run_with_upstream_gaps_syncs_at_each_gap_and_maps_around_it() -> None:
    copy = PartitionCopy(TP)
    points = copy.run(OffsetSyncQueue(100), run_of(4, 0, 9, 0, 3, upstream_offsets=[0, 1, 8, 9]))
    assert points == [(0, 0), (8, 2)]
    assert copy.take_closed() == [OffsetMapping(TP, 0, 0, 0, 2)]
    assert copy.mapping.flush() == OffsetMapping(TP, 2, 8, 2, 2)  # the new run covers the gap 2..7


def test_foreign_writes_inside_a_run_yield_only_its_exact_ends() -> None:
    queue = OffsetSyncQueue(100)
    copy = PartitionCopy(TP)
    assert copy.run(queue, run_of(5, 0, 4, 0, 4)) == [(0, 0)]
    # 5 records took downstream 10..16: something else wrote in between
    assert copy.run(queue, run_of(5, 5, 9, 10, 16)) == [(9, 16)]  # (5, 10) continues: not due
    # mappings: the first record is known exactly, nothing is claimed up to the last
    assert copy.take_closed() == [OffsetMapping(TP, 0, 0, 0, 5), OffsetMapping(TP, 5, 5, 10, 1)]
    assert copy.mapping.flush() == OffsetMapping(TP, 9, 9, 16, 1)


def test_a_run_with_skipped_records_decides_no_sync_and_closes_the_mapping() -> None:
    queue = OffsetSyncQueue(100)
    copy = PartitionCopy(TP)
    copy.run(queue, run_of(3, 0, 2, 0, 2))
    assert copy.run(queue, run_of(3, 3, 5, 3, 4, skipped=1)) is None
    assert copy.run(queue, run_of(2, 6, 7, -1, -1)) is None  # downstream offsets unknown
    assert copy.take_closed() == [OffsetMapping(TP, 0, 0, 0, 3)]
    state = copy.state(queue)  # the sync state holds nothing past offset 2
    assert (state.previous_upstream_offset, state.previous_downstream_offset) == (2, 2)


def test_a_resumed_partition_maps_from_its_stored_offset() -> None:
    copy = PartitionCopy(TP)
    copy.resume_after(999)
    copy.run(OffsetSyncQueue(100), run_of(2, 1002, 1003, 50, 51))  # 1000-1001: markers after the stored offset
    assert copy.mapping.flush() == OffsetMapping(TP, 1000, 1002, 50, 2)
