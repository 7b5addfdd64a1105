"""The herder contract the REST API and the CLI program against.

Shapes mirror Java Connect's REST entities (ConnectorInfo, ConnectorStateInfo, TaskInfo...), so
the REST layer is a thin rendering of these values. Every method is synchronous from the
caller's view; a herder that runs a single-threaded loop queues the call and waits on it.
Errors are the :mod:`connect_core.api.errors` tree (NotFoundError -> 404, ...).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol


class State(enum.Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    DESTROYED = "DESTROYED"


class TargetState(enum.Enum):
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


@dataclass(frozen=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def to_json(self) -> dict[str, Any]:
        return {"connector": self.connector, "task": self.task}

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass
class ConnectorInfo:
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: str  # "source" | "sink" | "unknown"


@dataclass
class AbstractStatus:
    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


@dataclass
class ConnectorStateInfo:
    name: str
    connector: AbstractStatus
    tasks: dict[int, AbstractStatus]
    type: str


@dataclass
class TaskInfo:
    id: ConnectorTaskId
    config: dict[str, str]


@dataclass
class PluginInfo:
    class_name: str  # the Java-style class name users configure
    type: str  # "source" | "sink" | "converter" | "header_converter" | "transformation" | "predicate"
    version: str


@dataclass
class ConfigInfoValue:
    """One key's validation result (Java ConfigInfos.configs[].value)."""

    name: str
    value: str | None
    recommended_values: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True


@dataclass
class ConfigInfoKey:
    """One key's definition (Java ConfigInfos.configs[].definition)."""

    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None
    order_in_group: int
    width: str
    display_name: str
    dependents: list[str] = field(default_factory=list)


@dataclass
class ConfigInfos:
    """Result of config validation (Java ConfigInfos)."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[tuple[ConfigInfoKey, ConfigInfoValue]]


@dataclass
class RestartRequest:
    connector: str
    only_failed: bool = False
    include_tasks: bool = False


class Herder(Protocol):
    """Operations of a running herder (standalone or distributed)."""

    def worker_id(self) -> str: ...

    def kafka_cluster_id(self) -> str | None: ...

    def connectors(self) -> list[str]: ...

    def connector_info(self, name: str) -> ConnectorInfo: ...

    def connector_config(self, name: str) -> dict[str, str]: ...

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        """Create or replace a connector; returns (created, info). Validates first."""
        ...

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo: ...

    def delete_connector_config(self, name: str) -> None: ...

    def connector_status(self, name: str) -> ConnectorStateInfo: ...

    def task_status(self, task: ConnectorTaskId) -> AbstractStatus: ...

    def task_configs(self, name: str) -> list[TaskInfo]: ...

    def restart_connector_and_tasks(self, request: RestartRequest) -> ConnectorStateInfo | None:
        """Restart per KIP-745; returns the pending state, or None when only the connector restarted."""
        ...

    def restart_task(self, task: ConnectorTaskId) -> None: ...

    def pause_connector(self, name: str) -> None: ...

    def resume_connector(self, name: str) -> None: ...

    def stop_connector(self, name: str) -> None: ...

    def connector_active_topics(self, name: str) -> list[str]: ...

    def reset_connector_active_topics(self, name: str) -> None: ...

    def connector_offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """Committed (partition, offset) pairs of a connector (KIP-875 GET /offsets)."""
        ...

    def alter_connector_offsets(
        self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]
    ) -> str:
        """PATCH /offsets; the connector must be STOPPED. Returns the success message."""
        ...

    def reset_connector_offsets(self, name: str) -> str:
        """DELETE /offsets; the connector must be STOPPED. Returns the success message."""
        ...

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]: ...

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos: ...
