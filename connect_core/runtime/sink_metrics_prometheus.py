"""Sink task metrics (Java Connect's ``sink-task-metrics`` group) as Prometheus families.

Java name -> series (labels: the registry owner's scope labels, then ``connector`` and ``task``):

=====================================  ===========================================================
sink-record-read-total / -rate         ``mm2_sink_record_read_total`` (``rate()`` for the rate)
sink-record-send-total / -rate         ``mm2_sink_record_send_total``
sink-record-active-count / -max / -avg ``mm2_sink_record_active_count``, ``..._max``, ``..._avg``
partition-count                        ``mm2_sink_partition_count``
offset-commit-seq-no                   ``mm2_sink_offset_commit_seq_no``
offset-commit-completion-total / -rate ``mm2_sink_offset_commit_completion_total``
offset-commit-skip-total / -rate       ``mm2_sink_offset_commit_skip_total``
put-batch-max-time-ms / -avg-time-ms   ``mm2_sink_put_batch_max_time_seconds``, ``..._avg_time_seconds``
=====================================  ===========================================================

Max and avg keep Java's meaning (the values of the last two 30 s windows, NaN when there are none),
computed when Prometheus scrapes. The families are created once per registry; each task binds its
label children once, so a batch costs a few counter increments.
"""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge

from connect_core.model import ConnectorTaskId
from connect_core.runtime.sink_metrics import WindowedStat


class SinkMetricFamilies:
    """The sink families on one registry; ``scope`` names the labels that come before connector/task."""

    def __init__(self, registry: CollectorRegistry, scope: Sequence[str] = ()) -> None:
        labels = (*scope, "connector", "task")
        r = registry
        self.read = Counter(
            "mm2_sink_record_read",
            "Records read from Kafka by the sink task, before conversion "
            "and transformations (Connect sink-record-read).",
            labels,
            registry=r,
        )
        self.send = Counter(
            "mm2_sink_record_send",
            "Records put to the sink task after transformations (Connect sink-record-send).",
            labels,
            registry=r,
        )
        self.active = Gauge(
            "mm2_sink_record_active_count",
            "Records read but not yet committed, over the task's partitions (Connect sink-record-active-count).",
            labels,
            registry=r,
        )
        self.active_max = Gauge(
            "mm2_sink_record_active_count_max",
            "Largest active record count in the last minute (Connect sink-record-active-count-max).",
            labels,
            registry=r,
        )
        self.active_avg = Gauge(
            "mm2_sink_record_active_count_avg",
            "Average active record count in the last minute (Connect sink-record-active-count-avg).",
            labels,
            registry=r,
        )
        self.partitions = Gauge(
            "mm2_sink_partition_count",
            "Topic partitions assigned to the sink task (Connect partition-count).",
            labels,
            registry=r,
        )
        self.seq_no = Gauge(
            "mm2_sink_offset_commit_seq_no",
            "Sequence number of the task's latest offset commit (Connect offset-commit-seq-no).",
            labels,
            registry=r,
        )
        self.completions = Counter(
            "mm2_sink_offset_commit_completion",
            "Offset commits completed successfully (Connect offset-commit-completion).",
            labels,
            registry=r,
        )
        self.skips = Counter(
            "mm2_sink_offset_commit_skip",
            "Offset commit completions received after a newer "
            "commit had started, ignored (Connect offset-commit-skip).",
            labels,
            registry=r,
        )
        self.put_max = Gauge(
            "mm2_sink_put_batch_max_time_seconds",
            "Longest put of a batch in the last minute (Connect put-batch-max-time-ms).",
            labels,
            registry=r,
        )
        self.put_avg = Gauge(
            "mm2_sink_put_batch_avg_time_seconds",
            "Average time to put a batch in the last minute (Connect put-batch-avg-time-ms).",
            labels,
            registry=r,
        )
        self._all = (
            self.read,
            self.send,
            self.active,
            self.active_max,
            self.active_avg,
            self.partitions,
            self.seq_no,
            self.completions,
            self.skips,
            self.put_max,
            self.put_avg,
        )
        #: The latest instance bound per label set: an old instance closing late leaves its successor alone.
        self.current: dict[tuple[str, ...], PrometheusSinkTaskMetrics] = {}

    def for_task(self, scope: Sequence[str], task: ConnectorTaskId) -> PrometheusSinkTaskMetrics:
        """The hooks of one task instance; a restarted task continues the same counters."""
        return PrometheusSinkTaskMetrics(self, (*scope, task.connector, str(task.task)))

    def remove(self, scope: Sequence[str], task: ConnectorTaskId) -> None:
        """Drop every series of ``task`` (it was deleted)."""
        labels = (*scope, task.connector, str(task.task))
        self.current.pop(labels, None)
        for family in self._all:
            try:
                family.remove(*labels)
            except KeyError:
                pass


class PrometheusSinkTaskMetrics:
    """:class:`~connect_core.runtime.sink_metrics.SinkTaskMetrics` on bound Prometheus children."""

    def __init__(self, families: SinkMetricFamilies, labels: tuple[str, ...]) -> None:
        f = families
        self._families = families
        self._labels = labels
        f.current[labels] = self
        self._read = f.read.labels(*labels)
        self._send = f.send.labels(*labels)
        self._active = f.active.labels(*labels)
        self._partitions = f.partitions.labels(*labels)
        self._seq_no = f.seq_no.labels(*labels)
        self._completions = f.completions.labels(*labels)
        self._skips = f.skips.labels(*labels)
        self._active_stat = WindowedStat()
        self._put_stat = WindowedStat()
        f.active_max.labels(*labels).set_function(self._active_stat.max)
        f.active_avg.labels(*labels).set_function(self._active_stat.avg)
        f.put_max.labels(*labels).set_function(self._put_stat.max)
        f.put_avg.labels(*labels).set_function(self._put_stat.avg)

    def records_read(self, count: int) -> None:
        self._read.inc(count)

    def batch_put(self, count: int, duration_s: float) -> None:
        self._send.inc(count)
        self._put_stat.record(max(duration_s, 0.0))

    def partition_count(self, count: int) -> None:
        self._partitions.set(count)

    def commit_seq_no(self, seq_no: int) -> None:
        self._seq_no.set(seq_no)

    def commit_completed(self) -> None:
        self._completions.inc()

    def commit_skipped(self) -> None:
        self._skips.inc()

    def active_records(self, count: int) -> None:
        self._active.set(count)
        self._active_stat.record(count)

    def close(self) -> None:
        if self._families.current.get(self._labels) is not self:
            return
        self._partitions.set(0)
        self._active.set(0)


__all__ = ["PrometheusSinkTaskMetrics", "SinkMetricFamilies"]
