"""Proof that a closed scheduler had its chances to run: a fresh twin with the same interval ticks meanwhile."""

from __future__ import annotations

import threading

from mirror.connectors.scheduler import Scheduler


def twin_ticks(interval_s: float, ticks: int, timeout_s: float = 30.0) -> bool:
    """True once a fresh scheduler's job every ``interval_s`` has run ``ticks`` times (False after the timeout).

    A negative check on a closed scheduler ("nothing runs any more") waits on this rather than on a fixed
    sleep: however loaded the machine, the closed scheduler's own ticks were due as often as the twin's.
    """
    runs = [0]
    done = threading.Event()

    def tick() -> None:
        runs[0] += 1
        if runs[0] >= ticks:
            done.set()

    twin = Scheduler("twin", timeout_s=2)
    try:
        twin.schedule_repeating(tick, interval_s, "twin tick")
        return done.wait(timeout_s)
    finally:
        twin.close()
