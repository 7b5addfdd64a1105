"""Spark tasks sized by bytes, largest first, for the cluster's slots; how many ran at once."""

from __future__ import annotations

import logging

import pytest

from mirror.jobs.backfill.copy import BackfillClients, UnitResult
from mirror.jobs.backfill.plan import BackfillPlan, WorkUnit
from mirror.jobs.backfill.tasks import progress_partition, unit_tasks, warn_retried
from mirror.jobs.spark_cluster import granted_cores, master_ui_urls
from mirror.jobs.task_sizing import max_concurrency, sized_tasks, task_count


def test_one_task_per_slot_more_only_when_a_task_would_hold_too_many_units() -> None:
    assert task_count(8, 4) == 4
    assert task_count(3, 4) == 3  # never an empty task
    assert task_count(0, 4) == 0
    assert task_count(2000, 2, max_units=50) == 40
    assert task_count(10, 0) == 1


def test_tasks_weigh_about_the_same_and_the_heaviest_runs_first() -> None:
    weights = {"a": 90, "b": 50, "c": 40, "d": 30, "e": 20, "f": 10}
    tasks = sized_tasks(list(weights), weights.__getitem__, slots=2)
    totals = [sum(weights[u] for u in t) for t in tasks]
    assert sorted(u for t in tasks for u in t) == sorted(weights)
    assert totals == sorted(totals, reverse=True) and totals[0] - totals[1] <= 10
    assert tasks[0][0] == "a"  # largest partition first


def test_a_task_holds_at_most_max_units_and_equal_units_are_dealt_round_robin() -> None:
    tasks = sized_tasks(list(range(10)), lambda _: 1.0, slots=2, max_units=3)
    assert len(tasks) == 4 and max(len(t) for t in tasks) == 3
    assert sorted(u for t in tasks for u in t) == list(range(10))
    assert sized_tasks([], lambda _: 1.0, slots=4) == []


def test_backfill_units_are_sized_by_estimated_bytes_of_their_topic() -> None:
    small = [WorkUnit("small", p, "A.small", 0, 1000) for p in range(3)]
    big = WorkUnit("big", 0, "A.big", 0, 1000)
    plan = BackfillPlan("A", "B", (*small, big), avg_record_bytes=10.0, topic_record_bytes={"big": 1000.0})
    assert plan.unit_bytes(big) == 1_000_000 and plan.unit_bytes(small[0]) == 10_000
    tasks = unit_tasks(plan, list(plan.units), slots=2)
    assert tasks[0] == [big] and sorted(u.partition for u in tasks[1]) == [0, 1, 2]


def test_concurrency_is_the_most_intervals_open_at_once() -> None:
    assert max_concurrency([]) == 0
    assert max_concurrency([(0, 2), (1, 3), (2, 4)]) == 2  # one ending as another starts: not at once
    assert max_concurrency([(0, 10), (1, 2), (1, 3), (2.5, 4)]) == 3
    assert max_concurrency([(0, 1), (1, 2), (2, 3)]) == 1


def test_the_master_ui_of_a_standalone_url_and_the_cores_it_granted_the_job() -> None:
    assert master_ui_urls("spark://h1:7077,h2:7077", 8080) == ["http://h1:8080/json/", "http://h2:8080/json/"]
    assert master_ui_urls("local[2]", 8080) == []
    state = {"activeapps": [{"id": "app-1", "cores": 4}, {"id": "app-2", "cores": 2}]}
    assert granted_cores(state, "app-1") == 4
    assert granted_cores(state, "app-3") is None
    assert granted_cores({}, "app-1") is None


def test_a_retried_task_is_one_warning_line(caplog: pytest.LogCaptureFixture) -> None:
    def result(task: int, partition: int, attempt: int) -> UnitResult:
        return UnitResult("t", partition, 0, 10, 0, 10, 100, 1, attempt, task=task)

    with caplog.at_level(logging.WARNING, logger="mirror.jobs.backfill.tasks"):
        warn_retried([result(0, 0, 0), result(1, 1, 2), result(1, 2, 2), result(1, 3, 2)])
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 1 and "task 1 (t-1 and 2 other partition(s)) was retried: attempt 3" in lines[0]


def test_units_of_one_group_share_a_task_and_there_are_no_more_tasks_than_groups() -> None:
    units = list(range(20))
    tasks = sized_tasks(units, float, slots=8, max_units=3, group=lambda u: u % 5)
    assert len(tasks) == 5
    assert all(len({u % 5 for u in task}) == 1 for task in tasks)
    assert all(task == sorted(task, reverse=True) for task in tasks)  # heaviest unit first
    assert sorted(u for task in tasks for u in task) == units
    two = sized_tasks(units, float, slots=2, max_units=50, group=lambda u: u % 5)
    assert len(two) == 2 and sorted(u for task in two for u in task) == units
    assert len({u % 5 for u in two[0]} & {u % 5 for u in two[1]}) == 0


def test_the_backfills_tasks_never_share_a_partition_of_the_offsets_topic() -> None:
    """The fleet of issue 37 (400 topics x 5 partitions, 2 slots, 25 offsets-topic partitions): concurrent
    transactions sharing a partition there are what Tansu holds unreadable to read_committed consumers."""
    clients = BackfillClients(
        "A", "B", {}, {}, {}, "mm2-offsets.A.internal", None, "mm2-offset-syncs.B.internal", None, 50_000, 30.0
    )
    units = [WorkUnit(f"fleet-{i:03d}", p, f"A.fleet-{i:03d}", 0, 40) for i in range(400) for p in range(5)]
    plan = BackfillPlan("A", "B", tuple(units), avg_record_bytes=16.0)
    where = progress_partition(clients, 25)
    tasks = unit_tasks(plan, units, slots=2, offsets_partition=where)
    used = [{where(u) for u in task} for task in tasks]
    assert sum(len(u) for u in used) == len(set().union(*used)) == 25  # each partition in exactly one task
    assert sorted((u.topic, u.partition) for task in tasks for u in task) == [(u.topic, u.partition) for u in units]
    assert len(tasks) == 25
