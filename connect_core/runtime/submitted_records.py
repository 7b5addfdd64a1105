"""Which source offsets may be committed: the longest acknowledged prefix per source partition.

A source task's records are produced asynchronously and the broker may acknowledge them out of
order (different target partitions, retries). Committing the offset of an acknowledged record
while an earlier record of the same *source* partition is still in flight would lose that
earlier record on a crash, so offsets are committed only behind the longest fully-acknowledged
prefix of each source partition (Kafka's ``SubmittedRecords``).

Partition maps are keyed by a canonical hashable form, cached by object identity: like Connect,
which keeps references to them, we assume a task does not mutate a partition map once submitted.

Threading: :meth:`SubmittedRecords.submit`, :meth:`SubmittedRecords.committable_offsets` and
:meth:`SubmittedRecords.remove_last_occurrence` run on the task thread; :meth:`SubmittedRecord.ack`
runs on the thread serving delivery reports (the task thread itself in our runtime, where
``producer.poll`` serves them), one thread at a time; :meth:`SubmittedRecords.await_all_messages`
may block any thread until acks drain. ``submit`` and ``ack`` are per record, so they take no lock:
each counter has a single writer (submitted and dropped: the task thread; acked: the acking
thread) and only a waiter makes ``ack`` touch the condition.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Hashable
from typing import Any

PartitionKey = Hashable

# Identity cache of partition dicts -> canonical key. Tasks usually reuse one dict object per
# source partition, so a hit avoids building the canonical form per record. Entries keep the dict
# alive, so an ``id`` can never be reused while its entry exists.
_CACHE_MAX = 4096


def _first(item: tuple[str, Hashable]) -> str:
    return item[0]


def _freeze(value: Any) -> Hashable:
    if isinstance(value, dict):
        return tuple(sorted(((str(k), _freeze(v)) for k, v in value.items()), key=_first))
    if isinstance(value, list | tuple):
        return ("\x00list", *(_freeze(v) for v in value))
    if isinstance(value, bool):
        # True == 1 in Python; keep JSON's distinction between a boolean and a number.
        return ("\x00bool", value)
    if value is None or isinstance(value, str | int | float | bytes):
        return value
    return ("\x00json", json.dumps(value, sort_keys=True, default=str))


def partition_key(partition: dict[str, Any] | None) -> PartitionKey:
    """A hashable canonical form of a source-partition map (equal maps give equal keys)."""
    if partition is None:
        return None
    for v in partition.values():
        cls = v.__class__
        if cls is not str and cls is not int:
            return _freeze(partition)
    # Fast path for the usual flat map of strings and ints (same result as _freeze).
    return tuple(sorted(partition.items()))


class SubmittedRecord:
    """Handle of one record given to the producer; ``ack()`` it from the delivery callback.

    ``owner``, ``key`` and ``acked`` are public: :class:`SubmittedRecords` and the runtime's handle
    subclasses (which are also delivery callbacks) share them; only ``ack``/``drop`` change them."""

    __slots__ = ("acked", "key", "offset", "owner", "partition")

    def __init__(
        self,
        owner: SubmittedRecords,
        key: PartitionKey,
        partition: dict[str, Any] | None,
        offset: dict[str, Any] | None,
    ) -> None:
        self.owner = owner
        self.key = key
        self.partition = partition
        self.offset = offset
        self.acked = False

    def ack(self) -> None:
        """Mark the record acknowledged; idempotent. From one acking thread at a time."""
        if self.acked:
            return
        self.acked = True
        owner = self.owner
        owner.acked_total += 1
        if owner.waiters:
            # A waiter registers itself before it reads the counters, so either it sees this ack
            # or this ack sees it (the GIL orders the two threads' steps).
            owner.wake_waiters()

    def drop(self) -> bool:
        """Forget this record (its send failed synchronously). Task thread only."""
        return self.owner.remove_last_occurrence(self)

    def __repr__(self) -> str:
        return f"SubmittedRecord(partition={self.partition!r}, offset={self.offset!r}, acked={self.acked})"


class CommittableOffsets:
    """Snapshot of offsets that can be committed and of what is still pending.

    ``offsets`` maps the canonical partition key to ``(partition, offset)``; ``offset`` is None
    when the latest committable record carried a null offset (Connect writes a tombstone then).
    """

    __slots__ = (
        "largest_deque_partition",
        "largest_deque_size",
        "num_committable",
        "num_deques",
        "num_uncommittable",
        "offsets",
    )

    def __init__(
        self,
        offsets: dict[PartitionKey, tuple[dict[str, Any] | None, dict[str, Any] | None]],
        num_committable: int,
        num_uncommittable: int,
        num_deques: int,
        largest_deque_size: int,
        largest_deque_partition: dict[str, Any] | None,
    ) -> None:
        self.offsets = offsets
        self.num_committable = num_committable
        self.num_uncommittable = num_uncommittable
        self.num_deques = num_deques
        self.largest_deque_size = largest_deque_size
        self.largest_deque_partition = largest_deque_partition

    @classmethod
    def empty(cls) -> CommittableOffsets:
        return cls({}, 0, 0, 0, 0, None)

    @property
    def has_pending(self) -> bool:
        return self.num_uncommittable > 0

    @property
    def is_empty(self) -> bool:
        return self.num_committable == 0 and self.num_uncommittable == 0 and not self.offsets

    def offset_map(self) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None]]:
        """The ``(partition, offset)`` pairs, e.g. to hand to an offset writer."""
        return list(self.offsets.values())

    def updated_with(self, newer: CommittableOffsets) -> CommittableOffsets:
        """Combine with a newer snapshot: newer offsets win, committable counts add up,
        pending information comes from the newer snapshot (as Kafka does when a flush failed)."""
        merged = dict(self.offsets)
        merged.update(newer.offsets)
        return CommittableOffsets(
            merged,
            self.num_committable + newer.num_committable,
            newer.num_uncommittable,
            newer.num_deques,
            newer.largest_deque_size,
            newer.largest_deque_partition,
        )

    def __repr__(self) -> str:
        return (
            f"CommittableOffsets(partitions={len(self.offsets)}, committable={self.num_committable}, "
            f"uncommittable={self.num_uncommittable}, largest_deque={self.largest_deque_size})"
        )


class SubmittedRecords:
    """Tracks in-flight records per source partition in submission (= poll) order."""

    def __init__(self) -> None:
        self._records: dict[PartitionKey, deque[SubmittedRecord]] = {}
        self._partitions: dict[PartitionKey, dict[str, Any] | None] = {}
        # id(partition map) -> (the map, its key, its deque): one lookup per submit when tasks
        # reuse their partition maps. Cleared whenever a deque is removed, so it never points to
        # a deque that is no longer tracked; entries keep the maps alive, so ids are not reused.
        self._by_identity: dict[int, tuple[dict[str, Any] | None, PartitionKey, deque[SubmittedRecord]]] = {}
        self._cond = threading.Condition(threading.Lock())
        # Public counters, each with one writer (read by the worker for its metrics and pruning):
        self.submitted_total = 0  # the task thread (submit/track, or whoever appends to a deque_for deque)
        self.dropped_total = 0  # the task thread
        self.acked_total = 0  # the acking thread (SubmittedRecord.ack)
        self.waiters = 0  # threads in await_all_messages: an ack then wakes them (wake_waiters)

    def _deque_for(
        self, partition: dict[str, Any] | None
    ) -> tuple[dict[str, Any] | None, PartitionKey, deque[SubmittedRecord]]:
        key = partition_key(partition)
        dq = self._records.get(key)
        if dq is None:
            dq = self._records[key] = deque()
            self._partitions[key] = partition
        if len(self._by_identity) >= _CACHE_MAX:
            self._by_identity.clear()
        entry = self._by_identity[id(partition)] = (partition, key, dq)
        return entry

    def submit(self, partition: dict[str, Any] | None, offset: dict[str, Any] | None) -> SubmittedRecord:
        """Track a record about to be sent; returns the handle to ``ack()`` or ``drop()``."""
        entry = self._by_identity.get(id(partition))
        if entry is None or entry[0] is not partition:
            entry = self._deque_for(partition)
        handle = SubmittedRecord(self, entry[1], partition, offset)
        entry[2].append(handle)
        self.submitted_total += 1
        return handle

    def deque_for(self, partition: dict[str, Any] | None) -> tuple[PartitionKey, deque[SubmittedRecord]]:
        """(key, in-flight deque) of a source partition, for a caller that appends many handles of
        the same partition in a row (see :meth:`track`). Valid until the next
        :meth:`committable_offsets` or :meth:`remove_last_occurrence`; each handle appended must
        carry this key and be counted in :attr:`submitted_total` (or :meth:`count_submitted`)."""
        entry = self._by_identity.get(id(partition))
        if entry is None or entry[0] is not partition:
            entry = self._deque_for(partition)
        return entry[1], entry[2]

    def count_submitted(self, n: int = 1) -> None:
        self.submitted_total += n

    def track(self, handle: SubmittedRecord) -> None:
        """Like :meth:`submit`, for a handle the caller built (a subclass carrying per-record state,
        e.g. the runtime's handle that is also the record's delivery callback)."""
        partition = handle.partition
        entry = self._by_identity.get(id(partition))
        if entry is None or entry[0] is not partition:
            entry = self._deque_for(partition)
        handle.key = entry[1]
        entry[2].append(handle)
        self.submitted_total += 1

    def _forget_deque(self, key: PartitionKey) -> None:
        del self._records[key]
        self._partitions.pop(key, None)
        self._by_identity.clear()

    def remove_last_occurrence(self, handle: SubmittedRecord) -> bool:
        """Stop tracking ``handle`` (searching from the newest); False if it is not tracked."""
        dq = self._records.get(handle.key)
        if dq is None:
            return False
        found = False
        if dq and dq[-1] is handle:
            dq.pop()
            found = True
        else:
            for i in range(len(dq) - 1, -1, -1):
                if dq[i] is handle:
                    del dq[i]
                    found = True
                    break
        if not dq:
            self._forget_deque(handle.key)
        if found and not handle.acked:
            # Counts as drained for await_all_messages, without becoming committable.
            handle.acked = True
            self.dropped_total += 1
            if self.waiters:
                self.wake_waiters()
        return found

    def wake_waiters(self) -> None:
        """Wake the threads in :meth:`await_all_messages` (only called while :attr:`waiters` is non-zero)."""
        with self._cond:
            self._cond.notify_all()

    def committable_offsets(self) -> CommittableOffsets:
        """Pop acknowledged heads of every deque and return the newest committable offsets."""
        offsets: dict[PartitionKey, tuple[dict[str, Any] | None, dict[str, Any] | None]] = {}
        committable = 0
        uncommittable = 0
        largest_size = 0
        largest_partition: dict[str, Any] | None = None
        empty: list[PartitionKey] = []
        for key, dq in self._records.items():
            popped = 0
            last: SubmittedRecord | None = None
            while dq and dq[0].acked:
                last = dq.popleft()
                popped += 1
            if last is not None:
                offsets[key] = (last.partition, last.offset)
            remaining = len(dq)
            committable += popped
            uncommittable += remaining
            if remaining > largest_size:
                largest_size = remaining
                largest_partition = self._partitions.get(key)
            if not remaining:
                empty.append(key)
        for key in empty:
            self._forget_deque(key)
        return CommittableOffsets(
            offsets, committable, uncommittable, len(self._records), largest_size, largest_partition
        )

    def dispatched_offsets(self) -> dict[PartitionKey, tuple[dict[str, Any] | None, dict[str, Any] | None]]:
        """The newest offset submitted per partition, acknowledged or not (an exactly-once task commits them
        in the transaction of their records: none of them counts unless every record does)."""
        return {key: (dq[-1].partition, dq[-1].offset) for key, dq in self._records.items() if dq}

    def _drained(self) -> int:
        return self.acked_total + self.dropped_total

    @property
    def num_unacked(self) -> int:
        return self.submitted_total - self.acked_total - self.dropped_total

    def await_all_messages(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until every record submitted so far is acked or dropped."""
        deadline = time.monotonic() + max(0.0, timeout)
        target = self.submitted_total
        with self._cond:
            self.waiters += 1
            try:
                while self._drained() < target:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        return False
                    # Bounded slices: a belt-and-braces guard against a missed wake-up.
                    self._cond.wait(min(remaining, 0.05))
                return True
            finally:
                self.waiters -= 1
