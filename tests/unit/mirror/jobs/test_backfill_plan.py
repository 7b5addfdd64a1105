"""Pure planning rules of ``mm2 backfill``: where a unit starts, what it skips, the ids and the exclusions."""

from __future__ import annotations

import re

from mirror.client.filters import TOPICS_EXCLUDE_DEFAULT
from mirror.jobs.backfill.plan import (
    BackfillPlan,
    WorkUnit,
    assigned_partitions,
    plan_units,
    start_offset,
    transactional_id,
    with_topics_excluded,
)
from mirror.jobs.spark import with_task_retries


def test_a_unit_starts_after_the_flows_committed_offset_never_below_the_log_start() -> None:
    assert start_offset(0, None) == 0
    assert start_offset(0, -1) == 0
    assert start_offset(10, None) == 10
    assert start_offset(0, 41) == 42  # the committed offset is the last copied record
    assert start_offset(100, 41) == 100  # records below the log start are gone


def test_plan_has_one_unit_per_partition_with_records_left_sorted() -> None:
    units = plan_units(
        [("b", 0), ("a", 1), ("a", 0), ("a", 0)],
        log_starts={("a", 0): 0, ("a", 1): 5, ("b", 0): 0},
        ends={("a", 0): 100, ("a", 1): 5, ("b", 0): 30},
        committed={("b", 0): 29},
        remote_topic={"a": "A.a", "b": "A.b"},
    )
    assert units == [WorkUnit("a", 0, "A.a", 0, 100)]  # a-1 is empty, b-0 fully mirrored
    plan = BackfillPlan("A", "B", tuple(units), avg_record_bytes=10.5)
    assert (plan.records, plan.estimated_bytes, plan.topics) == (100, 1050, ["a"])


def test_transactional_id_is_stable_per_unit_and_differs_between_units() -> None:
    one, other = WorkUnit("t", 0, "A.t", 0, 10), WorkUnit("t", 1, "A.t", 0, 10)
    assert transactional_id("A", "B", one) == transactional_id("A", "B", WorkUnit("t", 0, "A.t", 5, 99))
    assert (
        len({transactional_id("A", "B", one), transactional_id("A", "B", other), transactional_id("A", "C", one)}) == 3
    )


def test_topics_are_added_to_the_exclusions_exactly_once_and_escaped() -> None:
    value = with_topics_excluded(TOPICS_EXCLUDE_DEFAULT, ["orders.v1", "b"])
    patterns = [p.strip() for p in value.split(",")]
    assert patterns[:3] == [p.strip() for p in TOPICS_EXCLUDE_DEFAULT.split(",")]
    assert re.fullmatch(patterns[-1], "orders.v1") and not re.fullmatch(patterns[-1], "ordersXv1")
    assert with_topics_excluded(value, ["b"]) == value
    assert with_topics_excluded(None, ["b"]) == "b"


def test_task_partitions_are_parsed_as_mirror_source_writes_them() -> None:
    assert assigned_partitions("orders-0,my-topic-12, x-1") == {("orders", 0), ("my-topic", 12), ("x", 1)}
    assert assigned_partitions("") == set() and assigned_partitions(None) == set()


def test_local_masters_get_task_retries() -> None:
    assert with_task_retries("local[*]") == "local[*,4]"
    assert with_task_retries("local") == "local[1,4]"
    assert with_task_retries("local[2,1]") == "local[2,1]"
    assert with_task_retries("spark://h:7077") == "spark://h:7077"
