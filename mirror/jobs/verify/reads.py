"""How ``mm2 verify`` reads Kafka: small state topics to their end, source positions, and record ranges.

Every reader is a plain consumer with ``assign()`` (no group membership, nothing committed), tuned for
reading one partition range at a time as fast as Python can take it: big fetches, a prefetch queue that
never pauses for a second, and ``consume`` calls that never wait for records a range cannot hold.
:func:`hash_range` is the first pass over a chunk side (one streaming SHA-256 of every record's
content, no per-record objects); :func:`drain` the second, record by record, only where chunk hashes
differ.
"""

from __future__ import annotations

import time
import uuid
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable
from hashlib import sha256
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.clients import admin_config, consumer_config, create_admin, create_consumer
from connect_core.kafka.types import OFFSET_BEGINNING, ClientPartition, KafkaError, KafkaException, OffsetSpec
from mirror.jobs.verify.logic import Digest, headers_bytes, record_digest


def verify_consumer(props: dict[str, Any], overrides: dict[str, Any] | None = None) -> Any:
    """A consumer for ``assign()`` reads of one partition range at a time (``overrides``: librdkafka keys)."""
    return create_consumer(
        consumer_config(
            props,
            {
                "group.id": f"mm2-verify-{uuid.uuid4().hex[:8]}",  # assign() only: never joins, never commits
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "auto.offset.reset": "earliest",
                "fetch.wait.max.ms": 100,
                "queued.min.messages": 50000,
                "max.partition.fetch.bytes": 8 * 1024 * 1024,  # one partition at a time: few, big fetches
                "fetch.max.bytes": 64 * 1024 * 1024,
                "queued.max.messages.kbytes": 16 * 1024,  # what a consumer prefetches (four per task)
                "fetch.queue.backoff.ms": 10,  # a full prefetch queue otherwise pauses fetching for a second
                **(overrides or {}),
            },
        )
    )


def read_state_topic(
    props: dict[str, Any],
    admin: TopicAdmin,
    topic: str,
    apply: Callable[[bytes | None, bytes | None, int | None], None],
    timeout_s: float,
) -> None:
    """Feed every record of a small state topic to ``apply`` (log order per partition), up to its end now.

    :func:`mirror.driver.status.read_topic` does the same through a KafkaBasedLog, whose start from
    OFFSET_BEGINNING costs a ListOffsets round per read (~0.4 s on the test broker); verification reads three such
    topics before any record is compared, so it assigns offset 0 (below a raised log start, the consumer
    resets to the earliest) and stops at each partition's end-of-partition event. ``timeout_s`` bounds a
    wait without any record, not the whole read: a big topic is read however long that takes.
    """
    count = admin.partition_counts([topic], timeout_s).get(topic, 0)
    if not count:
        return
    consumer = verify_consumer(props)
    try:
        consumer.assign([ClientPartition(topic, p, 0) for p in range(count)])
        ended: set[int] = set()
        deadline = time.monotonic() + timeout_s  # pushed back by every batch: bounds a stall, not the read
        while len(ended) < count:
            if time.monotonic() > deadline:
                raise ConnectError(f"Could not read {topic} to its end: no progress for {timeout_s:g}s")
            batch = consumer.consume(5000, 0.01)  # a small topic never fills a batch: poll often
            if batch:
                deadline = time.monotonic() + timeout_s
            for msg in batch:
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise ConnectError(f"Cannot read {topic}: {err.str()}")
                    ended.add(msg.partition())
                elif msg.partition() not in ended:
                    ts = msg.timestamp()[1]
                    apply(msg.key(), msg.value(), ts if ts > 0 else None)
    except KafkaException as e:
        raise ConnectError(f"Cannot read {topic}: {e}") from None
    finally:
        consumer.close()


def log_starts(
    admin_props: dict[str, Any], partitions: Iterable[tuple[str, int]], timeout_s: float
) -> dict[tuple[str, int], int]:
    """The log-start offset of each partition (ListOffsets EARLIEST, one request)."""
    wanted = sorted(set(partitions))
    if not wanted:
        return {}
    admin = create_admin(admin_config(admin_props))
    futures = admin.list_offsets(
        {ClientPartition(t, p): OffsetSpec.earliest() for t, p in wanted}, request_timeout=timeout_s
    )
    out: dict[tuple[str, int], int] = {}
    for ktp, future in futures.items():
        try:
            out[(ktp.topic, ktp.partition)] = max(0, int(future.result(timeout=timeout_s).offset))
        except (KafkaException, TimeoutError) as e:
            raise ConnectError(f"Cannot list the log start of {ktp.topic}-{ktp.partition}: {e}") from None
    return out


def first_records(
    consumer_props: dict[str, Any], positions: dict[tuple[str, int], int], timeout_s: float
) -> dict[tuple[str, int], int | None]:
    """Per partition, the offset of the first record at or after ``positions[tp]`` (below the end), or None
    when only offsets without records (transaction markers) are left: those are not pending records."""
    if not positions:
        return {}
    consumer = verify_consumer(consumer_props, {"max.partition.fetch.bytes": 1024, "queued.min.messages": 1})
    out: dict[tuple[str, int], int | None] = {}
    try:
        consumer.assign([ClientPartition(t, p, o) for (t, p), o in positions.items()])
        deadline = time.monotonic() + timeout_s
        while len(out) < len(positions):
            if time.monotonic() > deadline:
                missing = sorted(f"{t}-{p}" for t, p in set(positions) - set(out))
                raise ConnectError(f"No fetch response for {', '.join(missing)} within {timeout_s:g}s")
            for msg in consumer.consume(500, 0.01):
                tp = (msg.topic(), msg.partition())
                if tp in out:
                    continue
                err = msg.error()
                if err is None:
                    out[tp] = msg.offset()
                elif err.code() == KafkaError._PARTITION_EOF:
                    out[tp] = None
                else:
                    raise ConnectError(f"Cannot read {tp[0]}-{tp[1]}: {err.str()}")
    except KafkaException as e:
        raise ConnectError(f"Cannot read the source partitions' tails: {e}") from None
    finally:
        consumer.close()
    return out


_BATCH = 5000


def batch_size(next_offset: int, hi: int | None, count: int, limit: int | None) -> int:
    """How many messages to ask ``consume`` for: it returns early only when it has that many, so near the
    end of a range ask for no more than the range can still hold (else each range ends with a wait)."""
    wanted = _BATCH
    if hi is not None and next_offset >= 0:
        wanted = min(wanted, hi - next_offset)
    if limit is not None:
        wanted = min(wanted, limit - count)
    return max(1, wanted)


def assign(consumer: Any, topic: str, partition: int, lo: int | None) -> None:
    """Start fetching ``topic-partition`` at ``lo`` (None: the log start) in the client's background."""
    consumer.assign([ClientPartition(topic, partition, OFFSET_BEGINNING if lo is None else lo)])


def drain(
    consumer: Any, topic: str, partition: int, lo: int | None, hi: int | None, limit: int | None, timeout_s: float
) -> tuple[list[Digest], int]:
    """Digests of the assigned partition's records in ``[lo, hi)`` (``hi`` None: up to ``limit`` records or
    the end), and their key+value bytes; unassigns at the end."""
    out: list[Digest] = []
    append = out.append
    size = 0
    floor = -1 if lo is None else lo
    last = None if hi is None else hi - 1
    eof = KafkaError._PARTITION_EOF
    deadline = time.monotonic() + timeout_s
    try:
        if hi is not None and lo is not None and hi <= lo:
            return out, size
        next_offset = floor
        while True:
            msgs = consumer.consume(batch_size(next_offset, hi, len(out), limit), 0.05)
            if not msgs:
                if time.monotonic() > deadline:
                    raise ConnectError(
                        f"No records from {topic}-{partition} within {timeout_s:g}s (reading [{lo}, {hi}))"
                    )
                continue
            deadline = time.monotonic() + timeout_s
            next_offset = msgs[-1].offset() + 1
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == eof:
                        return out, size
                    raise ConnectError(f"Cannot read {topic}-{partition}: {err.str()}")
                offset = msg.offset()
                if offset < floor:
                    continue  # left over from the previous assignment
                if hi is not None and offset >= hi:
                    return out, size
                key, value = msg.key(), msg.value()
                append(Digest(offset, record_digest(key, value, msg.headers(), msg.timestamp()[1])))
                size += (len(key) if key else 0) + (len(value) if value else 0)
                if offset == last or (limit is not None and len(out) >= limit):
                    return out, size
    finally:
        consumer.unassign()


class ContentHash:
    """One SHA-256 over a partition range's record contents, fed a batch at a time.

    Each field goes to its own stream (key lengths, value lengths, timestamps, header counts, keys,
    values, headers), so the result does not depend on where batches start and end, and the lengths make
    the concatenated keys and values unambiguous. Per batch the work is a few list comprehensions and
    byte joins instead of Python statements per record: this pass runs over every record verified.
    """

    __slots__ = ("count", "size", "streams")

    def __init__(self) -> None:
        self.streams = [sha256() for _ in range(7)]
        self.count = 0
        self.size = 0

    def add(self, msgs: list[Any]) -> None:
        keys = [m.key() for m in msgs]
        values = [m.value() for m in msgs]
        headers = [m.headers() for m in msgs]
        key_lengths = [-1 if k is None else len(k) for k in keys]
        value_lengths = [-1 if v is None else len(v) for v in values]
        s = self.streams
        s[0].update(array("q", key_lengths).tobytes())
        s[1].update(array("q", value_lengths).tobytes())
        s[2].update(array("q", [m.timestamp()[1] for m in msgs]).tobytes())
        s[3].update(array("q", [len(h) if h else 0 for h in headers]).tobytes())
        s[4].update(b"".join([k for k in keys if k]))
        s[5].update(b"".join([v for v in values if v]))
        if any(headers):
            s[6].update(b"".join([headers_bytes(h) for h in headers if h]))
        self.count += len(msgs)
        self.size += sum(n for n in key_lengths if n > 0) + sum(n for n in value_lengths if n > 0)

    def digest(self) -> bytes:
        return sha256(b"".join(h.digest() for h in self.streams)).digest()


def hash_range(
    consumer: Any, topic: str, partition: int, lo: int, hi: int | None, limit: int | None, timeout_s: float
) -> tuple[bytes, int, int]:
    """The first pass over an assigned range: one hash of every record's content (:class:`ContentHash`),
    the record count and the key+value bytes; unassigns at the end. Same range rules as :func:`drain`;
    the same content on both sides gives the same hash."""
    content = ContentHash()
    eof = KafkaError._PARTITION_EOF
    deadline = time.monotonic() + timeout_s
    try:
        if hi is not None and hi <= lo:
            return content.digest(), 0, 0
        next_offset = lo
        while True:
            msgs = consumer.consume(batch_size(next_offset, hi, content.count, limit), 0.05)
            if not msgs:
                if time.monotonic() > deadline:
                    raise ConnectError(
                        f"No records from {topic}-{partition} within {timeout_s:g}s (reading [{lo}, {hi}))"
                    )
                continue
            deadline = time.monotonic() + timeout_s
            errors = [m.error() for m in msgs]
            ended = False
            if any(errors):
                first = next(i for i, e in enumerate(errors) if e is not None)
                if errors[first].code() != eof:
                    raise ConnectError(f"Cannot read {topic}-{partition}: {errors[first].str()}")
                msgs, ended = msgs[:first], True
            offsets = [m.offset() for m in msgs]
            begin = bisect_left(offsets, lo)  # anything below: left over from the previous assignment
            stop = len(offsets) if hi is None else bisect_left(offsets, hi)
            if limit is not None:
                stop = min(stop, begin + limit - content.count)
            if begin < stop:
                content.add(msgs[begin:stop])
                next_offset = offsets[stop - 1] + 1
            if (
                ended
                or stop < len(offsets)
                or (hi is not None and next_offset >= hi)
                or (limit is not None and content.count >= limit)
            ):
                return content.digest(), content.count, content.size
    finally:
        consumer.unassign()


__all__ = [
    "ContentHash",
    "assign",
    "batch_size",
    "drain",
    "first_records",
    "hash_range",
    "log_starts",
    "read_state_topic",
    "verify_consumer",
]
