"""The distributed herder's request queue (Java's ``DistributedHerderRequest`` set).

Every REST call and every deferred action becomes a request run on the herder's own thread,
ordered by due time then arrival; that single thread is what keeps herder state consistent
without locks around every field. Callers on other threads wait on the request's future.
Pure: threads and a heap, no Kafka client.
"""

from __future__ import annotations

import heapq
import itertools
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any


@dataclass(order=True)
class HerderRequest:
    at: float  # time.monotonic() when due
    seq: int
    action: Callable[[], Any] = field(compare=False)
    future: Future[Any] = field(compare=False, default_factory=Future)
    cancelled: bool = field(compare=False, default=False)

    def cancel(self) -> None:
        self.cancelled = True
        self.future.cancel()

    def run(self) -> None:
        """Run the action and complete the future (never raises)."""
        if self.cancelled or not self.future.set_running_or_notify_cancel():
            return
        try:
            result = self.action()
        except BaseException as e:  # handed to the caller, who re-raises it
            self.future.set_exception(e)
        else:
            self.future.set_result(result)


class RequestQueue:
    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._heap: list[HerderRequest] = []
        self._lock = threading.Lock()
        self._seq = itertools.count()
        self._clock = clock

    def add(self, action: Callable[[], Any], delay_s: float = 0.0) -> tuple[HerderRequest, bool]:
        """Queue ``action``; returns the request and whether it is now first in line (wake the loop)."""
        req = HerderRequest(self._clock() + max(0.0, delay_s), next(self._seq), action)
        with self._lock:
            heapq.heappush(self._heap, req)
            return req, self._heap[0] is req

    def pop_due(self) -> HerderRequest | None:
        now = self._clock()
        with self._lock:
            while self._heap and self._heap[0].cancelled:
                heapq.heappop(self._heap)
            if self._heap and self._heap[0].at <= now:
                return heapq.heappop(self._heap)
            return None

    def next_due(self) -> float | None:
        """Monotonic time of the first pending request, None if none."""
        with self._lock:
            while self._heap and self._heap[0].cancelled:
                heapq.heappop(self._heap)
            return self._heap[0].at if self._heap else None

    def drain(self) -> list[HerderRequest]:
        with self._lock:
            out, self._heap = self._heap, []
        return sorted(out)

    def __len__(self) -> int:
        with self._lock:
            return len(self._heap)
