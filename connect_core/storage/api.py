"""Contracts of the backing stores; the worker and herders program against these.

Keys and values of the offset store are the serialized bytes Connect writes (JSON key
``["<connector>", {partition}]``, JSON value), so a Kafka-backed store is byte-compatible with
Java Connect's ``connect-offsets`` topic.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_core.model import ConnectorTaskId, State, TargetState


class OffsetBackingStore(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        """Latest values for ``keys`` (read to the end of the log first when Kafka-backed)."""
        ...

    def set(
        self,
        values: dict[bytes, bytes | None],
        callback: Callable[[BaseException | None], None] | None = None,
    ) -> Future[None]:
        """Write; the future completes when every write is acknowledged (None value = tombstone)."""
        ...

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        """Every source partition the connector has ever committed an offset for (KIP-875 GET)."""
        ...


@dataclass
class ConnectorStatus:
    connector: str
    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


@dataclass
class TaskStatus:
    id: ConnectorTaskId
    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


@dataclass
class TopicStatus:
    topic: str
    connector: str
    task: int
    discover_timestamp: int


class StatusBackingStore(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...

    def put(self, status: ConnectorStatus | TaskStatus) -> None: ...

    def put_safe(self, status: ConnectorStatus | TaskStatus) -> None:
        """Write only if no newer generation has written this entity's status."""
        ...

    def put_topic(self, status: TopicStatus) -> None: ...

    def get_connector(self, connector: str) -> ConnectorStatus | None: ...

    def get_task(self, task: ConnectorTaskId) -> TaskStatus | None: ...

    def get_all_tasks(self, connector: str) -> list[TaskStatus]: ...

    def get_topics(self, connector: str) -> list[TopicStatus]: ...

    def delete_topics(self, connector: str) -> None: ...

    def connectors(self) -> set[str]: ...

    def flush(self) -> None: ...


@dataclass
class ClusterConfigState:
    """An immutable snapshot of the config log (Java ClusterConfigState)."""

    offset: int = -1
    connector_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    target_states: dict[str, TargetState] = field(default_factory=dict)
    task_configs: dict[ConnectorTaskId, dict[str, str]] = field(default_factory=dict)
    task_counts: dict[str, int] = field(default_factory=dict)
    inconsistent: set[str] = field(default_factory=set)
    session_key: dict[str, Any] | None = None
    # KIP-618 zombie fencing (Java keeps these after a connector is deleted: a re-created one fences them).
    task_count_records: dict[str, int] = field(default_factory=dict)
    task_config_generations: dict[str, int] = field(default_factory=dict)
    connectors_pending_fencing: set[str] = field(default_factory=set)

    def connectors(self) -> list[str]:
        return sorted(self.connector_configs)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        if connector in self.inconsistent:
            return []
        return [ConnectorTaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]

    def task_config(self, task: ConnectorTaskId) -> dict[str, str] | None:
        return self.task_configs.get(task)

    def target_state(self, connector: str) -> TargetState | None:
        if connector not in self.connector_configs:
            return None
        return self.target_states.get(connector, TargetState.STARTED)

    def pending_fencing(self, connector: str) -> bool:
        """Task configs were committed after the connector's latest ``tasks-fencing-`` record."""
        return connector in self.connectors_pending_fencing

    def task_count_record(self, connector: str) -> int | None:
        """The task count of the latest ``tasks-fencing-`` record (None: none written yet)."""
        return self.task_count_records.get(connector)

    def task_config_generation(self, connector: str) -> int | None:
        """Bumped by every commit that applies new task configs (None: none applied yet)."""
        return self.task_config_generations.get(connector)


class ConfigUpdateListener(Protocol):
    def on_connector_config_update(self, connector: str) -> None: ...

    def on_connector_config_remove(self, connector: str) -> None: ...

    def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None: ...

    def on_connector_target_state_change(self, connector: str) -> None: ...

    def on_session_key_update(self, key: dict[str, Any]) -> None: ...


class ConfigBackingStore(Protocol):
    def start(self) -> None: ...

    def stop(self) -> None: ...

    def set_update_listener(self, listener: ConfigUpdateListener) -> None: ...

    def snapshot(self) -> ClusterConfigState: ...

    def refresh(self, timeout_s: float) -> None:
        """Read the log to its current end (raise TimeoutError if that takes longer)."""
        ...

    def contains(self, connector: str) -> bool: ...

    def put_connector_config(
        self, connector: str, config: dict[str, str], target_state: TargetState | None
    ) -> None: ...

    def remove_connector_config(self, connector: str) -> None: ...

    def put_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        """Write every task config then the commit record (applied only once committed)."""
        ...

    def put_target_state(self, connector: str, state: TargetState) -> None: ...

    def put_session_key(self, key: dict[str, Any]) -> None: ...

    def put_task_count_record(self, connector: str, count: int) -> None: ...
