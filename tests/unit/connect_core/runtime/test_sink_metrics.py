"""Sink-task metrics: Java's windowed max/avg, the active record count, and the Prometheus families."""

from __future__ import annotations

import math

from prometheus_client import CollectorRegistry

from connect_core.api.sink import TopicPartition
from connect_core.model import ConnectorTaskId
from connect_core.runtime.sink_metrics import WindowedStat, active_record_count
from connect_core.runtime.sink_metrics_prometheus import SinkMetricFamilies

A0, A1, B0 = TopicPartition("a", 0), TopicPartition("a", 1), TopicPartition("b", 0)
TASK = ConnectorTaskId("sink", 0)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_windowed_stat_ages_values_out_after_two_windows_and_is_nan_when_empty() -> None:
    clock = Clock()
    stat = WindowedStat(window_s=30.0, samples=2, clock=clock)
    assert math.isnan(stat.max()) and math.isnan(stat.avg())
    stat.record(10)
    stat.record(2)
    assert (stat.max(), stat.avg()) == (10, 6)
    clock.now += 31  # a second window: the first still counts
    stat.record(4)
    assert (stat.max(), stat.avg()) == (10, 16 / 3)
    clock.now += 31  # a third window replaces the first
    stat.record(1)
    assert (stat.max(), stat.avg()) == (4, 2.5)
    clock.now += 120  # nothing recorded for two windows: no value, as Java's Max/Avg
    assert math.isnan(stat.max()) and math.isnan(stat.avg())


def test_active_records_are_read_minus_committed_per_committed_partition_never_negative() -> None:
    consumed = {A0: 50, A1: 10, B0: 7}
    committed = {A0: 40, A1: 12}  # B0 has no commit yet; A1's task handed back a later offset
    assert active_record_count(consumed, committed) == 10
    assert active_record_count(consumed, {}) == 0
    assert active_record_count({}, committed) == 0


def samples(registry: CollectorRegistry) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in registry.collect()
        for s in family.samples
        if not s.name.endswith("_created")
    }


def value(registry: CollectorRegistry, name: str) -> float:
    labels = (("connector", "sink"), ("flow", "x"), ("task", "0"))
    return samples(registry)[(name, labels)]


def test_prometheus_families_carry_java_meanings_per_task() -> None:
    registry = CollectorRegistry()
    families = SinkMetricFamilies(registry, ("flow",))
    m = families.for_task(("x",), TASK)
    m.partition_count(2)
    m.records_read(5)
    m.batch_put(5, 0.2)
    m.batch_put(0, 0.0)  # an empty put counts in the put time, as Java's
    m.commit_seq_no(1)
    m.commit_completed()
    m.commit_seq_no(2)
    m.commit_skipped()
    m.active_records(3)
    m.active_records(1)
    assert value(registry, "mm2_sink_record_read_total") == 5
    assert value(registry, "mm2_sink_record_send_total") == 5
    assert value(registry, "mm2_sink_partition_count") == 2
    assert value(registry, "mm2_sink_offset_commit_seq_no") == 2
    assert value(registry, "mm2_sink_offset_commit_completion_total") == 1
    assert value(registry, "mm2_sink_offset_commit_skip_total") == 1
    assert value(registry, "mm2_sink_record_active_count") == 1
    assert value(registry, "mm2_sink_record_active_count_max") == 3
    assert value(registry, "mm2_sink_record_active_count_avg") == 2
    assert value(registry, "mm2_sink_put_batch_max_time_seconds") == 0.2
    assert value(registry, "mm2_sink_put_batch_avg_time_seconds") == 0.1


def test_a_restarted_task_continues_its_counters_and_the_old_instance_closing_late_leaves_it_alone() -> None:
    registry = CollectorRegistry()
    families = SinkMetricFamilies(registry, ("flow",))
    old = families.for_task(("x",), TASK)
    old.records_read(4)
    old.partition_count(3)
    new = families.for_task(("x",), TASK)
    new.partition_count(3)
    new.records_read(1)
    old.close()  # the previous instance finishes after its successor started
    assert value(registry, "mm2_sink_partition_count") == 3
    assert value(registry, "mm2_sink_record_read_total") == 5
    new.close()
    assert value(registry, "mm2_sink_partition_count") == 0
    families.remove(("x",), TASK)  # the connector was deleted
    assert not [k for k in samples(registry) if k[0].startswith("mm2_sink_")]
