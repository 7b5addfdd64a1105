"""Connector and task configs in a one-partition compacted topic, as Java's KafkaConfigBackingStore.

The record formats are :mod:`connect_core.storage.formats`; the replay rules (task configs apply
only with their commit record, inconsistent connectors, compaction leftovers) are the pure
:class:`~connect_core.storage.config_state.ConfigState`. This shell writes records in Java's
order and waits as Java does: every write is acknowledged, then the log is read to its end, so
the writer's own snapshot reflects it when the call returns. Listener calls happen on the log's
consumer thread, only after start() has caught up (as Java), and must not block on this store.

Not implemented: the fencable (transactional) producer of exactly-once source support.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.types import Message
from connect_core.model import RestartRequest, TargetState
from connect_core.storage import formats
from connect_core.storage.api import ClusterConfigState, ConfigUpdateListener
from connect_core.storage.config_state import ConfigChange, ConfigState
from connect_core.storage.internal_topics import CONFIG_STORAGE
from connect_core.storage.kafka_store import READ_WRITE_TIMEOUT_S, KafkaTopicStore

log = logging.getLogger(__name__)


class KafkaConfigBackingStore(KafkaTopicStore):
    storage = CONFIG_STORAGE

    def __init__(
        self,
        topic: NewTopicSpec,
        client_props: Mapping[str, Any],
        *,
        admin: TopicAdmin | None = None,
        timeout_s: float = READ_WRITE_TIMEOUT_S,
    ) -> None:
        self._lock = threading.Lock()
        self._state = ConfigState()
        self._listener: ConfigUpdateListener | None = None
        self._started = False
        spec = NewTopicSpec(topic.name, 1, topic.replication_factor, topic.config)
        super().__init__(
            spec, client_props, admin=admin, timeout_s=timeout_s, require_single_partition=f"{CONFIG_STORAGE}.topic"
        )

    # ------------------------------------------------------------------------------- lifecycle

    def start(self) -> None:
        super().start()
        self._started = True
        log.info("Started KafkaConfigBackingStore")

    def stop(self) -> None:
        self._started = False
        super().stop()

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        self._listener = listener

    # ------------------------------------------------------------------------------- reading

    def _consume(self, msg: Message) -> None:
        with self._lock:
            change = self._state.apply(msg.key(), msg.value(), msg.offset())
        if self._started and change.notify and self._listener is not None:
            try:
                self._notify(self._listener, change)
            except Exception:
                log.exception("Config update listener failed on %s", change.kind)

    def _notify(self, listener: ConfigUpdateListener, change: ConfigChange) -> None:
        kind, connector = change.kind, change.connector
        if kind == "connector_config" and connector is not None:
            listener.on_connector_config_update(connector)
        elif kind == "connector_removed" and connector is not None:
            listener.on_connector_config_remove(connector)
        elif kind == "tasks_committed":
            listener.on_task_config_update(list(change.tasks))
        elif kind == "target_state" and connector is not None:
            listener.on_connector_target_state_change(connector)
        elif kind == "session_key":
            with self._lock:
                key = self._state.session_key
            if key is not None:
                listener.on_session_key_update(key)
        elif kind == "restart" and change.restart is not None:
            hook = getattr(listener, "on_restart_request", None)
            if hook is not None:
                hook(change.restart)
        elif kind == "logger_level":
            record = change.record
            hook = getattr(listener, "on_logging_level_update", None)
            if hook is not None and record is not None:
                hook(record.key[len(formats.LOGGER_CLUSTER_PREFIX) :], record.level)

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            return self._state.snapshot()

    def refresh(self, timeout_s: float) -> None:
        self.read_to_end(timeout_s)

    def contains(self, connector: str) -> bool:
        with self._lock:
            return connector in self._state.connector_configs

    # ------------------------------------------------------------------------------- writing

    def _send_all(self, records: list[tuple[str, bytes | None]], deadline: float, what: str) -> None:
        futures: list[Future[None]] = [self._log.send_future(k.encode("utf-8"), v) for k, v in records]
        try:
            for f in futures:
                f.result(timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise ConnectError(f"Timed out {what} (config topic {self.topic})") from None
        except ConnectError as e:
            raise ConnectError(f"Error {what}: {e}") from e

    def _read_to_end(self, deadline: float, what: str) -> None:
        try:
            self._log.read_to_end().result(timeout=max(0.0, deadline - time.monotonic()))
        except TimeoutError:
            raise ConnectError(f"Timed out {what}: could not read config topic {self.topic} to its end") from None

    def put_connector_config(self, connector: str, config: dict[str, str], target_state: TargetState | None) -> None:
        deadline = time.monotonic() + self._timeout_s
        records: list[tuple[str, bytes | None]] = []
        if target_state is not None:
            records.append((formats.target_state_key(connector), formats.encode_target_state(target_state)))
        records.append((formats.connector_key(connector), formats.encode_connector_config(config)))
        self._send_all(records, deadline, "writing connector configuration")
        self._read_to_end(deadline, "writing connector configuration")

    def remove_connector_config(self, connector: str) -> None:
        deadline = time.monotonic() + self._timeout_s
        records: list[tuple[str, bytes | None]] = [
            (formats.connector_key(connector), None),
            (formats.target_state_key(connector), None),
        ]
        self._send_all(records, deadline, "removing connector configuration")
        self._read_to_end(deadline, "removing connector configuration")

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        deadline = time.monotonic() + self._timeout_s
        self._read_to_end(deadline, "writing task configurations")
        records: list[tuple[str, bytes | None]] = [
            (formats.task_key(connector, i), formats.encode_task_config(cfg)) for i, cfg in enumerate(configs)
        ]
        # Every task record is acknowledged before the commit is sent (Java reads to the end here for
        # the same guarantee; the read after the commit brings our own state up to date).
        self._send_all(records, deadline, "writing task configurations")
        self._send_all(
            [(formats.commit_key(connector), formats.encode_task_commit(len(configs)))],
            deadline,
            "committing task configurations",
        )
        self._read_to_end(deadline, "committing task configurations")

    def put_target_state(self, connector: str, state: TargetState) -> None:
        # Java waits for the acknowledgement only; the change arrives through the log like any other.
        deadline = time.monotonic() + self._timeout_s
        self._send_all(
            [(formats.target_state_key(connector), formats.encode_target_state(state))],
            deadline,
            "writing target state",
        )

    def put_session_key(self, key: dict[str, Any]) -> None:
        deadline = time.monotonic() + self._timeout_s
        self._send_all(
            [(formats.SESSION_KEY_KEY, formats.encode_session_key_map(key))], deadline, "writing the session key"
        )
        self._read_to_end(deadline, "writing the session key")

    def put_task_count_record(self, connector: str, count: int) -> None:
        deadline = time.monotonic() + self._timeout_s
        self._send_all(
            [(formats.task_count_record_key(connector), formats.encode_task_count_record(count))],
            deadline,
            "writing the task count record",
        )
        self._read_to_end(deadline, "writing the task count record")

    def put_restart_request(self, request: RestartRequest) -> None:
        deadline = time.monotonic() + self._timeout_s
        value = formats.encode_restart_request(request.include_tasks, request.only_failed)
        self._send_all([(formats.restart_key(request.connector), value)], deadline, "writing a restart request")
        self._read_to_end(deadline, "writing a restart request")

    def put_logger_level(self, namespace: str, level: str) -> None:
        deadline = time.monotonic() + self._timeout_s
        value = formats.encode_logger_level(level)
        self._send_all([(formats.logger_cluster_key(namespace), value)], deadline, "writing a logger level")
