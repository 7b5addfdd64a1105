"""Offset-sync emission decision and pending/delayed bookkeeping (Kafka's OffsetSyncWriterTest + §3.1 rules)."""

from __future__ import annotations

import random
import threading

import pytest

from mirror.client.formats import OffsetSync, TopicPartition
from mirror.connectors.offset_sync_store import OffsetSyncStore
from mirror.connectors.offset_sync_writer import (
    MAX_OUTSTANDING_OFFSET_SYNCS,
    OffsetSyncQueue,
    PartitionState,
    contiguous_sync_points,
)

TP = TopicPartition("topic", 0)


# -- PartitionState.should_emit ----------------------------------------------------------------


def test_contiguous_offsets_sync_every_lag_plus_one() -> None:
    state = PartitionState(100)
    emitted = [d for d in range(1000) if state.should_emit(d, d)]
    assert emitted == list(range(0, 1000, 101))


def test_lag_zero_syncs_every_record() -> None:
    state = PartitionState(0)
    assert all(state.should_emit(u, u + 7) for u in range(50))


def test_first_record_always_syncs() -> None:
    state = PartitionState(1000)
    assert state.should_emit(500, 20)
    assert state.last_sync_downstream_offset == 20
    assert not state.should_emit(501, 21)


def test_upstream_gap_syncs() -> None:
    state = PartitionState(100)
    assert state.should_emit(0, 0)
    assert not state.should_emit(1, 1)
    assert state.should_emit(5, 2)  # compaction / filtered records / txn markers
    assert not state.should_emit(6, 3)


def test_downstream_truncation_syncs() -> None:
    state = PartitionState(100)
    assert state.should_emit(0, 50)
    assert not state.should_emit(1, 51)
    assert state.should_emit(2, 10)


def test_too_stale_rule_uses_plus_one() -> None:
    state = PartitionState(2)
    assert state.should_emit(0, 1)
    # translation of d=2 would be last+1=2: not stale
    assert not state.should_emit(1, 2)
    # d=3: 3 - (1 + 1) = 1 < 2
    assert not state.should_emit(2, 3)
    # d=4: 4 - 2 = 2 >= 2
    assert state.should_emit(3, 4)
    assert state.last_sync_downstream_offset == 4


def test_rule_keeps_translation_within_lag() -> None:
    """Feeding emitted syncs to the store, every acked record translates within offset.lag.max."""
    lag = 10
    state = PartitionState(lag)
    store = OffsetSyncStore()
    store.start(False)
    store.mark_read_to_end()
    for u in range(500):
        d = u + 1000
        if state.should_emit(u, d):
            store.on_sync(OffsetSync(TP, u, d))
        # a group that consumed record u commits u+1
        translated = store.translate_downstream("g", TP, u + 1)
        assert translated is not None
        assert 0 <= (d + 1) - translated <= lag


def test_partition_state_equality() -> None:
    a, b = PartitionState(5), PartitionState(5)
    assert a == b
    a.should_emit(1, 1)
    assert a != b
    b.should_emit(1, 1)
    assert a == b


# -- OffsetSyncQueue (maybeQueueOffsetSyncs / firePendingOffsetSyncs / promoteDelayedOffsetSyncs) --


def test_maybe_queue_offset_syncs() -> None:
    q = OffsetSyncQueue(max_offset_lag=2, max_in_flight=1)
    assert q.on_record(TP, 0, 1)
    assert TP not in q.delayed()
    assert TP in q.pending()
    assert q.partition_states[TP].last_sync_downstream_offset == 1

    assert not q.on_record(TP, 1, 2)
    assert q.delayed()[TP] == OffsetSync(TP, 1, 2)
    assert q.partition_states[TP].last_sync_downstream_offset == 1


def test_fire_pending_offset_syncs_respects_in_flight_limit() -> None:
    q = OffsetSyncQueue(max_offset_lag=1, max_in_flight=1)
    q.on_record(TP, 0, 100)
    assert q.partition_states[TP].last_sync_downstream_offset == 100
    sent = q.take_pending()
    assert sent == [OffsetSync(TP, 0, 100)]
    assert q.in_flight == 1

    q.on_record(TP, 2, 102)
    assert q.partition_states[TP].last_sync_downstream_offset == 102
    # still one in flight: nothing more may be sent
    assert q.take_pending() == []
    assert q.pending() == {TP: OffsetSync(TP, 2, 102)}
    q.on_send_complete()
    assert q.take_pending() == [OffsetSync(TP, 2, 102)]
    assert q.pending() == {}


def test_promote_delayed_offset_syncs() -> None:
    q = OffsetSyncQueue(max_offset_lag=50, max_in_flight=1)
    q.on_record(TP, 0, 100)
    q.on_record(TP, 1, 101)
    q.promote_delayed()
    assert q.delayed() == {}
    pending = q.pending()
    assert len(pending) == 1
    assert pending[TP] == OffsetSync(TP, 1, 101)


def test_delayed_keeps_only_newest_and_emit_clears_it() -> None:
    q = OffsetSyncQueue(max_offset_lag=100)
    q.on_record(TP, 0, 0)
    q.take_pending()
    for u in range(1, 10):
        q.on_record(TP, u, u)
    assert q.delayed() == {TP: OffsetSync(TP, 9, 9)}
    q.on_record(TP, 20, 20)  # gap: immediate sync
    assert q.delayed() == {}
    assert q.pending() == {TP: OffsetSync(TP, 20, 20)}


def test_pending_is_replaced_by_newer_sync_in_place() -> None:
    q = OffsetSyncQueue(max_offset_lag=0)
    a, b = TopicPartition("a", 0), TopicPartition("b", 0)
    q.on_record(a, 0, 0)
    q.on_record(b, 0, 0)
    q.on_record(a, 1, 1)
    assert list(q.pending().items()) == [(a, OffsetSync(a, 1, 1)), (b, OffsetSync(b, 0, 0))]


def test_take_pending_in_insertion_order_and_budget() -> None:
    q = OffsetSyncQueue(max_offset_lag=0, max_in_flight=3)
    tps = [TopicPartition("t", p) for p in range(5)]
    for tp in tps:
        q.on_record(tp, 0, 0)
    first = q.take_pending()
    assert [s.topic_partition for s in first] == tps[:3]
    assert q.take_pending() == []
    q.on_send_complete(2)
    assert [s.topic_partition for s in q.take_pending()] == tps[3:5]
    assert q.in_flight == 3


def test_starvation_avoided_by_promotion_on_commit() -> None:
    """A quiet partition's newest position reaches the topic at the next commit."""
    q = OffsetSyncQueue(max_offset_lag=100)
    q.on_record(TP, 0, 0)
    q.take_pending()
    q.on_send_complete()
    q.on_record(TP, 1, 1)
    q.on_record(TP, 2, 2)
    assert q.take_pending() == []
    q.promote_delayed()  # commit()
    assert q.take_pending() == [OffsetSync(TP, 2, 2)]


def test_promotion_overrides_older_pending() -> None:
    q = OffsetSyncQueue(max_offset_lag=2, max_in_flight=1)
    q.on_record(TP, 0, 0)
    q.take_pending()  # in flight, budget exhausted
    q.on_record(TP, 1, 1)
    q.on_record(TP, 2, 3)  # 3 - 1 >= 2: pending
    q.on_record(TP, 3, 4)  # delayed
    q.promote_delayed()
    assert q.pending() == {TP: OffsetSync(TP, 3, 4)}


def test_send_complete_never_goes_negative() -> None:
    q = OffsetSyncQueue(max_offset_lag=1)
    q.on_send_complete(5)
    assert q.in_flight == 0


def test_forget_partitions() -> None:
    q = OffsetSyncQueue(max_offset_lag=100)
    other = TopicPartition("other", 1)
    q.on_record(TP, 0, 0)
    q.on_record(other, 0, 0)
    q.on_record(other, 1, 1)
    q.forget([other])
    assert list(q.pending()) == [TP]
    assert q.delayed() == {}
    assert other not in q.partition_states
    q.forget()
    assert q.pending() == {} and q.partition_states == {}


def test_default_in_flight_limit_and_validation() -> None:
    assert OffsetSyncQueue(1).max_in_flight == MAX_OUTSTANDING_OFFSET_SYNCS == 10
    with pytest.raises(ValueError):
        OffsetSyncQueue(1, max_in_flight=0)


def test_concurrent_acks_and_sends_account_exactly() -> None:
    q = OffsetSyncQueue(max_offset_lag=0, max_in_flight=4)
    tps = [TopicPartition("t", p) for p in range(8)]
    sent: list[OffsetSync] = []
    done = threading.Event()

    def acker(tp: TopicPartition) -> None:
        for u in range(200):
            q.on_record(tp, u, u)

    def sender() -> None:
        while not done.is_set() or q.pending():
            batch = q.take_pending()
            sent.extend(batch)
            q.on_send_complete(len(batch))

    s = threading.Thread(target=sender)
    s.start()
    ackers = [threading.Thread(target=acker, args=(tp,)) for tp in tps]
    for t in ackers:
        t.start()
    for t in ackers:
        t.join()
    done.set()
    s.join(timeout=10)
    assert q.in_flight == 0
    # the newest sync of every partition was sent last for that partition
    last = {s.topic_partition: s for s in sent}
    assert all(last[tp].upstream_offset == 199 for tp in tps)


# -- runs: the per-run rule must flag exactly what the per-record rule flags ------------------------


def _state(lag: int, prev_up: int, prev_down: int, last_sync: int) -> PartitionState:
    state = PartitionState(lag)
    state.previous_upstream_offset = prev_up
    state.previous_downstream_offset = prev_down
    state.last_sync_downstream_offset = last_sync
    return state


def _per_record(state: PartitionState, up: int, down: int, count: int) -> list[tuple[int, int]]:
    return [(up + i, down + i) for i in range(count) if state.should_emit(up + i, down + i)]


@pytest.mark.parametrize("seed", range(40))
def test_contiguous_run_matches_the_per_record_rule(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(250):
        lag = rng.choice([-1, 0, 1, 2, 5, 100, rng.randint(0, 3000)])
        fresh = rng.random() < 0.2
        prev_down = -1 if fresh else rng.randint(0, 5000)
        last_sync = -1 if fresh else rng.randint(max(0, prev_down - 3000), prev_down)
        prev_up = -1 if fresh else rng.randint(0, 5000)
        up = prev_up + 1 if rng.random() < 0.7 else rng.randint(0, 6000)
        down = prev_down + 1 if rng.random() < 0.7 else rng.randint(0, 6000)
        count = rng.choice([1, 2, 3, rng.randint(1, 2500)])
        by_run, by_record = _state(lag, prev_up, prev_down, last_sync), _state(lag, prev_up, prev_down, last_sync)
        assert contiguous_sync_points(by_run, up, down, count) == _per_record(by_record, up, down, count)
        assert by_run == by_record


def test_contiguous_run_of_1000_with_default_lag_flags_every_101st() -> None:
    state = PartitionState(100)
    points = contiguous_sync_points(state, 500, 0, 1000)
    assert points[:3] == [(500, 0), (601, 101), (702, 202)]
    assert len(points) == 10
    assert (state.previous_upstream_offset, state.previous_downstream_offset) == (1499, 999)


def test_empty_run_changes_nothing() -> None:
    state = _state(10, 4, 7, 3)
    assert contiguous_sync_points(state, 5, 8, 0) == []
    assert state == _state(10, 4, 7, 3)


def test_make_pending_and_mark_delayed() -> None:
    queue = OffsetSyncQueue(100)
    state = queue.state_for(TP)
    state.should_emit(0, 0)
    queue.mark_delayed(TP, state)
    assert queue.delayed() == {TP: OffsetSync(TP, 0, 0)}
    queue.make_pending(TP, 5, 9)
    assert queue.delayed() == {}
    assert queue.pending() == {TP: OffsetSync(TP, 5, 9)}
