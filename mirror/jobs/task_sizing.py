"""How a job's work units become Spark tasks: sized by bytes, largest first (pure logic, no I/O).

Why: a task per executor slot keeps every core busy only if the tasks weigh about the same, and a
unit (one partition) never spans two tasks. Units are dealt largest first to the lightest task (the
longest-processing-time rule), and the tasks are listed heaviest first, so Spark, which launches them
in order, starts the long ones while the short ones fill in. A task also holds at most ``max_units``
units: one task's transaction spans its partitions, and one spanning a thousand partitions takes
seconds to commit (two such at once outlived a 30 s transaction timeout on the test broker). Units
may come in groups that must share a task (the backfill's: units whose progress lands on one partition of
the offsets topic, so that no two tasks' transactions share a partition).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

T = TypeVar("T")

#: Partitions one backfill task copies at most (each of its transactions spans them).
MAX_UNITS_PER_TASK = 50


def task_count(units: int, slots: int, max_units: int = MAX_UNITS_PER_TASK) -> int:
    """One task per slot, more when a slot's share would exceed ``max_units``; never more than units."""
    if units <= 0:
        return 0
    return min(units, max(slots, 1, math.ceil(units / max(1, max_units))))


def sized_tasks(
    units: Sequence[T],
    weight: Callable[[T], float],
    slots: int,
    max_units: int = MAX_UNITS_PER_TASK,
    group: Callable[[T], Hashable] | None = None,
) -> list[list[T]]:
    """``units`` in tasks of about equal weight, heaviest task first; each task's units heaviest first.

    ``group``: units of one group always share a task (so no two tasks hold one group), and there are no
    more tasks than groups. Ties keep the given order, so equal units are dealt round-robin in that order."""
    bins: dict[Hashable, list[int]] = {}
    for i, unit in enumerate(units):
        bins.setdefault(i if group is None else group(unit), []).append(i)
    count = min(len(bins), task_count(len(units), slots, max_units))
    if count == 0:
        return []
    tasks: list[list[int]] = [[] for _ in range(count)]
    totals = [0.0] * count
    # (total weight, units held, task index): the lightest task with room gets the next bin
    heap = [(0.0, 0, i) for i in range(count)]
    weights = [weight(u) for u in units]
    dealt = sorted(bins.values(), key=lambda members: -sum(weights[i] for i in members))
    for members in dealt:
        total, held, index = heapq.heappop(heap)
        w = sum(weights[i] for i in members)
        tasks[index].extend(members)
        totals[index] = total + w
        if held + len(members) < max_units or not heap:  # a full task takes no more (count leaves room elsewhere)
            heapq.heappush(heap, (total + w, held + len(members), index))
    ranked = sorted(range(count), key=lambda i: (-totals[i], i))
    return [[units[i] for i in sorted(tasks[t], key=lambda i: -weights[i])] for t in ranked if tasks[t]]


def max_concurrency(intervals: Iterable[tuple[float, float]]) -> int:
    """The most intervals ``(start, end)`` open at one instant (an end and a start at the same time do
    not overlap): how many tasks really ran at once, from their start and end times."""
    events: list[tuple[float, int]] = []
    for start, end in intervals:
        if end >= start:
            events.append((start, 1))
            events.append((end, -1))
    events.sort(key=lambda e: (e[0], e[1]))  # ends before starts at the same instant
    running = most = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


__all__ = ["MAX_UNITS_PER_TASK", "max_concurrency", "sized_tasks", "task_count"]
