"""A small in-memory Herder for REST unit tests (pure logic, no worker)."""

from __future__ import annotations

from typing import Any

from connect_core.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConfigError,
    NotFoundError,
    NotLeaderError,
)
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
from connect_core.plugins import PluginNotFoundError

KNOWN_CLASSES = {"FileStreamSource": "source", "org.example.GoodSource": "source"}


class FakeHerder:
    def __init__(self, worker: str = "w1:8083") -> None:
        self.worker = worker
        self.configs: dict[str, dict[str, str]] = {}
        self.targets: dict[str, TargetState] = {}
        self.offsets: dict[str, list[tuple[dict[str, Any], dict[str, Any] | None]]] = {}
        self.leader_url: str | None = None  # when set, writes raise NotLeaderError
        self.calls: list[tuple[str, Any]] = []
        self.ready = True

    # --- helpers
    def _need(self, name: str) -> dict[str, str]:
        if name not in self.configs:
            raise NotFoundError(f"Connector {name} not found")
        return self.configs[name]

    def _leader_only(self) -> None:
        if self.leader_url is not None:
            raise NotLeaderError("not the leader", self.leader_url)

    def _validate(self, config: dict[str, str]) -> None:
        cls = config.get("connector.class")
        if cls is None:
            raise BadRequestError(f"Connector config {config} contains no connector type")
        if cls not in KNOWN_CLASSES:
            raise PluginNotFoundError(
                f"Failed to find any class that implements Connector and which name matches {cls}"
            )
        if config.get("tasks.max", "1") == "0":
            raise ConfigError(
                "Connector configuration is invalid and contains the following 1 error(s):\n"
                "Invalid value 0 for configuration tasks.max: Value must be at least 1"
            )

    def _info(self, name: str) -> ConnectorInfo:
        cfg = self._need(name)
        n = int(cfg.get("tasks.max", "1"))
        return ConnectorInfo(name, dict(cfg), [ConnectorTaskId(name, i) for i in range(n)], "source")

    # --- protocol
    def is_ready(self) -> bool:
        return self.ready

    def worker_id(self) -> str:
        return self.worker

    def kafka_cluster_id(self) -> str | None:
        return "cluster-xyz"

    def connectors(self) -> list[str]:
        return sorted(self.configs)

    def connector_info(self, name: str) -> ConnectorInfo:
        return self._info(name)

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._need(name))

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        self._leader_only()
        self.calls.append(("put", (name, dict(config), allow_replace, initial_state)))
        if not name:
            raise BadRequestError("Connector name is required")
        self._validate(config)
        exists = name in self.configs
        if exists and not allow_replace:
            raise AlreadyExistsError(f"Connector {name} already exists")
        self.configs[name] = dict(config)
        if not exists:
            self.targets[name] = initial_state or TargetState.STARTED
        return not exists, self._info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        self._leader_only()
        cfg = dict(self._need(name))
        for k, v in patch.items():
            if v is None:
                cfg.pop(k, None)
            else:
                cfg[k] = v
        self._validate(cfg)
        self.configs[name] = cfg
        return self._info(name)

    def delete_connector_config(self, name: str) -> None:
        self._leader_only()
        self._need(name)
        del self.configs[name]

    def _state(self, name: str) -> State:
        return {
            TargetState.STARTED: State.RUNNING,
            TargetState.PAUSED: State.PAUSED,
            TargetState.STOPPED: State.STOPPED,
        }[self.targets[name]]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        if name not in self.configs:
            raise NotFoundError(f"No status found for connector {name}")
        info = self._info(name)
        tasks = {t.task: AbstractStatus(self._state(name), self.worker) for t in info.tasks}
        if self.configs[name].get("fail.task") is not None:
            tasks[0] = AbstractStatus(State.FAILED, self.worker, trace="boom\n at x")
        return ConnectorStateInfo(name, AbstractStatus(self._state(name), self.worker), tasks, "source")

    def task_status(self, task: ConnectorTaskId) -> AbstractStatus:
        st = self.connector_status(task.connector) if task.connector in self.configs else None
        if st is None or task.task not in st.tasks:
            raise NotFoundError(f"No status found for task {task}")
        return st.tasks[task.task]

    def task_configs(self, name: str) -> list[TaskInfo]:
        return [TaskInfo(t, {"task.class": "X", "id": str(t.task)}) for t in self._info(name).tasks]

    def restart_connector_and_tasks(self, request: RestartRequest) -> ConnectorStateInfo | None:
        self._leader_only()
        self.calls.append(("restart", request))
        self._need(request.connector)
        if not request.include_tasks and not request.only_failed:
            return None
        st = self.connector_status(request.connector)
        st.connector.state = State.RESTARTING
        return st

    def restart_task(self, task: ConnectorTaskId) -> None:
        self._leader_only()
        self.task_status(task)
        self.calls.append(("restart_task", task))

    def pause_connector(self, name: str) -> None:
        self._need(name)
        self.targets[name] = TargetState.PAUSED

    def resume_connector(self, name: str) -> None:
        self._need(name)
        self.targets[name] = TargetState.STARTED

    def stop_connector(self, name: str) -> None:
        self._leader_only()
        self._need(name)
        self.targets[name] = TargetState.STOPPED

    def connector_active_topics(self, name: str) -> list[str]:
        self._need(name)
        return ["t1", "t2"]

    def reset_connector_active_topics(self, name: str) -> None:
        self._need(name)
        self.calls.append(("reset_topics", name))

    def connector_offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        self._need(name)
        return [(p, o) for p, o in self.offsets.get(name, []) if o is not None]

    def alter_connector_offsets(self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> str:
        self._need(name)
        if self.targets[name] is not TargetState.STOPPED:
            from connect_core.api.errors import ConflictError

            raise ConflictError(
                f"Connectors must be in the STOPPED state before their offsets can be modified. "
                f"This can be done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        self.offsets[name] = list(offsets)
        return "The offsets for this connector have been altered successfully"

    def reset_connector_offsets(self, name: str) -> str:
        self._need(name)
        self.offsets[name] = []
        return "The offsets for this connector have been reset successfully"

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]:
        out = [
            PluginInfo("org.example.GoodSource", "source", "1.0"),
            PluginInfo("org.example.NoVersion", "sink", "undefined"),
        ]
        if not connectors_only:
            out.append(PluginInfo("org.apache.kafka.connect.transforms.RegexRouter", "transformation", "0.1.0"))
        return out

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        cls = config.get("connector.class")
        if cls is None:
            raise BadRequestError(f"Connector config {config} contains no connector type")
        key = ConfigInfoKey("tasks.max", "INT", False, "1", "HIGH", "Max tasks", "Common", 3, "SHORT", "Tasks max")
        errors = ["Value must be at least 1"] if config.get("tasks.max") == "0" else []
        value = ConfigInfoValue("tasks.max", config.get("tasks.max", "1"), [], errors, True)
        return ConfigInfos(cls, len(errors), ["Common"], [(key, value)])
