"""A per-connector background scheduler (Kafka MM2's ``Scheduler``) on APScheduler.

Why one worker: MM2's admin jobs (topic refresh, config sync, group refresh) share admin clients
and connector state; running them one at a time keeps them free of races without locks, exactly
like Kafka's single-threaded ``ScheduledExecutorService``. APScheduler's BackgroundScheduler keeps
the time table; its one-thread pool runs the jobs.

Semantics kept from Kafka:

* :meth:`execute` runs a one-shot job and waits for it at most ``timeout`` seconds; its errors and
  time-outs are LOGGED, never raised, so a connector "starts" even when a cluster is unreachable
  (the next periodic run retries).
* :meth:`schedule_repeating` runs at a fixed rate from now; :meth:`schedule_repeating_delayed`
  first waits one interval. A negative interval means the feature is disabled: nothing is
  scheduled. Runs never overlap (``max_instances=1``) and a run that overruns its period does not
  bring a burst of catch-up runs (``coalesce``): the ticks it overran are skipped, the next tick
  runs.
* :meth:`execute_async` queues a job without waiting (task start-up work).
* :meth:`close` stops scheduling, lets the running job finish (up to ``timeout``) and skips the rest.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import UTC, datetime, timedelta

from apscheduler.events import EVENT_JOB_MAX_INSTANCES, JobSubmissionEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.schedulers.background import BackgroundScheduler
from apscheduler.triggers.interval import IntervalTrigger

log = logging.getLogger(__name__)

Job = Callable[[], object]

_EXECUTOR = "mm2"  # APScheduler logs each run at INFO on apscheduler.executors.<alias>: ours stays quiet
logging.getLogger(f"apscheduler.executors.{_EXECUTOR}").setLevel(logging.WARNING)
_APS_LOG = logging.getLogger(f"{__name__}.apscheduler")  # "Added job", "Scheduler started", overrun skips
_APS_LOG.setLevel(logging.ERROR)  # an overrun skip is ours to report (DEBUG, _overran)
_ids = itertools.count()


class Scheduler:
    """Runs one connector's background jobs one at a time; see the module docstring."""

    def __init__(self, name: str, timeout_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.name = name
        self.timeout_s = timeout_s
        self._clock = clock
        self._closed = False
        self._running = threading.RLock()  # held while a job runs: close() waits on it
        self._aps = BackgroundScheduler(
            executors={_EXECUTOR: ThreadPoolExecutor(max_workers=1)},
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
            timezone=UTC,
            logger=_APS_LOG,
            daemon=True,
        )
        self._aps.add_listener(self._overran, EVENT_JOB_MAX_INSTANCES)
        self._aps.start()

    @classmethod
    def for_connector(cls, owner: type, role: str, timeout_s: float) -> Scheduler:
        return cls(f"Scheduler for {owner.__name__}: {role}", timeout_s)

    # -- submission ----------------------------------------------------------------------------

    def _skip_if_closed(self, description: str) -> bool:
        if self._closed:
            log.info("%s skipping task due to shutdown: %s", self.name, description)
        return self._closed

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
        if self._skip_if_closed(description):
            return
        first = datetime.now(UTC) + timedelta(seconds=interval_s if delay_first else 0.0)
        trigger = IntervalTrigger(seconds=interval_s, start_date=first, timezone=UTC)
        self._aps.add_job(
            self._run_job,
            trigger,
            args=(job, description, True, None),
            name=description,
            id=f"{description}#{next(_ids)}",
            executor=_EXECUTOR,
        )

    def execute(self, job: Job, description: str) -> None:
        """Run ``job`` on the scheduler's worker and wait up to the timeout; errors are only logged."""
        future: Future[None] = Future()
        self._submit(job, description, future, check_timeout=True)
        try:
            future.result(timeout=self.timeout_s)
        except FutureTimeout:
            log.error("%s timed out running task: %s", self.name, description)
        except Exception:  # the job's error is logged by _run_job; nothing is raised to the caller
            pass

    def execute_async(self, job: Job, description: str) -> None:
        """Queue ``job`` to run as soon as the worker is free, without waiting and without a time limit."""
        self._submit(job, description, None, check_timeout=False)

    def _submit(self, job: Job, description: str, future: Future[None] | None, check_timeout: bool) -> None:
        if self._skip_if_closed(description):
            if future is not None:
                future.set_result(None)
            return
        self._aps.add_job(
            self._run_job,
            "date",
            args=(job, description, check_timeout, future),
            name=description,
            id=f"{description}#{next(_ids)}",
            run_date=datetime.now(UTC),
            executor=_EXECUTOR,
        )

    # -- lifecycle ------------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Stop: queued jobs are skipped, a running one may finish within the timeout."""
        if self._closed:
            return
        self._closed = True
        # Pause first and pass through the job-store lock, so that a round of APScheduler's loop still
        # submitting jobs ends before shutdown (3.x fails that round with JobLookupError otherwise).
        self._aps.pause()
        self._aps.get_jobs()
        self._aps.shutdown(wait=False)  # no new runs; jobs already handed to the worker see _closed
        if self._running.acquire(timeout=self.timeout_s):  # re-entrant: close() from a job returns at once
            self._running.release()
        else:
            log.error("%s timed out during shutdown of internal scheduler.", self.name)

    # -- the worker ------------------------------------------------------------------------------

    def _overran(self, event: JobSubmissionEvent) -> None:
        log.debug("%s: a run of %s was skipped: the previous one was still running", self.name, event.job_id)

    def _run_job(self, job: Job, description: str, check_timeout: bool, future: Future[None] | None) -> None:
        with self._running:
            if self._skip_if_closed(description):
                if future is not None and not future.done():
                    future.set_result(None)
                return
            error: BaseException | None = None
            start = self._clock()
            try:
                job()
                elapsed_ms = (self._clock() - start) * 1000
                log.debug("%s took %d ms", description, elapsed_ms)
                if check_timeout and elapsed_ms > self.timeout_s * 1000:
                    log.warning("%s took too long (%d ms) running task: %s", self.name, elapsed_ms, description)
            except Exception as e:
                error = e
                log.error("%s caught exception in scheduled task: %s", self.name, description, exc_info=True)
        if future is not None and not future.done():
            if error is None:
                future.set_result(None)
            else:
                future.set_exception(error)


__all__ = ["Job", "Scheduler"]
