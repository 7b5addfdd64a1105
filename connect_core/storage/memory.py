"""In-memory twins of the backing stores (standalone mode, tests, and the base of the file store).

They follow Java's ``Memory*BackingStore``: no persistence, ``put_safe`` is ``put``, a DESTROYED
status removes the entity, task configs replace the connector's previous set at once.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.storage.api import (
    ClusterConfigState,
    ConfigUpdateListener,
    ConnectorStatus,
    TaskStatus,
    TopicStatus,
)
from connect_core.storage.offset_storage import canonical_key, deserialize_offset_key, partition_identity


class OffsetTable:
    """Latest value per offset key plus each connector's partitions; not thread-safe by itself.

    Keys are indexed in a member-order-independent form so offsets Java wrote (HashMap member
    order) and offsets we wrote are found alike; the raw bytes are kept for writing back.
    """

    def __init__(self) -> None:
        self.data: dict[bytes, tuple[bytes, bytes | None]] = {}
        self._partitions: dict[str, dict[tuple[tuple[str, Any], ...], dict[str, Any]]] = {}

    def apply(self, key: bytes | None, value: bytes | None) -> None:
        """Record one write (None value = tombstone), last value wins."""
        if key is None:
            return
        self.data[canonical_key(key)] = (key, value)
        parsed = deserialize_offset_key(key)
        if parsed is None:
            return
        connector, partition = parsed
        if partition is None:
            return
        parts = self._partitions.setdefault(connector, {})
        if value is None:
            parts.pop(partition_identity(partition), None)
        else:
            parts[partition_identity(partition)] = partition

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        out: dict[bytes, bytes | None] = {}
        for k in keys:
            entry = self.data.get(canonical_key(k))
            out[k] = None if entry is None else entry[1]
        return out

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        return [dict(p) for p in self._partitions.get(connector, {}).values()]

    def items(self) -> list[tuple[bytes, bytes | None]]:
        return list(self.data.values())


class MemoryOffsetBackingStore:
    """Offsets in a dict; ``set`` completes before it returns (the callback runs on the caller)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._table = OffsetTable()

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            return self._table.get(keys)

    def set(
        self,
        values: dict[bytes, bytes | None],
        callback: Callable[[BaseException | None], None] | None = None,
    ) -> Future[None]:
        future: Future[None] = Future()
        error: BaseException | None = None
        try:
            with self._lock:
                for k, v in values.items():
                    self._table.apply(k, v)
                self._save()
        except Exception as e:
            error = e
        if callback is not None:
            callback(error)
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
        return future

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        with self._lock:
            return self._table.connector_partitions(connector)

    def _save(self) -> None:
        """Hook for subclasses that persist (called under the lock after each ``set``)."""


class MemoryStatusBackingStore:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[str, dict[int, TaskStatus]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def put(self, status: ConnectorStatus | TaskStatus) -> None:
        with self._lock:
            if isinstance(status, ConnectorStatus):
                if status.state == State.DESTROYED:
                    self._connectors.pop(status.connector, None)
                else:
                    self._connectors[status.connector] = status
            else:
                row = self._tasks.setdefault(status.id.connector, {})
                if status.state == State.DESTROYED:
                    row.pop(status.id.task, None)
                    if not row:
                        del self._tasks[status.id.connector]
                else:
                    row[status.id.task] = status

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        # One process owns every status here, so no other generation can race (as in Java).
        self.put(status)

    def put_topic(self, status: TopicStatus) -> None:
        with self._lock:
            self._topics.setdefault(status.connector, {})[status.topic] = status

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        with self._lock:
            return self._connectors.get(connector)

    def get_task(self, task: ConnectorTaskId) -> TaskStatus | None:
        with self._lock:
            return self._tasks.get(task.connector, {}).get(task.task)

    def get_all_tasks(self, connector: str) -> list[TaskStatus]:
        with self._lock:
            return [s for _, s in sorted(self._tasks.get(connector, {}).items())]

    def get_topics(self, connector: str) -> list[TopicStatus]:
        with self._lock:
            return list(self._topics.get(connector, {}).values())

    def delete_topics(self, connector: str) -> None:
        with self._lock:
            self._topics.pop(connector, None)

    def connectors(self) -> set[str]:
        with self._lock:
            return set(self._connectors)

    def read_to_end(self, timeout_s: float | None = None) -> None:
        """Everything written is already read: the store is this process's memory."""

    def flush(self) -> None:
        pass


class _ConnectorEntry:
    __slots__ = ("config", "target_state", "task_configs")

    def __init__(self, config: dict[str, str], target_state: TargetState) -> None:
        self.config = config
        self.target_state = target_state
        self.task_configs: list[dict[str, str]] = []


class MemoryConfigBackingStore:
    """Connector and task configs in memory; listeners are called synchronously, outside the lock."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._connectors: dict[str, _ConnectorEntry] = {}
        self._listener: ConfigUpdateListener | None = None

    def start(self) -> None:
        pass

    def stop(self) -> None:
        pass

    def set_update_listener(self, listener: ConfigUpdateListener) -> None:
        self._listener = listener

    def snapshot(self) -> ClusterConfigState:
        with self._lock:
            state = ClusterConfigState(offset=-1)
            for name, entry in self._connectors.items():
                state.connector_configs[name] = dict(entry.config)
                state.target_states[name] = entry.target_state
                state.task_counts[name] = len(entry.task_configs)
                for i, cfg in enumerate(entry.task_configs):
                    state.task_configs[ConnectorTaskId(name, i)] = dict(cfg)
            return state

    def refresh(self, timeout_s: float) -> None:
        pass

    def contains(self, connector: str) -> bool:
        with self._lock:
            return connector in self._connectors

    def put_connector_config(self, connector: str, config: dict[str, str], target_state: TargetState | None) -> None:
        with self._lock:
            entry = self._connectors.get(connector)
            if entry is None:
                self._connectors[connector] = _ConnectorEntry(dict(config), target_state or TargetState.STARTED)
            else:
                entry.config = dict(config)
                if target_state is not None:
                    entry.target_state = target_state
        if self._listener is not None:
            self._listener.on_connector_config_update(connector)

    def remove_connector_config(self, connector: str) -> None:
        with self._lock:
            removed = self._connectors.pop(connector, None)
        if removed is not None and self._listener is not None:
            self._listener.on_connector_config_remove(connector)

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        with self._lock:
            entry = self._connectors.get(connector)
            if entry is None:
                raise ValueError(f"Cannot put tasks for non-existing connector {connector}")
            entry.task_configs = [copy.copy(c) for c in configs]
            ids = [ConnectorTaskId(connector, i) for i in range(len(configs))]
        if self._listener is not None:
            self._listener.on_task_config_update(ids)

    def put_target_state(self, connector: str, state: TargetState) -> None:
        with self._lock:
            entry = self._connectors.get(connector)
            if entry is None:
                raise ValueError(f"No connector `{connector}` configured")
            previous = entry.target_state
            entry.target_state = state
        if self._listener is not None and previous != state:
            self._listener.on_connector_target_state_change(connector)

    def put_session_key(self, key: dict[str, Any]) -> None:
        """No-op: sessions only matter between distributed workers."""

    def put_task_count_record(self, connector: str, count: int) -> None:
        """No-op: task-count records only fence zombie tasks in distributed exactly-once mode."""
