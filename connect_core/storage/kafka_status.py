"""Connector, task and topic statuses in a compacted topic, as Java's KafkaStatusBackingStore.

Writes go to the topic and become visible to readers (including this worker) only when read
back, so every worker converges on the log's order. ``put_safe`` skips a write when the cached
status came from another worker with a newer generation: a worker that lost a task in a
rebalance must not overwrite its new owner's status. A write that fails with a retriable error is
re-sent unless a newer local write of the same entity superseded it (per-entity sequence numbers).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from connect_core.api.errors import DataError, RetriableError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.types import Message
from connect_core.model import ConnectorTaskId
from connect_core.storage import formats
from connect_core.storage.api import ConnectorStatus, TaskStatus, TopicStatus
from connect_core.storage.internal_topics import STATUS_STORAGE
from connect_core.storage.kafka_store import READ_WRITE_TIMEOUT_S, KafkaTopicStore

log = logging.getLogger(__name__)

S = TypeVar("S", ConnectorStatus, TaskStatus)
_MAX_RESENDS = 5


@dataclass
class _Entry(Generic[S]):
    value: S | None = None
    sequence: int = 0
    deleted: bool = False

    def can_write_safely(self, status: S, sequence: int | None = None) -> bool:
        if sequence is not None and sequence != self.sequence:
            return False
        v = self.value
        return v is None or v.worker_id == status.worker_id or v.generation <= status.generation


class KafkaStatusBackingStore(KafkaTopicStore):
    storage = STATUS_STORAGE

    def __init__(
        self,
        topic: NewTopicSpec,
        client_props: Mapping[str, Any],
        *,
        admin: TopicAdmin | None = None,
        timeout_s: float = READ_WRITE_TIMEOUT_S,
    ) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, _Entry[ConnectorStatus]] = {}
        self._tasks: dict[str, dict[int, _Entry[TaskStatus]]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}
        super().__init__(topic, client_props, admin=admin, timeout_s=timeout_s)

    def flush(self) -> None:
        self._log.flush()

    # ------------------------------------------------------------------------------- writing

    def _entry(self, status: ConnectorStatus | TaskStatus) -> _Entry[Any]:
        if isinstance(status, ConnectorStatus):
            return self._connectors.setdefault(status.connector, _Entry())
        return self._tasks.setdefault(status.id.connector, {}).setdefault(status.id.task, _Entry())

    def _send(self, status: ConnectorStatus | TaskStatus, safe: bool, attempt: int = 0) -> None:
        if isinstance(status, ConnectorStatus):
            key = formats.connector_status_key(status.connector)
            value = formats.encode_connector_status(status)
        else:
            key = formats.task_status_key(status.id)
            value = formats.encode_task_status(status)
        with self._lock:
            entry = self._entry(status)
            if safe and not entry.can_write_safely(status):
                return
            entry.sequence += 1
            sequence = entry.sequence

        def done(error: BaseException | None, _msg: Message | None) -> None:
            if error is None:
                return
            if isinstance(error, RetriableError) and attempt < _MAX_RESENDS:
                with self._lock:
                    current = self._entry(status)
                    superseded = current.deleted or current.sequence != sequence
                if not superseded:
                    log.warning("Retrying status write %s after %s", key, error)
                    self._send(status, safe, attempt + 1)
                    return
            log.error("Failed to write status %s: %s", key, error)

        self._log.send(key.encode("utf-8"), value, done)

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        self._send(status, safe=False)

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        self._send(status, safe=True)

    def put_topic(self, status: TopicStatus) -> None:
        key = formats.topic_status_key(status.topic, status.connector)
        self._log.send(key.encode("utf-8"), formats.encode_topic_status(status), _log_failure(key))

    def delete_topics(self, connector: str) -> None:
        with self._lock:
            topics = list(self._topics.get(connector, {}))
        for topic in topics:
            key = formats.topic_status_key(topic, connector)
            self._log.send(key.encode("utf-8"), None, _log_failure(key))

    # ------------------------------------------------------------------------------- reading

    def _consume(self, msg: Message) -> None:
        parsed = formats.decode_status_key(msg.key())
        if parsed is None:
            log.warning("Discarding record with invalid key %r from status topic %s", msg.key(), self.topic)
            return
        value = msg.value()
        try:
            with self._lock:
                if parsed.kind == "connector":
                    entry_c = self._connectors.setdefault(parsed.connector, _Entry())
                    if value is None:
                        entry_c.value, entry_c.deleted = None, True
                    else:
                        entry_c.value, entry_c.deleted = formats.decode_connector_status(parsed.connector, value), False
                elif parsed.kind == "task" and parsed.task is not None:
                    row = self._tasks.setdefault(parsed.connector, {})
                    entry_t = row.setdefault(parsed.task.task, _Entry())
                    if value is None:
                        entry_t.value, entry_t.deleted = None, True
                    else:
                        entry_t.value, entry_t.deleted = formats.decode_task_status(parsed.task, value), False
                elif parsed.kind == "topic" and parsed.topic is not None:
                    if value is None:
                        self._topics.get(parsed.connector, {}).pop(parsed.topic, None)
                    else:
                        self._topics.setdefault(parsed.connector, {})[parsed.topic] = formats.decode_topic_status(value)
        except DataError as e:
            log.error("Failed to read status record %r from %s: %s", msg.key(), self.topic, e)

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            entry = self._connectors.get(connector)
            return None if entry is None else entry.value

    def get_task(self, task: ConnectorTaskId) -> TaskStatus | None:
        with self._lock:
            entry = self._tasks.get(task.connector, {}).get(task.task)
            return None if entry is None else entry.value

    def get_all_tasks(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            row = self._tasks.get(connector, {})
            return [e.value for _, e in sorted(row.items()) if e.value is not None]

    def get_topics(self, connector: str) -> list[TopicStatus]:
        with self._lock:
            return list(self._topics.get(connector, {}).values())

    def connectors(self) -> set[str]:
        with self._lock:
            return {name for name, e in self._connectors.items() if e.value is not None}


def _log_failure(key: str) -> Callable[[BaseException | None, Message | None], None]:
    def done(error: BaseException | None, _msg: Message | None) -> None:
        if error is not None:
            log.error("Failed to write status %s: %s", key, error)

    return done
