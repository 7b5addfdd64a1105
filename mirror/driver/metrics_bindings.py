"""Adapters that turn the runtime's and the mirror tasks' measurement hooks into Prometheus samples.

The runtime (worker, herders) and the three mirror tasks only know small hook protocols (a state
change, a batch of records acknowledged, an offset flush...). This module implements those hooks
on top of :class:`mirror.driver.metrics.Mm2Metrics`, bound to one flow ``source->target``, so the
runtime never imports Prometheus and one registry serves every flow of an ``mm2 run`` process.

Series a dashboard or alert expects to read as zero (failures, restarts, failed offset flushes,
client errors by category, rebalances) are created when their task, connector or flow appears:
``rate()`` of a series that does not exist is "no data", not 0, and an operator cannot tell that
from a broken exporter.

Costs: every method here is called at most once per batch, partition, flush or state change,
never per record; label lookups are cached.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

from prometheus_client import Counter, Gauge, Histogram

from connect_core.model import ConnectorTaskId, State
from connect_core.runtime.sink_metrics_prometheus import PrometheusSinkTaskMetrics
from mirror.connectors.source_gaps import REASON_RECORDS_LOST
from mirror.connectors.source_incarnation import REASON_RECREATED
from mirror.connectors.source_metrics import SourceMetricsBase
from mirror.driver.metrics import STATES, Mm2Metrics, SourcePartitionMetrics

Clock = Callable[[], float]

#: Kafka client kinds reported in ``mm2_client_errors_total{client=...}``.
CLIENTS = ("producer", "consumer", "admin")
#: Bounded categories of the ``error`` label (a raw Kafka error name would be unbounded in practice
#: and could not be pre-created at zero).
ERROR_CATEGORIES = ("transport", "timeout", "authorization", "unknown_topic", "not_leader", "fatal", "other")

_TRANSPORT = frozenset(
    {
        "_TRANSPORT",
        "_ALL_BROKERS_DOWN",
        "_RESOLVE",
        "_DESTROY",
        "_FAIL",
        "_SSL",
        "NETWORK_EXCEPTION",
        "BROKER_NOT_AVAILABLE",
        "_NODE_UPDATE",
    }
)
_TIMEOUT = frozenset({"_TIMED_OUT", "_MSG_TIMED_OUT", "REQUEST_TIMED_OUT", "_TIMED_OUT_QUEUE"})
_UNKNOWN_TOPIC = frozenset({"_UNKNOWN_TOPIC", "_UNKNOWN_PARTITION", "UNKNOWN_TOPIC_OR_PART", "UNKNOWN_TOPIC_ID"})
_NOT_LEADER = frozenset(
    {
        "NOT_LEADER_FOR_PARTITION",
        "NOT_LEADER_OR_FOLLOWER",
        "LEADER_NOT_AVAILABLE",
        "NOT_COORDINATOR",
        "COORDINATOR_NOT_AVAILABLE",
        "COORDINATOR_LOAD_IN_PROGRESS",
        "NOT_CONTROLLER",
        "FENCED_LEADER_EPOCH",
    }
)


#: States after which this worker no longer runs the connector/task: its state series go away.
_GONE = frozenset({"UNASSIGNED", "DESTROYED"})


def _state_name(state: State | str) -> str:
    return (state.value if isinstance(state, State) else str(state)).upper()


def classify_client_error(name: str, fatal: bool = False) -> str:
    """Map a Kafka/librdkafka error name (``KafkaError.name()``) to one of :data:`ERROR_CATEGORIES`."""
    if fatal:
        return "fatal"
    upper = name.upper()
    if upper in _TRANSPORT:
        return "transport"
    if upper in _TIMEOUT:
        return "timeout"
    if "AUTHORIZATION" in upper or "AUTHENTICATION" in upper or "SASL" in upper:
        return "authorization"
    if upper in _UNKNOWN_TOPIC:
        return "unknown_topic"
    if upper in _NOT_LEADER:
        return "not_leader"
    return "other"


def lag_seconds(records: int, last_timestamp_ms: int | None, now_s: float) -> float:
    """How far behind in time: 0 when caught up, else now minus the newest replicated record's timestamp."""
    if records <= 0 or last_timestamp_ms is None or last_timestamp_ms < 0:
        return 0.0
    return max(now_s - last_timestamp_ms / 1000.0, 0.0)


class _StateSet:
    """One state-set gauge per entity: a first state creates all its series, removal drops them."""

    def __init__(self, gauge: Gauge, prefix: tuple[str, ...]) -> None:
        self._gauge = gauge
        self._prefix = prefix
        self._children: dict[tuple[str, ...], dict[str, Any]] = {}

    def set(self, labels: tuple[str, ...], state: str) -> None:
        children = self._children.get(labels)
        if children is None:
            children = self._children[labels] = {s: self._gauge.labels(*self._prefix, *labels, s) for s in STATES}
        if state not in children:  # a state Mm2Metrics does not list still gets its series
            children[state] = self._gauge.labels(*self._prefix, *labels, state)
        for s, child in children.items():
            child.set(1.0 if s == state else 0.0)

    def remove(self, labels: tuple[str, ...]) -> None:
        for s in self._children.pop(labels, None) or ():
            try:
                self._gauge.remove(*self._prefix, *labels, s)
            except KeyError:
                pass


class RuntimeMetrics:
    """Connect runtime hooks of one flow (one herder and its worker): states, failures, flushes, rebalances.

    A plain Connect worker uses empty ``source``/``target``.
    """

    def __init__(self, metrics: Mm2Metrics, source: str = "", target: str = "") -> None:
        self.metrics = metrics
        self.source = source
        self.target = target
        self._pair = (source, target)
        self._connectors = _StateSet(metrics.connector_state, self._pair)
        self._tasks = _StateSet(metrics.task_state, self._pair)
        self._task_children: dict[tuple[str, str], tuple[Counter, Counter, Counter, Counter, Histogram]] = {}
        self._client_errors: dict[tuple[str, str], Counter] = {}
        for client in CLIENTS:
            for category in ERROR_CATEGORIES:
                self._client_errors[(client, category)] = metrics.client_errors.labels(*self._pair, client, category)
        self._rebalances = metrics.rebalances.labels(*self._pair)
        self._rebalance_duration = metrics.rebalance_duration.labels(*self._pair)
        self._rebalance_started: float | None = None
        self._lock = threading.Lock()  # state changes arrive from the herder's and the tasks' threads

    # -- connectors and tasks (connect_core.runtime.status.StateMetrics) --------------------------

    def connector_state(self, connector: str, state: State | str) -> None:
        """The connector moved to ``state`` on this worker.

        UNASSIGNED (stopped here, e.g. moved to another worker) and DESTROYED (deleted) drop the
        series, so summing the state sets of every mm2 process counts each connector once.
        """
        name = _state_name(state)
        with self._lock:
            if name not in _GONE:
                self._connectors.set((connector,), name)
                return
            self._connectors.remove((connector,))
            if name == "DESTROYED":
                for key in [k for k in self._task_children if k[0] == connector]:
                    self._drop_task(key, counters=True)

    def task_state(self, task: ConnectorTaskId, state: State | str) -> None:
        """The task moved to ``state`` on this worker; entering RESTARTING counts a restart."""
        name = _state_name(state)
        key = (task.connector, str(task.task))
        with self._lock:
            if name in _GONE:
                self._drop_task(key, counters=name == "DESTROYED")
                return
            children = self._task(key)
            self._tasks.set(key, name)
        if name == "RESTARTING":
            children[1].inc()

    def task_seen(self, task: ConnectorTaskId) -> None:
        """Create the task's failure, restart and flush series at zero (the worker created it)."""
        with self._lock:
            self._task((task.connector, str(task.task)))

    def for_task(self, task: ConnectorTaskId) -> WorkerTaskMetrics:
        """The worker's per-task hook for ``task``."""
        return WorkerTaskMetrics(self, task)

    def for_sink_task(self, task: ConnectorTaskId) -> PrometheusSinkTaskMetrics:
        """The sink-task metrics of ``task`` (a sink connector's task), on this flow's registry."""
        return self.metrics.sink.for_task(self._pair, task)

    def task_failed(self, task: ConnectorTaskId) -> None:
        """The task failed (its state also moves to FAILED through :meth:`task_state`)."""
        with self._lock:
            children = self._task((task.connector, str(task.task)))
        children[0].inc()

    def _task(self, key: tuple[str, str]) -> tuple[Counter, Counter, Counter, Counter, Histogram]:
        """Failure/restart/flush children of a task, created at zero the first time it is seen."""
        children = self._task_children.get(key)
        if children is None:
            m, labels = self.metrics, (*self._pair, *key)
            children = self._task_children[key] = (
                m.task_failures.labels(*labels),
                m.task_restarts.labels(*labels),
                m.offset_commits.labels(*labels, "success"),
                m.offset_commits.labels(*labels, "failure"),
                m.offset_commit_duration.labels(*labels),
            )
        return children

    def _drop_task(self, key: tuple[str, str], counters: bool) -> None:
        self._tasks.remove(key)
        if not counters or self._task_children.pop(key, None) is None:
            return
        labels = (*self._pair, *key)
        m = self.metrics
        m.sink.remove(self._pair, ConnectorTaskId(key[0], int(key[1])))
        for family, extra in (
            (m.task_failures, ()),
            (m.task_restarts, ()),
            (m.offset_commit_duration, ()),
            (m.offset_commits, ("success",)),
            (m.offset_commits, ("failure",)),
        ):
            try:
                family.remove(*labels, *extra)
            except KeyError:
                pass

    def offset_commit(self, task: ConnectorTaskId, success: bool, duration_s: float) -> None:
        """One source-offset flush of the task finished (or failed) after ``duration_s``."""
        with self._lock:
            _f, _r, ok, failed, duration = self._task((task.connector, str(task.task)))
        (ok if success else failed).inc()
        duration.observe(max(duration_s, 0.0))

    # -- clients and the group -------------------------------------------------------------------

    def client_error(self, client: str, error: str, fatal: bool = False, count: int = 1) -> None:
        """A Kafka client of this flow reported ``error`` (a Kafka error name, e.g. ``_TRANSPORT``)."""
        category = classify_client_error(error, fatal)
        counter = self._client_errors.get((client, category))
        if counter is None:
            with self._lock:
                counter = self._client_errors.get((client, category))
                if counter is None:
                    counter = self._client_errors[(client, category)] = self.metrics.client_errors.labels(
                        *self._pair, client, category
                    )
        counter.inc(count)

    def rebalance_started(self, now: float | None = None) -> None:
        """Assignment revoked / join started; the duration runs until :meth:`rebalance_completed`."""
        if self._rebalance_started is None:
            self._rebalance_started = time.monotonic() if now is None else now

    def rebalance_completed(self, duration_s: float | None = None, now: float | None = None) -> None:
        """A new assignment arrived; ``duration_s`` if the herder measured it, else since the start call."""
        if duration_s is None:
            started = self._rebalance_started
            end = time.monotonic() if now is None else now
            duration_s = 0.0 if started is None else end - started
        self._rebalance_started = None
        self._rebalances.inc()
        self._rebalance_duration.observe(max(duration_s, 0.0))


class WorkerTaskMetrics:
    """``connect_core.runtime.worker_source_task.TaskMetrics`` of one task, on its flow's RuntimeMetrics.

    Offset flushes feed ``mm2_offset_commits_total``/``_duration_seconds``; failed deliveries count as
    producer client errors (category ``other``: the delivery report's error name is not passed on), and
    so do the producer's client-level errors (a target that cannot be reached, by category): with
    Connect's unbounded ``delivery.timeout.ms`` no delivery ever fails while the target is down.
    """

    def __init__(self, runtime: RuntimeMetrics, task: ConnectorTaskId) -> None:
        self._runtime = runtime
        self._task = task
        runtime.task_seen(task)

    def record_batch(self, polled: int, value_bytes: int, elapsed_s: float) -> None:
        return None

    def record_acks(self, acked: int, failed: int) -> None:
        if failed > 0:
            self._runtime.client_error("producer", "", count=failed)

    def record_skipped(self, count: int) -> None:
        return None

    def record_commit(self, success: bool, duration_s: float) -> None:
        self._runtime.offset_commit(self._task, success, duration_s)

    def record_client_error(self, error: str, fatal: bool) -> None:
        self._runtime.client_error("producer", error, fatal)


class SourceTaskMetrics(SourceMetricsBase):
    """``mirror.connectors.source_task.SourceMetrics`` of one MirrorSourceTask; times arrive in milliseconds.

    ``topic`` is the remote (target) topic, as Kafka's MirrorSourceMetrics tags it.
    """

    def __init__(self, metrics: Mm2Metrics, source: str, target: str, clock: Clock = time.time) -> None:
        self.metrics = metrics
        self.source = source
        self.target = target
        self._clock = clock
        self._bound: dict[tuple[str, int], SourcePartitionMetrics] = {}

    def _partition(self, topic: str, partition: int) -> SourcePartitionMetrics:
        key = (topic, partition)
        bound = self._bound.get(key)
        if bound is None:
            bound = self._bound[key] = self.metrics.source_partition(self.source, self.target, topic, partition)
        return bound

    def assigned(self, partitions: Iterable[tuple[str, int]]) -> None:
        """Create the series of the task's remote partitions at start, so idle ones show 0, not nothing."""
        for topic, partition in partitions:
            self._partition(topic, partition)
            # at 0 from the start: a panel shows 0 rather than "no data", and the first event is a change
            for reason in (REASON_RECREATED, REASON_RECORDS_LOST):
                self.metrics.source_changes.labels(self.source, self.target, topic, str(partition), reason)
            self.metrics.source_records_lost.labels(self.source, self.target, topic, str(partition))

    def polled(self, topic: str, partition: int, records: int, value_bytes: int, max_age_ms: float) -> None:
        self._partition(topic, partition).polled(value_bytes, max_age_ms / 1000.0)

    def acknowledged(self, topic: str, partition: int, records: int, max_latency_ms: float) -> None:
        self._partition(topic, partition).acknowledged(records, max_latency_ms / 1000.0)

    def lag(self, topic: str, partition: int, records: int, last_timestamp_ms: int | None) -> None:
        """After a batch: ``records`` = source high watermark minus the consumer position, and the
        timestamp of the newest record replicated so far (None if unknown)."""
        self._partition(topic, partition).lag(records, lag_seconds(records, last_timestamp_ms, self._clock()))

    def offset_syncs_sent(self, topic: str, partition: int, count: int = 1) -> None:
        self._partition(topic, partition).offset_syncs.inc(count)

    def throughput(self, limit: float | None, rate: float) -> None:
        self.metrics.throughput_limit.labels(self.source, self.target).set(limit or 0.0)
        self.metrics.throughput_rate.labels(self.source, self.target).set(rate)

    def source_changed(self, topic: str, partition: int, reason: str, count: int = 1) -> None:
        """The source changed under the mirror (``reason``: see ``mm2_source_changes``); once per event."""
        self.metrics.source_changes.labels(self.source, self.target, topic, str(partition), reason).inc(count)

    def records_lost(self, topic: str, partition: int, count: int) -> None:
        """``count`` source offsets were deleted before they were mirrored."""
        self.metrics.source_records_lost.labels(self.source, self.target, topic, str(partition)).inc(count)


class CheckpointTaskMetrics:
    """``mirror.connectors.checkpoint_task.CheckpointMetrics`` of one MirrorCheckpointTask.

    Unlike Kafka's MirrorCheckpointMetrics (whose shared sensor makes every group report the same
    stream), each group/partition gets its own latency.
    """

    def __init__(self, metrics: Mm2Metrics, source: str, target: str, clock: Clock = time.time) -> None:
        self.metrics = metrics
        self.source = source
        self.target = target
        self._clock = clock
        self._groups: dict[str, tuple[Counter, Gauge]] = {}
        self._group_syncs: dict[str, Counter] = {}
        self._latency: dict[tuple[str, str, int], Gauge] = {}

    def _group(self, group: str) -> tuple[Counter, Gauge]:
        """The checkpoint series of a group, made at its first checkpoint: a last-checkpoint gauge that
        existed at 0 before it would read as "stale since 1970" to the alert rule."""
        children = self._groups.get(group)
        if children is None:
            labels = (self.source, self.target, group)
            children = self._groups[group] = (
                self.metrics.checkpoints.labels(*labels),
                self.metrics.last_checkpoint.labels(*labels),
            )
            self._group_sync_counter(group)  # exists at 0 from the group's first checkpoint
        return children

    def _group_sync_counter(self, group: str) -> Counter:
        counter = self._group_syncs.get(group)
        if counter is None:
            counter = self._group_syncs[group] = self.metrics.group_offset_syncs.labels(self.source, self.target, group)
        return counter

    def checkpoint_acknowledged(self, group: str, topic: str, partition: int, latency_ms: float) -> None:
        key = (group, topic, partition)
        gauge = self._latency.get(key)
        if gauge is None:
            gauge = self._latency[key] = self.metrics.checkpoint_latency.labels(
                self.source, self.target, group, topic, str(partition)
            )
        gauge.set(max(latency_ms, 0.0) / 1000.0)
        checkpoints, last = self._group(group)
        checkpoints.inc()
        last.set(self._clock())

    def checkpoints_scheduled(self, interval_s: float) -> None:
        self.metrics.checkpoint_interval.labels(self.source, self.target).set(interval_s)

    def group_current(self, group: str) -> None:
        """Nothing newer to checkpoint: the group's checkpoints are current (once it has had one)."""
        children = self._groups.get(group)
        if children is not None:
            children[1].set(self._clock())

    def group_offsets_synced(self, group: str, partitions: int = 1) -> None:
        """Translated offsets were written to the target group (one alter call, any partitions)."""
        self._group_sync_counter(group).inc()


class HeartbeatTaskMetrics:
    """Heartbeat hook of one MirrorHeartbeatTask: called when the target acknowledged a heartbeat."""

    def __init__(self, metrics: Mm2Metrics, source: str, target: str) -> None:
        labels = (source, target)
        self._count = metrics.heartbeats.labels(*labels)
        self._last = metrics.last_heartbeat.labels(*labels)

    def heartbeat_acknowledged(self, timestamp_ms: int) -> None:
        self._count.inc()
        self._last.set(timestamp_ms / 1000.0)


class FlowMetrics(RuntimeMetrics):
    """Every hook of one flow ``source->target`` in one object, for its herder, worker and tasks.

    It is the runtime's :class:`RuntimeMetrics` (StateMetrics, ``for_task`` per-task hooks, client
    errors, rebalances) and, through :meth:`attach`, hands each mirror task its own sink.
    """

    def __init__(self, metrics: Mm2Metrics, source: str = "", target: str = "", clock: Clock = time.time) -> None:
        super().__init__(metrics, source, target)
        self.clock = clock

    def source_task(self) -> SourceTaskMetrics:
        return SourceTaskMetrics(self.metrics, self.source, self.target, self.clock)

    def checkpoint_task(self) -> CheckpointTaskMetrics:
        return CheckpointTaskMetrics(self.metrics, self.source, self.target, self.clock)

    def heartbeat_task(self) -> HeartbeatTaskMetrics:
        return HeartbeatTaskMetrics(self.metrics, self.source, self.target)

    def attach(self, task: object) -> None:
        """Give a freshly created mirror task its sink (before ``start``); other tasks are left alone.

        Dispatches on the class name so this module imports no task (and no Kafka client).
        """
        kinds = {cls.__name__ for cls in type(task).__mro__}
        sink: object
        if "MirrorSourceTask" in kinds:
            sink = self.source_task()
        elif "MirrorCheckpointTask" in kinds:
            sink = self.checkpoint_task()
        elif "MirrorHeartbeatTask" in kinds:
            sink = self.heartbeat_task()
        else:
            return
        if hasattr(task, "metrics"):
            setattr(task, "metrics", sink)  # noqa: B010 - the attribute is typed on the task class only


__all__ = [
    "CLIENTS",
    "ERROR_CATEGORIES",
    "CheckpointTaskMetrics",
    "FlowMetrics",
    "HeartbeatTaskMetrics",
    "RuntimeMetrics",
    "SourceTaskMetrics",
    "WorkerTaskMetrics",
    "classify_client_error",
    "lag_seconds",
]
