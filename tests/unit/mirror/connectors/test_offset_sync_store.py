"""OffsetSyncStore: the 64-slot exponential index and translation (vectors from Kafka's OffsetSyncStoreTest)."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable

import pytest

from mirror.client.errors import RecordFormatError
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.connectors.offset_sync_store import SYNCS_PER_PARTITION, OffsetSyncStore

TP = TopicPartition("topic1", 2)
MAX64 = (1 << 63) - 1


def s64(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >> 63 else x


def sync(store: OffsetSyncStore, up: int, down: int, tp: TopicPartition = TP) -> None:
    """Feed a sync the way the topic tailer does: through the wire format."""
    s = OffsetSync(tp, up, down)
    store.on_record(s.record_key(), s.record_value())


def started(must_read_to_end: bool, initial: Callable[[OffsetSyncStore], None] | None = None) -> OffsetSyncStore:
    store = OffsetSyncStore()
    store.start(must_read_to_end)
    if initial is not None:
        initial(store)
    store.mark_read_to_end()
    return store


def assert_sparse_sync(store: OffsetSyncStore, sync_offset: int, previous_offset: int) -> None:
    expected_before = -1 if previous_offset == -1 else previous_offset + 1
    assert store.translate_downstream(None, TP, sync_offset - 1) == expected_before
    assert store.translate_downstream(None, TP, sync_offset) == sync_offset
    assert store.translate_downstream(None, TP, sync_offset + 1) == sync_offset + 1
    assert store.translate_downstream(None, TP, sync_offset + 2) == sync_offset + 1


def assert_sparse_sync_invariant(store: OffsetSyncStore, tp: TopicPartition = TP) -> None:
    """Invariants B and C hold between every pair of distinct slots (with Java long wrap-around)."""
    syncs = store.syncs(tp)
    assert syncs is not None
    for j in range(SYNCS_PER_PARTITION):
        j_up = syncs[j].upstream_offset
        for i in range(j):
            i_up = syncs[i].upstream_offset
            if i_up == j_up:
                continue
            lower = s64(j_up + (1 << max(i - 2, 0)))
            if lower < 0:
                continue
            assert i_up >= lower, f"Invariant C({i},{j}): {i_up} < {lower}"
            upper = s64(j_up + s64(1 << j) - (1 << i))
            if upper < 0:
                continue
            assert i_up <= upper, f"Invariant B({i},{j}): {i_up} > {upper}"


def count_distinct(store: OffsetSyncStore, tp: TopicPartition = TP) -> int:
    return len(store.distinct_syncs(tp))


def test_offset_translation() -> None:
    store = started(True)
    # synced downstream offset without dead-reckoning: the +1 rule
    sync(store, 100, 200)
    assert store.translate_downstream(None, TP, 150) == 201
    # exact offsets translate exactly
    sync(store, 150, 251)
    assert store.translate_downstream(None, TP, 150) == 251
    # older than any sync
    assert store.translate_downstream(None, TP, 5) == -1
    # downstream reset
    sync(store, 200, 10)
    assert store.translate_downstream(None, TP, 200) == 10
    # upstream reset
    sync(store, 20, 20)
    assert store.translate_downstream(None, TP, 20) == 20


def test_no_translation_if_store_not_started() -> None:
    store = OffsetSyncStore()
    # no offsets, not started
    for g in (0, 100, 200):
        assert store.translate_downstream(None, TP, g) is None
    store.start(True)
    sync(store, 100, 200)  # read during the initial load
    for g in (0, 100, 200):
        assert store.translate_downstream(None, TP, g) is None
    store.mark_read_to_end()
    assert store.read_to_end
    assert store.translate_downstream(None, TP, 0) == -1
    assert store.translate_downstream(None, TP, 100) == 200
    assert store.translate_downstream(None, TP, 200) == 201


def test_no_translation_if_no_offset_sync() -> None:
    store = started(True)
    assert store.translate_downstream(None, TP, 0) is None
    sync(store, 3, 4, TopicPartition("topic1", 0))
    assert store.translate_downstream(None, TopicPartition("topic1", 1), 10) is None
    assert store.translate_downstream(None, TopicPartition("topic1", 0), 10) == 5


def _load_every_10_to_1000(store: OffsetSyncStore) -> None:
    for offset in range(0, 1001, 10):
        sync(store, offset, offset)
        assert_sparse_sync_invariant(store)


def test_past_offset_translation() -> None:
    store = started(True, _load_every_10_to_1000)
    # after start only the latest startup sync can be translated
    assert_sparse_sync(store, 1000, -1)
    for offset in range(1010, 10001, 10):
        sync(store, offset, offset)
        assert_sparse_sync_invariant(store)
    # invariant D: the last sync of the initial read is still the floor
    assert_sparse_sync(store, 1000, -1)
    # older offsets translate less precisely
    assert_sparse_sync(store, 4840, 1000)
    assert_sparse_sync(store, 6760, 4840)
    assert_sparse_sync(store, 8680, 6760)
    assert_sparse_sync(store, 9160, 8680)
    assert_sparse_sync(store, 9640, 9160)
    assert_sparse_sync(store, 9880, 9640)
    assert_sparse_sync(store, 9940, 9880)
    assert_sparse_sync(store, 9970, 9940)
    assert_sparse_sync(store, 9990, 9970)
    assert_sparse_sync(store, 10000, 9990)
    # reference's accuracy examples
    assert store.translate_downstream(None, TP, 9989) == 9971
    assert store.translate_downstream(None, TP, 8679) == 6761
    assert store.translate_downstream(None, TP, 4839) == 1001
    # an upstream rewind clears all history
    sync(store, 1500, 11000)
    assert_sparse_sync_invariant(store)
    assert store.translate_downstream(None, TP, 1499) == -1
    assert store.translate_downstream(None, TP, 1500) == 11000
    assert store.translate_downstream(None, TP, 2000) == 11001
    assert count_distinct(store) == 1


def test_past_offset_translation_without_initialization_read_to_end() -> None:
    store = started(False, _load_every_10_to_1000)
    # history from the initial read is kept
    assert_sparse_sync(store, 480, 0)
    assert_sparse_sync(store, 720, 480)
    assert_sparse_sync(store, 1000, 990)
    for offset in range(1000, 10001, 10):
        sync(store, offset, offset)
        assert_sparse_sync_invariant(store)
    # 1000 was evicted; before 3840 only the oldest stored sync (0) remains
    assert_sparse_sync(store, 3840, 0)
    assert_sparse_sync(store, 7680, 3840)
    assert_sparse_sync(store, 8640, 7680)
    assert_sparse_sync(store, 9120, 8640)
    assert_sparse_sync(store, 9600, 9120)
    assert_sparse_sync(store, 9840, 9600)
    assert_sparse_sync(store, 9900, 9840)
    assert_sparse_sync(store, 9960, 9900)
    assert_sparse_sync(store, 9990, 9960)
    assert_sparse_sync(store, 10000, 9990)
    sync(store, 1500, 11000)
    assert_sparse_sync_invariant(store)
    assert store.translate_downstream(None, TP, 1499) == -1
    assert store.translate_downstream(None, TP, 1500) == 11000
    assert store.translate_downstream(None, TP, 2000) == 11001


def test_initial_read_with_must_read_to_end_keeps_only_last_sync() -> None:
    store = started(True, _load_every_10_to_1000)
    assert count_distinct(store) == 1
    assert store.sync_for(TP, 0) is store.sync_for(TP, 63)
    assert store.sync_for(TP, 0).upstream_offset == 1000


def test_first_sync_fills_all_slots_with_same_object() -> None:
    store = started(True)
    sync(store, 5, 7)
    first = store.sync_for(TP, 0)
    assert all(store.sync_for(TP, i) is first for i in range(SYNCS_PER_PARTITION))


def test_repeated_upstream_offset_is_not_a_rewind() -> None:
    store = started(True)
    sync(store, 100, 100)
    sync(store, 100, 105)  # same upstream offset, e.g. re-replicated after a restart
    assert store.translate_downstream(None, TP, 100) == 105
    assert store.sync_for(TP, 0).downstream_offset == 105


def assert_sync_spacing_has_bounded_expirations(
    first_offset: int, steps: Iterable[int], maximum_expirations: int
) -> None:
    store = started(True)
    sync(store, first_offset, first_offset)
    offset = first_offset
    last_count = 1
    for step in steps:
        offset += step
        assert 0 <= offset <= MAX64, "test is invalid, offset overflowed"
        store.on_sync(OffsetSync(TP, offset, offset))
        # invariant A: the latest sync is present
        assert store.sync_for(TP, 0).upstream_offset == offset
        # invariant D: the earliest sync is present
        assert store.sync_for(TP, 63).upstream_offset == first_offset
        count = count_distinct(store)
        expired = last_count - count + 1
        assert expired <= maximum_expirations, f"expired {expired} > {maximum_expirations} at {offset}"
        last_count = count


def test_consistently_spaced_syncs() -> None:
    iterations = 100
    max_step = MAX64 // iterations
    step = 1
    while step < max_step:  # steps 1, 3, 7, ... up to ~2^56: exercises 64-bit wrap in the bounds
        for first_offset in (0, 1, 2, 7, 13, 29):
            assert_sync_spacing_has_bounded_expirations(first_offset, [step] * iterations, 1)
        step = step * 2 + 1


def test_randomly_spaced_syncs() -> None:
    rnd = random.Random(0)
    iteration_bits = 9
    iterations = 1 << iteration_bits
    offset_lag_max = 1 << 16
    for n in range(1, 64 - iteration_bits):
        maximum_difference = 1 << n
        maximum_expirations = n + 2
        assert_sync_spacing_has_bounded_expirations(
            0, [rnd.randrange(0, maximum_difference) for _ in range(iterations)], maximum_expirations
        )
        assert_sync_spacing_has_bounded_expirations(
            0,
            [rnd.randrange(offset_lag_max, offset_lag_max + maximum_difference) for _ in range(iterations)],
            maximum_expirations,
        )


def test_dropped_syncs_spacing() -> None:
    rnd = random.Random(0)
    offset_lag_max = 100
    # half the gaps are doubled, as if one intervening sync was lost: at most 2 expire at once
    steps = [(2 if rnd.random() < 0.5 else 1) * offset_lag_max for _ in range(3000)]
    assert_sync_spacing_has_bounded_expirations(0, steps, 2)


def test_invariants_hold_for_random_syncs_near_long_max() -> None:
    rnd = random.Random(7)
    store = started(True)
    offset = MAX64 - (1 << 40)
    store.on_sync(OffsetSync(TP, offset, 0))
    for _ in range(500):
        offset += rnd.randrange(1, 1 << 30)
        store.on_sync(OffsetSync(TP, offset, offset - MAX64 + (1 << 41)))
        assert_sparse_sync_invariant(store)
    assert store.translate_downstream(None, TP, offset) == store.sync_for(TP, 0).downstream_offset


def test_partitions_are_independent() -> None:
    store = started(True)
    other = TopicPartition("topic1", 3)
    sync(store, 10, 100)
    sync(store, 50, 500, other)
    assert store.translate_downstream("g", TP, 10) == 100
    assert store.translate_downstream("g", other, 10) == -1
    assert store.translate_downstream("g", other, 51) == 501
    assert sorted(store.topic_partitions()) == [TP, other]


def test_malformed_record_raises_and_leaves_state() -> None:
    store = started(True)
    sync(store, 10, 100)
    with pytest.raises(RecordFormatError):
        store.on_record(b"\x00", b"")
    assert store.translate_downstream(None, TP, 10) == 100


def test_readers_see_whole_arrays() -> None:
    store = started(True)
    sync(store, 0, 0)
    before = store.syncs(TP)
    sync(store, 1000, 1000)
    assert before is not None
    assert before[0].upstream_offset == 0  # snapshot untouched by the update
    assert store.sync_for(TP, 0).upstream_offset == 1000


def test_sync_for_unknown_partition() -> None:
    store = started(True)
    with pytest.raises(KeyError):
        store.sync_for(TP, 0)
    assert store.syncs(TP) is None
    assert store.distinct_syncs(TP) == []
