"""A per-connector background scheduler (Kafka MM2's ``Scheduler``), on one daemon thread.

Why one thread: MM2's admin jobs (topic refresh, config sync, group refresh) share admin clients
and connector state; running them one at a time, in submission/due order, keeps them free of races
without locks, exactly like Kafka's single-threaded ``ScheduledExecutorService``.

Semantics kept from Kafka:

* :meth:`execute` runs a one-shot job and waits for it at most ``timeout`` seconds; its errors and
  time-outs are LOGGED, never raised, so a connector "starts" even when a cluster is unreachable
  (the next periodic run retries).
* :meth:`schedule_repeating` runs at a fixed rate from now; :meth:`schedule_repeating_delayed`
  first waits one interval. A negative interval means the feature is disabled: nothing is
  scheduled. Runs never overlap; a run that overruns its period delays the next one (no bursts).
* :meth:`execute_async` queues a job without waiting (task start-up work).
* :meth:`close` stops scheduling, lets the running job finish (up to ``timeout``) and skips the rest.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

Job = Callable[[], object]


@dataclass(order=True)
class _Entry:
    due: float
    seq: int
    job: Job = field(compare=False)
    description: str = field(compare=False)
    interval: float | None = field(compare=False, default=None)
    future: Future[None] | None = field(compare=False, default=None)
    check_timeout: bool = field(compare=False, default=True)


class Scheduler:
    """Runs one connector's background jobs on a single thread; see the module docstring."""

    def __init__(self, name: str, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self._clock = clock
        self._queue: list[_Entry] = []
        self._seq = itertools.count()
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._run, name=f"mm2-scheduler[{name}]", daemon=True)
        self._thread.start()

    @classmethod
    def for_connector(cls, owner: type, role: str, timeout_s: float) -> Scheduler:
        return cls(f"Scheduler for {owner.__name__}: {role}", timeout_s)

    # -- submission ----------------------------------------------------------------------------

    def _push(self, entry: _Entry) -> None:
        with self._cond:
            if self._closed:
                log.info("%s skipping task due to shutdown: %s", self.name, entry.description)
                if entry.future is not None:
                    entry.future.set_result(None)
                return
            heapq.heappush(self._queue, entry)
            self._cond.notify()

    def schedule_repeating(self, job: Job, interval_s: float, description: str) -> None:
        """Run ``job`` now and then every ``interval_s`` seconds; negative = disabled (not scheduled)."""
        self._schedule(job, interval_s, description, delay_first=False)

    def schedule_repeating_delayed(self, job: Job, interval_s: float, description: str) -> None:
        """Like :meth:`schedule_repeating`, but the first run is one interval from now."""
        self._schedule(job, interval_s, description, delay_first=True)

    def _schedule(self, job: Job, interval_s: float, description: str, delay_first: bool) -> None:
        if interval_s < 0:
            return
        if interval_s == 0:
            raise ValueError(f"{self.name}: interval for {description!r} must be positive")
        due = self._clock() + (interval_s if delay_first else 0.0)
        self._push(_Entry(due, next(self._seq), job, description, interval_s))

    def execute(self, job: Job, description: str) -> None:
        """Run ``job`` on the scheduler thread and wait up to the timeout; errors are only logged."""
        future: Future[None] = Future()
        self._push(_Entry(self._clock(), next(self._seq), job, description, None, future))
        try:
            future.result(timeout=self.timeout_s)
        except FutureTimeout:
            log.error("%s timed out running task: %s", self.name, description)
        except Exception:  # the job's error is logged by _run_job; nothing is raised to the caller
            pass

    def execute_async(self, job: Job, description: str) -> None:
        """Queue ``job`` to run as soon as the thread is free, without waiting and without a time limit."""
        self._push(_Entry(self._clock(), next(self._seq), job, description, None, None, check_timeout=False))

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop: queued jobs are dropped, a running one may finish within the timeout."""
        with self._cond:
            self._closed = True
            dropped = self._queue
            self._queue = []
            self._cond.notify_all()
        for entry in dropped:
            if entry.future is not None and not entry.future.done():
                entry.future.set_result(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(self.timeout_s)
            if self._thread.is_alive():
                log.error("%s timed out during shutdown of internal scheduler.", self.name)

    # -- the thread ------------------------------------------------------------------------------

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed:
                    if self._queue:
                        wait = self._queue[0].due - self._clock()
                        if wait <= 0:
                            break
                        self._cond.wait(wait)
                    else:
                        self._cond.wait()
                if self._closed:
                    return
                entry = heapq.heappop(self._queue)
            self._run_job(entry)
            if entry.interval is not None:
                # Fixed rate, but never catching up in bursts after an overrun.
                entry.due = max(entry.due + entry.interval, self._clock())
                entry.seq = next(self._seq)
                with self._cond:
                    if self._closed:
                        return
                    heapq.heappush(self._queue, entry)

    def _run_job(self, entry: _Entry) -> None:
        error: BaseException | None = None
        start = self._clock()
        try:
            entry.job()
            elapsed_ms = (self._clock() - start) * 1000
            log.debug("%s took %d ms", entry.description, elapsed_ms)
            if entry.check_timeout and elapsed_ms > self.timeout_s * 1000:
                log.warning("%s took too long (%d ms) running task: %s", self.name, elapsed_ms, entry.description)
        except Exception as e:
            error = e
            log.error("%s caught exception in scheduled task: %s", self.name, entry.description, exc_info=True)
        if entry.future is not None and not entry.future.done():
            if error is None:
                entry.future.set_result(None)
            else:
                entry.future.set_exception(error)


__all__ = ["Job", "Scheduler"]
