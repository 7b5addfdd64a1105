"""The backfill job's lease on its topics: taken before the copy, renewed while it runs, released after.

The lease lives in the flow's leases topic on the target (:mod:`mirror.driver.backfill_leases`); ``mm2 run``
derives the MirrorSourceConnector's exclusion from it. A renewal thread in the Spark driver process keeps
it alive every third of its time to live; a job that dies stops renewing and the lease expires (``mm2 run``
then fences the job's transactional ids and takes the topics back). A job that finds its lease gone or
taken over by another job stops renewing, cancels its Spark jobs (a retried task would re-initialise the
fenced transactional id and copy on) and fails.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable

from connect_core.api.errors import ConnectError
from mirror.driver.backfill_leases import DEFAULT_LEASE_TTL_S, Lease
from mirror.driver.lease_store import (
    create_leases_topic,
    fence_transactional_ids,
    lease_history,
    read_leases,
    write_lease,
)
from mirror.driver.maker_config import SourceAndTarget
from mirror.jobs.backfill.flow import Flow

log = logging.getLogger(__name__)

_MAX_CHECK_S = 5.0


def cancel_spark_jobs() -> None:
    """Stop this process's Spark jobs: a job whose lease is gone must not retry tasks into topics live tailing
    may own again (a retried attempt re-initialises the fenced transactional id)."""
    from pyspark import SparkContext

    context = SparkContext._active_spark_context  # the one handle on the running context
    if context is not None:
        context.cancelAllJobs()


def new_job_id() -> str:
    return uuid.uuid4().hex[:12]


class LeaseHolder:
    """``take()``, then ``release()`` (always, also after a failure); ``lost`` if someone else took it."""

    def __init__(
        self,
        flow: Flow,
        ttl_s: float = DEFAULT_LEASE_TTL_S,
        job_id: str | None = None,
        clock: Callable[[], float] = time.time,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.flow = flow
        self._on_lost = on_lost
        self.ttl_s = ttl_s
        self.job_id = job_id or new_job_id()
        self._clock = clock
        self.lease: Lease | None = None
        self.lost: str | None = None
        self._checked = -1  # the lease records up to this offset were looked at (or written by this job)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def pair(self) -> SourceAndTarget:
        return self.flow.pair

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def take(self, topics: list[str], transactional_ids: list[str]) -> Lease:
        """Write this job's lease, after fencing the transactions of an earlier job that held one."""
        props = self.flow.worker_props
        create_leases_topic(props, self.pair.source)
        previous = read_leases(props, self.pair.source).lease(self.pair.source, self.pair.target)
        if previous is not None:
            state = "active" if previous.active(self._now_ms()) else "expired"
            log.warning(
                "Taking over the %s backfill lease of job %s on %s (%s)",
                state,
                previous.job_id,
                self.pair,
                ", ".join(previous.topics),
            )
            fence_transactional_ids(props, previous.transactional_ids)
        lease = Lease(
            self.pair.source,
            self.pair.target,
            self.job_id,
            tuple(sorted(set(topics))),
            self._now_ms() + int(self.ttl_s * 1000),
            tuple(transactional_ids),
        )
        self._checked = write_lease(props, self.pair, lease)
        self.lease = lease
        self._thread = threading.Thread(target=self._renew_loop, name="mm2-backfill-lease", daemon=True)
        self._thread.start()
        log.info(
            "Job %s holds the backfill lease of %s on %s for %gs at a time",
            self.job_id,
            self.pair,
            ", ".join(lease.topics),
            self.ttl_s,
        )
        return lease

    def _renew_loop(self) -> None:
        # every third of the time to live, and at least every 5 s, so a lease released by hand stops the job soon
        while not self._stop.wait(min(self.ttl_s / 3, _MAX_CHECK_S)):
            try:
                self.renew()
            except ConnectError as e:  # the next round retries; the lease still has two thirds of its time
                log.warning("Cannot renew the backfill lease of %s yet: %s", self.pair, e)
            if self.lost is not None:
                if self._on_lost is not None:
                    try:
                        self._on_lost()
                    except Exception as e:  # the job fails on the lost lease anyway
                        log.warning("Cannot stop the job after losing its lease: %s", e)
                return

    def renew(self) -> None:
        """Extend the lease, unless it stopped being this job's (released by hand, or taken over).

        Kafka has no compare-and-set: a release or a take-over may land between this look and the renewal
        written after it. So each look covers every record since the previous look: one not this job's
        means the lease was lost, even if the latest record is this job's own late renewal, which is then
        taken back (a release must not be undone by it)."""
        if self.lease is None or self.lost is not None:
            return
        history = lease_history(self.flow.worker_props, self.pair)
        since = [lease for offset, lease in history if offset > self._checked]
        foreign = [lease for lease in since if lease is None or lease.job_id != self.job_id]
        if foreign:
            other = foreign[0]
            self.lost = "released" if other is None else f"taken over by job {other.job_id}"
            log.error(
                "The backfill lease of %s was %s while job %s ran: live tailing may own its topics now",
                self.pair,
                self.lost,
                self.job_id,
            )
            latest = history[-1][1] if history else None
            if latest is not None and latest.job_id == self.job_id and other is None:
                write_lease(self.flow.worker_props, self.pair, None)  # a renewal that raced the release
            return
        if not self.lease.active(self._now_ms()):
            self.lost = "expired"
            log.error("The backfill lease of %s expired before job %s renewed it", self.pair, self.job_id)
            return
        self._checked = max([self._checked, *(offset for offset, _ in history)])
        self.lease = self.lease.renewed(self._now_ms(), self.ttl_s)
        write_lease(self.flow.worker_props, self.pair, self.lease)

    def release(self) -> None:
        """Stop renewing and delete the lease if it is still this job's: live tailing takes the topics back."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(30)
        if self.lease is None:
            return
        current = read_leases(self.flow.worker_props, self.pair.source).lease(self.pair.source, self.pair.target)
        if current is not None and current.job_id == self.job_id:
            write_lease(self.flow.worker_props, self.pair, None)
            log.info("Released the backfill lease of %s", self.pair)


def release_lease(flow: Flow) -> Lease | None:
    """``mm2 backfill --release``: fence the holder's transactions, delete the lease (None: there was none)."""
    props = flow.worker_props
    lease = read_leases(props, flow.pair.source).lease(flow.pair.source, flow.pair.target)
    if lease is None:
        return None
    fence_transactional_ids(props, lease.transactional_ids)
    write_lease(props, flow.pair, None)
    return lease


__all__ = ["LeaseHolder", "new_job_id", "release_lease"]
