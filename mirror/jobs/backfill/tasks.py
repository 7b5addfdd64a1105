"""The Spark side of ``mm2 backfill``: units sized into tasks for the cluster's slots, run, timed.

Tasks are sized by estimated bytes, largest first, for as many slots as the cluster really has once
its executors registered (:mod:`mirror.jobs.spark_cluster`), so every core of a standalone cluster
copies. Each result carries its task's index and its start and end (Spark's scheduler's times where
its status store answers, else the task's own), so the job's report says how many tasks ran at once.
A task that succeeded only on a later attempt is one warning line here (why the earlier attempt
failed is in Spark's log file, not on the operator's terminal).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from connect_core.kafka.partitioning import key_partition
from mirror.jobs.backfill.batch_copy import copy_units_as_batches
from mirror.jobs.backfill.copy import BackfillClients, UnitResult, copy_units, offset_key
from mirror.jobs.backfill.plan import BackfillPlan, WorkUnit
from mirror.jobs.backfill.task_ids import record_ids, task_ids
from mirror.jobs.spark import executor_logging, run_slices, spark_log_file
from mirror.jobs.spark_cluster import cluster_slots, stage_task_spans
from mirror.jobs.task_sizing import sized_tasks

if TYPE_CHECKING:
    from pyspark import SparkContext

log = logging.getLogger(__name__)


def unit_tasks(
    plan: BackfillPlan, units: list[WorkUnit], slots: int, offsets_partition: Callable[[WorkUnit], int] | None = None
) -> list[list[WorkUnit]]:
    """The units in tasks of about equal estimated bytes for ``slots`` concurrent tasks, largest first;
    units whose progress goes to one partition of the offsets topic (``offsets_partition``) in one task."""
    return sized_tasks(units, plan.unit_bytes, slots, group=offsets_partition)


def progress_partition(clients: BackfillClients, offsets_partitions: int) -> Callable[[WorkUnit], int]:
    """unit -> the partition of the flow's offsets topic its progress records go to (the key's partition)."""
    return lambda unit: key_partition(offset_key(clients, unit), offsets_partitions)


def run_tasks(
    sc: SparkContext,
    plan: BackfillPlan,
    units: list[WorkUnit],
    clients: BackfillClients,
    offsets_partitions: int,
    throughput_limit: float | None = None,
) -> tuple[list[UnitResult], int]:
    """Copy ``units`` in Spark tasks; their results sorted by partition, and the slots they were sized for.

    No two tasks write progress to one partition of the offsets topic (``offsets_partitions`` of them),
    so no two transactions of the job share a partition: a broker never has to order one's end against
    another's (some brokers can hold a committed transaction unreadable to read_committed consumers for
    good when two that share a partition end at once, or end in a chain; docs/backfill.md).
    ``throughput_limit`` (bytes per second, the whole job) is divided evenly between the tasks that run at once
    (the cluster's slots, or fewer tasks): each task throttles its own fetching to its share."""
    slots = cluster_slots(sc)
    tasks = unit_tasks(plan, units, slots, progress_partition(clients, offsets_partitions))
    if throughput_limit is not None:
        clients = replace(clients, task_throughput_limit=throughput_limit / max(1, min(len(tasks), slots)))
    shared = sc.broadcast(clients)

    def task(part: Iterable[list[WorkUnit]]) -> Iterator[UnitResult]:
        from pyspark import TaskContext

        executor_logging()
        context = TaskContext.get()
        attempt = context.attemptNumber() if context is not None else 0
        index = context.partitionId() if context is not None else 0
        for group in part:
            began = time.time()
            clients = shared.value
            results = (copy_units_as_batches if clients.batch_copy else copy_units)(clients, group, attempt)
            ended = time.time()
            for result in results:
                result.task, result.task_started_at, result.task_finished_at = index, began, ended
            yield from results

    group = f"mm2-backfill-{uuid.uuid4().hex[:12]}"
    sc.setJobGroup(group, f"mm2 backfill {plan.source}->{plan.target}")
    try:
        record_ids(clients, task_ids(clients, tasks))  # before any task can use one: the next run fences them
        results = run_slices(sc, tasks, task, "backfill")
    finally:
        shared.unpersist()
    # Spark's own launch and end times where its status store answers: they count a task from when the
    # scheduler launched it, its Python worker's start-up included, as "tasks at once" means
    for index, (began, ended) in stage_task_spans(sc, group).items():
        for result in results:
            if result.task == index:
                result.task_started_at, result.task_finished_at = began, ended
    warn_retried(results)
    return sorted(results, key=lambda r: (r.topic, r.partition)), slots


def warn_retried(results: list[UnitResult]) -> None:
    """One warning line per task that succeeded only after a failed attempt."""
    by_task: dict[int, list[UnitResult]] = {}
    for result in results:
        by_task.setdefault(result.task, []).append(result)
    where = spark_log_file()
    for index, rows in sorted(by_task.items()):
        attempt = max(r.attempt for r in rows)
        if attempt > 0:
            first = min(rows, key=lambda r: (r.topic, r.partition))
            others = f" and {len(rows) - 1} other partition(s)" if len(rows) > 1 else ""
            log.warning(
                "Backfill task %d (%s-%d%s) was retried: attempt %d succeeded, resuming from its last commit%s",
                index,
                first.topic,
                first.partition,
                others,
                attempt + 1,
                f"; why the earlier attempt failed is in {where}" if where else "",
            )


__all__ = ["progress_partition", "run_tasks", "unit_tasks", "warn_retried"]
