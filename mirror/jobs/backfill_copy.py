"""One backfill work unit, copied exactly once by a Spark task (executor side).

Each chunk is one transaction on the target holding the chunk's records *and* the unit's progress,
written as the MirrorSourceConnector's own source offset in the flow's offsets topic: the live task
and a retried attempt both resume from what was committed, never from what was merely sent. The
transactional.id is the unit's, so starting an attempt fences (and aborts the open transaction of)
any earlier attempt of the same unit. After each commit the chunk's offset syncs and offset mapping
are sent (they live on another cluster by default, so they cannot join the transaction; syncs are
idempotent points and a lost one only costs translation precision).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import consumer_config, create_consumer, create_producer, producer_config
from connect_core.kafka.types import KafkaError, KafkaException, Message, Producer
from connect_core.kafka.types import TopicPartition as KTopicPartition
from connect_core.storage.offset_storage import (
    deserialize_offset_key,
    deserialize_offset_value,
    serialize_offset_key,
    serialize_offset_value,
)
from mirror.client.formats import OffsetSync, TopicPartition, unwrap_offset, wrap_offset, wrap_partition
from mirror.client.offset_mappings import mapping_for_copied_range
from mirror.jobs.backfill_plan import WorkUnit, transactional_id

log = logging.getLogger(__name__)

SOURCE_CONNECTOR = "MirrorSourceConnector"
_CONSUME_BATCH = 2000
_CONSUMER_TUNING: dict[str, Any] = {
    "enable.auto.commit": False,
    "enable.partition.eof": True,
    "queued.max.messages.kbytes": 65536,
    "fetch.max.bytes": 32 * 1024 * 1024,
    "max.partition.fetch.bytes": 8 * 1024 * 1024,
    "fetch.wait.max.ms": 500,
    "fetch.queue.backoff.ms": 20,
}
_PRODUCER_TUNING: dict[str, Any] = {
    "linger.ms": 20,
    "batch.size": 1_000_000,
    "queue.buffering.max.kbytes": 262_144,
    "queue.buffering.max.messages": 500_000,
}


@dataclass(frozen=True)
class BackfillClients:
    """What an executor needs to copy one unit (picklable: plain dicts and strings)."""

    source: str
    target: str
    source_consumer: dict[str, Any]
    target_producer: dict[str, Any]
    target_consumer: dict[str, Any]
    offsets_topic: str
    syncs_producer: dict[str, Any] | None
    syncs_topic: str
    mappings_topic: str | None
    chunk_records: int
    timeout_s: float
    #: test seam: the first attempt of the unit named here raises after this many committed chunks
    fail_first_attempt: tuple[str, int] | None = None


@dataclass
class UnitResult:
    """What one unit's copy did (the last, successful attempt)."""

    topic: str
    partition: int
    start: int
    end: int
    resumed_from: int
    records: int
    bytes: int
    chunks: int
    attempt: int


def offset_key(clients: BackfillClients, unit: WorkUnit) -> bytes:
    return serialize_offset_key(SOURCE_CONNECTOR, wrap_partition(TopicPartition(unit.topic, unit.partition),
                                                                 clients.source))


def committed_offset(clients: BackfillClients, unit: WorkUnit) -> int:
    """The flow's committed source offset of the unit's partition (last copied record), -1 if none."""
    from mirror.driver.status import read_topic

    wanted = offset_key(clients, unit)
    found: list[int] = [-1]

    def apply(key: bytes | None, value: bytes | None, _ts: int | None) -> None:
        if key == wanted:
            found[0] = unwrap_offset(deserialize_offset_value(value)) if value is not None else -1

    read_topic(clients.target_consumer, clients.offsets_topic, apply, clients.timeout_s)
    return found[0]


class _Chunk:
    """One transaction's records: counts, and the target offsets of its first and last records
    (from their delivery reports only: no per-record callback on the hot path)."""

    __slots__ = ("bytes", "count", "error", "first_downstream", "first_upstream", "last_downstream",
                 "last_upstream")

    def __init__(self) -> None:
        self.first_upstream = self.last_upstream = -1
        self.first_downstream = self.last_downstream = -1
        self.count = self.bytes = 0
        self.error: KafkaError | None = None

    def on_first(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.error = err
        else:
            self.first_downstream = int(msg.offset() or 0)

    def on_last(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.error = err
        else:
            self.last_downstream = int(msg.offset() or 0)

    def on_other(self, err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            self.error = err


def _produce(producer: Producer, topic: str, partition: int, msg: Message,
             on_delivery: Callable[[KafkaError | None, Message], None] | None = None) -> None:
    """Byte-for-byte as MirrorSource: key, value, headers and timestamp, same partition."""
    kind, ts = msg.timestamp()
    timestamp = ts if kind and ts > 0 else 0
    while True:
        try:
            if on_delivery is None:
                producer.produce(topic, msg.value(), msg.key(), partition=partition, timestamp=timestamp,
                                 headers=msg.headers())
            else:
                producer.produce(topic, msg.value(), msg.key(), partition=partition, timestamp=timestamp,
                                 headers=msg.headers(), on_delivery=on_delivery)
            return
        except BufferError:
            producer.poll(0.05)


class UnitCopier:
    """Copies one unit chunk by chunk; ``run`` returns what it did."""

    def __init__(self, clients: BackfillClients, unit: WorkUnit, attempt: int) -> None:
        self.clients = clients
        self.unit = unit
        self.attempt = attempt
        self.key = offset_key(clients, unit)
        self.tp = TopicPartition(unit.topic, unit.partition)
        self._done = False

    def run(self) -> UnitResult:
        clients, unit = self.clients, self.unit
        conf = producer_config(clients.target_producer, {
            "transactional.id": transactional_id(clients.source, clients.target, unit),
            "enable.idempotence": True,
        })
        for key, value in _PRODUCER_TUNING.items():
            conf.setdefault(key, value)
        producer = create_producer(conf)
        try:
            producer.init_transactions(clients.timeout_s)  # fences earlier attempts, aborts their open transaction
        except KafkaException as e:
            raise ConnectError(f"Cannot start a transaction on cluster '{clients.target}' for {unit.name}: {e}") from e
        syncs = create_producer(producer_config(clients.syncs_producer)) if clients.syncs_producer else None
        try:
            return self._copy(producer, syncs)
        finally:
            producer.flush(clients.timeout_s)
            if syncs is not None:
                syncs.flush(clients.timeout_s)

    def _copy(self, producer: Producer, syncs: Producer | None) -> UnitResult:
        clients, unit = self.clients, self.unit
        resumed = max(unit.start, committed_offset(clients, unit) + 1)
        result = UnitResult(unit.topic, unit.partition, unit.start, unit.end, resumed, 0, 0, 0, self.attempt)
        if resumed >= unit.end:
            return result
        consumer = create_consumer(consumer_config(clients.source_consumer, {
            "group.id": f"mm2-backfill-{clients.source}-{clients.target}", **_CONSUMER_TUNING}))
        try:
            consumer.assign([KTopicPartition(unit.topic, unit.partition, resumed)])
            previous: int | None = None
            while not self._done:
                chunk = self._chunk(consumer, producer)
                if chunk.count == 0:
                    break
                result.records += chunk.count
                result.bytes += chunk.bytes
                result.chunks += 1
                if syncs is not None:
                    self._send_syncs(syncs, chunk, previous)
                previous = chunk.last_upstream
                self._maybe_fail(result.chunks)
        finally:
            consumer.close()
        return result

    def _next_records(self, consumer: Any, wanted: int, deadline: float) -> list[Message]:
        """Up to ``wanted`` records below the unit's end; sets ``_done`` at the end of the unit."""
        unit = self.unit
        while True:
            msgs = consumer.consume(wanted, 0.5)
            out: list[Message] = []
            for msg in msgs:
                err = msg.error()
                offset = int(msg.offset() or 0)
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise ConnectError(f"Cannot read {unit.name}: {err.str()}")
                    if offset >= unit.end:  # the log ends at or past the unit: only markers were left
                        self._done = True
                    continue
                if offset >= unit.end:  # written after the plan: the live task's, not ours
                    self._done = True
                    break
                out.append(msg)
                if offset == unit.end - 1:
                    self._done = True
            if out or self._done:
                return out
            if time.monotonic() > deadline:
                raise ConnectError(f"No records from {unit.name} within {self.clients.timeout_s:g}s "
                                   f"(the plan saw records up to offset {unit.end - 1})")

    def _chunk(self, consumer: Any, producer: Producer) -> _Chunk:
        """Up to chunk_records records and the unit's progress in one transaction."""
        clients, unit = self.clients, self.unit
        chunk = _Chunk()
        pending: Message | None = None  # held back one record, so the chunk's last one gets a delivery report
        began = False
        try:
            while chunk.count < clients.chunk_records and not self._done:
                wanted = min(_CONSUME_BATCH, clients.chunk_records - chunk.count)
                msgs = self._next_records(consumer, wanted, time.monotonic() + clients.timeout_s)
                if msgs and not began:
                    producer.begin_transaction()
                    began = True
                for msg in msgs:
                    if pending is not None:
                        _produce(producer, unit.target_topic, unit.partition, pending,
                                 chunk.on_first if chunk.count == 1 else None)
                    pending = msg
                    offset = int(msg.offset() or 0)
                    if chunk.count == 0:
                        chunk.first_upstream = offset
                    chunk.last_upstream = offset
                    chunk.count += 1
                    value, key = msg.value(), msg.key()
                    chunk.bytes += (len(value) if value else 0) + (len(key) if key else 0)
            if not began:
                return chunk
            assert pending is not None
            if chunk.count == 1:
                _produce(producer, unit.target_topic, unit.partition, pending, _both(chunk))
            else:
                _produce(producer, unit.target_topic, unit.partition, pending, chunk.on_last)
            producer.produce(clients.offsets_topic, serialize_offset_value(wrap_offset(chunk.last_upstream)),
                             self.key, on_delivery=chunk.on_other)
            producer.commit_transaction(clients.timeout_s)
        except BaseException:
            if began:
                try:
                    producer.abort_transaction(clients.timeout_s)
                except KafkaException as e:
                    log.warning("Could not abort the transaction of %s: %s", unit.name, e)
            raise
        if chunk.error is not None:
            raise ConnectError(f"Copy of {unit.name} failed: {chunk.error.str()}")
        return chunk

    def _send_syncs(self, syncs: Producer, chunk: _Chunk, previous: int | None) -> None:
        """Offset syncs at the chunk's first and last records, and its mapping when both sides are contiguous."""
        clients = self.clients
        if chunk.first_downstream < 0 or chunk.last_downstream < 0:
            return
        for upstream, downstream in ((chunk.first_upstream, chunk.first_downstream),
                                     (chunk.last_upstream, chunk.last_downstream)):
            sync = OffsetSync(self.tp, upstream, downstream)
            syncs.produce(clients.syncs_topic, sync.record_value(), sync.record_key(), partition=0)
        span = chunk.count - 1
        contiguous = (chunk.last_downstream - chunk.first_downstream == span
                      and chunk.last_upstream - chunk.first_upstream == span)
        if clients.mappings_topic is not None and contiguous:
            mapping = mapping_for_copied_range(self.tp, chunk.first_upstream, chunk.first_downstream, chunk.count,
                                               previous)
            syncs.produce(clients.mappings_topic, mapping.record_value(), mapping.record_key(), partition=0)
        syncs.poll(0)

    def _maybe_fail(self, chunks_done: int) -> None:
        failing = self.clients.fail_first_attempt
        if failing is not None and self.attempt == 0 and failing == (self.unit.name, chunks_done):
            raise ConnectError(f"injected failure of {self.unit.name} after {chunks_done} committed chunk(s)")


def _both(chunk: _Chunk) -> Callable[[KafkaError | None, Message], None]:
    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        chunk.on_first(err, msg)
        chunk.on_last(err, msg)

    return on_delivery


def copy_unit(clients: BackfillClients, unit: WorkUnit, attempt: int = 0) -> UnitResult:
    """Copy one unit; safe to call again for the same unit (it resumes from the last committed chunk)."""
    return UnitCopier(clients, unit, attempt).run()


def decode_progress(key: bytes | None, value: bytes | None) -> tuple[tuple[str, int], int] | None:
    """((topic, partition), last copied offset) of a MirrorSourceConnector offset record, else None."""
    decoded = deserialize_offset_key(key)
    if decoded is None or decoded[0] != SOURCE_CONNECTOR or decoded[1] is None or value is None:
        return None
    partition = decoded[1]
    try:
        return (str(partition["topic"]), int(partition["partition"])), unwrap_offset(deserialize_offset_value(value))
    except (KeyError, TypeError, ValueError):
        return None


__all__ = ["BackfillClients", "UnitResult", "committed_offset", "copy_unit", "decode_progress"]
