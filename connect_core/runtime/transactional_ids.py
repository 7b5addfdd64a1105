"""The transactional id of an exactly-once source task (KIP-618).

One pure function, shared by the task that opens the transactional producer and by the zombie
fencing that must name the very same ids of a previous generation: Java Connect's format
``${group.id}-${connector}-${task}``, so Java and mm2 workers fence each other's zombies.
"""

from __future__ import annotations


def source_task_transactional_id(group_id: str, connector: str, task: int) -> str:
    """Java's ``Worker.taskTransactionalId``: ``<group.id>-<connector>-<task>``."""
    return f"{group_id}-{connector}-{task}"
