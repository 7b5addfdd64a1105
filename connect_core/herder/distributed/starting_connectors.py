"""Connectors this worker is starting: their task configs should share one rebalance.

Each connector a worker starts generates its task configs once it has started, and every task-config
write asks the group for a rebalance. Started together (a fresh flow's connectors, one assignment), the
first connector's write would otherwise trigger a rebalance while the others are still starting, and
their writes one more each. So the herder holds a config-update rebalance while connectors it started
have not reported their first state, for at most ``hold_s`` after the first of them began: then every
write of that round is in the config topic and one rebalance assigns all the new tasks. Thread-safe: the
herder thread begins, the connectors' threads report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

#: How long a rebalance may wait for starting connectors: well under a group join on a real cluster's
#: worst case, and a starting connector usually reports within a fraction of it.
HOLD_S = 3.0


class StartingConnectors:
    def __init__(self, hold_s: float = HOLD_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._hold_s = hold_s
        self._clock = clock
        self._lock = threading.Lock()
        self._starting: set[str] = set()
        self._until = float("-inf")

    def begin(self, connector: str) -> None:
        """The herder starts ``connector``; the hold (if none runs) starts now."""
        with self._lock:
            if not self._starting:
                self._until = self._clock() + self._hold_s
            self._starting.add(connector)

    def done(self, connector: str) -> None:
        """``connector`` reported its first state (started, paused, stopped or failed), or was stopped."""
        with self._lock:
            self._starting.discard(connector)

    def hold_until(self) -> float | None:
        """While a rebalance should wait: the monotonic time the hold ends; None when it need not wait."""
        with self._lock:
            if not self._starting:
                return None
            if self._clock() >= self._until:
                self._starting.clear()  # a connector that never reports must not hold later rounds
                return None
            return self._until
