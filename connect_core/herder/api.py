"""The herder contract the REST API and the CLI program against.

Shapes mirror Java Connect's REST entities (ConnectorInfo, ConnectorStateInfo, TaskInfo...), so
the REST layer is a thin rendering of these values. Every method is synchronous from the
caller's view; a herder that runs a single-threaded loop queues the call and waits on it.
Errors are the :mod:`connect_core.api.errors` tree (NotFoundError -> 404, ...).
"""

from __future__ import annotations

from typing import Any, Protocol

from connect_core.model import (
    AbstractStatus,
    ConfigInfoKey,
    ConfigInfos,
    ConfigInfoValue,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    PluginInfo,
    RestartRequest,
    State,
    TargetState,
    TaskInfo,
)


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

    def alter_connector_offsets(self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> str:
        """PATCH /offsets; the connector must be STOPPED. Returns the success message."""
        ...

    def reset_connector_offsets(self, name: str) -> str:
        """DELETE /offsets; the connector must be STOPPED. Returns the success message."""
        ...

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]: ...

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos: ...


class BuiltHerder(Herder, Protocol):
    """A herder as its builder returns it: the operations above, plus its own start and stop."""

    def start(self) -> None:
        """Start the herder's threads (the REST API may serve it once this returns)."""
        ...

    def stop(self) -> None:
        """Stop connectors and tasks, flush offsets and statuses, release the clients."""
        ...


__all__ = [
    "AbstractStatus",
    "BuiltHerder",
    "ConfigInfoKey",
    "ConfigInfoValue",
    "ConfigInfos",
    "ConnectorInfo",
    "ConnectorStateInfo",
    "ConnectorTaskId",
    "Herder",
    "PluginInfo",
    "RestartRequest",
    "State",
    "TargetState",
    "TaskInfo",
]
