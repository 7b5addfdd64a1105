"""The periodic offset flush of one source task (Java's ``WorkerSourceTask.commitOffsets``).

Only offsets behind the longest acknowledged prefix of each source partition are written
(:class:`~connect_core.runtime.submitted_records.SubmittedRecords`), every ``offset.flush.interval.ms``,
without blocking the task's loop: a flush is started, and its future checked on later turns; one that
outlasts ``offset.flush.timeout.ms`` is cancelled and retried with newer offsets at the next interval.
At stop, the producer is drained (bounded) and the last committable offsets written synchronously.
Runs on the task's thread only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future

from connect_core.api.errors import ConnectError
from connect_core.model import ConnectorTaskId
from connect_core.runtime.source_task_collaborators import TaskMetrics
from connect_core.runtime.submitted_records import CommittableOffsets, SubmittedRecords
from connect_core.storage.offset_storage import OffsetStorageWriter

log = logging.getLogger(__name__)


class SourceOffsetFlusher:
    """Flush state of one task: what is committable, the flush in progress, when the next one is due."""

    def __init__(
        self,
        task_id: ConnectorTaskId,
        writer: OffsetStorageWriter,
        submitted: SubmittedRecords,
        metrics: TaskMetrics,
        commit_task: Callable[[], None],
        interval_s: float,
        timeout_s: float,
        cancelled: Callable[[], bool],
        clock: Callable[[], float],
    ) -> None:
        self.task_id = task_id
        self.writer = writer
        self.submitted = submitted
        self.metrics = metrics
        self.commit_task = commit_task  # the task's own commit() hook, after offsets are written
        self.interval_s = interval_s
        self.timeout_s = timeout_s
        self.cancelled = cancelled
        self.clock = clock
        self.committable = CommittableOffsets.empty()
        self.future: Future[None] | None = None
        self.started = 0.0
        self.next_due = 0.0

    def schedule_first(self) -> None:
        self.next_due = self.clock() + self.interval_s

    def update_committable(self) -> None:
        """Move acknowledged prefixes out of SubmittedRecords (also keeps its memory bounded)."""
        self.committable = self.committable.updated_with(self.submitted.committable_offsets())

    def maybe_flush(self) -> None:
        """Called on every turn of the task's loop: check the running flush, or start one when due."""
        now = self.clock()
        fut = self.future
        if fut is not None:
            if fut.done():
                self.future = None
                self._finish(fut)
            elif now - self.started > self.timeout_s:
                log.error("Task %s timed out waiting to flush offsets to storage; will try again on the next "
                          "flush interval with the latest offsets", self.task_id)  # fmt: skip
                self.future = None
                self.writer.cancel_flush()
                self.metrics.record_commit(False, now - self.started)
            return
        if now < self.next_due:
            return
        self.next_due = now + self.interval_s
        if self.cancelled():
            return
        self._start(now)

    def _start(self, now: float) -> Future[None] | None:
        """Begin an offset flush; returns its future (None when nothing had to be written)."""
        self.update_committable()
        offsets, self.committable = self.committable, CommittableOffsets.empty()
        for partition, offset in offsets.offset_map():
            if partition is not None:
                self.writer.offset(partition, offset)
        if offsets.has_pending:
            log.debug(
                "Task %s: %d records still unacknowledged at offset commit", self.task_id, offsets.num_uncommittable
            )
        try:
            should_flush = self.writer.begin_flush(self.timeout_s)
        except ConnectError as e:
            log.warning("Task %s could not begin an offset flush: %s", self.task_id, e)
            self.metrics.record_commit(False, 0.0)
            return None
        if not should_flush:
            self.commit_task()
            self.metrics.record_commit(True, self.clock() - now)
            return None
        fut = self.writer.do_flush()
        if fut is None:
            self.writer.cancel_flush()
            self.metrics.record_commit(False, self.clock() - now)
            return None
        self.future = fut
        self.started = now
        if fut.done():
            self.future = None
            self._finish(fut)
        return fut

    def _finish(self, fut: Future[None]) -> bool:
        error = fut.exception()
        duration = self.clock() - self.started
        if error is not None:
            log.error("Task %s failed to flush offsets to storage: %s", self.task_id, error)
            self.metrics.record_commit(False, duration)
            return False
        self.metrics.record_commit(True, duration)
        self.commit_task()
        return True

    def final_flush(self, drain_producer: Callable[[float], int]) -> None:
        """At stop: drain the producer within the timeout, then write every committable offset."""
        if self.cancelled():
            log.debug("Skipping final offset commit of %s: the task was cancelled", self.task_id)
            return
        deadline = self.clock() + self.timeout_s
        remaining = drain_producer(max(0.0, deadline - self.clock()))
        if remaining:
            log.warning("Task %s: %d records were not acknowledged within offset.flush.timeout.ms; their offsets "
                        "are not committed", self.task_id, remaining)  # fmt: skip
        fut = self.future
        if fut is not None:
            self.future = None
            try:
                fut.result(timeout=max(0.0, deadline - self.clock()))
                self._finish(fut)
            except Exception:
                self.writer.cancel_flush()
        if self.cancelled():
            return
        fut = self._start(self.clock())
        if fut is None or self.future is None:
            return
        self.future = None
        try:
            fut.result(timeout=max(0.1, deadline - self.clock()))
        except TimeoutError:
            log.error("Task %s timed out flushing offsets at stop", self.task_id)
            self.writer.cancel_flush()
            return
        except Exception:
            pass
        self._finish(fut)
