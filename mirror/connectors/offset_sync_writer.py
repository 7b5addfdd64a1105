"""When to emit offset syncs, and which ones are queued (pure part of Kafka's ``OffsetSyncWriter``).

The source task calls :meth:`OffsetSyncQueue.on_record` once per ACKNOWLEDGED record with its
upstream and downstream offsets. A sync is due immediately ("pending") when:

* it is the first record of the partition in this task's lifetime;
* translating the newest record with the last sync would be ``offset.lag.max`` or more behind
  (``d - (last_sync_down + 1) >= max_offset_lag``; the ``+1`` matches translation's ``+1`` rule);
* upstream offsets are not contiguous (compaction, transaction markers, filtered records, restart);
* the downstream offset went backwards (target truncated).

Otherwise the partition's newest position is "delayed"; :meth:`promote_delayed` (called from the
task's ``commit()``, i.e. every offset flush) turns delayed positions into pending syncs so quiet
partitions reach their end. :meth:`take_pending` hands out pending syncs in insertion order while
fewer than ``max_in_flight`` sends are outstanding; the producer shell calls :meth:`on_send_complete`
from each send callback (success or failure).

The per-record path allocates nothing unless a sync becomes pending: a delayed position is the
partition state's last (upstream, downstream) pair, materialised only on promotion.
"""

from __future__ import annotations

import threading
from itertools import islice

from mirror.client.formats import OffsetSync, TopicPartition

MAX_OUTSTANDING_OFFSET_SYNCS = 10


class PartitionState:
    """Per source partition: last seen offsets and the downstream offset of the last sync."""

    __slots__ = (
        "last_sync_downstream_offset",
        "max_offset_lag",
        "previous_downstream_offset",
        "previous_upstream_offset",
    )

    def __init__(self, max_offset_lag: int) -> None:
        self.previous_upstream_offset = -1
        self.previous_downstream_offset = -1
        self.last_sync_downstream_offset = -1
        self.max_offset_lag = max_offset_lag

    def should_emit(self, upstream_offset: int, downstream_offset: int) -> bool:
        """Record an acknowledged record's offsets; True if an offset sync must be sent now."""
        last = self.last_sync_downstream_offset
        emit = (
            last == -1
            or downstream_offset - (last + 1) >= self.max_offset_lag
            or upstream_offset - self.previous_upstream_offset != 1
            or downstream_offset < self.previous_downstream_offset
        )
        if emit:
            self.last_sync_downstream_offset = downstream_offset
        self.previous_upstream_offset = upstream_offset
        self.previous_downstream_offset = downstream_offset
        return emit

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PartitionState):
            return NotImplemented
        return (
            self.previous_upstream_offset == other.previous_upstream_offset
            and self.previous_downstream_offset == other.previous_downstream_offset
            and self.last_sync_downstream_offset == other.last_sync_downstream_offset
            and self.max_offset_lag == other.max_offset_lag
        )

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (
            f"PartitionState(previous_upstream_offset={self.previous_upstream_offset}, "
            f"previous_downstream_offset={self.previous_downstream_offset}, "
            f"last_sync_downstream_offset={self.last_sync_downstream_offset}, "
            f"max_offset_lag={self.max_offset_lag})"
        )


def contiguous_sync_points(
    state: PartitionState, first_upstream: int, first_downstream: int, count: int
) -> list[tuple[int, int]]:
    """:meth:`PartitionState.should_emit` over a run of ``count`` records whose upstream and downstream
    offsets both step by one, without a call per record.

    Returns the (upstream, downstream) pairs it would flag, in order, and leaves ``state`` as after
    the run's last record. After the first record nothing can skip upstream or go backwards
    downstream, so only staleness flags a record: first at ``last sync + 1 + max_offset_lag``, then
    every ``max_offset_lag + 1`` records.
    """
    points: list[tuple[int, int]] = []
    if count <= 0:
        return points
    if state.should_emit(first_upstream, first_downstream):
        points.append((first_upstream, first_downstream))
    if count == 1:
        return points
    last_downstream = first_downstream + count - 1
    lag = state.max_offset_lag
    step = lag + 1 if lag >= 0 else 1
    downstream = max(state.last_sync_downstream_offset + 1 + lag, first_downstream + 1)
    while downstream <= last_downstream:
        points.append((first_upstream + downstream - first_downstream, downstream))
        state.last_sync_downstream_offset = downstream
        downstream += step
    state.previous_upstream_offset = first_upstream + count - 1
    state.previous_downstream_offset = last_downstream
    return points


class OffsetSyncQueue:
    """Pending and delayed offset syncs of one source task, with an in-flight send limit.

    Thread-safe: acknowledgements, ``commit()`` and send callbacks may come from different threads
    (except :meth:`on_record_owned`, the single-thread per-record path).
    """

    def __init__(self, max_offset_lag: int, max_in_flight: int = MAX_OUTSTANDING_OFFSET_SYNCS) -> None:
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be at least 1")
        self.max_offset_lag = max_offset_lag
        self.max_in_flight = max_in_flight
        self.partition_states: dict[TopicPartition, PartitionState] = {}
        self._pending: dict[TopicPartition, OffsetSync] = {}
        self._delayed: dict[TopicPartition, PartitionState] = {}
        self._in_flight = 0
        self._lock = threading.Lock()

    def on_record(self, topic_partition: TopicPartition, upstream_offset: int, downstream_offset: int) -> bool:
        """Account for one acknowledged record; True if a sync for it is now pending."""
        with self._lock:
            state = self.partition_states.get(topic_partition)
            if state is None:
                state = self.partition_states[topic_partition] = PartitionState(self.max_offset_lag)
            return self.on_record_owned(topic_partition, state, upstream_offset, downstream_offset)

    def state_for(self, topic_partition: TopicPartition) -> PartitionState:
        """The partition's state (created if new), for :meth:`on_record_owned`."""
        with self._lock:
            state = self.partition_states.get(topic_partition)
            if state is None:
                state = self.partition_states[topic_partition] = PartitionState(self.max_offset_lag)
            return state

    def on_record_owned(
        self, topic_partition: TopicPartition, state: PartitionState, upstream_offset: int, downstream_offset: int
    ) -> bool:
        """:meth:`on_record` without the lock and the state lookup: the per-record path of a task.

        Only for a caller that is the one thread using this queue while it runs (a source task
        acknowledges, commits and serves its sync sends on its own thread); ``state`` must come
        from :meth:`state_for` after the last :meth:`forget` of the partition.
        """
        # PartitionState.should_emit, inlined for the common "no sync now" case (once per record).
        last = state.last_sync_downstream_offset
        if (
            last != -1
            and downstream_offset - last - 1 < state.max_offset_lag
            and upstream_offset - state.previous_upstream_offset == 1
            and downstream_offset >= state.previous_downstream_offset
        ):
            state.previous_upstream_offset = upstream_offset
            state.previous_downstream_offset = downstream_offset
            # The delayed sync is always the state's newest (upstream, downstream) pair.
            self._delayed[topic_partition] = state
            return False
        state.should_emit(upstream_offset, downstream_offset)  # True here; updates the state
        self._delayed.pop(topic_partition, None)
        self._pending[topic_partition] = OffsetSync(topic_partition, upstream_offset, downstream_offset)
        return True

    def make_pending(self, topic_partition: TopicPartition, upstream_offset: int, downstream_offset: int) -> None:
        """A sync the caller's own rule flagged (owner thread, as :meth:`on_record_owned`)."""
        self._delayed.pop(topic_partition, None)
        self._pending[topic_partition] = OffsetSync(topic_partition, upstream_offset, downstream_offset)

    def mark_delayed(self, topic_partition: TopicPartition, state: PartitionState) -> None:
        """The state's newest position is to be synced at the next commit (owner thread)."""
        self._delayed[topic_partition] = state

    def promote_delayed(self) -> None:
        """Make every delayed position pending (newest wins over an older pending sync)."""
        with self._lock:
            for tp, state in self._delayed.items():
                self._pending[tp] = OffsetSync(tp, state.previous_upstream_offset, state.previous_downstream_offset)
            self._delayed.clear()

    def take_pending(self) -> list[OffsetSync]:
        """Pending syncs to send now, oldest first, reserving one in-flight slot each."""
        with self._lock:
            budget = self.max_in_flight - self._in_flight
            if budget <= 0 or not self._pending:
                return []
            pending = self._pending
            out = [pending[tp] for tp in islice(pending, budget)]
            for s in out:
                del pending[s.topic_partition]
            self._in_flight += len(out)
            return out

    def on_send_complete(self, count: int = 1) -> None:
        """Release in-flight slots; call from each send's delivery callback, success or failure."""
        with self._lock:
            self._in_flight = max(0, self._in_flight - count)

    def reset_in_flight(self) -> None:
        """Forget every outstanding send: their producer was dropped and will never report them."""
        with self._lock:
            self._in_flight = 0

    @property
    def in_flight(self) -> int:
        return self._in_flight

    def pending(self) -> dict[TopicPartition, OffsetSync]:
        """Snapshot of pending syncs in send order."""
        with self._lock:
            return dict(self._pending)

    def delayed(self) -> dict[TopicPartition, OffsetSync]:
        """Snapshot of delayed syncs (what :meth:`promote_delayed` would make pending)."""
        with self._lock:
            return {
                tp: OffsetSync(tp, s.previous_upstream_offset, s.previous_downstream_offset)
                for tp, s in self._delayed.items()
            }

    def forget(self, topic_partitions: list[TopicPartition] | None = None) -> None:
        """Drop state for partitions no longer assigned (all if None)."""
        with self._lock:
            if topic_partitions is None:
                self.partition_states.clear()
                self._pending.clear()
                self._delayed.clear()
                return
            for tp in topic_partitions:
                self.partition_states.pop(tp, None)
                self._pending.pop(tp, None)
                self._delayed.pop(tp, None)


__all__ = ["MAX_OUTSTANDING_OFFSET_SYNCS", "OffsetSyncQueue", "PartitionState", "contiguous_sync_points"]
