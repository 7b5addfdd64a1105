"""The worker's loop for :class:`~connect_core.api.message_copy.MessageCopyTask`: consumed messages straight
to the producer, acknowledged per run.

Per record this costs what any Python copy costs (the message's accessors, one ``produce``, one
delivery report into :meth:`CopyRunHandle.__call__`); everything else - the SubmittedRecords
handle, the source offset, the task's callbacks, metrics, active-topic tracking - happens once per
run. The producer keeps each partition in order (the worker uses this loop only then), so delivery
reports of a run arrive in produce order and its first and last reports carry the downstream
offsets of its first and last records.

Anything unusual (a topic the worker must create first, a send the producer refuses at once) hands
the rest of the batch to the general path as SourceRecords, which knows retries and tolerance.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from connect_core.api.message_copy import CopyRoute, MessageCopyTask
from connect_core.api.records import SourceRecord
from connect_core.kafka.types import KafkaError, KafkaException
from connect_core.runtime.copied_run import CopiedRun, CopyingWorker
from connect_core.runtime.submitted_records import SubmittedRecords

log = logging.getLogger(__name__)

_OPEN = sys.maxsize  # the count of a run still being produced: no delivery report can complete it


class CopyRunHandle(CopiedRun):
    """One run of messages in flight; it is also the delivery callback of each of its records."""

    __slots__ = ("copier", "last_msg")

    def __init__(self, owner: SubmittedRecords, route: CopyRoute, copier: MessageCopier) -> None:
        # offset: set when the run is closed
        super().__init__(owner, route, None, _OPEN)
        self.copier = copier
        self.last_msg: Any = None

    def __call__(self, err: KafkaError | None, msg: Any) -> None:
        if err is None:
            if self.first_downstream < 0:
                self.first_downstream = msg.offset()
            self.last_msg = msg
            self.delivered += 1
            if self.delivered == self.count:
                self.copier.completed(self)
        else:
            self.copier.failed(self, err)


class MessageCopier:
    """Sends a task's consumed messages for one WorkerSourceTask (its thread only)."""

    def __init__(self, worker: CopyingWorker, task: MessageCopyTask) -> None:
        self.worker = worker
        self.task = task
        self.records_submitted = 0  # records in runs handed to SubmittedRecords (one handle per run)
        self.records_acked = 0  # records delivered in completed runs (tolerated failures excluded)

    def send(self, messages: list[Any]) -> tuple[int, list[SourceRecord] | None]:
        """Produce ``messages``; returns (value bytes sent, the rest as SourceRecords if the general
        path must take over, else None)."""
        worker = self.worker
        task = self.task
        produce = worker.producer.produce
        known = worker.known_topics
        creates_topics = worker.creates_topics
        nbytes = 0
        run: CopyRunHandle | None = None
        start = 0
        run_bytes_at = 0
        last_topic: str | None = None
        last_partition = -1
        route_topic = ""
        route_partition = -1
        for i, msg in enumerate(messages):
            if msg.error() is not None:
                if run is not None:
                    self._close(run, messages, start, i, nbytes - run_bytes_at)
                    run = None
                    last_topic = None
                task.message_error(msg)
                continue
            partition = msg.partition()
            topic = msg.topic()
            if partition != last_partition or topic != last_topic:
                if run is not None:
                    self._close(run, messages, start, i, nbytes - run_bytes_at)
                    run = None
                route = task.route(topic, partition)
                route_topic = route.topic
                route_partition = route.partition
                if route_topic not in known:
                    if creates_topics:
                        return nbytes, task.to_source_records(messages[i:])
                    known.add(route_topic)
                run = CopyRunHandle(worker.submitted, route, self)
                start = i
                run_bytes_at = nbytes
                last_topic = topic
                last_partition = partition
            value = msg.value()
            ts = msg.timestamp()[1]
            try:
                produce(route_topic, value, msg.key(), route_partition, run, None, ts if ts > 0 else 0, msg.headers())
            except BufferError:
                worker.produce_when_room(
                    route_topic, value, msg.key(), route_partition, run, ts if ts > 0 else 0, msg.headers()
                )
            except KafkaException:
                # Refused before queueing (e.g. too large): the general path decides, with tolerance.
                assert run is not None
                if i > start:
                    self._close(run, messages, start, i, nbytes - run_bytes_at)
                return nbytes, task.to_source_records(messages[i:])
            if value is not None:
                nbytes += len(value)
        if run is not None:
            self._close(run, messages, start, len(messages), nbytes - run_bytes_at)
        return nbytes, None

    def _close(self, run: CopyRunHandle, messages: list[Any], start: int, end: int, value_bytes: int) -> None:
        """The run's last record was produced: fix its count and offset, track it, report it."""
        first = messages[start]
        last = messages[end - 1]
        count = end - start
        run.first_upstream = first_offset = first.offset()
        run.last_upstream = last_offset = last.offset()
        if last_offset - first_offset != count - 1:
            run.upstream_offsets = [m.offset() for m in messages[start:end]]
        run.first_timestamp = first.timestamp()[1]
        run.last_timestamp = last.timestamp()[1]
        run.value_bytes = value_bytes
        run.offset = run.route.source_offset(last_offset)
        self.worker.submitted.track(run)
        self.records_submitted += count
        run.count = count  # no delivery report is served before the check below
        try:
            run.route.dispatched(run)
        except Exception:
            log.exception("Exception thrown while reporting a dispatched run of %s", self.worker.id)
        if run.delivered >= count:  # reports served while the run was still being produced
            self.completed(run)

    def completed(self, run: CopyRunHandle) -> None:
        """Every record of the run was delivered or skipped: the worker acknowledges it."""
        msg = run.last_msg
        run.last_msg = None
        if msg is not None:
            run.last_downstream = msg.offset()
        self.records_acked += run.count - run.skipped
        self.worker.run_acknowledged(run)

    def failed(self, run: CopyRunHandle, err: KafkaError) -> None:
        """A record of the run was not delivered: skip it (errors.tolerance=all) or fail the task."""
        if self.worker.record_send_failed(err, run.route.topic):
            run.skipped += 1
            run.delivered += 1
            if run.delivered == run.count:
                self.completed(run)


__all__ = ["CopyRunHandle", "MessageCopier"]
