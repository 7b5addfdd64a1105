"""The source-task loop (Kafka's ``WorkerSourceTask``/``AbstractWorkerSourceTask``), one thread per task.

::

    poll() -> transformation chain -> key/value/header converters -> producer.produce(cb)
                                                                          |
            delivery callback (task thread, inside producer.poll) <-------+
              ack the SubmittedRecord, task.commit_record(record, metadata), track the topic

Every ``offset.flush.interval.ms`` the longest fully-acknowledged prefix of each source partition
is written through the OffsetStorageWriter (asynchronously: the loop keeps producing while the
store acknowledges; a flush not done within ``offset.flush.timeout.ms`` is cancelled and its
offsets retried with the next one), then ``task.commit()`` runs. At stop the producer is flushed
(bounded by ``offset.flush.timeout.ms``) and a final synchronous commit is made.

Hot path rules: no per-record logging, no per-record metrics (a :class:`TaskMetrics` hook gets
one call per batch), converters skipped for bytes when they are the pass-through
ByteArrayConverter (with no transformations a whole batch takes the pass-through loop). One
object per record is both its SubmittedRecords handle and its delivery callback; delivery
reports are served on the task thread, so acks take no lock. Acknowledged prefixes leave
SubmittedRecords every few thousand records, not only at offset commits, so memory is bounded
by what is in flight. A full producer queue (BufferError) is back-pressure: serve callbacks with
``producer.poll`` until there is room. The young-generation GC threshold is raised when a task
starts (see :data:`GC_GEN0_THRESHOLD`).

Cancellation (graceful stop overran ``task.shutdown.graceful.timeout.ms``): the instance is
marked cancelled, its offset reader is closed, it writes no status and commits no offsets any more,
so an abandoned task can never overwrite what its successor reports.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from connect_core.api.batch_copy import BatchCopyTask, BatchItem, CopyBatch
from connect_core.api.errors import ConnectError, RetriableError
from connect_core.api.message_copy import MessageCopyTask
from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.api.schema import SchemaType
from connect_core.api.task import SourceTask
from connect_core.converters.byte_array import ByteArrayConverter
from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.errors import from_kafka_error
from connect_core.kafka.types import KafkaError, KafkaException, Producer
from connect_core.model import ConnectorTaskId, TargetState
from connect_core.runtime.batch_copy_loop import BatchCopier
from connect_core.runtime.connector_config import TopicCreationGroup, topic_creation_group_for
from connect_core.runtime.copied_run import CopiedRun
from connect_core.runtime.message_copy_loop import MessageCopier
from connect_core.runtime.source_offset_flush import SourceOffsetFlusher
from connect_core.runtime.source_task_collaborators import (
    ProducerLike,
    TaskMetrics,
    TopicCreator,
    WorkerSourceTaskContext,
)
from connect_core.runtime.status import TaskStatusListener
from connect_core.runtime.submitted_records import (
    PartitionKey,
    SubmittedRecord,
    SubmittedRecords,
)
from connect_core.runtime.tolerance import RetryWithToleranceOperator, Stage
from connect_core.runtime.worker_task import PAUSE_TICK_S, WorkerTask
from connect_core.storage.api import StatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter

log = logging.getLogger(__name__)

#: CPython collects its young generation every 700 container allocations by default. The source
#: loop allocates ~10 per record (record, offset map, handle, callback, delivery report...) and
#: keeps thousands of records in flight, so with the default a quarter of the task thread's time
#: went to collections that promote live in-flight records. Raised (never lowered) process-wide
#: when a task starts; the older generations keep their thresholds.
GC_GEN0_THRESHOLD = 20_000

SEND_FAILED_BACKOFF_S = 0.1
_PAUSE_TICK_S = PAUSE_TICK_S
_BUFFER_FULL_POLL_S = 0.05
#: Batch path: longest wait for the first I/O of the source fetch or the target's answers while the fetch is out
#: (it ends with either's I/O: the bound only holds back work that is due without any, a retry back-off).
_READ_WAIT_S = 0.02
_BYTES = SchemaType.BYTES
#: Records submitted between two moves of acknowledged prefixes into the committable offsets.
_PRUNE_EVERY = 10_000
#: Longest wait for the producer warm-up before the first poll (it overlaps task.start()).
_WARM_UP_WAIT_S = 2.0
_NO_PARTITION = object()


def raise_gc_threshold(gen0: int = GC_GEN0_THRESHOLD) -> None:
    """Make young-generation collections rarer (see GC_GEN0_THRESHOLD); 0 (GC off) is left alone."""
    g0, g1, g2 = gc.get_threshold()
    if 0 < g0 < gen0:
        gc.set_threshold(gen0, g1, g2)


class _InFlight(SubmittedRecord):
    """One record given to the producer: its SubmittedRecords handle and its delivery callback in one
    object (one allocation per record instead of a handle plus a ``partial``).

    librdkafka calls it from ``producer.poll``/``flush`` on the task thread, once per record.
    """

    __slots__ = ("record", "worker")

    record: SourceRecord | None

    def __init__(
        self, owner: SubmittedRecords, key: PartitionKey, record: SourceRecord, worker: WorkerSourceTask
    ) -> None:
        self.owner = owner
        self.key = key  # None when SubmittedRecords.track sets it
        self.partition = record.source_partition
        self.offset = record.source_offset
        self.acked = False
        self.record = record
        self.worker = worker

    def __call__(self, err: KafkaError | None, msg: Any) -> None:
        record = self.record
        # The handle stays in SubmittedRecords until the next offset commit; the record (and its
        # value bytes) must not.
        self.record = None
        if record is None:  # librdkafka reports each message once; be safe anyway
            return
        if err is not None:
            self.worker.record_failed(self, record, err)
            return
        self.ack()
        self.worker.record_delivered(record, msg)


class WorkerSourceTask(WorkerTask[SourceTask]):
    """Runs one SourceTask on its own thread; see the module docstring for the loop."""

    _warn_on_failure_while_stopping = True

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SourceTask,
        task_props: dict[str, str],
        *,
        producer: ProducerLike,
        offset_reader: OffsetStorageReaderImpl,
        offset_writer: OffsetStorageWriter,
        listener: TaskStatusListener,
        key_converter: Any,
        value_converter: Any,
        header_converter: Any,
        transformation_chain: Any = None,
        tolerance: RetryWithToleranceOperator | None = None,
        initial_state: TargetState = TargetState.STARTED,
        offset_flush_interval_s: float = 60.0,
        offset_flush_timeout_s: float = 5.0,
        topic_creation_groups: list[TopicCreationGroup] | None = None,
        topic_creator: TopicCreator | None = None,
        status_store: StatusBackingStore | None = None,
        topic_tracking: bool = True,
        metrics: TaskMetrics | None = None,
        on_exit: Callable[[WorkerSourceTask], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
        ordered_delivery: bool = False,
        batch_producer_factory: Callable[[], BatchProducer] | None = None,
    ) -> None:
        """``ordered_delivery``: the producer keeps each partition in order (idempotent, or one
        request in flight), which the message-copy loop relies on. ``batch_producer_factory``: the
        target's batch producer, for a :class:`BatchCopyTask` (None: batches are never copied as bytes)."""
        super().__init__(
            task_id, task, task_props, listener=listener, key_converter=key_converter,
            value_converter=value_converter, header_converter=header_converter,
            transformation_chain=transformation_chain, tolerance=tolerance, initial_state=initial_state,
            offset_flush_interval_s=offset_flush_interval_s, offset_flush_timeout_s=offset_flush_timeout_s,
            status_store=status_store, topic_tracking=topic_tracking, metrics=metrics, clock=clock,
        )  # fmt: skip
        self.producer = producer
        self.offset_reader = offset_reader
        self.offset_writer = offset_writer
        self._groups = topic_creation_groups or []
        self._topic_creator = topic_creator if self._groups else None
        self.creates_topics = self._topic_creator is not None  # see CopyingWorker
        self._on_exit = on_exit

        self.submitted = SubmittedRecords()
        self.known_topics: set[str] = set()  # target topics known to exist (shared with the copy loops)
        self._to_send: list[SourceRecord] | None = None
        self.producer_error: BaseException | None = None  # the first send failure that fails the task
        self._pruned_at = 0  # submitted.submitted_total when acknowledged prefixes were last moved out
        self._acks_seen = 0  # submitted.acked_total at the last metrics report
        self._non_delivery_acks = 0  # acks since then that were no successful delivery
        self._failed_sends = 0
        self._copied_acks_seen = 0  # MessageCopier.records_acked at the last metrics report
        self._skipped = 0
        self._flusher = SourceOffsetFlusher(
            task_id,
            offset_writer,
            self.submitted,
            self.metrics,
            self._commit_task,
            offset_flush_interval_s,
            offset_flush_timeout_s,
            lambda: self._cancelled,
            clock,
        )

        self._key_passthrough = type(key_converter) is ByteArrayConverter
        self._value_passthrough = type(value_converter) is ByteArrayConverter
        self._header_passthrough = type(header_converter) is ByteArrayConverter
        self._commit_record_overridden = type(task).commit_record is not SourceTask.commit_record
        self._task_commit_record = task.commit_record if self._commit_record_overridden else None
        self._fast_path = (
            self.chain is None and self._key_passthrough and self._value_passthrough and self._header_passthrough
        )
        # confluent_kafka.Producer.produce(topic, value, key, partition, callback, on_delivery,
        # timestamp, headers): all positional parses ~250 ns faster per record than keywords.
        # Other producers (test doubles) get the documented keywords unless they declare
        # ``positional_produce = True``.
        self._positional_produce = isinstance(producer, Producer) or getattr(producer, "positional_produce", False)
        # Tasks that copy consumed messages as they are skip SourceRecords entirely when nothing
        # in the pipeline could change a record (see connect_core.api.message_copy).
        self._copier: MessageCopier | None = None
        if self._fast_path and ordered_delivery and self._positional_produce and isinstance(task, MessageCopyTask):
            self._copier = MessageCopier(self, task)
        self._to_copy: list[Any] | None = None
        self._warm_up: threading.Thread | None = None  # from _initialize_and_start to _execute
        # The batch path (connect_core.api.batch_copy): offered when nothing could change a record.
        self._batch_producer_factory = batch_producer_factory if self._fast_path else None
        self._batch_copier: BatchCopier | None = None
        self._to_batch: list[BatchItem] | None = None

    def _on_cancel(self) -> None:
        self.offset_reader.close()

    # ------------------------------------------------------------------ the task thread

    def _exited(self) -> None:
        if self._on_exit is not None:
            try:
                self._on_exit(self)
            except Exception:
                log.exception("Task exit hook failed for %s", self.id)

    def _initialize_and_start(self) -> None:
        self._started = True
        raise_gc_threshold()
        self._warm_up = self._warm_up_producer()
        self.task.initialize(WorkerSourceTaskContext(self.offset_reader, self.task_props))
        batch_task = self._batch_producer_factory is not None and isinstance(self.task, BatchCopyTask)
        if batch_task:
            self.task.offer_batch_copy()  # type: ignore[attr-defined]
        self.task.start(dict(self.task_props))
        if batch_task and self.task.batch_copy_active:  # type: ignore[attr-defined]
            self._start_batch_copier()
        log.info("Source task %s finished initialization and start (copy path: %s)", self.id, self.copy_path)

    def _start_batch_copier(self, producer: BatchProducer | None = None) -> None:
        """Copy batches from now on, through ``producer`` (an exactly-once task's own) or a new one."""
        if producer is None:
            assert self._batch_producer_factory is not None
            producer = self._batch_producer_factory()  # connects with its first batch (a target down is waited for)
        task = self.task
        assert isinstance(task, BatchCopyTask)
        self._copier = None  # the task reads batches now, never messages
        self._batch_copier = BatchCopier(
            self,
            task,
            producer,
            self._hand_to_record_path,
            self._records_in_flight,
            self._drain_record_path,
            task.batch_copy_max_in_flight_bytes,
        )

    @property
    def copy_path(self) -> str:
        """How records reach the target: ``batch`` (source batches as bytes), ``message`` or ``record``."""
        if self._batch_copier is not None:
            return "batch"
        return "message" if self._copier is not None else "record"

    def _hand_to_record_path(self, records: list[SourceRecord], max_batch_bytes: int | None = None) -> None:
        """Records of a batch the batch path cannot pass, for the record path (``max_batch_bytes``, the target
        topic's limit, is for a subclass that builds batches itself: librdkafka batches on its own here)."""
        self._to_send = records

    def _records_in_flight(self) -> int:
        """Records the record path still has (every submitted handle but the batch runs)."""
        batches = self._batch_copier.runs_in_flight if self._batch_copier is not None else 0
        return self.submitted.num_unacked - batches

    def _drain_record_path(self, timeout_s: float) -> None:
        self.producer.poll(timeout_s)
        self._after_callbacks()

    def _execute(self) -> None:
        self._flusher.schedule_first()
        warm_up, self._warm_up = self._warm_up, None
        if warm_up is not None:
            # Records polled before the producer is connected would only wait in its queue.
            deadline = time.monotonic() + _WARM_UP_WAIT_S
            while warm_up.is_alive() and not self._stopping and time.monotonic() < deadline:
                warm_up.join(_PAUSE_TICK_S / 2)
        try:
            self._copy_records()
        except BaseException:
            if not self._cancelled:
                try:
                    self._final_commit()
                except Exception:
                    log.exception("Failed to commit offsets for already-failing task %s", self.id)
            raise
        self._final_commit()

    def _warm_up_producer(self) -> threading.Thread | None:
        """Connect the producer now, in the background, while the task starts (joined, bounded,
        before the first poll).

        librdkafka connects lazily: an idempotent producer asks for its producer id only once a
        broker connection is up, and a producer nobody asked anything of yet retries that on a
        500 ms timer, so the first batch waits 0.5-1 s for its acknowledgement. Metadata requests
        bring the connection (and the producer id) up while ``task.start()`` runs.
        """
        list_topics = getattr(self.producer, "list_topics", None)
        if list_topics is None:
            return None
        timeout = max(1.0, self.flush_timeout_s)

        def warm_up() -> None:
            try:
                # Each metadata response re-runs the producer-id request; the first one can come
                # before the connection counts as usable (then the 500 ms timer decides again),
                # the second is answered on an established connection (measured: 4 of 15 starts
                # waited 0.5-1 s with one request, none with two).
                list_topics(timeout=timeout)
                list_topics(timeout=timeout)
            except Exception as e:  # best effort: the first send connects anyway
                log.debug("Producer warm-up of task %s failed: %s", self.id, e)

        thread = threading.Thread(target=warm_up, name=f"producer-warm-up-{self.id}", daemon=True)
        thread.start()
        return thread

    def _copy_records(self) -> None:
        """Poll, convert and send until stopped; offsets are flushed on the way."""
        producer = self.producer
        metrics = self.metrics
        while not self._stopping:
            self._maybe_commit()
            if self.producer_error is not None:
                self._raise_producer_error()
            if self._target_paused():
                self._mark_paused()
                while self._target_paused() and not self._stopping:
                    producer.poll(_PAUSE_TICK_S)
                    self._after_callbacks()
                    self._maybe_commit()
                if self._stopping:
                    break
                self._mark_resumed()
                continue
            started = self._clock()
            if self._batch_copier is not None:
                self._batch_copier.producer.poll(0)
            if self._to_send is None and self._to_copy is None and self._to_batch is None:
                producer.poll(0)
                self._after_callbacks()
                try:
                    batch = self._poll_task()
                except RetriableError as e:
                    log.warning("Task %s failed to poll records (will retry): %s", self.id, e)
                    batch = None
                if not batch:
                    continue
                polled = self._polled_records(batch)
            else:
                polled = 0
            sent_bytes, complete = self._send_records()
            if polled:
                metrics.record_batch(polled, sent_bytes, self._clock() - started)
            if not complete:
                self._stop_event.wait(SEND_FAILED_BACKOFF_S)

    def _polled_records(self, polled: list[Any]) -> int:
        if self._batch_copier is None:
            return len(polled)
        return sum(i.batch.header.record_count if isinstance(i, CopyBatch) else len(i.records) for i in polled)

    def _poll_task(self) -> list[Any] | None:
        """The task's next batch, kept as what is to be sent (messages to copy, or SourceRecords)."""
        copier = self._batch_copier
        if copier is not None:
            if copier.full:
                copier.producer.poll(_BUFFER_FULL_POLL_S)
                return None
            in_flight = self.submitted.num_unacked > 0
            items = copier.task.poll_batches(in_flight)
            if items:
                self._to_batch = items
            elif in_flight:  # the fetch is still out: serve the target's acknowledgements meanwhile
                copier.serve_while_reading(_READ_WAIT_S)
            return items
        if self._copier is not None:
            messages = self._copier.task.poll_messages()
            if messages:
                self._to_copy = messages
            return messages
        batch = self.task.poll()
        if batch:
            self._to_send = batch
        return batch

    def _after_callbacks(self) -> None:
        submitted = self.submitted
        copier: MessageCopier | BatchCopier | None = self._copier or self._batch_copier
        submitted_records = submitted.submitted_total + (copier.records_submitted if copier is not None else 0)
        if submitted_records - self._pruned_at >= _PRUNE_EVERY:
            # Move acknowledged prefixes out of SubmittedRecords now rather than at the next offset
            # commit (every 60 s by default): memory stays bounded by the records in flight.
            self._pruned_at = submitted_records
            self._flusher.update_committable()
        copied = copier.records_acked - self._copied_acks_seen if copier is not None else 0
        if submitted.acked_total != self._acks_seen or self._failed_sends or copied:
            acks = submitted.acked_total
            # Acks that were no delivery (filtered, skipped, a copied run's handle) are not
            # successful sends; the records of copied runs are counted by the copier.
            acked = acks - self._acks_seen - self._non_delivery_acks + copied
            self._copied_acks_seen += copied
            failed = self._failed_sends
            self._acks_seen = acks
            self._non_delivery_acks = self._failed_sends = 0
            if acked or failed:
                self.metrics.record_acks(acked, failed)
        if self._skipped:
            skipped, self._skipped = self._skipped, 0
            self.metrics.record_skipped(skipped)

    # ------------------------------------------------------------------ hot path

    def _send_records(self) -> tuple[int, bool]:
        """Dispatch ``_to_send``; returns (value bytes sent, True) or (.., False) if the rest must wait."""
        if self.producer_error is not None:
            self._raise_producer_error()
        if self._to_batch is not None and self._to_send is None:
            assert self._batch_copier is not None
            items, self._to_batch = self._to_batch, None
            nbytes, self._to_batch = self._batch_copier.send(items, lambda: self._stopping)
            if self._to_send is None:
                return nbytes, True
            more, complete = self._send_records()
            return nbytes + more, complete
        if self._to_copy is not None:
            assert self._copier is not None
            messages, self._to_copy = self._to_copy, None
            nbytes, records = self._copier.send(messages)
            if records is None:
                return nbytes, True
            self._to_send = records
            more, complete = self._send_records()
            return nbytes + more, complete
        if self._fast_path:
            nbytes, rest = self._send_passthrough()
            if rest is None:
                self._to_send = None
                return nbytes, True
            self._to_send = rest
            more, complete = self._send_general()
            return nbytes + more, complete
        return self._send_general()

    def _send_passthrough(self) -> tuple[int, list[SourceRecord] | None]:
        """The fast path: no transformations, ByteArrayConverter for keys, values and headers.

        Records whose key, value and header values are bytes (or None) with no schema or a BYTES
        one go to the producer as they are; that is exactly what the converters would return, so
        their calls are skipped. At the first record that needs more (other types, a missing
        topic, a failed send) the rest of the batch is returned for :meth:`_send_general`.
        Delivery callbacks cannot run in here except inside ``_produce_when_room`` (``produce``
        serves none), so the producer error is checked only after that.
        """
        batch = self._to_send
        assert batch is not None
        produce = self.producer.produce
        positional = self._positional_produce
        submitted = self.submitted
        known = self.known_topics
        nbytes = 0
        last_topic: str | None = None
        # Records come in runs of one source partition: its SubmittedRecords deque is looked up
        # once per run (nothing in this loop removes deques; see SubmittedRecords.deque_for).
        last_sp: Any = _NO_PARTITION
        pkey: PartitionKey = None
        append: Any = None
        for i, pre in enumerate(batch):
            key = pre.key
            value = pre.value
            if not (key is None or key.__class__ is bytes) or not (value is None or value.__class__ is bytes):
                return nbytes, batch[i:]
            schema = pre.key_schema
            if schema is not None and schema.type is not _BYTES:
                return nbytes, batch[i:]
            schema = pre.value_schema
            if schema is not None and schema.type is not _BYTES:
                return nbytes, batch[i:]
            headers = pre.headers
            if headers:
                for h in headers:
                    v = h[1]
                    if v is not None and v.__class__ is not bytes:
                        return nbytes, batch[i:]
            topic = pre.topic
            if topic is not last_topic:
                if topic not in known:
                    if self._topic_creator is not None:
                        return nbytes, batch[i:]
                    known.add(topic)
                last_topic = topic
            partition = pre.kafka_partition
            ts = pre.timestamp
            sp = pre.source_partition
            if sp is not last_sp:
                pkey, dq = submitted.deque_for(sp)
                append = dq.append
                last_sp = sp
            handle = _InFlight(submitted, pkey, pre, self)
            append(handle)
            submitted.submitted_total += 1
            try:
                if positional:
                    produce(
                        topic,
                        value,
                        key,
                        -1 if partition is None else partition,
                        handle,
                        None,
                        0 if ts is None else ts,
                        headers,
                    )
                else:
                    produce(
                        topic,
                        value,
                        key,
                        -1 if partition is None else partition,
                        handle,
                        timestamp=0 if ts is None else ts,
                        headers=headers,
                    )
            except BufferError:
                self.produce_when_room(
                    topic, value, key, -1 if partition is None else partition, handle, 0 if ts is None else ts, headers
                )
                if self.producer_error is not None:
                    self._raise_producer_error()
            except KafkaException:
                handle.drop()
                return nbytes, batch[i:]  # the general path sends it again and handles the error
            if value is not None:
                nbytes += len(value)
        return nbytes, None

    def _send_general(self) -> tuple[int, bool]:
        """Every record through transformations, converters and topic creation, with tolerance."""
        batch = self._to_send
        assert batch is not None
        produce = self.producer.produce
        submitted = self.submitted
        chain = self.chain
        known = self.known_topics
        key_conv = self.key_converter
        value_conv = self.value_converter
        kp = self._key_passthrough
        vp = self._value_passthrough
        nbytes = 0
        n = len(batch)
        i = 0
        while i < n:
            pre = batch[i]
            stage = Stage.TRANSFORMATION
            try:
                rec = chain.apply(pre) if chain is not None else pre
                if rec is None:
                    self._record_dropped(pre)
                    i += 1
                    continue
                topic = rec.topic
                stage = Stage.KEY_CONVERTER
                key = rec.key
                if not (kp and (key is None or key.__class__ is bytes) and rec.key_schema is None):
                    key = key_conv.from_connect(topic, rec.key_schema, key)
                stage = Stage.VALUE_CONVERTER
                value = rec.value
                if not (vp and (value is None or value.__class__ is bytes) and rec.value_schema is None):
                    value = value_conv.from_connect(topic, rec.value_schema, value)
                stage = Stage.HEADER_CONVERTER
                headers = rec.headers
                if headers:
                    headers = self._convert_headers(topic, headers)
                partition = rec.kafka_partition
                ts = rec.timestamp
            except Exception as e:
                converted = self.tolerance.handle(stage, e, partial(self._convert, pre), pre)
                if not isinstance(converted, tuple):
                    self._skipped += 1
                    self._record_dropped(pre)
                    i += 1
                    continue
                topic, key, value, headers, partition, ts = converted
            if topic not in known:
                try:
                    self._maybe_create_topic(topic)
                except RetriableError as e:
                    log.warning("Task %s could not create or check topic %s; backing off before retrying: %s",
                                self.id, topic, e)  # fmt: skip
                    self._to_send = batch[i:]
                    return nbytes, False
            if self.producer_error is not None:
                self._raise_producer_error()
            handle = _InFlight(submitted, None, pre, self)
            submitted.track(handle)
            p = -1 if partition is None else partition
            t = 0 if ts is None else ts
            try:
                produce(topic, value, key, p, handle, timestamp=t, headers=headers)
            except BufferError:
                self.produce_when_room(topic, value, key, p, handle, t, headers)
            except KafkaException as e:
                handle.drop()
                err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                mapped = from_kafka_error(err, f"Failed to send record to topic '{topic}'") if err else None
                if mapped is not None and isinstance(mapped, RetriableError):
                    log.warning("Task %s failed to send to topic %s; backing off before retrying: %s",
                                self.id, topic, mapped)  # fmt: skip
                    self._to_send = batch[i:]
                    return nbytes, False
                raise self._send_error(topic, e) from e
            if value is not None:
                nbytes += len(value)
            i += 1
        self._to_send = None
        return nbytes, True

    def produce_when_room(self, topic: str, value: Any, key: Any, p: int, cb: Any, t: int, headers: Any) -> None:
        """Back-pressure: the producer queue is full; serve delivery reports until it has room."""
        while True:
            if self._cancelled:
                raise ConnectError(f"Task {self.id} was cancelled while waiting for producer queue space")
            self.producer.poll(_BUFFER_FULL_POLL_S)
            try:
                self.producer.produce(topic, value, key, p, cb, timestamp=t, headers=headers)
                return
            except BufferError:
                continue

    def _convert_headers(self, topic: str, headers: list[Any]) -> list[Any]:
        if self._header_passthrough:
            for _, v in headers:
                if v is not None and v.__class__ is not bytes:
                    break
            else:
                return headers
        conv = self.header_converter
        return [(k, conv.from_connect_header(topic, k, None, v)) for k, v in headers]

    def _convert(self, pre: SourceRecord) -> tuple[str, Any, Any, Any, int | None, int | None]:
        """The whole transform + convert pipeline for one record (the retry path; raises on failure)."""
        rec = self.chain.apply(pre) if self.chain is not None else pre
        if rec is None:
            raise _Dropped()
        topic = rec.topic
        key = self.key_converter.from_connect(topic, rec.key_schema, rec.key)
        value = self.value_converter.from_connect(topic, rec.value_schema, rec.value)
        headers = self._convert_headers(topic, rec.headers) if rec.headers else rec.headers
        return topic, key, value, headers, rec.kafka_partition, rec.timestamp

    def _record_dropped(self, record: SourceRecord) -> None:
        """A filtered or skipped record: its offset is committable without sending it (as Java)."""
        handle = self.submitted.submit(record.source_partition, record.source_offset)
        handle.ack()
        self._non_delivery_acks += 1
        self._commit_record(record, None)

    def _commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if not self._commit_record_overridden:
            return
        try:
            self.task.commit_record(record, metadata)
        except Exception:
            log.exception("Exception thrown while calling task.commit_record() of %s", self.id)

    # ------------------------------------------------------------------ acknowledgements (CopyingWorker)

    def record_delivered(self, record: SourceRecord, msg: Any) -> None:
        """A record the target acknowledged (its handle is acked): ``task.commit_record``, the active topic."""
        commit_record = self._task_commit_record
        if commit_record is not None:
            topic = msg.topic()
            try:
                commit_record(record, RecordMetadata(topic, msg.partition(), msg.offset(), msg.timestamp()[1]))
            except Exception:
                log.exception("Exception thrown while calling task.commit_record() of %s", self.id)
            if topic not in self._active_topics and self._status_store is not None:
                self._record_active_topic(topic)
        elif self._status_store is not None:
            topic = msg.topic()
            if topic not in self._active_topics:
                self._record_active_topic(topic)

    def run_acknowledged(self, run: CopiedRun) -> None:
        """A copied run (messages or a batch) was wholly acknowledged: its offset becomes committable, its
        route hears of it (an exactly-once task holds that until the commit), its topic is active."""
        run.ack()
        self._non_delivery_acks += 1  # the handle is no record; the copier counts the run's records
        try:
            self._tell_route(run)
        except Exception:
            log.exception("Exception thrown while acknowledging a copied run of %s", self.id)
        topic = run.route.topic
        if self._status_store is not None and topic not in self._active_topics:
            self._record_active_topic(topic)

    def _tell_route(self, run: CopiedRun) -> None:
        run.route.acknowledged(run)

    def record_failed(self, handle: SubmittedRecord, record: SourceRecord, err: KafkaError) -> None:
        """A record the target refused: skipped (acked, committable) under errors.tolerance=all."""
        if self.record_send_failed(err, record.topic, record):
            handle.ack()
            self._non_delivery_acks += 1
            self._commit_record(record, None)

    def record_send_failed(self, err: KafkaError, topic: str, record: SourceRecord | None = None) -> bool:
        """Counts a failed send; True when errors.tolerance=all skips the record, else the task fails with it."""
        self._failed_sends += 1
        if self.tolerance.tolerates_all:
            try:
                self.tolerance.failed(Stage.KAFKA_PRODUCE, from_kafka_error(err, f"send to {topic}"), record)
            except Exception:  # pragma: no cover - tolerates_all never raises
                pass
            self._skipped += 1
            return True
        if self.producer_error is None:
            self.producer_error = from_kafka_error(err, f"Failed to send record to topic '{topic}'")
        return False

    def send_failed(self, error: BaseException) -> None:
        """A send that fails the task (a batch the target refused): counted, the first error kept."""
        self._failed_sends += 1
        if self.producer_error is None:
            self.producer_error = error

    def _send_error(self, topic: str, e: KafkaException) -> ConnectError:
        """What a produce the producer refused (not with a retriable error) fails the task with."""
        return ConnectError(f"Unrecoverable exception trying to send to topic '{topic}': {e}")

    def _raise_producer_error(self) -> None:
        raise ConnectError(f"Unrecoverable exception from producer send callback: {self.producer_error}") from (
            self.producer_error
        )

    def _maybe_create_topic(self, topic: str) -> None:
        if self._topic_creator is None:
            self.known_topics.add(topic)
            return
        group = topic_creation_group_for(self._groups, topic)
        if self._topic_creator(topic, group):
            self.known_topics.add(topic)
            return
        raise ConnectError(
            f"Task failed to create new topic {topic}. Ensure that the task is authorized to create topics or that "
            "the topic exists and restart the task"
        )

    # ------------------------------------------------------------------ offsets

    def _maybe_commit(self) -> None:
        self._flusher.maybe_flush()

    def _commit_task(self) -> None:
        try:
            self.task.commit()
        except Exception:
            log.exception("Exception thrown while calling task.commit() of %s", self.id)

    def _final_commit(self) -> None:
        """Drain the producer (bounded), then write every committable offset synchronously."""

        def drain(timeout_s: float) -> int:
            deadline = time.monotonic() + timeout_s
            remaining = int(self.producer.flush(timeout_s))
            if self._batch_copier is not None:
                batches = self._batch_copier.producer
                batches.flush(max(0.0, deadline - time.monotonic()))
                remaining += batches.in_flight
            self._after_callbacks()
            return remaining

        self._flusher.final_flush(drain)

    # ------------------------------------------------------------------ close

    def _close_clients(self) -> None:
        if self._cancelled:
            try:
                self.producer.purge()
            except Exception:
                pass
        try:
            self.producer.flush(0 if self._cancelled else min(1.0, self.flush_timeout_s))
        except Exception:
            pass
        if self._batch_copier is not None:
            self._batch_copier.producer.close()
        self.offset_reader.close()

    def __repr__(self) -> str:
        return f"WorkerSourceTask{{id={self.id}}}"


class _Dropped(Exception):
    """The retried pipeline filtered the record out (it counts as a skip)."""
