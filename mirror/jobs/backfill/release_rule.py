"""When the live tasks have let go of the backfilled partitions, from the status topic alone (pure).

A task instance that stops gracefully commits its last offsets, then reports UNASSIGNED (FAILED if it
failed): that report is the only proof that its positions in the offsets topic are final. Two other
records can follow the excluding task-config commit without that proof: the leader's tombstone for a
task id the new config no longer has, and RUNNING from a newer instance of the same id. Both are also
written when a worker abandoned (cancelled) an instance that overran ``task.shutdown.graceful.timeout.ms``;
such an instance never commits again, so the records it copied after its last committed offset may be
on the target without a position: the job copies them again, at least once, as live tailing would after
a kill. Since a worker's revocation starts about when those signs appear and ends within the graceful
timeout (or by abandoning the instance), an old task with a sign but no stop report for longer than that
timeout counts as abandoned; before then the job keeps waiting for its report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from connect_core.runtime.worker_config import (
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG,
    TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_DEFAULT,
)

#: States a task instance reports once its loop has ended (after its final offset commit when UNASSIGNED).
STOPPED_STATES = frozenset({"UNASSIGNED", "FAILED"})
#: Clocks of the job and the workers are assumed roughly in step; this much skew is tolerated.
CLOCK_SLACK_MS = 2_000


@dataclass(frozen=True)
class TaskStatusRecord:
    """One record of the status topic for a task of the connector: ``state`` None is a tombstone."""

    task: int
    state: str | None
    timestamp_ms: int


@dataclass
class Release:
    """``released``: every old task stopped or was abandoned; ``abandoned``: those without a stop report."""

    released: bool
    abandoned: list[int] = field(default_factory=list)
    waiting: list[int] = field(default_factory=list)


def release_of(
    records: Iterable[TaskStatusRecord],
    old_tasks: Iterable[int],
    commit_ts: int,
    now_ms: int,
    graceful_timeout_ms: int,
) -> Release:
    """The verdict for ``old_tasks`` (task ids that ran the topics) after the excluding commit at ``commit_ts``."""
    stopped: set[int] = set()
    signs: dict[int, int] = {}  # task -> first tombstone or RUNNING after the commit
    for record in records:
        if record.timestamp_ms < commit_ts:
            continue
        if record.state in STOPPED_STATES:
            stopped.add(record.task)
        elif record.state is None or record.state == "RUNNING":
            signs.setdefault(record.task, record.timestamp_ms)
    abandoned, waiting = [], []
    for task in sorted(set(old_tasks) - stopped):
        sign = signs.get(task)
        if sign is not None and now_ms - sign > graceful_timeout_ms + CLOCK_SLACK_MS:
            abandoned.append(task)
        else:
            waiting.append(task)
    return Release(not waiting, abandoned, waiting)


def graceful_timeout_ms(worker_props: Mapping[str, object]) -> int:
    """The workers' ``task.shutdown.graceful.timeout.ms`` as the flow's config sets it (else Connect's default)."""
    try:
        return int(
            str(
                worker_props.get(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG, TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_DEFAULT)
            ).strip()
        )
    except ValueError:
        return TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_DEFAULT


__all__ = [
    "CLOCK_SLACK_MS",
    "STOPPED_STATES",
    "Release",
    "TaskStatusRecord",
    "graceful_timeout_ms",
    "release_of",
]
