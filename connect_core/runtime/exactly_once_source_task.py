"""The exactly-once source-task loop (KIP-618, Java's ``ExactlyOnceWorkerSourceTask``).

Same poll/convert/send loop as :class:`~connect_core.runtime.worker_source_task.WorkerSourceTask`,
but the task's producer is transactional (``transactional.id`` = ``<group.id>-<connector>-<task>``,
:mod:`connect_core.runtime.transactional_ids`) and each transaction holds the records and the
source offsets of those records, written through the same producer to the offsets topic::

    begin (lazily, at the first dispatch) -> records ... -> boundary:
        offsets of every record dispatched -> commit (delivers records and offsets, all or nothing)
        -> delivery reports served -> task.commit_record(...) per record / route.acknowledged(run) per
           copied run -> task.commit()

Boundaries: ``poll`` commits once the batch ``poll`` returned was dispatched, ``interval`` every
``transaction.boundary.interval.ms``, ``connector`` when the task asks through its
:class:`~connect_core.api.task.TransactionContext` (record-level requests take effect at the end
of the batch that holds the record). What the task hears of a record (``commit_record``, a copied
run's ``acknowledged``) is held back until its transaction committed, so nothing downstream of
those callbacks (MirrorMaker's offset syncs and mappings) ever describes an aborted copy.

A task that copies the source's batches as bytes (:mod:`connect_core.api.batch_copy`) holds its transactional
id with the transactional batch producer instead, behind :mod:`connect_core.runtime.batch_transactions`
(librdkafka's transactional API over it): copied batches, decoded records and offsets go
into the same transactions through it, and the librdkafka producer never initialises the id (one holder at
a time).

``init_transactions`` runs before the task reads its offsets: it fences an older instance of the
same task (a zombie) and aborts the transaction that one left open, so the offsets read (with
read_committed) are those of committed transactions only. A task fenced later on (its producer
reports PRODUCER_FENCED / INVALID_PRODUCER_EPOCH) fails, with a message saying so; it never
carries on. On failure the open transaction is aborted (best effort) so that read_committed
consumers are not held at it.

Any other producer failure (:mod:`connect_core.runtime.transaction_errors` sorts them) is
recovered from, as an operator's restart would: the open transaction is aborted (best effort),
this instance closes with its producer and everything dispatched in the aborted transaction, and
the worker starts a fresh instance, whose ``init_transactions`` (same transactional.id, a new
epoch) fences nothing but this one and whose task resumes from the last committed offsets. A
broker restarted without its producer state (OUT_OF_ORDER_SEQUENCE_NUMBER, UNKNOWN_PRODUCER_ID)
costs one such restart. A :class:`~connect_core.runtime.transaction_errors.RecoveryBudget` bounds
them: a task that keeps failing fails as before, saying how often it failed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

from connect_core.api.batch_copy import BatchCopyTask
from connect_core.api.errors import ConnectError, RetriableError
from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.kafka.transactional_batch_producer import TransactionalBatchProducer
from connect_core.kafka.types import KafkaError, KafkaException
from connect_core.runtime.batch_transactions import BatchTransactions
from connect_core.runtime.copied_run import CopiedRun
from connect_core.runtime.exactly_once_config import ExactlyOnceSettings, TransactionBoundary
from connect_core.runtime.source_task_collaborators import ProducerLike, WorkerSourceTaskContext
from connect_core.runtime.submitted_records import CommittableOffsets
from connect_core.runtime.transaction_errors import (
    FENCED_CODES,
    ProducerErrorKind,
    RecoveryBudget,
    TransactionalProducerError,
    classify_code,
    error_code,
)
from connect_core.runtime.transaction_span import BACKLOG_POLL_RECORDS, TransactionSpan
from connect_core.runtime.worker_source_task import WorkerSourceTask
from connect_core.runtime.worker_task import TaskRestartRequested
from connect_core.storage.offset_storage import serialize_offset_key, serialize_offset_value

log = logging.getLogger(__name__)

#: Bound of one transactional call (init, commit, abort) by default: Java's producer waits ``max.block.ms``
#: (60 s), and so does the task unless its producer settings give another ``max.block.ms``.
TRANSACTION_CALL_TIMEOUT_S = 60.0


def transaction_call_timeout_s(producer_props: Mapping[str, Any]) -> float:
    """The bound of a transactional call for a task's (Java-style) producer settings: their ``max.block.ms``,
    as Java's producer bounds ``initTransactions``/``commitTransaction``/``abortTransaction`` with it."""
    given = producer_props.get("max.block.ms")
    try:
        ms = int(str(given).strip()) if given is not None else None
    except ValueError:
        ms = None
    return ms / 1000 if ms is not None and ms > 0 else TRANSACTION_CALL_TIMEOUT_S


#: How long a failing task waits for its abort (it is on its way out).
ABORT_TIMEOUT_S = 5.0
_FLUSH_TICK_S = 1.0
_FENCED_MARK = "was fenced out"
#: How many producer failures a task recovers from within RECOVERY_WINDOW_S before it fails (a broker
#: restart costs one or two).
MAX_RECOVERIES = 5
RECOVERY_WINDOW_S = 600.0

_FENCED_CODES = FENCED_CODES


def _kafka_error(e: BaseException) -> KafkaError | None:
    arg = e.args[0] if e.args else None
    return arg if isinstance(arg, KafkaError) else None


def is_fenced(error: KafkaError | None) -> bool:
    """A producer another instance with the same transactional.id took over from."""
    return error is not None and error.code() in _FENCED_CODES


class _TransactionRequests:
    """The task's :class:`~connect_core.api.task.TransactionContext`: flags the loop reads at each turn."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.commit = False
        self.abort = False

    def commit_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            self.commit = True

    def abort_transaction(self, record: SourceRecord | None = None) -> None:
        with self._lock:
            self.abort = True

    def take(self) -> tuple[bool, bool]:
        """(commit, abort) requested since the last call; abort wins, as a record-level abort in Java."""
        with self._lock:
            commit, abort = self.commit, self.abort
            self.commit = self.abort = False
        return commit and not abort, abort


class ExactlyOnceWorkerSourceTask(WorkerSourceTask):
    """A WorkerSourceTask whose records and offsets go out in transactions; see the module docstring."""

    def __init__(
        self,
        *args: Any,
        transactional_id: str,
        offsets_topic: str,
        settings: ExactlyOnceSettings,
        recovery: RecoveryBudget | None = None,
        restarter: Callable[[ExactlyOnceWorkerSourceTask], bool] | None = None,
        call_timeout_s: float = TRANSACTION_CALL_TIMEOUT_S,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self._recovery = recovery
        self._call_timeout_s = call_timeout_s  # of init/commit/abort: the producer's max.block.ms
        self._restarter = restarter
        self.transactional_id = transactional_id
        self.offsets_topic = offsets_topic
        self.boundary = settings.boundary
        self._interval_s = settings.interval_s
        self._requests = _TransactionRequests() if settings.boundary is TransactionBoundary.CONNECTOR else None
        self._txn_open = False
        self._offsets_written = False  # the open transaction holds the offsets of all it dispatched so far
        self._polled_ahead: tuple[int, float] | None = None  # (records, poll start) of a batch polled ahead
        self._last_batch = 0  # records of the last batch polled (kept while its copies are still out)
        self._span = TransactionSpan(0, 0.0)  # a transaction per poll, unless the batch path widens it
        self._backlog = False  # the batch path's last poll left more to read at once
        self._next_interval_commit = 0.0
        self._task_wants_records = self._task_commit_record is not None
        # librdkafka's; on the batch path a BatchTransactions replaces it
        self._record_producer: ProducerLike | None = self.producer
        # What the task hears of records and copied runs waits for their transaction's commit.
        self._held_records: list[tuple[SourceRecord, RecordMetadata | None]] = []
        self._held_runs: list[CopiedRun] = []
        if self._task_wants_records:
            self._task_commit_record = self._hold_record

    @property
    def call_timeout_s(self) -> float:
        """How long one transactional call (init, commit, abort) may take: the producer's ``max.block.ms``."""
        return self._call_timeout_s

    # ------------------------------------------------------------------ start

    def _initialize_and_start(self) -> None:
        """Fence older instances of this task first, then read offsets and start (as Java orders it).

        A task that will copy batches gets its one transactional producer for the batch path here (the
        librdkafka producer never initialises the id: see :mod:`connect_core.runtime.batch_transactions`)."""
        self._started = True
        batches = self._batch_transactions()
        self._init_transactions()
        self.task.initialize(WorkerSourceTaskContext(self.offset_reader, self.task_props, self._requests))
        if batches is not None:
            self.task.offer_batch_copy()  # type: ignore[attr-defined]
        self.task.start(dict(self.task_props))
        task = self.task
        if batches is not None and isinstance(task, BatchCopyTask):
            if task.batch_copy_active:
                self._start_batch_copier(batches.batches)
                self._span = TransactionSpan(
                    task.batch_copy_transaction_max_bytes, task.batch_copy_transaction_max_ms / 1000.0
                )
                self._record_producer = None  # never used: its connections and threads go now
            else:  # it chose records after all: the librdkafka producer takes the id over (fencing nothing open)
                batches.batches.close()
                assert self._record_producer is not None
                self.producer = self._record_producer
                self._init_transactions()
        self._next_interval_commit = self._clock() + self._interval_s
        log.info("Exactly-once source task %s finished initialization and start (transaction boundary: %s, "
                 "copy path: %s)", self.id, self.boundary.value, self.copy_path)  # fmt: skip

    def _batch_transactions(self) -> BatchTransactions | None:
        """The transactional batch producer, made the task's producer, when the task will copy batches."""
        factory = self._batch_producer_factory
        task = self.task
        if factory is None or not isinstance(task, BatchCopyTask) or not task.accepts_batch_copy(dict(self.task_props)):
            return None
        producer = factory()
        if not isinstance(producer, TransactionalBatchProducer):
            producer.close()
            return None
        batches = BatchTransactions(producer)
        self.producer = batches
        return batches

    def _hand_to_record_path(self, records: list[SourceRecord], max_batch_bytes: int | None = None) -> None:
        """On the batch path the records are built into batches again: each below the target topic's limit."""
        if isinstance(self.producer, BatchTransactions):
            self.producer.limit_batches(max_batch_bytes)
        super()._hand_to_record_path(records, max_batch_bytes)

    def _init_transactions(self) -> None:
        try:
            self.producer.init_transactions(self._call_timeout_s)  # type: ignore[attr-defined]
        except KafkaException as e:
            raise self._recover_or_fail(self._transaction_error("initialize transactions for", e)) from e
        log.info("Task %s initialized its transactional producer (transactional.id %s)", self.id,
                 self.transactional_id)  # fmt: skip

    def _execute(self) -> None:
        try:
            self._copy_records()
        except BaseException as e:
            # Whatever surfaced first (a purged delivery, a refused produce, "fatal error"), a producer
            # that was fenced says so when asked to abort: the task then fails saying it was fenced.
            fenced = None if _FENCED_MARK in str(e) else self._probe_fenced()
            self._abort_quietly()
            if fenced is not None:
                raise self._fenced_error(fenced) from e
            outcome = self._recover_or_fail(e)
            if outcome is e:
                raise
            raise outcome from e
        if not self._cancelled and self._txn_open:
            self._commit_transaction()  # Java commits what was dispatched when stopped gracefully

    # ------------------------------------------------------------------ boundaries

    def _send_records(self) -> tuple[int, bool]:
        if not self._txn_open:
            self._begin()
        self._offsets_written = False  # records dispatched after the offsets were written: write them again
        nbytes, complete = super()._send_records()
        self._span.dispatched(nbytes, self._clock())
        ahead, self._polled_ahead = self._polled_ahead, None
        if ahead is not None:  # the batch polled before the last commit: its metrics now (the loop saw none)
            self.metrics.record_batch(ahead[0], nbytes, self._clock() - ahead[1])
        return nbytes, complete

    def _poll_task(self) -> list[Any] | None:
        copier = self._batch_copier  # with copies out, a poll only looks whether the Fetch's answer is in yet
        brief = copier is not None and (copier.full or self.submitted.num_unacked > 0)
        batch = super()._poll_task()
        if batch:
            self._last_batch = self._polled_records(batch)
            # read only behind a full poll, the one case a span asks about it (it looks at every partition)
            self._backlog = (
                copier is not None and self._last_batch >= BACKLOG_POLL_RECORDS and copier.task.batch_backlog()
            )
        elif not brief:  # a poll that waited and got nothing: the backlog is copied (a brief one tells nothing)
            self._last_batch = 0
        return batch

    def _poll_ahead(self) -> None:
        """Poll the next batch before committing this one: the records still travelling to the broker (which
        the commit waits for) travel meanwhile, as they would behind the next poll without transactions.

        Only behind a big batch (a backlog: the next poll returns at once); behind a small one the poll
        could wait for new records while the transaction, and the copies in it, stay unreadable. On the batch
        path the poll never blocks while copies are in flight (it sends the source Fetch and serves the
        target's acknowledgements until the answer is in): it is asked again until the answer came or every
        copy of the transaction was acknowledged, so the source's Fetch overlaps the transaction's Produce
        instead of following its commit."""
        if self._stopping or self._target_paused() or self._last_batch < BACKLOG_POLL_RECORDS:
            return
        started = self._clock()
        while True:
            try:
                batch = self._poll_task()
            except RetriableError as e:
                log.warning("Task %s failed to poll records (will retry): %s", self.id, e)
                return
            if batch:
                self._polled_ahead = (len(batch), started)
                return
            if not self._copies_in_flight():
                return

    def _copies_in_flight(self) -> bool:
        """Copied batches of the open transaction still unacknowledged (a batch-path poll then never blocks)."""
        return (
            self._batch_copier is not None
            and self._batch_copier.runs_in_flight > 0
            and self.producer_error is None
            and not self._stopping
            and not self._cancelled
        )

    def _begin(self) -> None:
        try:
            self.producer.begin_transaction()  # type: ignore[attr-defined]
        except KafkaException as e:
            raise self._transaction_error("begin a transaction for", e) from e
        self._txn_open = True
        self._offsets_written = False
        self._span.ended()

    def _maybe_commit(self) -> None:
        """Every turn of the loop: commit (or abort) when the boundary says so and the batch is dispatched."""
        if self._to_send is not None or self._to_copy is not None or self._to_batch is not None:
            return  # part of the batch still waits to be dispatched
        if self.boundary is TransactionBoundary.POLL:
            if not self._stopping and self._span.may_wait(self._last_batch, self._backlog, self._clock()):
                return  # a backlog on the batch path: this transaction takes the next poll's batches too
            if self._txn_open:
                self._write_transaction_offsets()  # with the records: they travel (and register) together
                self._poll_ahead()
                self._commit_transaction()
            return
        if self.boundary is TransactionBoundary.INTERVAL:
            if self._clock() >= self._next_interval_commit:
                self._next_interval_commit = self._clock() + self._interval_s
                if self._txn_open:
                    self._commit_transaction()
            return
        assert self._requests is not None
        commit, abort = self._requests.take()
        if abort and self._txn_open:
            self._abort_transaction()
        elif commit and self._txn_open:
            self._commit_transaction()

    # ------------------------------------------------------------------ commit / abort

    def _drain(self) -> None:
        """Serve delivery reports until every record of the transaction is acknowledged."""
        while True:
            try:
                remaining = int(self.producer.flush(_FLUSH_TICK_S))
            except Exception as e:
                # A fenced or fatally failed producer; its delivery reports usually said why.
                if self.producer_error is not None:
                    self._raise_producer_error()
                raise TransactionalProducerError(
                    f"Task {self.id} could not flush its transactional producer: {e}", classify_code(error_code(e))
                ) from e
            self._after_callbacks()
            if self.producer_error is not None:
                self._raise_producer_error()
            if remaining == 0:
                return
            if self._cancelled:
                raise ConnectError(f"Task {self.id} was cancelled while waiting for its records to be acknowledged")

    def _transaction_offsets(self) -> list[tuple[dict[str, Any] | None, dict[str, Any] | None]]:
        """Every source offset of the transaction: of the records dispatched in it, acknowledged or not."""
        self._flusher.update_committable()
        offsets = dict(self._flusher.committable.offsets)
        offsets.update(self.submitted.dispatched_offsets())
        self._flusher.committable = CommittableOffsets.empty()
        return list(offsets.values())

    def _write_offsets(self, offsets: list[tuple[dict[str, Any] | None, dict[str, Any] | None]]) -> int:
        """The transaction's source offsets, to the offsets topic through the transactional producer."""
        written = 0
        for partition, offset in offsets:
            if partition is None:
                continue
            key = serialize_offset_key(self.id.connector, partition)
            value = serialize_offset_value(offset)
            try:
                self.producer.produce(self.offsets_topic, value, key, on_delivery=self._on_offset_delivery)
            except BufferError:
                self.producer.poll(_FLUSH_TICK_S)
                self.producer.produce(self.offsets_topic, value, key, on_delivery=self._on_offset_delivery)
            except KafkaException as e:
                raise self._transaction_error("write offsets in the transaction of", e) from e
            written += 1
        return written

    def _on_offset_delivery(self, err: KafkaError | None, _msg: Any) -> None:
        if err is not None and self.producer_error is None:
            self.producer_error = KafkaException(err)

    def _write_transaction_offsets(self) -> None:
        """The offsets of everything dispatched so far, into the open transaction now rather than at the commit.

        Queued behind the records, they go out with them: the offsets topic's partition joins the
        transaction in the same AddPartitionsToTxn as the records' partitions and its record travels in the
        same Produce request, instead of two more round trips at the commit. The transaction holds all or
        none of it, so writing them early changes nothing a reader sees."""
        if self.producer_error is not None:
            self._raise_producer_error()
        self._write_offsets(self._transaction_offsets())
        self._offsets_written = True
        if isinstance(self.producer, BatchTransactions):
            self.producer.send_pending()  # behind the copied batches, without waiting for any I/O

    def _commit_transaction(self) -> None:
        """Offsets of everything dispatched, then the commit, which delivers records and offsets together
        (no wait for the records' acknowledgements first: one round trip less per transaction)."""
        started = self._clock()
        if self.producer_error is not None:
            self._raise_producer_error()
        if not self._offsets_written:  # else written already, and nothing was dispatched since (same values)
            self._write_offsets(self._transaction_offsets())
        try:
            self.producer.commit_transaction(self._call_timeout_s)  # type: ignore[attr-defined]
        except KafkaException as e:
            self.metrics.record_commit(False, self._clock() - started)
            error = self._transaction_error("commit the transaction of", e)  # aborts what it can
            self._txn_open = False
            raise error from e
        self._txn_open = False
        self._serve_reports()
        self.metrics.record_commit(True, self._clock() - started)
        self._release_held()
        self._commit_task()

    def _serve_reports(self) -> None:
        """After a commit every record is delivered: serve the reports (what the task hears is held)."""
        deadline = self._clock() + self._call_timeout_s
        while True:
            self.producer.poll(0)
            if len(self.producer) == 0 or self._clock() > deadline:  # type: ignore[arg-type]
                break
            self.producer.poll(0.01)
        self._after_callbacks()
        if self.producer_error is not None:
            self._raise_producer_error()
        self._flusher.update_committable()  # acknowledged now, and already committed
        self._flusher.committable = CommittableOffsets.empty()

    def _abort_transaction(self) -> None:
        """Connector-requested abort: the records are discarded, their offsets committed on their own."""
        self._drain()  # delivered first: an abort would purge what is in flight, failing the task
        offsets = self._transaction_offsets()
        try:
            self.producer.abort_transaction(self._call_timeout_s)  # type: ignore[attr-defined]
        except KafkaException as e:
            error = self._transaction_error("abort the transaction of", e)
            self._txn_open = False
            raise error from e
        self._txn_open = False
        self._held_records.clear()
        self._held_runs.clear()
        if offsets:
            self._begin()
            self._write_offsets(offsets)
            self._commit_transaction()

    def _abort_quietly(self) -> None:
        """A failing task leaves no open transaction behind (read_committed readers would wait on it)."""
        self._held_records.clear()
        self._held_runs.clear()
        if not self._txn_open:
            return
        self._txn_open = False
        try:
            self.producer.abort_transaction(ABORT_TIMEOUT_S)  # type: ignore[attr-defined]
        except Exception as e:  # fenced, fatal or timed out: the broker or the next instance aborts it
            log.warning("Task %s could not abort its open transaction: %s", self.id, e)

    def _probe_fenced(self) -> KafkaError | None:
        """Abort the open transaction (the task is failing); the fenced error if that is why it cannot."""
        if not self._txn_open:
            return None
        self._txn_open = False
        try:
            self.producer.abort_transaction(ABORT_TIMEOUT_S)  # type: ignore[attr-defined]
        except KafkaException as e:
            error = _kafka_error(e)
            return error if is_fenced(error) else None
        except Exception:
            return None
        return None

    def _fenced_error(self, cause: Any) -> ConnectError:
        return ConnectError(f"Task {self.id} {_FENCED_MARK}: a newer instance of it initialized transactional.id "
                            f"'{self.transactional_id}' ({cause}); this instance stops")  # fmt: skip

    def _transaction_error(self, what: str, e: KafkaException) -> ConnectError:
        error = _kafka_error(e)
        if not is_fenced(error):
            probed = self._probe_fenced()
            if probed is not None:
                return self._fenced_error(probed.str())
            return TransactionalProducerError(
                f"Failed to {what} task {self.id} (transactional.id '{self.transactional_id}'): "
                f"{error.str() if error else e}", classify_code(error_code(e)))  # fmt: skip
        return self._fenced_error(error.str() if error else e)

    def _send_error(self, topic: str, e: KafkaException) -> ConnectError:
        return TransactionalProducerError(f"Task {self.id} could not send to topic '{topic}': {e}",
                                          classify_code(error_code(e)))  # fmt: skip

    # ------------------------------------------------------------------ recovery

    def _recover_or_fail(self, error: BaseException) -> BaseException:
        """A recoverable producer failure becomes a restart request while the budget lasts; anything
        else, and a failure past the budget, is what the task fails with."""
        if not isinstance(error, TransactionalProducerError) or error.kind is not ProducerErrorKind.RECOVERABLE:
            return error
        if self._stopping or self._cancelled or self._restarter is None or self._recovery is None:
            return error
        if self._recovery.try_spend(self._clock()):
            return TaskRestartRequested(error)
        return ConnectError(f"Task {self.id} stops: its transactional producer failed more often than the "
                            f"{self._recovery.describe()} it recovers from; the last failure: {error}")  # fmt: skip

    @property
    def recovery(self) -> RecoveryBudget | None:
        """The recovery budget this instance's successors share (the task's, not the instance's)."""
        return self._recovery

    def _request_restart(self) -> bool:
        return self._restarter is not None and self._restarter(self)

    def _raise_producer_error(self) -> None:
        error = self.producer_error
        if isinstance(error, KafkaException):
            kafka_error = _kafka_error(error)
            code = kafka_error.code() if kafka_error is not None else None
        else:
            code = getattr(error, "code", None)
        if code in _FENCED_CODES:
            raise self._fenced_error(error) from error
        # A fatal producer error purges what was queued: the delivery reports then only say "purged".
        probed = self._probe_fenced()
        if probed is not None:
            raise self._fenced_error(probed.str()) from error
        raise TransactionalProducerError(
            f"Task {self.id}'s transactional producer failed to deliver: {error}", classify_code(code)
        ) from error

    # ------------------------------------------------------------------ held callbacks

    def _hold_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        self._held_records.append((record, metadata))

    def _commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if self._task_wants_records:
            self._held_records.append((record, metadata))

    def _tell_route(self, run: CopiedRun) -> None:
        self._held_runs.append(run)

    def _release_held(self) -> None:
        """After the commit: what the task must hear of the committed records, in delivery order."""
        records, self._held_records = self._held_records, []
        runs, self._held_runs = self._held_runs, []
        for run in runs:
            try:
                run.route.acknowledged(run)
            except Exception:
                log.exception("Exception thrown while acknowledging a run of %s", self.id)
        if records:
            commit_record = self.task.commit_record
            for record, metadata in records:
                try:
                    commit_record(record, metadata)
                except Exception:
                    log.exception("Exception thrown while calling task.commit_record() of %s", self.id)

    # ------------------------------------------------------------------ close

    def _final_commit(self) -> None:
        """Nothing to do: the open transaction is committed by ``_execute`` (or aborted on failure)."""

    def _close_clients(self) -> None:
        self._abort_quietly()
        if self._failed or self.restart_cause is not None:
            # Nothing of this producer's epoch may reach the broker once it gave up: a record it kept
            # retrying would land after the successor's init_transactions aborted the transaction, as an
            # open transaction nobody ends (a broker with no transaction timeout then holds read_committed
            # readers before it for good).
            try:
                self.producer.purge()
            except Exception as e:
                log.debug("Task %s could not purge its producer: %s", self.id, e)
        super()._close_clients()

    def __repr__(self) -> str:
        return f"ExactlyOnceWorkerSourceTask{{id={self.id}}}"


__all__ = ["MAX_RECOVERIES", "RECOVERY_WINDOW_S", "ExactlyOnceWorkerSourceTask", "is_fenced"]
