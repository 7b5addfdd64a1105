"""The sink-task loop (Kafka's ``WorkerSinkTask``), one thread per task.

::

    consumer.consume() -> key/value/header converters -> transformation chain -> task.put(batch)
         ^   rebalance callbacks (on this thread, inside consume):
         |     assigned -> group offsets read, task.open(partitions)
         |     revoked  -> pre_commit, task.close(partitions), synchronous commit
         +-- every offset.flush.interval.ms (or when the task asks): task.pre_commit(offsets)
             then an asynchronous commit of what it answered

The consumer is in group ``connect-<connector>`` (``consumer.override.group.id`` changes it) with
client id ``connector-consumer-<connector>-<task>``, subscribed to ``topics`` or ``topics.regex``.
A :class:`~connect_core.api.errors.RetriableError` from ``put`` keeps the batch: every partition is
paused (the consumer keeps polling, so the group membership stays) and the same batch is offered
again after ``context.timeout(ms)`` or, if the task set none, a backoff doubling from 0.5 s up to
the next offset commit. Converter and transformation failures go through ``errors.tolerance``:
tolerated records are skipped (and written to the dead-letter queue when one is configured); their
offsets are committed like any other consumed record. At stop every partition is closed with a
synchronous commit, then ``task.stop()`` runs and the consumer leaves the group.

A member whose group join completes no rebalance (no assignment callback, not even an empty one, for
:func:`join_stall_timeout_s` after it subscribed or lost partitions) says so and, on a thread of its own,
runs the worker's *group release* (:mod:`connect_core.kafka.departed_leader`): a coordinator that keeps a
leader that left while its group re-formed as the group's leader, so no member is ever assigned anything, and joining
anew does not change that; the release makes the coordinator evict that leader and elect a live member.
The consumer itself keeps its membership and keeps polling (a slow but healthy join is not interrupted;
on Apache Kafka the release is refused at once and changes nothing). Again every stall timeout while the
join stays incomplete (docs/testing.md).

Bookkeeping of offsets is :class:`~connect_core.runtime.sink_offsets.SinkOffsets` (pure logic).
Hot path rules as in the source loop: no per-record logging or metrics. The sink-task metrics
(:mod:`~connect_core.runtime.sink_metrics`, Java's SinkTaskMetricsGroup) are reported per poll, put,
commit and rebalance: records read and sent, put time, assigned partitions, commit sequence numbers,
completions and late (skipped) completions, and records read but not yet committed.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.api.sink import SinkRecord, SinkTask, TopicPartition
from connect_core.kafka.departed_leader import MIN_STALL_S, release_due, stall_timeout_s
from connect_core.model import ConnectorTaskId, TargetState
from connect_core.runtime.dead_letter_queue import DeadLetterQueueReporter
from connect_core.runtime.sink_metrics import NoSinkTaskMetrics, SinkTaskMetrics, active_record_count
from connect_core.runtime.sink_offsets import SinkOffsets
from connect_core.runtime.source_task_collaborators import TaskMetrics
from connect_core.runtime.status import TaskStatusListener
from connect_core.runtime.tolerance import SKIP, RetryWithToleranceOperator, Stage
from connect_core.runtime.worker_task import WorkerTask
from connect_core.storage.api import StatusBackingStore

log = logging.getLogger(__name__)

#: Longest single wait in the consumer, so stop and pause requests are seen promptly.
MAX_POLL_WAIT_S = 0.5
RETRY_BACKOFF_MIN_S = 0.5
COMMITTED_TIMEOUT_S = 30.0
#: Shortest wait for a group join to complete before the member acts (see join_stall_timeout_s).
MIN_JOIN_STALL_S = MIN_STALL_S
_TIMESTAMP_TYPES = {0: "NoTimestampType", 1: "CreateTime", 2: "LogAppendTime"}

#: Creates the consumer from librdkafka settings (the loop adds its ``on_commit`` callback).
ConsumerFactory = Callable[[dict[str, Any]], Any]
#: Makes client TopicPartitions: (topic, partition, offset) -> object (kept out of this module).
ClientPartition = Callable[..., Any]
#: Releases the task's group from a departed leader (blocking); answers what it did, for the log.
GroupRelease = Callable[[], str]


def join_stall_timeout_s(consumer_config: dict[str, Any]) -> float:
    """How long a member may wait for its join to complete a rebalance before it acts
    (:func:`~connect_core.kafka.departed_leader.stall_timeout_s` of its session and rebalance timeouts)."""
    return stall_timeout_s(
        float(consumer_config.get("session.timeout.ms", 45000)),
        float(consumer_config.get("max.poll.interval.ms", 300000)),
    )


class _ErrantRecordReporter:
    """``context.errant_record_reporter()``: tolerance first, then the dead-letter queue."""

    def __init__(self, worker: WorkerSinkTask) -> None:
        self._worker = worker

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]:
        return self._worker._report_errant(record, error)


class WorkerSinkTaskContext:
    """What a SinkTask may ask of the runtime (Java ``WorkerSinkTaskContext``); task thread only."""

    def __init__(self, worker: WorkerSinkTask, configs: dict[str, str], reporter: _ErrantRecordReporter | None) -> None:
        self._worker = worker
        self._configs = configs
        self._reporter = reporter
        self.timeout_ms = -1
        self.commit_requested = False
        self.paused: set[TopicPartition] = set()

    def configs(self) -> dict[str, str]:
        return self._configs

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        self._worker.offsets.request_offsets({TopicPartition(*tp): int(o) for tp, o in offsets.items()})

    def timeout(self, timeout_ms: int) -> None:
        self.timeout_ms = int(timeout_ms)

    def assignment(self) -> set[TopicPartition]:
        return set(self._worker.offsets.assigned)

    def pause(self, *partitions: TopicPartition) -> None:
        tps = [TopicPartition(*tp) for tp in partitions]
        unknown = [tp for tp in tps if tp not in self._worker.offsets.assigned]
        if unknown:
            raise ConnectError(f"Cannot pause partitions {unknown} which are not assigned to this task")
        self.paused.update(tps)
        if not self._worker._paused_for_redelivery:
            self._worker._pause(tps)

    def resume(self, *partitions: TopicPartition) -> None:
        tps = [TopicPartition(*tp) for tp in partitions]
        unknown = [tp for tp in tps if tp not in self._worker.offsets.assigned]
        if unknown:
            raise ConnectError(f"Cannot resume partitions {unknown} which are not assigned to this task")
        self.paused.difference_update(tps)
        if not self._worker._paused_for_redelivery and not self._worker._target_paused():
            self._worker._resume(tps)

    def request_commit(self) -> None:
        self.commit_requested = True

    def errant_record_reporter(self) -> _ErrantRecordReporter | None:
        return self._reporter


class WorkerSinkTask(WorkerTask[SinkTask]):
    """Runs one SinkTask on its own thread; see the module docstring for the loop."""

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: SinkTask,
        task_props: dict[str, str],
        *,
        consumer_config: dict[str, Any],
        consumer_factory: ConsumerFactory,
        client_partition: ClientPartition,
        topics: list[str],
        topics_regex: str | None,
        listener: TaskStatusListener,
        key_converter: Any,
        value_converter: Any,
        header_converter: Any,
        transformation_chain: Any = None,
        tolerance: RetryWithToleranceOperator | None = None,
        dead_letter_queue: DeadLetterQueueReporter | None = None,
        errant_reporter: bool = False,
        initial_state: TargetState = TargetState.STARTED,
        offset_flush_interval_s: float = 60.0,
        offset_flush_timeout_s: float = 5.0,
        max_poll_records: int = 500,
        status_store: StatusBackingStore | None = None,
        topic_tracking: bool = True,
        metrics: TaskMetrics | None = None,
        sink_metrics: SinkTaskMetrics | None = None,
        group_release: GroupRelease | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(
            task_id, task, task_props, listener=listener, key_converter=key_converter,
            value_converter=value_converter, header_converter=header_converter,
            transformation_chain=transformation_chain, tolerance=tolerance, initial_state=initial_state,
            offset_flush_interval_s=offset_flush_interval_s, offset_flush_timeout_s=offset_flush_timeout_s,
            status_store=status_store, topic_tracking=topic_tracking, metrics=metrics, clock=clock,
        )  # fmt: skip
        self._consumer_config = consumer_config
        # librdkafka runs every configured assignor with one protocol: cooperative-sticky means incremental
        # (cooperative) rebalances, where callbacks carry only the partitions that move.
        self._cooperative = "cooperative" in str(consumer_config.get("partition.assignment.strategy", ""))
        self._consumer_factory = consumer_factory
        self._client_partition = client_partition
        self.topics = topics
        self.topics_regex = topics_regex
        self.dlq = dead_letter_queue
        self.max_poll_records = max(1, max_poll_records)

        self.offsets = SinkOffsets()
        self.context = WorkerSinkTaskContext(self, task_props, _ErrantRecordReporter(self) if errant_reporter else None)
        self.consumer: Any = None
        self._batch: list[SinkRecord] = []
        self._batch_offsets: dict[TopicPartition, int] = {}
        self._paused_for_redelivery = False
        self._paused_all_for_target = False
        self._retry_backoff_s = 0.0
        self._next_commit = 0.0
        #: In-flight asynchronous commits: their offsets, start time and sequence number.
        self._pending_commits: dict[frozenset[tuple[str, int, int]], tuple[dict[TopicPartition, int], float, int]] = {}
        self._skipped = 0
        self.commit_failures = 0
        self.sink_metrics: SinkTaskMetrics = sink_metrics or NoSinkTaskMetrics()
        #: Java's commitSeqno: a completion of an older commit than the latest started is skipped.
        self.commit_seq_no = 0
        #: Next offset read per partition (converted, not necessarily put yet), for the active record count.
        self._consumed: dict[TopicPartition, int] = {}
        #: When the consumer subscribed or lost partitions without an assignment since (a join in progress).
        self._join_pending_since: float | None = None
        self.join_stall_s = join_stall_timeout_s(consumer_config)
        self._group_release = group_release
        self._release_thread: threading.Thread | None = None
        self._last_release: float | None = None
        #: Stalled joins acted on (each a warning, and a group release when the worker gave one).
        self.releases = 0

    # ------------------------------------------------------------------ the task thread

    def _initialize_and_start(self) -> None:
        conf = dict(self._consumer_config)
        conf["on_commit"] = self._on_commit
        self.consumer = self._consumer_factory(conf)
        self.sink_metrics.partition_count(0)
        self._started = True
        self.task.initialize(self.context)
        self.task.start(dict(self.task_props))
        self._subscribe()
        log.info("Sink task %s finished initialization and start", self.id)

    def _subscribe(self) -> None:
        # librdkafka treats a subscription starting with '^' as a regex; Java's is a full match.
        regex = self.topics_regex
        subscription = [f"^({regex})$"] if regex is not None else list(self.topics)
        self._join_pending_since = self._clock()
        self.consumer.subscribe(subscription, on_assign=self._on_assign, on_revoke=self._on_revoke,
                                on_lost=self._on_lost)  # fmt: skip

    def _release_due(self, now: float) -> bool:
        running = self._release_thread is not None and self._release_thread.is_alive()
        return not running and release_due(now, self._join_pending_since, self._last_release, self.join_stall_s)

    def _release_if_stalled(self, now: float) -> None:
        """A join that has completed no rebalance for :attr:`join_stall_s`: warn, and release the group."""
        if not self._release_due(now):
            return
        since = self._join_pending_since or now
        self._last_release = now
        self.releases += 1
        group = self._consumer_config.get("group.id")
        action = "releasing a departed leader" if self._group_release is not None else "still waiting"
        log.warning("Sink task %s: its consumer has completed no rebalance of group %s for %.0f s; %s",
                    self.id, group, now - since, action)  # fmt: skip
        if self._group_release is not None:
            self._release_thread = threading.Thread(
                target=self._run_release, args=(self._group_release, group), name=f"{self.id}-group-release",
                daemon=True,
            )  # fmt: skip
            self._release_thread.start()

    def _run_release(self, release: GroupRelease, group: Any) -> None:
        """On the release thread: the consumer keeps polling meanwhile (a coordinator may hold joins)."""
        try:
            log.info("Sink task %s, group %s: %s", self.id, group, release())
        except Exception as e:
            log.warning("Sink task %s: releasing group %s failed: %s", self.id, group, e)

    def _execute(self) -> None:
        self._next_commit = self._clock() + self.flush_interval_s
        try:
            while not self._stopping:
                self._iteration()
        finally:
            if not self._cancelled:
                self._close_all_partitions()

    def _iteration(self) -> None:
        now = self._clock()
        self._expire_commits(now)
        self._release_if_stalled(now)
        if self.context.commit_requested or now >= self._next_commit:
            self.context.commit_requested = False
            self._commit(closing=False)
            self._next_commit = now + self.flush_interval_s
        self._apply_target_state()
        timeout = max(self._next_commit - now, 0.0)
        if self.context.timeout_ms >= 0:
            timeout = min(timeout, self.context.timeout_ms / 1000.0)
            self.context.timeout_ms = -1
        elif self._paused_for_redelivery:
            timeout = min(timeout, self._retry_backoff_s)
        self._poll(timeout)

    def _apply_target_state(self) -> None:
        paused = self._target_paused()
        if paused and not self._paused_all_for_target:
            self._paused_all_for_target = True
            self._pause(self.offsets.assigned)
            self._mark_paused()
            self.context.commit_requested = True
        elif not paused and self._paused_all_for_target:
            self._paused_all_for_target = False
            if not self._paused_for_redelivery:
                self._resume(self.offsets.assigned - self.context.paused)
            self._mark_resumed()

    def _poll(self, timeout_s: float) -> None:
        rewinds = self.offsets.take_rewinds()
        for tp, offset in rewinds.items():
            try:
                self.consumer.seek(self._client_partition(tp.topic, tp.partition, offset))
            except Exception as e:
                log.warning("Task %s cannot rewind %s to %s: %s", self.id, tp, offset, e)
                self.offsets.rewinds.setdefault(tp, offset)
        deadline = self._clock() + timeout_s
        while True:
            wait = min(MAX_POLL_WAIT_S, max(0.0, deadline - self._clock()))
            messages = self.consumer.consume(self.max_poll_records, wait)
            if messages or self._stopping or wait <= 0 or self._clock() >= deadline:
                break
            if self.context.commit_requested or self._target_paused() != self._paused_all_for_target:
                break
            if self._release_due(self._clock()):
                break
        if messages:
            self.sink_metrics.records_read(self._convert_messages(messages))
            self._consumed.update(self._batch_offsets)
            self._report_active()
        if self._paused_all_for_target and not self._batch:
            return
        self._deliver()

    # ------------------------------------------------------------------ conversion

    def _convert_messages(self, messages: list[Any]) -> int:
        """Convert and transform a polled batch into ``self._batch``; the number of records read."""
        chain = self.chain
        batch = self._batch
        offsets = self._batch_offsets
        tracking = self._status_store is not None
        events = 0
        for msg in messages:
            err = msg.error()
            if err is not None:
                if err.fatal():
                    raise ConnectError(f"Consumer of task {self.id} failed: {err.str()}")
                log.debug("Consumer of task %s reported %s", self.id, err.str())
                events += 1
                continue
            topic = msg.topic()
            offsets[TopicPartition(topic, msg.partition())] = msg.offset() + 1
            if tracking and topic not in self._active_topics:
                self._record_active_topic(topic)
            stage = Stage.KEY_CONVERTER
            executing: Any = self.key_converter
            try:
                record: SinkRecord | None = self._to_record(msg)
                if chain is not None:
                    stage, executing = Stage.TRANSFORMATION, chain
                    record = chain.apply(record)
            except _StageError as e:
                record = self._tolerate(e.stage, e.executing, e.__cause__ or e, msg)
            except Exception as e:
                record = self._tolerate(stage, executing, e, msg)
            if record is not None:
                batch.append(record)
        return len(messages) - events

    def _to_record(self, msg: Any) -> SinkRecord:
        topic = msg.topic()
        try:
            key_schema, key = self.key_converter.to_connect(topic, msg.key())
        except Exception as e:
            raise _StageError(Stage.KEY_CONVERTER, self.key_converter) from e
        try:
            value_schema, value = self.value_converter.to_connect(topic, msg.value())
        except Exception as e:
            raise _StageError(Stage.VALUE_CONVERTER, self.value_converter) from e
        raw_headers = msg.headers()
        headers = None
        if raw_headers:
            conv = self.header_converter
            try:
                headers = [(k, conv.to_connect_header(topic, k, v).value) for k, v in raw_headers]
            except Exception as e:
                raise _StageError(Stage.HEADER_CONVERTER, conv) from e
        ts_type, ts = msg.timestamp()
        return SinkRecord(topic, msg.partition(), key_schema, key, value_schema, value, msg.offset(),
                          ts if ts_type != 0 and ts >= 0 else None, _TIMESTAMP_TYPES.get(ts_type, "NoTimestampType"),
                          headers)  # fmt: skip

    def _tolerate(self, stage: Stage, executing: Any, error: BaseException, msg: Any) -> SinkRecord | None:
        """errors.tolerance for a record that failed a stage: retried, skipped (DLQ) or the task fails."""

        def again() -> SinkRecord | None:
            record = self._to_record(msg)
            return self.chain.apply(record) if self.chain is not None else record

        result = self.tolerance.handle(stage, error, again, msg)
        if result is SKIP:
            self._skipped += 1
            if self.dlq is not None:
                self.dlq.report(msg, stage.value, type(executing), error)
            return None
        return result  # type: ignore[return-value]

    def _report_errant(self, record: SinkRecord, error: BaseException) -> Future[None]:
        """A record the task could not write: tolerated (skip, DLQ) or the task fails (raises)."""
        self.tolerance.failed(Stage.TASK_PUT, error, record)
        self._skipped += 1
        if self.dlq is not None:
            return self.dlq.report(_RecordAsMessage(record, self.key_converter, self.value_converter),
                                   Stage.TASK_PUT.value, type(self.task), error)  # fmt: skip
        done: Future[None] = Future()
        done.set_result(None)
        return done

    # ------------------------------------------------------------------ delivery

    def _deliver(self) -> None:
        batch = self._batch
        started = self._clock()
        try:
            self.task.put(list(batch))
        except RetriableError as e:
            log.warning("Task %s: RetriableError from put (the batch will be delivered again): %s", self.id, e)
            if not self._paused_for_redelivery:
                self._paused_for_redelivery = True
                self._retry_backoff_s = RETRY_BACKOFF_MIN_S
                self._pause(self.offsets.assigned)
            else:
                self._retry_backoff_s = min(self._retry_backoff_s * 2, max(self.flush_interval_s, RETRY_BACKOFF_MIN_S))
            return
        except Exception as e:
            raise ConnectError(f"Exiting WorkerSinkTask due to unrecoverable exception: {e}") from e
        elapsed = self._clock() - started
        self.offsets.delivered(self._batch_offsets)
        self.sink_metrics.batch_put(len(batch), elapsed)
        if batch:
            self.metrics.record_batch(len(batch), 0, elapsed)
            self.metrics.record_acks(len(batch), 0)
        if self._skipped:
            skipped, self._skipped = self._skipped, 0
            self.metrics.record_skipped(skipped)
        self._batch = []
        self._batch_offsets = {}
        if self._paused_for_redelivery:
            self._paused_for_redelivery = False
            if not self._paused_all_for_target:
                self._resume(self.offsets.assigned - self.context.paused)

    def _pause(self, partitions: Any) -> None:
        tps = [self._client_partition(tp.topic, tp.partition) for tp in partitions]
        if tps and self.consumer is not None:
            try:
                self.consumer.pause(tps)
            except Exception as e:
                log.debug("Task %s: pause of %s failed: %s", self.id, partitions, e)

    def _resume(self, partitions: Any) -> None:
        tps = [self._client_partition(tp.topic, tp.partition) for tp in partitions]
        if tps and self.consumer is not None:
            try:
                self.consumer.resume(tps)
            except Exception as e:
                log.debug("Task %s: resume of %s failed: %s", self.id, partitions, e)

    # ------------------------------------------------------------------ rebalances (inside consume)

    def _on_assign(self, consumer: Any, partitions: list[Any]) -> None:
        self._join_pending_since = None  # a rebalance completed (librdkafka calls this with [] too)
        tps = [TopicPartition(p.topic, p.partition) for p in partitions]
        committed: dict[TopicPartition, int] = {}
        if partitions:
            try:
                for p in consumer.committed(partitions, timeout=COMMITTED_TIMEOUT_S):
                    if p.error is None and p.offset >= 0:
                        committed[TopicPartition(p.topic, p.partition)] = p.offset
            except Exception as e:
                log.warning("Task %s could not read the committed offsets of %s: %s", self.id, tps, e)
        self.offsets.assign(tps, committed)
        self._consumed.update(committed)
        rewinds = self.offsets.take_rewinds()
        to_assign = [self._client_partition(tp.topic, tp.partition, rewinds[tp]) if tp in rewinds else p
                     for tp, p in zip(tps, partitions, strict=True)]  # fmt: skip
        if self._cooperative:
            consumer.incremental_assign(to_assign)
        else:
            consumer.assign(to_assign)
        log.debug("Task %s assigned %s", self.id, tps)
        self.sink_metrics.partition_count(len(self.offsets.assigned))
        self._report_active()
        self.task.open(tps)
        if self._paused_for_redelivery and not self._batch:
            self._paused_for_redelivery = False
        if self._paused_for_redelivery or self._paused_all_for_target:
            self._pause(tps)
        else:
            self.context.paused.intersection_update(self.offsets.assigned)
            self._pause(self.context.paused & set(tps))

    def _on_revoke(self, consumer: Any, partitions: list[Any]) -> None:
        self._partitions_removed(consumer, partitions, lost=False)

    def _on_lost(self, consumer: Any, partitions: list[Any]) -> None:
        self._partitions_removed(consumer, partitions, lost=True)

    def _partitions_removed(self, consumer: Any, partitions: list[Any], lost: bool) -> None:
        if self._join_pending_since is None:
            self._join_pending_since = self._clock()  # the rebalance this starts completes with an assignment
        tps = [tp for tp in (TopicPartition(p.topic, p.partition) for p in partitions) if tp in self.offsets.assigned]
        if tps:
            if lost:
                log.info("Task %s lost partitions %s; closing them without committing", self.id, tps)
                self._close_task_partitions(tps)
            else:
                self._commit(closing=True, partitions=tps)
            self._forget(tps)
        if self._cooperative:
            consumer.incremental_unassign(partitions)
        else:
            consumer.unassign()
        self.sink_metrics.partition_count(len(self.offsets.assigned))

    def _forget(self, tps: list[TopicPartition]) -> None:
        gone = set(tps)
        self.offsets.revoke(tps)
        for tp in gone:
            self._consumed.pop(tp, None)
        self._report_active()
        self.context.paused.difference_update(gone)
        if self._batch:
            # Offsets of revoked partitions go back to the committed ones: their records come again.
            self._batch = [r for r in self._batch if r.original_partition not in gone]
            for tp in gone:
                self._batch_offsets.pop(tp, None)

    # ------------------------------------------------------------------ offsets

    def _report_active(self) -> None:
        self.sink_metrics.active_records(active_record_count(self._consumed, self.offsets.last_committed))

    def _commit_succeeded(self, offsets: dict[TopicPartition, int] | None, started: float) -> None:
        """Java's onCommitCompleted without error for the latest commit: bookkeeping and metrics."""
        self.commit_failures = 0
        if offsets:
            self.offsets.committed(offsets)
            self._report_active()
        self.metrics.record_commit(True, self._clock() - started)
        self.sink_metrics.commit_completed()

    def _commit(self, closing: bool, partitions: list[TopicPartition] | None = None) -> None:
        """Java's commitOffsets: DLQ writes acknowledged, pre_commit, then commit (sync when closing)."""
        if self._cancelled:
            return
        if self.dlq is not None and not self.dlq.flush():
            log.error("Task %s: dead letter queue writes not acknowledged; offsets not committed", self.id)
            if closing:
                self._close_task_partitions(partitions)
            return
        offered = self.offsets.candidates(partitions)
        if not offered:
            if closing:
                self._close_task_partitions(partitions)
            return
        started = self._clock()
        self.commit_seq_no += 1
        seq_no = self.commit_seq_no
        self.sink_metrics.commit_seq_no(seq_no)
        try:
            answer = self.task.pre_commit(dict(offered))
        except Exception as e:
            self.commit_failures += 1
            self.metrics.record_commit(False, self._clock() - started)
            if closing:
                log.warning("Task %s: offset commit failed during close: %s", self.id, e)
            else:
                log.error("Task %s: offset commit failed, rewinding to last committed offsets: %s", self.id, e)
                for tp, offset in self.offsets.reset_to_committed(offered).items():
                    self.offsets.rewinds[tp] = offset
            return
        finally:
            if closing:
                self._close_task_partitions(partitions)
        to_commit = self.offsets.committable(offered, {TopicPartition(*tp): int(o) for tp, o in (answer or {}).items()})
        if to_commit is None:  # the task opted out, or nothing changed: a completed commit, as in Java
            self._commit_succeeded(None, started)
            return
        client_offsets = [self._client_partition(tp.topic, tp.partition, o) for tp, o in to_commit.items()]
        if closing:
            try:
                result = self.consumer.commit(offsets=client_offsets, asynchronous=False)
                errors = [p for p in (result or []) if getattr(p, "error", None) is not None]
                if errors:
                    raise ConnectError(f"partition errors: {[(p.topic, p.partition, str(p.error)) for p in errors]}")
            except Exception as e:
                self.commit_failures += 1
                self.metrics.record_commit(False, self._clock() - started)
                log.warning("Task %s: synchronous offset commit failed: %s", self.id, e)
                return
            self._commit_succeeded(to_commit, started)
            return
        key = frozenset((tp.topic, tp.partition, o) for tp, o in to_commit.items())
        self._pending_commits[key] = (to_commit, started, seq_no)
        try:
            self.consumer.commit(offsets=client_offsets, asynchronous=True)
        except Exception as e:
            self._pending_commits.pop(key, None)
            self.commit_failures += 1
            self.metrics.record_commit(False, self._clock() - started)
            log.error("Task %s: offset commit failed: %s", self.id, e)

    def _on_commit(self, err: Any, partitions: list[Any]) -> None:
        """librdkafka's commit report (served inside consume/commit on this thread)."""
        key = frozenset((p.topic, p.partition, p.offset) for p in partitions or [])
        pending = self._pending_commits.pop(key, None)
        if pending is None:
            return
        offsets, started, seq_no = pending
        if seq_no != self.commit_seq_no:  # a newer commit started meanwhile: Java ignores this answer
            log.debug(
                "Task %s: completion of commit %d arrived after commit %d started", self.id, seq_no, self.commit_seq_no
            )
            self.sink_metrics.commit_skipped()
            return
        errors = [p for p in partitions or [] if getattr(p, "error", None) is not None]
        if err is not None or errors:
            self.commit_failures += 1
            self.metrics.record_commit(False, self._clock() - started)
            log.error("Task %s: commit of offsets failed: %s", self.id, err or errors)
            return
        self._commit_succeeded(offsets, started)

    def _expire_commits(self, now: float) -> None:
        for key, (_offsets, started, _seq) in list(self._pending_commits.items()):
            if now - started >= self.flush_timeout_s:
                del self._pending_commits[key]
                self.commit_failures += 1
                self.metrics.record_commit(False, now - started)
                log.warning("Task %s: commit of offsets timed out", self.id)

    def _close_task_partitions(self, partitions: list[TopicPartition] | None) -> None:
        tps = list(self.offsets.assigned if partitions is None else partitions)
        try:
            self.task.close(tps)
        except Exception:
            log.exception("Task %s: close(%s) failed", self.id, tps)

    def _close_all_partitions(self) -> None:
        if self.consumer is None:
            return
        assigned = sorted(self.offsets.assigned)
        self._commit(closing=True, partitions=assigned)
        self._forget(assigned)

    # ------------------------------------------------------------------ close

    def _close_clients(self) -> None:
        if self.consumer is not None:
            try:
                self.consumer.close()
            except Exception:
                log.debug("Closing the consumer of task %s failed", self.id, exc_info=True)
        if self.dlq is not None:
            self.dlq.close()
        self.sink_metrics.close()

    def __repr__(self) -> str:
        return f"WorkerSinkTask{{id={self.id}}}"


class _StageError(Exception):
    """Which stage (and plugin) of the conversion failed; the cause is the plugin's error."""

    def __init__(self, stage: Stage, executing: Any) -> None:
        super().__init__(stage.value)
        self.stage = stage
        self.executing = executing


class _RecordAsMessage:
    """A SinkRecord reported by the task, shaped like a consumed message for the DLQ.

    Java writes the consumed bytes; the task reports the converted record, so its key and value are
    converted back (the record's original topic, partition and offset name where it came from).
    """

    def __init__(self, record: SinkRecord, key_converter: Any, value_converter: Any) -> None:
        self._r = record
        self._key = key_converter.from_connect(record.original_topic, record.key_schema, record.key)
        self._value = value_converter.from_connect(record.original_topic, record.value_schema, record.value)

    def topic(self) -> str:
        return self._r.original_topic

    def partition(self) -> int:
        return self._r.original_kafka_partition

    def offset(self) -> int:
        return self._r.original_kafka_offset

    def key(self) -> Any:
        return self._key

    def value(self) -> Any:
        return self._value

    def headers(self) -> list[Any]:
        return [(k, v if v is None or isinstance(v, bytes) else str(v).encode()) for k, v in self._r.headers or []]

    def timestamp(self) -> tuple[int, int]:
        ts = self._r.timestamp
        return (0, -1) if ts is None else (1, ts)
