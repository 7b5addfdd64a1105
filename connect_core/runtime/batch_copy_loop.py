"""The worker's loop for :class:`~connect_core.api.batch_copy.BatchCopyTask`: source batches to the target as
bytes, acknowledged per batch.

Per batch: one rewrite of the producer fields (CRC only when needed), one handle in SubmittedRecords
(its source offset is the batch's last offset, committed once the target acknowledged it), the route's
``dispatched``/``acknowledged`` calls (metrics, lag, offset syncs and mappings from the batch header:
source base -> target base over the batch's offset range). Nothing per record.

Order per partition across the two paths: a batch waits until the record path has nothing in flight,
and decoded records wait until the batch producer has nothing in flight (switches are rare: old
formats, LogAppendTime, oversize batches).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from connect_core.api.batch_copy import BatchCopyTask, BatchItem, CopyBatch
from connect_core.api.errors import ConnectError
from connect_core.api.message_copy import CopyRoute
from connect_core.api.records import SourceRecord
from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.io_wait import wait_readable
from connect_core.runtime.copied_run import CopiedRun, CopyingWorker
from connect_core.runtime.submitted_records import SubmittedRecords

log = logging.getLogger(__name__)

_DRAIN_TICK_S = 0.05
#: The producer's own wait while a source read is out that cannot be watched with it (no connection yet).
_UNWATCHED_READ_WAIT_S = 0.005


class BatchRun(CopiedRun):
    """One batch in flight (one run for its route); it is also the batch producer's callback."""

    __slots__ = ("copier", "delta")

    def __init__(self, owner: SubmittedRecords, route: CopyRoute, copier: BatchCopier, header: Any) -> None:
        super().__init__(owner, route, route.source_offset(header.last_offset), header.record_count)
        self.copier = copier
        self.first_upstream = header.base_offset
        self.last_upstream = header.last_offset  # a passed batch has no offset gaps: upstream_offsets stays None
        self.value_bytes = header.size  # bytes of the batch as stored (compressed)
        self.first_timestamp = header.base_timestamp
        self.last_timestamp = header.max_timestamp
        self.delta = header.last_offset_delta

    def __call__(self, base_offset: int, error: BaseException | None) -> None:
        if error is not None:
            self.copier.failed(self, error)
            return
        self.delivered = self.count
        if base_offset >= 0:
            self.first_downstream = base_offset
            self.last_downstream = base_offset + self.delta
        self.copier.completed(self)


class BatchCopier:
    """Sends a batch-copy task's items for one WorkerSourceTask (its thread only)."""

    def __init__(
        self,
        worker: CopyingWorker,
        task: BatchCopyTask,
        producer: BatchProducer,
        send_records: Callable[[list[SourceRecord], int | None], None],
        records_in_flight: Callable[[], int],
        drain_records: Callable[[float], None],
        max_in_flight_bytes: int = 32 * 1024 * 1024,
    ) -> None:
        self.worker = worker
        self.task = task
        self.producer = producer
        self._send_records = send_records
        self._records_in_flight = records_in_flight
        self._drain_records = drain_records
        self.records_submitted = 0
        self.records_acked = 0
        self.batches_sent = 0
        self.bytes_sent = 0
        self.fallback_records = 0
        self.max_in_flight_bytes = max_in_flight_bytes
        self.bytes_in_flight = 0  # batch bytes produced and not acknowledged (bounds the task's memory)
        self.runs_in_flight = 0  # copied batches not answered yet (the producer may also carry built ones)

    @property
    def full(self) -> bool:
        """Enough is in flight: serve acknowledgements before fetching more."""
        return self.bytes_in_flight >= self.max_in_flight_bytes

    def send(self, items: list[BatchItem], stopping: Callable[[], bool]) -> tuple[int, list[BatchItem] | None]:
        """Produce ``items`` in order; returns (bytes sent, the items left when records were handed to the
        record path and must be sent before the rest)."""
        nbytes = 0
        submitted = self.worker.submitted
        known = self.worker.known_topics
        for i, item in enumerate(items):
            if isinstance(item, CopyBatch):
                if self._records_in_flight():
                    self._drain(lambda: self._records_in_flight() == 0, self._drain_records, stopping)
                route = item.route
                batch = item.batch
                run = BatchRun(submitted, route, self, batch.header)
                submitted.track(run)
                known.add(route.topic)
                self.producer.send(route.topic, route.partition, batch, run)
                self.records_submitted += run.count
                self.batches_sent += 1
                self.runs_in_flight += 1
                nbytes += run.value_bytes
                self.bytes_in_flight += run.value_bytes
                try:
                    route.dispatched(run)
                except Exception:
                    log.exception("Exception thrown while reporting a dispatched batch of %s", self.worker.id)
            else:
                if self.runs_in_flight:
                    self._drain(lambda: self.runs_in_flight == 0, self.producer.poll, stopping)
                self.fallback_records += len(item.records)
                self._send_records(item.records, item.max_batch_bytes)
                rest = items[i + 1 :]
                return nbytes, rest or None
        self.bytes_sent += nbytes
        return nbytes, None

    def serve_while_reading(self, timeout_s: float) -> None:
        """Serve the target's acknowledgements while the task's read of the source is out, waking for the
        first I/O of either (:mod:`connect_core.kafka.io_wait`): waiting in the producer's network loop alone
        left the read's answer in its socket until each wait ended, which paced the copy by that wait."""
        read, target = self.task.batch_read_handle(), self.producer.wait_handle
        if read is None:
            self.producer.poll(timeout_s)
        elif target is None:
            self.producer.poll(min(timeout_s, _UNWATCHED_READ_WAIT_S))
        else:
            wait_readable((read, target), timeout_s)
            self.producer.poll(0)

    def _drain(self, done: Callable[[], bool], serve: Callable[[float], None], stopping: Callable[[], bool]) -> None:
        """Serve the other path until it has nothing in flight (order across a switch of path)."""
        while not done():
            if stopping():
                raise ConnectError(f"Task {self.worker.id} is stopping while switching copy paths")
            if self.worker.producer_error is not None:
                return
            serve(_DRAIN_TICK_S)
            time.sleep(0)

    def completed(self, run: BatchRun) -> None:
        """The target holds the batch: the worker acknowledges it."""
        self.bytes_in_flight -= run.value_bytes
        self.runs_in_flight -= 1
        self.records_acked += run.count
        self.worker.run_acknowledged(run)

    def failed(self, run: BatchRun, error: BaseException) -> None:
        """A batch the target did not take: the task fails (its offset is never committed)."""
        self.bytes_in_flight -= run.value_bytes
        self.runs_in_flight -= 1
        self.worker.send_failed(error)


__all__ = ["BatchCopier", "BatchRun"]
