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
from connect_core.runtime.message_copy_loop import CopyingWorker
from connect_core.runtime.submitted_records import SubmittedRecord, SubmittedRecords

log = logging.getLogger(__name__)

_DRAIN_TICK_S = 0.05


class BatchRun(SubmittedRecord):
    """One batch in flight: its SubmittedRecords handle and what the route hears of it (a ``CopyRun``)."""

    __slots__ = (
        "_delta",
        "copier",
        "count",
        "delivered",
        "first_downstream",
        "first_timestamp",
        "first_upstream",
        "last_downstream",
        "last_timestamp",
        "last_upstream",
        "route",
        "skipped",
        "upstream_offsets",
        "value_bytes",
    )

    def __init__(self, owner: SubmittedRecords, route: CopyRoute, copier: BatchCopier, header: Any) -> None:
        super().__init__(owner, None, route.source_partition, route.source_offset(header.last_offset))
        self.route = route
        self.copier = copier
        self.count = header.record_count
        self.delivered = 0
        self.skipped = 0
        self.first_upstream = header.base_offset
        self.last_upstream = header.last_offset
        self.upstream_offsets: list[int] | None = None  # a passed batch has no offset gaps
        self.value_bytes = header.size  # bytes of the batch as stored (compressed)
        self.first_timestamp = header.base_timestamp
        self.last_timestamp = header.max_timestamp
        self.first_downstream = self.last_downstream = -1
        self._delta = header.last_offset_delta

    def __call__(self, base_offset: int, error: BaseException | None) -> None:
        if error is not None:
            self.copier.failed(self, error)
            return
        self.delivered = self.count
        if base_offset >= 0:
            self.first_downstream = base_offset
            self.last_downstream = base_offset + self._delta
        self.copier.completed(self)


class BatchCopier:
    """Sends a batch-copy task's items for one WorkerSourceTask (its thread only)."""

    def __init__(
        self,
        worker: CopyingWorker,
        task: BatchCopyTask,
        producer: BatchProducer,
        send_records: Callable[[list[SourceRecord]], None],
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

    @property
    def full(self) -> bool:
        """Enough is in flight: serve acknowledgements before fetching more."""
        return self.bytes_in_flight >= self.max_in_flight_bytes

    def send(self, items: list[BatchItem], stopping: Callable[[], bool]) -> tuple[int, list[BatchItem] | None]:
        """Produce ``items`` in order; returns (bytes sent, the items left when records were handed to the
        record path and must be sent before the rest)."""
        nbytes = 0
        submitted = self.worker.submitted
        known = self.worker._known_topics
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
                nbytes += run.value_bytes
                self.bytes_in_flight += run.value_bytes
                try:
                    route.dispatched(run)
                except Exception:
                    log.exception("Exception thrown while reporting a dispatched batch of %s", self.worker.id)
            else:
                if self.producer.in_flight:
                    self._drain(lambda: self.producer.in_flight == 0, self.producer.poll, stopping)
                self.fallback_records += len(item.records)
                self._send_records(item.records)
                rest = items[i + 1 :]
                return nbytes, rest or None
        self.bytes_sent += nbytes
        return nbytes, None

    def _drain(self, done: Callable[[], bool], serve: Callable[[float], None], stopping: Callable[[], bool]) -> None:
        """Serve the other path until it has nothing in flight (order across a switch of path)."""
        while not done():
            if stopping():
                raise ConnectError(f"Task {self.worker.id} is stopping while switching copy paths")
            if self.worker._producer_error is not None:
                return
            serve(_DRAIN_TICK_S)
            time.sleep(0)

    def completed(self, run: BatchRun) -> None:
        self.bytes_in_flight -= run.value_bytes
        run.ack()
        worker = self.worker
        worker._non_delivery_acks += 1  # the handle is no record; records are counted here
        self.records_acked += run.count
        try:
            worker._run_acknowledged(run)  # type: ignore[arg-type]
        except Exception:
            log.exception("Exception thrown while acknowledging a batch of %s", worker.id)
        topic = run.route.topic
        if worker._status_store is not None and topic not in worker._active_topics:
            worker._record_active_topic(topic)

    def failed(self, run: BatchRun, error: BaseException) -> None:
        """A batch the target did not take: the task fails (its offset is never committed)."""
        self.bytes_in_flight -= run.value_bytes
        worker = self.worker
        worker._failed_sends += 1
        if worker._producer_error is None:
            worker._producer_error = error


__all__ = ["BatchCopier", "BatchRun"]
