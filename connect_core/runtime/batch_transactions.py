"""The exactly-once task's one transactional producer on the batch path (issue 37).

A transactional id may have one holder at a time, and a copied batch can only travel through
:class:`~connect_core.kafka.transactional_batch_producer.TransactionalBatchProducer`. So when an exactly-once
task copies batches, that producer carries the whole transaction: the copied batches (sent by the
:class:`~connect_core.runtime.batch_copy_loop.BatchCopier`), the records of batches that had to be decoded and
the source offsets for the offsets topic. :class:`BatchTransactions` gives it the part of librdkafka's
transactional ``Producer`` API the exactly-once loop calls (``init/begin/commit/abort_transaction``,
``produce``, ``poll``, ``flush``, ``len``, ``purge``), so the loop, its boundaries, its held callbacks and its
error handling stay one code path for both copy paths; the librdkafka producer never initialises the id.

Records given to ``produce`` wait here and go into the transaction as built batches (one per partition's run,
each below ``max_batch_bytes``) at the next ``poll``/``flush``/commit, after what was sent before them. Errors
come out as librdkafka's: a ``KafkaException`` holding a ``KafkaError`` with the broker's code, which
:mod:`connect_core.runtime.transaction_errors` sorts (fenced, permanent - time-outs included - or recoverable).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.kafka.batch_builder import PlainRecord, batches_within, record_bytes
from connect_core.kafka.partitioning import key_partition
from connect_core.kafka.transactional_batch_producer import TransactionalBatchProducer
from connect_core.kafka.types import KafkaError, KafkaException

log = logging.getLogger(__name__)

#: librdkafka's default ``message.max.bytes``: what the record path's batches stay below too.
DEFAULT_MAX_BATCH_BYTES = 1_000_000
_CREATE_TIME = 1  # librdkafka's TIMESTAMP_CREATE_TIME
_TIMED_OUT = int(getattr(KafkaError, "_TIMED_OUT", -185))
_FAIL = int(getattr(KafkaError, "_FAIL", -196))
_UNKNOWN_PARTITION = int(getattr(KafkaError, "UNKNOWN_TOPIC_OR_PART", 3))

DeliveryCallback = Callable[[KafkaError | None, Any], None]


def kafka_error_of(error: BaseException) -> KafkaError:
    """The librdkafka-style error for a batch producer's: its broker code, else a time-out for what did not
    finish in time (retriable), else a generic failure."""
    code = getattr(error, "code", None)
    if not isinstance(code, int):
        code = _TIMED_OUT if isinstance(error, RetriableError) else _FAIL
    return KafkaError(code, str(error))


class Delivered:
    """The delivery report of one record built into a batch (what ``on_delivery`` callbacks read)."""

    __slots__ = ("_offset", "_partition", "_timestamp", "_topic")

    def __init__(self, topic: str, partition: int, offset: int, timestamp: int) -> None:
        self._topic = topic
        self._partition = partition
        self._offset = offset
        self._timestamp = timestamp

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return _CREATE_TIME, self._timestamp


class _BuiltBatch:
    """The callback of one built batch: each record's delivery report, in order."""

    __slots__ = ("callbacks", "partition", "records", "topic")

    def __init__(
        self, topic: str, partition: int, records: list[PlainRecord], callbacks: list[DeliveryCallback | None]
    ) -> None:
        self.topic = topic
        self.partition = partition
        self.records = records
        self.callbacks = callbacks

    def __call__(self, base_offset: int, error: BaseException | None) -> None:
        failure = kafka_error_of(error) if error is not None else None
        for delta, (record, callback) in enumerate(zip(self.records, self.callbacks, strict=True)):
            if callback is None:
                continue
            if failure is not None:
                callback(failure, None)
                continue
            offset = base_offset + delta if base_offset >= 0 else -1
            callback(None, Delivered(self.topic, self.partition, offset, record.timestamp or -1))


class BatchTransactions:
    """librdkafka's transactional producer API over one transactional batch producer (module docstring)."""

    def __init__(self, batches: TransactionalBatchProducer, max_batch_bytes: int = DEFAULT_MAX_BATCH_BYTES) -> None:
        self.batches = batches
        self.max_batch_bytes = max_batch_bytes
        self._pending: dict[tuple[str, int], list[tuple[PlainRecord, DeliveryCallback | None]]] = {}
        self._pending_count = 0
        self._purged = False

    # ------------------------------------------------------------------ transactions

    def init_transactions(self, timeout: float | None = None) -> None:
        self._call(lambda: self.batches.init_transactions(timeout))

    def begin_transaction(self) -> None:
        self._call(self.batches.begin_transaction)

    def commit_transaction(self, timeout: float | None = None) -> None:
        self._send_pending()
        self._call(lambda: self.batches.commit_transaction(timeout))

    def abort_transaction(self, timeout: float | None = None) -> None:
        """Records not sent yet are dropped (as librdkafka purges its queue), then the transaction is aborted."""
        self._pending.clear()
        self._pending_count = 0
        self._call(lambda: self.batches.abort_transaction(timeout))

    @staticmethod
    def _call(call: Callable[[], None]) -> None:
        try:
            call()
        except ConnectError as e:
            raise KafkaException(kafka_error_of(e)) from e

    # ------------------------------------------------------------------ records

    def produce(
        self,
        topic: str,
        value: bytes | None = None,
        key: bytes | None = None,
        partition: int = -1,
        callback: DeliveryCallback | None = None,
        on_delivery: DeliveryCallback | None = None,
        timestamp: int = 0,
        headers: list[tuple[str, bytes | None]] | None = None,
    ) -> None:
        """Queue one record for the open transaction (librdkafka's argument order; a key picks the partition
        as Kafka's default partitioner does; timestamp 0 means now)."""
        if partition < 0:
            partition = self._partition_for(topic, key)
        record = PlainRecord(key, value, list(headers or ()), timestamp or None)
        self._pending.setdefault((topic, partition), []).append((record, callback or on_delivery))
        self._pending_count += 1

    def _partition_for(self, topic: str, key: bytes | None) -> int:
        try:
            count = self.batches.partition_count(topic)
        except ConnectError as e:
            raise KafkaException(kafka_error_of(e)) from e
        if count <= 0:
            raise KafkaException(KafkaError(_UNKNOWN_PARTITION, f"Topic '{topic}' is unknown to the target cluster"))
        return key_partition(key, count) if key is not None else 0

    def send_pending(self) -> None:
        """Records produced so far into the transaction now, behind what was sent before them, without I/O: the
        next ``poll`` of either producer sends them with the batches queued by then (one AddPartitionsToTxn,
        the same Produce requests)."""
        self._send_pending()

    def _send_pending(self) -> None:
        """Queued records into the transaction, after everything sent before them (per partition order)."""
        if not self._pending:
            return
        pending, self._pending = self._pending, {}
        self._pending_count = 0
        for (topic, partition), entries in pending.items():
            for group in within(entries, self.max_batch_bytes):
                records = [record for record, _ in group]
                built = _BuiltBatch(topic, partition, records, [callback for _, callback in group])
                try:
                    self.batches.send_records(topic, partition, records, built)
                except ConnectError as e:  # fenced, or no transaction: their reports say so, as librdkafka's
                    built(-1, e)

    def limit_batches(self, max_batch_bytes: int | None) -> None:
        """Records produced from now on are built into batches below ``max_batch_bytes`` (None: the default);
        those queued before keep the limit they were produced under."""
        self._send_pending()
        self.max_batch_bytes = min(max_batch_bytes or DEFAULT_MAX_BATCH_BYTES, DEFAULT_MAX_BATCH_BYTES)

    # ------------------------------------------------------------------ serving

    def poll(self, timeout: float = 0.0) -> int:
        if not self._purged:
            self._send_pending()
            self.batches.poll(timeout)
        return 0

    def flush(self, timeout: float = 0.0) -> int:
        """Until everything queued was answered or the time is up; what is left."""
        if self._purged:
            return 0
        self._send_pending()
        self.batches.flush(timeout)
        return len(self)

    def __len__(self) -> int:
        return self.batches.in_flight + self._pending_count

    def purge(self) -> None:
        """Nothing more of this instance reaches the broker (it gave up; its successor takes the id over)."""
        self._purged = True
        self._pending.clear()
        self._pending_count = 0
        self.batches.close()


def within(
    entries: list[tuple[PlainRecord, DeliveryCallback | None]], limit: int
) -> list[list[tuple[PlainRecord, DeliveryCallback | None]]]:
    """Consecutive groups whose built batch stays below ``limit`` bytes (a record above it goes alone)."""
    return batches_within(entries, lambda entry: record_bytes(entry[0].key, entry[0].value, entry[0].headers), limit)


__all__ = ["DEFAULT_MAX_BATCH_BYTES", "BatchTransactions", "Delivered", "kafka_error_of", "within"]
