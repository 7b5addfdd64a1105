"""The hook adapters write the samples the dashboard and alert rules read (fresh registry per test)."""

from __future__ import annotations

import time

import pytest
from prometheus_client import CollectorRegistry

from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.model import ConnectorTaskId as TaskId
from connect_core.model import State
from mirror.connectors.checkpoint_task import MirrorCheckpointTask
from mirror.connectors.heartbeat_task import MirrorHeartbeatTask
from mirror.connectors.source_task import MirrorSourceTask
from mirror.driver.metrics import STATES, Mm2Metrics
from mirror.driver.metrics_bindings import (
    CLIENTS,
    ERROR_CATEGORIES,
    CheckpointTaskMetrics,
    FlowMetrics,
    HeartbeatTaskMetrics,
    RuntimeMetrics,
    SourceTaskMetrics,
    classify_client_error,
    lag_seconds,
)

PAIR = {"source": "A", "target": "B"}


@pytest.fixture
def metrics() -> Mm2Metrics:
    return Mm2Metrics(CollectorRegistry())


def value(m: Mm2Metrics, name: str, **labels: str) -> float | None:
    return m.registry.get_sample_value(name, {**PAIR, **labels})


def series(m: Mm2Metrics, name: str) -> list[dict[str, str]]:
    return [s.labels for fam in m.registry.collect() for s in fam.samples if s.name == name]


# ------------------------------------------------------------------------- runtime


def test_state_set_has_exactly_one_current_state(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    rt.connector_state("MirrorSourceConnector", State.RUNNING)
    rt.task_state(TaskId("MirrorSourceConnector", 0), State.RESTARTING)
    rt.task_state(TaskId("MirrorSourceConnector", 0), State.RUNNING)
    for state in STATES:
        want = 1.0 if state == "RUNNING" else 0.0
        assert value(metrics, "mm2_connector_state", connector="MirrorSourceConnector", state=state) == want
        assert value(metrics, "mm2_task_state", connector="MirrorSourceConnector", task="0", state=state) == want
    rt.task_state(TaskId("MirrorSourceConnector", 0), "paused")
    assert value(metrics, "mm2_task_state", connector="MirrorSourceConnector", task="0", state="PAUSED") == 1.0
    assert value(metrics, "mm2_task_state", connector="MirrorSourceConnector", task="0", state="RUNNING") == 0.0


def test_failure_counters_exist_at_zero_once_a_task_appears(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    rt.task_state(TaskId("C", 1), State.RUNNING)
    labels = {"connector": "C", "task": "1"}
    assert value(metrics, "mm2_task_failures_total", **labels) == 0.0
    assert value(metrics, "mm2_task_restarts_total", **labels) == 0.0
    assert value(metrics, "mm2_offset_commits_total", **labels, result="failure") == 0.0
    assert value(metrics, "mm2_offset_commits_total", **labels, result="success") == 0.0


def test_failure_and_restart_are_counted(metrics: Mm2Metrics) -> None:
    """As connect_core.runtime.status.StatusRecorder reports them: FAILED + task_failed, then RESTARTING."""
    rt = RuntimeMetrics(metrics, "A", "B")
    task = TaskId("C", 0)
    rt.task_state(task, State.RUNNING)
    rt.task_state(task, State.FAILED)
    rt.task_failed(task)
    assert value(metrics, "mm2_task_state", connector="C", task="0", state="FAILED") == 1.0
    rt.task_state(task, State.RESTARTING)
    rt.task_state(task, State.RUNNING)
    assert value(metrics, "mm2_task_failures_total", connector="C", task="0") == 1.0
    assert value(metrics, "mm2_task_restarts_total", connector="C", task="0") == 1.0
    assert value(metrics, "mm2_task_state", connector="C", task="0", state="FAILED") == 0.0


def test_unassigned_drops_the_state_series_and_keeps_the_counters(metrics: Mm2Metrics) -> None:
    """A task stopped here (moved to another worker) must not be counted by this process's state set."""
    rt = RuntimeMetrics(metrics, "A", "B")
    rt.connector_state("C", State.RUNNING)
    rt.task_state(TaskId("C", 0), State.RUNNING)
    rt.task_failed(TaskId("C", 0))
    rt.task_state(TaskId("C", 0), State.UNASSIGNED)
    rt.connector_state("C", State.UNASSIGNED)
    assert not series(metrics, "mm2_task_state")
    assert not series(metrics, "mm2_connector_state")
    assert value(metrics, "mm2_task_failures_total", connector="C", task="0") == 1.0


def test_destroyed_connector_takes_every_series_of_its_tasks(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    rt.connector_state("C", State.RUNNING)
    rt.task_state(TaskId("C", 0), State.RUNNING)
    rt.task_state(TaskId("C", 1), State.RUNNING)
    rt.task_state(TaskId("D", 0), State.RUNNING)
    rt.connector_state("C", State.DESTROYED)
    assert not [s for s in series(metrics, "mm2_task_state") if s["connector"] == "C"]
    assert not series(metrics, "mm2_connector_state")
    assert value(metrics, "mm2_task_failures_total", connector="C", task="0") is None
    assert value(metrics, "mm2_offset_commits_total", connector="C", task="1", result="success") is None
    assert value(metrics, "mm2_task_state", connector="D", task="0", state="RUNNING") == 1.0


def test_offset_commits_by_result_with_duration(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    task = TaskId("C", 0)
    rt.offset_commit(task, True, 0.02)
    rt.offset_commit(task, True, 0.03)
    rt.offset_commit(task, False, 5.0)
    assert value(metrics, "mm2_offset_commits_total", connector="C", task="0", result="success") == 2.0
    assert value(metrics, "mm2_offset_commits_total", connector="C", task="0", result="failure") == 1.0
    assert value(metrics, "mm2_offset_commit_duration_seconds_count", connector="C", task="0") == 3.0
    assert value(metrics, "mm2_offset_commit_duration_seconds_sum", connector="C", task="0") == pytest.approx(5.05)


def test_client_errors_are_categorised_and_exist_at_zero(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    for client in CLIENTS:
        for category in ERROR_CATEGORIES:
            assert value(metrics, "mm2_client_errors_total", client=client, error=category) == 0.0
    rt.client_error("producer", "_TRANSPORT")
    rt.client_error("producer", "_MSG_TIMED_OUT")
    rt.client_error("consumer", "TOPIC_AUTHORIZATION_FAILED")
    rt.client_error("admin", "WHATEVER", fatal=True)
    assert value(metrics, "mm2_client_errors_total", client="producer", error="transport") == 1.0
    assert value(metrics, "mm2_client_errors_total", client="producer", error="timeout") == 1.0
    assert value(metrics, "mm2_client_errors_total", client="consumer", error="authorization") == 1.0
    assert value(metrics, "mm2_client_errors_total", client="admin", error="fatal") == 1.0


@pytest.mark.parametrize(
    ("name", "category"),
    [
        ("_ALL_BROKERS_DOWN", "transport"),
        ("REQUEST_TIMED_OUT", "timeout"),
        ("SASL_AUTHENTICATION_FAILED", "authorization"),
        ("UNKNOWN_TOPIC_OR_PART", "unknown_topic"),
        ("NOT_LEADER_OR_FOLLOWER", "not_leader"),
        ("MSG_SIZE_TOO_LARGE", "other"),
    ],
)
def test_classify_client_error(name: str, category: str) -> None:
    assert classify_client_error(name) == category


def test_rebalance_count_and_duration(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    assert value(metrics, "mm2_rebalances_total") == 0.0
    rt.rebalance_started(now=100.0)
    rt.rebalance_started(now=101.0)  # a second revocation does not restart the clock
    rt.rebalance_completed(now=103.5)
    rt.rebalance_completed(duration_s=0.5)
    assert value(metrics, "mm2_rebalances_total") == 2.0
    assert value(metrics, "mm2_rebalance_duration_seconds_sum") == pytest.approx(4.0)


def test_plain_connect_worker_uses_empty_pair_labels(metrics: Mm2Metrics) -> None:
    RuntimeMetrics(metrics).task_state(TaskId("file-source", 0), State.RUNNING)
    labels = {"source": "", "target": "", "connector": "file-source", "task": "0", "state": "RUNNING"}
    assert metrics.registry.get_sample_value("mm2_task_state", labels) == 1.0


# ------------------------------------------------------------------------- MirrorSource


def test_source_batches_feed_records_bytes_age_and_latency(metrics: Mm2Metrics) -> None:
    sink = SourceTaskMetrics(metrics, "A", "B", clock=lambda: 1000.0)
    sink.polled("A.t", 0, 3, 300, 1500.0)
    sink.polled("A.t", 0, 2, 20, 200.0)
    sink.acknowledged("A.t", 0, 5, 2500.0)
    tp = {"topic": "A.t", "partition": "0"}
    assert value(metrics, "mm2_source_records_total", **tp) == 5.0
    assert value(metrics, "mm2_source_bytes_total", **tp) == 320.0
    assert value(metrics, "mm2_source_record_age_seconds_count", **tp) == 2.0
    assert value(metrics, "mm2_source_record_age_seconds_sum", **tp) == pytest.approx(1.7)
    assert value(metrics, "mm2_source_replication_latency_seconds_sum", **tp) == pytest.approx(2.5)
    assert value(metrics, "mm2_source_replication_latency_seconds_bucket", **tp, le="2.5") == 1.0
    assert value(metrics, "mm2_source_replication_latency_seconds_bucket", **tp, le="1.0") == 0.0


def test_lag_in_records_and_seconds(metrics: Mm2Metrics) -> None:
    sink = SourceTaskMetrics(metrics, "A", "B", clock=lambda: 1000.0)
    tp = {"topic": "A.t", "partition": "2"}
    sink.lag("A.t", 2, 40, 990_500)
    assert value(metrics, "mm2_replication_lag_records", **tp) == 40.0
    assert value(metrics, "mm2_replication_lag_seconds", **tp) == pytest.approx(9.5)
    sink.lag("A.t", 2, 0, 999_000)  # caught up: zero seconds whatever the last timestamp
    assert value(metrics, "mm2_replication_lag_records", **tp) == 0.0
    assert value(metrics, "mm2_replication_lag_seconds", **tp) == 0.0


def test_lag_seconds_rules() -> None:
    assert lag_seconds(0, 1_000, 50.0) == 0.0
    assert lag_seconds(5, None, 50.0) == 0.0
    assert lag_seconds(5, -1, 50.0) == 0.0
    assert lag_seconds(5, 60_000, 50.0) == 0.0  # a future timestamp never reads as negative lag
    assert lag_seconds(5, 40_000, 50.0) == pytest.approx(10.0)


def test_assigned_partitions_show_zero_before_any_record(metrics: Mm2Metrics) -> None:
    sink = SourceTaskMetrics(metrics, "A", "B")
    sink.assigned([("A.t", 0), ("A.t", 1)])
    for p in ("0", "1"):
        assert value(metrics, "mm2_source_records_total", topic="A.t", partition=p) == 0.0
        assert value(metrics, "mm2_offset_syncs_total", topic="A.t", partition=p) == 0.0
    sink.offset_syncs_sent("A.t", 1, 3)
    assert value(metrics, "mm2_offset_syncs_total", topic="A.t", partition="1") == 3.0


def test_two_flows_share_a_registry_without_clashing(metrics: Mm2Metrics) -> None:
    SourceTaskMetrics(metrics, "A", "B").acknowledged("A.t", 0, 1, 1.0)
    SourceTaskMetrics(metrics, "B", "A").acknowledged("B.t", 0, 2, 1.0)
    assert value(metrics, "mm2_source_records_total", topic="A.t", partition="0") == 1.0
    labels = {"source": "B", "target": "A", "topic": "B.t", "partition": "0"}
    assert metrics.registry.get_sample_value("mm2_source_records_total", labels) == 2.0


# ------------------------------------------------------------------------- checkpoints and heartbeats


def test_checkpoints_latency_count_and_last_time(metrics: Mm2Metrics) -> None:
    sink = CheckpointTaskMetrics(metrics, "A", "B", clock=lambda: 1234.0)
    sink.checkpoint_acknowledged("g1", "A.t", 0, 250.0)
    sink.checkpoint_acknowledged("g1", "A.t", 1, 100.0)
    assert value(metrics, "mm2_checkpoint_latency_seconds", group="g1", topic="A.t", partition="0") == 0.25
    assert value(metrics, "mm2_checkpoint_latency_seconds", group="g1", topic="A.t", partition="1") == 0.1
    assert value(metrics, "mm2_checkpoints_total", group="g1") == 2.0
    assert value(metrics, "mm2_checkpoint_last_timestamp_seconds", group="g1") == 1234.0
    assert value(metrics, "mm2_group_offset_syncs_total", group="g1") == 0.0
    sink.group_offsets_synced("g1", 2)
    assert value(metrics, "mm2_group_offset_syncs_total", group="g1") == 1.0


def test_group_sync_before_any_checkpoint_makes_no_last_checkpoint_series(metrics: Mm2Metrics) -> None:
    """A last-checkpoint gauge at 0 would read as "stale since 1970" and trip MM2CheckpointsStale."""
    sink = CheckpointTaskMetrics(metrics, "A", "B", clock=lambda: 1234.0)
    sink.group_offsets_synced("g2", 1)
    assert value(metrics, "mm2_group_offset_syncs_total", group="g2") == 1.0
    assert value(metrics, "mm2_checkpoint_last_timestamp_seconds", group="g2") is None
    sink.checkpoint_acknowledged("g2", "A.t", 0, 10.0)
    assert value(metrics, "mm2_checkpoint_last_timestamp_seconds", group="g2") == 1234.0


def test_an_idle_group_stays_current_and_the_check_interval_is_exported(metrics: Mm2Metrics) -> None:
    """Checkpoints are emitted only when a group moved: a check that finds nothing newer keeps the group
    current, so MM2CheckpointsStale means "not checked", not "idle"; never before its first checkpoint."""
    now = [100.0]
    sink = CheckpointTaskMetrics(metrics, "A", "B", clock=lambda: now[0])
    sink.checkpoints_scheduled(60.0)
    assert value(metrics, "mm2_checkpoint_interval_seconds") == 60.0
    sink.group_current("g1")
    assert value(metrics, "mm2_checkpoint_last_timestamp_seconds", group="g1") is None
    sink.checkpoint_acknowledged("g1", "A.t", 0, 10.0)
    now[0] = 700.0
    sink.group_current("g1")
    assert value(metrics, "mm2_checkpoint_last_timestamp_seconds", group="g1") == 700.0
    assert value(metrics, "mm2_checkpoints_total", group="g1") == 1.0


def test_producer_client_errors_are_counted_by_category(metrics: Mm2Metrics) -> None:
    """librdkafka's error_cb of a task producer (a target that refuses connections...)."""
    hook = RuntimeMetrics(metrics, "A", "B").for_task(TaskId("MirrorSourceConnector", 0))
    hook.record_client_error("_TRANSPORT", False)
    hook.record_client_error("_ALL_BROKERS_DOWN", False)
    hook.record_client_error("_FENCED", True)
    assert value(metrics, "mm2_client_errors_total", client="producer", error="transport") == 2.0
    assert value(metrics, "mm2_client_errors_total", client="producer", error="fatal") == 1.0


def test_heartbeats(metrics: Mm2Metrics) -> None:
    sink = HeartbeatTaskMetrics(metrics, "A", "B")
    sink.heartbeat_acknowledged(1_700_000_000_500)
    sink.heartbeat_acknowledged(1_700_000_001_500)
    assert value(metrics, "mm2_heartbeats_total") == 2.0
    assert value(metrics, "mm2_heartbeat_last_timestamp_seconds") == 1_700_000_001.5


# ------------------------------------------------------------------------- wiring into the tasks


def test_flow_attaches_a_sink_to_each_mirror_task(metrics: Mm2Metrics) -> None:
    flow = FlowMetrics(metrics, "A", "B")
    source, checkpoint = MirrorSourceTask(), MirrorCheckpointTask()
    flow.attach(source)
    flow.attach(checkpoint)
    assert isinstance(source.metrics, SourceTaskMetrics)
    assert isinstance(checkpoint.metrics, CheckpointTaskMetrics)
    heartbeat = MirrorHeartbeatTask()
    flow.attach(heartbeat)
    assert isinstance(heartbeat.metrics, HeartbeatTaskMetrics)

    class Unrelated:
        metrics = None

    other = Unrelated()
    flow.attach(other)
    assert other.metrics is None


def test_a_mirror_source_task_reports_acknowledged_records_per_partition(metrics: Mm2Metrics) -> None:
    """The task aggregates acks per partition and hands them over on commit, through the sink."""
    task = MirrorSourceTask(metrics=SourceTaskMetrics(metrics, "A", "B"))
    now_ms = int(time.time() * 1000)
    for offset in range(7):
        record = SourceRecord(
            {"topic": "t", "partition": 3, "cluster": "A"},
            {"offset": offset},
            "A.t",
            3,
            b"k",
            b"v",
            None,
            now_ms - 2000,
        )
        task.commit_record(record, RecordMetadata("A.t", 3, offset))
    task.commit()
    assert value(metrics, "mm2_source_records_total", topic="A.t", partition="3") == 7.0
    assert value(metrics, "mm2_source_replication_latency_seconds_count", topic="A.t", partition="3") == 1.0
    latency = value(metrics, "mm2_source_replication_latency_seconds_sum", topic="A.t", partition="3")
    assert latency is not None and 2.0 <= latency < 60.0


def test_mirror_heartbeat_and_checkpoint_tasks_report_acknowledged_records(metrics: Mm2Metrics) -> None:
    flow = FlowMetrics(metrics, "A", "B", clock=lambda: 2000.0)
    heartbeat, checkpoint = MirrorHeartbeatTask(), MirrorCheckpointTask()
    flow.attach(heartbeat)
    flow.attach(checkpoint)
    beat = SourceRecord(
        {"sourceClusterAlias": "A", "targetClusterAlias": "B"},
        {"offset": 0},
        "heartbeats",
        0,
        b"k",
        b"v",
        None,
        1_999_000,
    )
    heartbeat.commit_record(beat, RecordMetadata("heartbeats", 0, 0))
    assert value(metrics, "mm2_heartbeats_total") == 1.0
    assert value(metrics, "mm2_heartbeat_last_timestamp_seconds") == 1999.0
    checkpoint.commit_record(
        SourceRecord(
            {"group": "g", "topic": "A.t", "partition": 1},
            {"offset": 0},
            "A.checkpoints.internal",
            0,
            b"k",
            b"v",
            None,
            int(time.time() * 1000),
        ),
        RecordMetadata("A.checkpoints.internal", 0, 0),
    )
    assert value(metrics, "mm2_checkpoints_total", group="g") == 1.0
    assert value(metrics, "mm2_checkpoint_last_timestamp_seconds", group="g") == 2000.0
    assert value(metrics, "mm2_checkpoint_latency_seconds", group="g", topic="A.t", partition="1") is not None


def test_worker_task_hook_feeds_offset_flushes_and_failed_deliveries(metrics: Mm2Metrics) -> None:
    rt = RuntimeMetrics(metrics, "A", "B")
    hook = rt.for_task(TaskId("MirrorSourceConnector", 2))
    labels = {"connector": "MirrorSourceConnector", "task": "2"}
    assert value(metrics, "mm2_offset_commits_total", **labels, result="failure") == 0.0
    hook.record_batch(10, 1000, 0.01)
    hook.record_acks(10, 0)
    hook.record_skipped(0)
    assert value(metrics, "mm2_client_errors_total", client="producer", error="other") == 0.0
    hook.record_acks(3, 2)
    hook.record_commit(True, 0.2)
    hook.record_commit(False, 5.0)
    assert value(metrics, "mm2_client_errors_total", client="producer", error="other") == 2.0
    assert value(metrics, "mm2_offset_commits_total", **labels, result="success") == 1.0
    assert value(metrics, "mm2_offset_commits_total", **labels, result="failure") == 1.0
    assert value(metrics, "mm2_offset_commit_duration_seconds_count", **labels) == 2.0
