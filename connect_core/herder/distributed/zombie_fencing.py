"""What a round of zombie fencing must do for one connector (KIP-618; pure, no I/O).

Before a new generation of an exactly-once source connector's tasks may start, the transactional
producers of the previous generation must be fenced out, and a ``tasks-fencing-<connector>``
record (``{"task-count": n}``) written to the config topic after the new task configs, so every
worker sees the generation as fenced. The decision reads only the config-topic snapshot, with
Java ``DistributedHerder.doFenceZombieSourceTasks``'s rules:

* no task configs since the latest task-count record: nothing to do (already fenced);
* no task-count record at all: no transactional producer of this connector ever ran, so nothing
  to fence, but the record is written now so the *next* generation knows how many ids to fence;
* the previous and the new generation have one task each: the new task's own ``initTransactions``
  fences its single predecessor, so only the record is written;
* otherwise the previous generation's ids ``0..record-1`` are fenced, then the record is written.

A task of a connector may start when its snapshot says no fencing is pending
(:func:`may_start_without_fencing`).
"""

from __future__ import annotations

from dataclasses import dataclass

from connect_core.runtime.transactional_ids import source_task_transactional_id
from connect_core.storage.api import ClusterConfigState


@dataclass(frozen=True)
class FencingPlan:
    """``fence``: how many ids of the previous generation to fence (0: none); ``record``: the task
    count to write as the new ``tasks-fencing-`` record (None: write nothing)."""

    fence: int
    record: int | None
    generation: int | None = None

    @property
    def nothing_to_do(self) -> bool:
        return self.fence == 0 and self.record is None


def plan_fencing(snapshot: ClusterConfigState, connector: str) -> FencingPlan:
    """The round of fencing ``connector`` needs, judged from a snapshot read to the end of the log."""
    generation = snapshot.task_config_generation(connector)
    if not snapshot.pending_fencing(connector):
        return FencingPlan(0, None, generation)
    task_count = snapshot.task_counts.get(connector, 0)
    previous = snapshot.task_count_record(connector)
    if previous is None or (previous == 1 and task_count == 1):
        return FencingPlan(0, task_count, generation)
    return FencingPlan(previous, task_count, generation)


def may_start_without_fencing(snapshot: ClusterConfigState, connector: str) -> bool:
    """True when the latest task configs are already covered by a task-count record."""
    return not snapshot.pending_fencing(connector) and snapshot.task_count_record(connector) is not None


def transactional_ids_to_fence(group_id: str, connector: str, count: int) -> list[str]:
    """The transactional ids of tasks ``0..count-1`` (Java's ``Worker.fenceZombies``)."""
    return [source_task_transactional_id(group_id, connector, task) for task in range(count)]
