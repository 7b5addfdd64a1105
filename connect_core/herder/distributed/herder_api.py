"""What the REST layer asks of a distributed herder: each call a request run on the herder thread.

Reads answer from the herder's view of the config topic; writes that only the leader may make raise
``NotLeaderError(leader_url)`` on a follower, which the REST layer forwards (Java's ``DistributedHerder``).
"""

from __future__ import annotations

import logging
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout

from connect_core.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConnectError,
    NotFoundError,
    NotLeaderError,
    RestError,
)
from connect_core.herder import common
from connect_core.herder.distributed.herder_host import HerderHost
from connect_core.herder.distributed.session_key import (
    InternalRequestSignature,
    check_signature,
)
from connect_core.model import (
    AbstractStatus,
    ConfigInfos,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    RestartRequest,
    TargetState,
    TaskInfo,
)
from connect_core.runtime.distributed_config import ExactlyOnceSourceSupport

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 90.0  # Java's default REST request timeout
EXACTLY_ONCE_DISABLED_MESSAGE = (
    "Zombie fencing is only available when exactly-once source support is turned on for the cluster "
    "(exactly.once.source.support=enabled, or preparing during an upgrade); this worker has it disabled"
)


class HerderApi(HerderHost):
    """Mixed into :class:`~connect_core.herder.distributed.herder.DistributedHerder`."""

    def worker_id(self) -> str:
        return self._worker_id

    def kafka_cluster_id(self) -> str | None:
        return self._cluster_id

    def generation(self) -> int:
        return self._generation

    def connectors(self) -> list[str]:
        def run() -> list[str]:
            self._check_rebalance_needed()
            return self._config_state.connectors()

        return list(self._call(run))

    def _info(self, name: str) -> ConnectorInfo:
        props = self._require(name)
        return ConnectorInfo(name, dict(props), self._config_state.tasks(name), common.connector_type(props))

    def connector_info(self, name: str) -> ConnectorInfo:
        def run() -> ConnectorInfo:
            self._check_rebalance_needed()
            return self._info(name)

        result: ConnectorInfo = self._call(run)
        return result

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._call(lambda: dict(self._require(name))))

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        return common.validate_connector_config(config, self.config.override_policy(),
                                                self.config.topic_creation_enable,
                                                self.worker.resolve_config,
                                                self.config.exactly_once_source_enabled)  # fmt: skip

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        # Validation runs on the caller's thread (it can be slow); the write happens on the herder thread.
        infos = self.validate_connector_config(config)
        message = common.config_errors_message(infos)
        if message is not None:
            raise BadRequestError(message)

        def run() -> tuple[bool, ConnectorInfo]:
            if not self.is_leader():
                raise self._not_leader("set connector configs")
            exists = name in self._config_state.connector_configs
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            self.config_store.put_connector_config(name, dict(config), initial_state)
            info = ConnectorInfo(name, dict(config), self._config_state.tasks(name), common.connector_type(config))
            return (not exists, info)

        result: tuple[bool, ConnectorInfo] = self._call(run)
        return result

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        def current() -> dict[str, str]:
            if not self.is_leader():
                raise self._not_leader("set connector configs")
            return dict(self._require(name))

        base = self._call(current)
        patched = dict(base)
        for k, v in patch.items():
            if v is None:
                patched.pop(k, None)
            else:
                patched[k] = v
        return self.put_connector_config(name, patched, True)[1]

    def delete_connector_config(self, name: str) -> None:
        def run() -> None:
            if not self.is_leader():
                raise self._not_leader("delete connector configs")
            self._require(name)
            self.config_store.remove_connector_config(name)

        self._call(run)

    def connector_status(self, name: str) -> ConnectorStateInfo:
        return common.connector_state_info(name, self.status_store, self._config_state.connector_configs.get(name))

    def task_status(self, task: ConnectorTaskId) -> AbstractStatus:
        return common.task_state(task, self.status_store)

    def task_configs(self, name: str) -> list[TaskInfo]:
        def run() -> list[TaskInfo]:
            self._check_rebalance_needed()
            self._require(name)
            return [TaskInfo(t, dict(self._config_state.task_config(t) or {})) for t in self._config_state.tasks(name)]

        return list(self._call(run))

    def put_task_configs(
        self, name: str, configs: list[dict[str, str]], signature: InternalRequestSignature | None
    ) -> None:
        """The internal endpoint a follower calls with its connector's task configs."""
        if self._sessioned():
            with self._lock:
                key = self._session_key
            check_signature(signature, self.config.verification_algorithms, key)

        def run() -> None:
            if not self.is_leader():
                raise self._not_leader("write task configurations")
            self._require(name)
            self._write_task_configs(name, configs)

        self._call(run)

    def fence_zombies(self, name: str, signature: InternalRequestSignature | None) -> None:
        """``PUT /connectors/{name}/fence``: one round of fencing on the leader (a follower names the leader)."""
        if self.config.exactly_once_source_support is ExactlyOnceSourceSupport.DISABLED:
            raise BadRequestError(EXACTLY_ONCE_DISABLED_MESSAGE)
        if self._sessioned():
            with self._lock:
                key = self._session_key
            check_signature(signature, self.config.verification_algorithms, key)
        fencing: Future[None] = self._call(lambda: self._fence_as_leader(name))
        try:
            fencing.result(timeout=REQUEST_TIMEOUT_S)
        except FutureTimeout:
            raise RestError(500, "Request timed out") from None
        except ConnectError:
            raise
        except Exception as e:
            raise ConnectError(f"Failed to perform zombie fencing: {e}") from e

    def restart_connector_and_tasks(self, request: RestartRequest) -> ConnectorStateInfo | None:
        def run() -> ConnectorStateInfo | None:
            if not self.is_leader():
                raise self._not_leader("process restart requests")
            props = self._require(request.connector)
            plan = common.build_restart_plan(request, self.status_store, props)
            if plan is None:
                raise NotFoundError(f"Status for connector {request.connector} not found")
            self.config_store.put_restart_request(request)
            return plan.state

        result: ConnectorStateInfo | None = self._call(run)
        return result

    def restart_task(self, task: ConnectorTaskId) -> None:
        def run() -> None:
            self._require(task.connector)
            if task not in self._config_state.tasks(task.connector):
                raise NotFoundError(f"Unknown task: {task}")
            if self._assignment is not None and task in set(self._assignment.tasks):
                self.status.on_task_restart(task)
                self.worker.stop_and_await_tasks([task])
                self._start_task(task)
                return
            owner = self.status_store.get_task(task)
            if owner is None or owner.worker_id == self._worker_id:
                raise RestError(409, f"Cannot restart task {task}: it is not assigned to any worker yet")
            raise NotLeaderError(f"Task {task} is assigned to worker {owner.worker_id}", f"http://{owner.worker_id}/")

        self._call(run)

    def _put_target_state(self, name: str, state: TargetState) -> None:
        def run() -> None:
            self._require(name)
            self.config_store.put_target_state(name, state)

        self._call(run)

    def pause_connector(self, name: str) -> None:
        # As Java: any worker may write PAUSED/STARTED target states (no task configs are involved).
        self._put_target_state(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        self._put_target_state(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        def run() -> None:
            self._require(name)
            if not self.is_leader():
                raise self._not_leader("transition connectors to the STOPPED state")
            self._write_task_configs(name, [])
            self.config_store.put_target_state(name, TargetState.STOPPED)
            if not self._read_config_to_end(self._sync_timeout_s):
                log.warning("Failed to read to the end of the config topic after stopping connector %s", name)

        self._call(run)

    def connector_active_topics(self, name: str) -> list[str]:
        self._require(name)
        return sorted(t.topic for t in self.status_store.get_topics(name))

    def reset_connector_active_topics(self, name: str) -> None:
        self._require(name)
        self.status_store.delete_topics(name)
