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
from collections.abc import Callable
from typing import Any, Protocol

from connect_core.api.message_copy import CopyRoute, MessageCopyTask
from connect_core.api.records import SourceRecord
from connect_core.kafka.errors import from_kafka_error
from connect_core.kafka.types import KafkaError, KafkaException
from connect_core.model import ConnectorTaskId
from connect_core.runtime.connector_config import TopicCreationGroup
from connect_core.runtime.submitted_records import SubmittedRecord, SubmittedRecords
from connect_core.runtime.tolerance import RetryWithToleranceOperator, Stage
from connect_core.storage.api import StatusBackingStore


class CopyingWorker(Protocol):
    """What the loop uses of the WorkerSourceTask it runs for: its producer, its in-flight bookkeeping
    and counters. Declared here so that the loop and the task do not import each other."""

    id: ConnectorTaskId
    producer: Any
    submitted: SubmittedRecords
    tolerance: RetryWithToleranceOperator
    _known_topics: set[str]
    _active_topics: set[str]
    _topic_creator: Callable[[str, TopicCreationGroup | None], bool] | None
    _status_store: StatusBackingStore | None
    _producer_error: BaseException | None
    _non_delivery_acks: int
    _failed_sends: int
    _skipped: int

    def _produce_when_room(self, topic: str, value: Any, key: Any, p: int, cb: Any, t: int, headers: Any) -> None: ...

    def _record_active_topic(self, topic: str) -> None: ...

    def _run_acknowledged(self, run: CopyRunHandle) -> None: ...


log = logging.getLogger(__name__)

_OPEN = sys.maxsize  # the count of a run still being produced: no delivery report can complete it


class CopyRunHandle(SubmittedRecord):
    """One run in flight: its SubmittedRecords handle, its delivery callback and what it reports."""

    __slots__ = (
        "copier",
        "count",
        "delivered",
        "first_downstream",
        "first_timestamp",
        "first_upstream",
        "last_downstream",
        "last_msg",
        "last_timestamp",
        "last_upstream",
        "route",
        "skipped",
        "upstream_offsets",
        "value_bytes",
    )

    def __init__(self, owner: SubmittedRecords, route: CopyRoute, copier: MessageCopier) -> None:
        # key: set by SubmittedRecords.track; offset: when the run is closed
        super().__init__(owner, None, route.source_partition, None)
        self.route = route
        self.copier = copier
        self.count = _OPEN
        self.delivered = 0
        self.skipped = 0
        self.first_upstream = self.last_upstream = -1
        self.upstream_offsets: list[int] | None = None
        self.value_bytes = 0
        self.first_timestamp = self.last_timestamp = -1
        self.first_downstream = self.last_downstream = -1
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
        known = worker._known_topics
        creator = worker._topic_creator
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
                    if creator is not None:
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
                worker._produce_when_room(
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
        """Every record of the run was delivered or skipped: ack it and tell the task."""
        msg = run.last_msg
        run.last_msg = None
        if msg is not None:
            run.last_downstream = msg.offset()
        run.ack()
        worker = self.worker
        worker._non_delivery_acks += 1  # the handle itself is no record; records are counted here
        self.records_acked += run.count - run.skipped
        try:
            worker._run_acknowledged(run)
        except Exception:
            log.exception("Exception thrown while acknowledging a run of %s", worker.id)
        topic = run.route.topic
        if worker._status_store is not None and topic not in worker._active_topics:
            worker._record_active_topic(topic)

    def failed(self, run: CopyRunHandle, err: KafkaError) -> None:
        """A record of the run was not delivered: skip it (errors.tolerance=all) or fail the task."""
        worker = self.worker
        worker._failed_sends += 1
        topic = run.route.topic
        if worker.tolerance.tolerates_all:
            worker.tolerance.failed(Stage.KAFKA_PRODUCE, from_kafka_error(err, f"send to {topic}"))
            worker._skipped += 1
            run.skipped += 1
            run.delivered += 1
            if run.delivered == run.count:
                self.completed(run)
        elif worker._producer_error is None:
            worker._producer_error = from_kafka_error(err, f"Failed to send record to topic '{topic}'")


__all__ = ["CopyRunHandle", "MessageCopier"]
