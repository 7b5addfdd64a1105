"""Every Prometheus metric mm2 exports, declared once with its help text.

Meanings follow Kafka's MirrorSourceMetrics / MirrorCheckpointMetrics (record-count, byte-count,
record-age-ms, replication-latency-ms, checkpoint-latency-ms) with Prometheus naming: snake_case,
base units (seconds, bytes), ``_total`` counters, histograms for latencies. Beyond Java MM2: lag in
records and seconds, offset syncs, connector/task state, failures, restarts, client errors,
rebalances and offset commits; the sink-task metrics of Connect sink connectors
(:mod:`connect_core.runtime.sink_metrics_prometheus`) on the same registry.

Every metric carries ``source`` and ``target`` (cluster aliases; empty for a plain Connect worker).
Cost rule: the hot path never touches these per record; callers aggregate per batch and call the
bound ``*Metrics`` helpers once per batch and partition.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from connect_core.runtime.sink_metrics_prometheus import SinkMetricFamilies

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0, float("inf"))
DURATION_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, float("inf"))

PAIR = ("source", "target")
PARTITION = (*PAIR, "topic", "partition")
GROUP_PARTITION = (*PAIR, "group", "topic", "partition")
TASK = (*PAIR, "connector", "task")
STATES = ("UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING")


class Mm2Metrics:
    """The metric families, bound to one registry (a fresh one per test, the default in production)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        r = self.registry
        # --- MirrorSource (per remote topic-partition, as Kafka's MirrorSourceMetrics) ---------------
        self.source_records = Counter(
            "mm2_source_records",
            "Records replicated and acknowledged by the target (Kafka record-count).",
            PARTITION,
            registry=r,
        )
        self.source_bytes = Counter(
            "mm2_source_bytes",
            "Bytes replicated: on the record path value bytes (Kafka byte-count: keys and headers excluded), on "
            "the batch path the bytes of the source's record batches as stored (compressed, headers included).",
            PARTITION,
            registry=r,
        )
        self.source_record_age = Histogram(
            "mm2_source_record_age_seconds",
            "Age of polled records at poll time: now minus the source record timestamp (Kafka record-age-ms); "
            "observed once per partition and batch with the batch's oldest record.",
            PARTITION,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.source_replication_latency = Histogram(
            "mm2_source_replication_latency_seconds",
            "Time from the source record timestamp to the target's acknowledgement (Kafka replication-latency-ms); "
            "observed once per partition and acknowledged batch with the batch's largest latency.",
            PARTITION,
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.replication_lag_records = Gauge(
            "mm2_replication_lag_records",
            "Records of the source partition not on the target yet: its end offset (high watermark of the last "
            "fetch) minus the replication consumer's position, plus the records read and not yet acknowledged by "
            "the target; updated after each polled batch and each acknowledgement.",
            PARTITION,
            registry=r,
        )
        self.throughput_limit = Gauge(
            "mm2_throughput_limit_bytes_per_second",
            "The flow's throughput cap on this node (throughput.limit.bytes.per.second; record keys and values "
            "fetched from the source); 0: no cap.",
            PAIR,
            registry=r,
        )
        self.throughput_rate = Gauge(
            "mm2_throughput_rate_bytes_per_second",
            "Bytes of record keys and values the flow's tasks on this node fetched per second, over the last 10 s "
            "(updated with each fetch).",
            PAIR,
            registry=r,
        )
        self.replication_lag_seconds = Gauge(
            "mm2_replication_lag_seconds",
            "How far behind the target is in time: zero when caught up, else now minus the timestamp of the "
            "last replicated record.",
            PARTITION,
            registry=r,
        )
        self.offset_syncs = Counter(
            "mm2_offset_syncs", "Offset syncs (upstream -> downstream offset pairs) emitted.", PARTITION, registry=r
        )
        self.source_changes = Counter(
            "mm2_source_changes",
            "Changes of the source under the mirror, per remote partition and reason (topic-recreated: a mirrored "
            "source topic was deleted and recreated; records-lost: records deleted on the source before they were "
            "mirrored); the count is the events, each also logged once at ERROR.",
            (*PARTITION, "reason"),
            registry=r,
        )
        self.source_records_lost = Counter(
            "mm2_source_records_lost",
            "Source offsets deleted (retention, deleted records) before they were mirrored: never on the target.",
            PARTITION,
            registry=r,
        )
        # --- MirrorCheckpoint -------------------------------------------------------------------------
        self.checkpoint_latency = Gauge(
            "mm2_checkpoint_latency_seconds",
            "Time from listing the group's upstream offsets to the checkpoint's acknowledgement "
            "(Kafka checkpoint-latency-ms), last value.",
            GROUP_PARTITION,
            registry=r,
        )
        self.checkpoints = Counter(
            "mm2_checkpoints", "Checkpoints emitted to <source>.checkpoints.internal.", (*PAIR, "group"), registry=r
        )
        self.last_checkpoint = Gauge(
            "mm2_checkpoint_last_timestamp_seconds",
            "Unix time the group's checkpoints on the target were last known current: its last checkpoint "
            "acknowledged by the target, or the last check that found nothing newer to emit (from its first "
            "checkpoint on).",
            (*PAIR, "group"),
            registry=r,
        )
        self.checkpoint_interval = Gauge(
            "mm2_checkpoint_interval_seconds",
            "How often the flow's checkpoint task checks the groups (emit.checkpoints.interval.seconds).",
            PAIR,
            registry=r,
        )
        self.group_offset_syncs = Counter(
            "mm2_group_offset_syncs",
            "Translated offsets written to target consumer groups (sync.group.offsets.enabled).",
            (*PAIR, "group"),
            registry=r,
        )
        # --- MirrorHeartbeat --------------------------------------------------------------------------
        self.heartbeats = Counter("mm2_heartbeats", "Heartbeats emitted to the target.", PAIR, registry=r)
        self.last_heartbeat = Gauge(
            "mm2_heartbeat_last_timestamp_seconds", "Unix time of the last heartbeat emitted.", PAIR, registry=r
        )
        # --- Connect runtime --------------------------------------------------------------------------
        self.connector_state = Gauge(
            "mm2_connector_state",
            "1 for the connector's current state, 0 for the others.",
            (*PAIR, "connector", "state"),
            registry=r,
        )
        self.task_state = Gauge(
            "mm2_task_state", "1 for the task's current state, 0 for the others.", (*TASK, "state"), registry=r
        )
        self.task_failures = Counter("mm2_task_failures", "Tasks that failed.", TASK, registry=r)
        self.task_restarts = Counter("mm2_task_restarts", "Task restarts requested.", TASK, registry=r)
        self.client_errors = Counter(
            "mm2_client_errors",
            "Errors reported by Kafka clients (produce failures, fetch errors...), by client (producer, consumer, "
            "admin) and error category (transport, timeout, authorization, unknown_topic, not_leader, fatal, other).",
            (*PAIR, "client", "error"),
            registry=r,
        )
        self.rebalances = Counter("mm2_rebalances", "Completed group rebalances of the herder.", PAIR, registry=r)
        self.rebalance_duration = Histogram(
            "mm2_rebalance_duration_seconds",
            "Time from revocation to the new assignment.",
            PAIR,
            buckets=DURATION_BUCKETS,
            registry=r,
        )
        self.offset_commits = Counter(
            "mm2_offset_commits", "Source offset flushes, by result (success/failure).", (*TASK, "result"), registry=r
        )
        self.offset_commit_duration = Histogram(
            "mm2_offset_commit_duration_seconds",
            "Time to flush source offsets.",
            TASK,
            buckets=DURATION_BUCKETS,
            registry=r,
        )
        # --- Scheduled verification (verify.interval.seconds) -------------------------------------------
        self.verify_runs = Counter(
            "mm2_verify_runs",
            "Scheduled verifications, by result: equal, different, nothing_compared (no record compared yet), or "
            "failed (a cluster could not be read).",
            (*PAIR, "result"),
            registry=r,
        )
        self.verify_records_compared = Counter(
            "mm2_verify_records_compared",
            "Source records compared with their copies on the target by scheduled verifications.",
            PAIR,
            registry=r,
        )
        self.verify_differences = Gauge(
            "mm2_verify_differences",
            "Differences found by the last completed verification, by kind: missing (on the source, not on the "
            "target), extra (on the target, not from the source, duplicates included), mismatched (content differs).",
            (*PAIR, "kind"),
            registry=r,
        )
        self.verify_pending_records = Gauge(
            "mm2_verify_pending_records",
            "Source records not yet replicated (after the flow's committed offsets) at the last completed "
            "verification: not differences.",
            PAIR,
            registry=r,
        )
        self.verify_last_run = Gauge(
            "mm2_verify_last_run_timestamp_seconds",
            "Unix time the last verification ended (any result).",
            PAIR,
            registry=r,
        )
        self.verify_last_success = Gauge(
            "mm2_verify_last_success_timestamp_seconds",
            "Unix time the last verification completed (equal or different; not failed).",
            PAIR,
            registry=r,
        )
        self.verify_interval = Gauge(
            "mm2_verify_interval_seconds",
            "The flow's verify.interval.seconds: how often a verification should complete.",
            PAIR,
            registry=r,
        )
        self.verify_schedule_start = Gauge(
            "mm2_verify_schedule_start_timestamp_seconds",
            "Unix time the flow's verification schedule started "
            "(the staleness alert counts from here until a first verification completes).",
            PAIR,
            registry=r,
        )
        self.verify_duration = Gauge(
            "mm2_verify_duration_seconds",
            "How long the last completed verification took.",
            PAIR,
            registry=r,
        )
        # --- Connect sink tasks (Java's sink-task-metrics; families owned by the runtime) -------------
        self.sink = SinkMetricFamilies(r, PAIR)
        self._lock = threading.Lock()
        self._partitions: dict[tuple[str, str, str, int], SourcePartitionMetrics] = {}

    def source_partition(self, source: str, target: str, topic: str, partition: int) -> SourcePartitionMetrics:
        """Bound children for one remote topic-partition, cached so the hot path does no label lookups."""
        key = (source, target, topic, partition)
        bound = self._partitions.get(key)
        if bound is None:
            with self._lock:
                bound = self._partitions.get(key)
                if bound is None:
                    labels = (source, target, topic, str(partition))
                    bound = SourcePartitionMetrics(
                        records=self.source_records.labels(*labels),
                        bytes=self.source_bytes.labels(*labels),
                        record_age=self.source_record_age.labels(*labels),
                        replication_latency=self.source_replication_latency.labels(*labels),
                        lag_records=self.replication_lag_records.labels(*labels),
                        lag_seconds=self.replication_lag_seconds.labels(*labels),
                        offset_syncs=self.offset_syncs.labels(*labels),
                    )
                    self._partitions[key] = bound
        return bound

    def exported_names(self) -> set[str]:
        """Every sample name this exporter can emit (what dashboards and rules may reference)."""
        names: set[str] = set()
        for family in self.registry.collect():
            if family.type == "counter":
                names.update({family.name + "_total", family.name + "_created"})
            elif family.type == "histogram":
                names.update({family.name + s for s in ("_bucket", "_sum", "_count", "_created")})
            else:
                names.add(family.name)
        return names


@dataclass
class SourcePartitionMetrics:
    """Label-bound children for one remote partition; methods are called once per batch."""

    records: Counter
    bytes: Counter
    record_age: Histogram
    replication_latency: Histogram
    lag_records: Gauge
    lag_seconds: Gauge
    offset_syncs: Counter

    def polled(self, value_bytes: int, oldest_age_s: float) -> None:
        self.bytes.inc(value_bytes)
        self.record_age.observe(max(oldest_age_s, 0.0))

    def acknowledged(self, count: int, max_latency_s: float) -> None:
        self.records.inc(count)
        self.replication_latency.observe(max(max_latency_s, 0.0))

    def lag(self, records: int, seconds: float) -> None:
        self.lag_records.set(max(records, 0))
        self.lag_seconds.set(max(seconds, 0.0) if records > 0 else 0.0)
