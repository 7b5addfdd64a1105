"""StandaloneHerder: one process, one worker, configs in memory (Kafka's ``StandaloneHerder``).

Configs live in a MemoryConfigBackingStore; offsets in ``offset.storage.file.filename`` (or in
memory, or - for mm2's dedicated driver - the Kafka offsets topic); statuses in memory (or the
Kafka status topic). Every public method is thread-safe: REST calls arrive on HTTP threads and
take the herder's lock; connectors asking for task reconfiguration are served on the herder's own
request thread, so a connector never blocks on the lock the herder holds while stopping it.

Semantics follow Java: PAUSED keeps task configs (tasks idle), STOPPED shuts the tasks down and
clears their configs, offsets can be altered or reset only while STOPPED, restarts follow KIP-745.
"""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from connect_core.api.errors import AlreadyExistsError, BadRequestError, ConnectError, NotFoundError
from connect_core.herder import common
from connect_core.model import (
    AbstractStatus,
    ConfigInfos,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    PluginInfo,
    RestartRequest,
    TargetState,
    TaskInfo,
)
from connect_core.runtime.connector_config import NAME_CONFIG
from connect_core.runtime.metric_hooks import RuntimeMetrics
from connect_core.runtime.status import StateMetrics, StatusRecorder
from connect_core.runtime.worker import Worker
from connect_core.runtime.worker_config import (
    LISTENERS_CONFIG,
    REST_ADVERTISED_HOST_NAME_CONFIG,
    REST_ADVERTISED_PORT_CONFIG,
    StandaloneConfig,
    admin_props,
)
from connect_core.storage.api import (
    ClusterConfigState,
    ConfigBackingStore,
    OffsetBackingStore,
    StatusBackingStore,
)
from connect_core.storage.memory import MemoryConfigBackingStore, MemoryOffsetBackingStore, MemoryStatusBackingStore

log = logging.getLogger(__name__)

START_TIMEOUT_S = 60.0

STOPPED_OFFSETS_MESSAGE = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
    "specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
)


class StandaloneHerder:
    """Implements :class:`connect_core.herder.api.Herder` for a single worker."""

    def __init__(
        self,
        worker: Worker,
        *,
        config_store: ConfigBackingStore | None = None,
        status_store: StatusBackingStore | None = None,
        kafka_cluster_id: str | None = None,
        lookup_cluster_id: bool = True,
        state_metrics: StateMetrics | None = None,
    ) -> None:
        self.worker = worker
        self.config_store: ConfigBackingStore = config_store or MemoryConfigBackingStore()
        self.status_store: StatusBackingStore = status_store or worker.status_store or MemoryStatusBackingStore()
        if worker.status_store is None:
            worker.status_store = self.status_store
        self.status = StatusRecorder(self.status_store, worker.worker_id, lambda: 0, state_metrics)
        self._cluster_id = kafka_cluster_id
        self._lookup_cluster_id = lookup_cluster_id and kafka_cluster_id is None
        self._lock = threading.RLock()
        self._requests = ThreadPoolExecutor(max_workers=1, thread_name_prefix="standalone-herder")
        self._state = ClusterConfigState()
        self._applied: dict[str, dict[str, str]] = {}
        self._running = False
        self.config_store.set_update_listener(self)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        log.info("Herder starting")
        with self._lock:
            if self._lookup_cluster_id:
                self._cluster_id = _lookup_cluster_id(self.worker)
            self.status_store.start()
            self.config_store.start()
            self.worker.start()
            self._state = self.config_store.snapshot()
            self._running = True
        log.info("Herder started")

    def stop(self) -> None:
        """Stop every task (flushing offsets) and connector, then the stores."""
        log.info("Herder stopping")
        self._requests.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self._running = False
            self.worker.stop_and_await_tasks(list(self.worker.task_ids()))
            self.worker.stop_and_await_connectors(list(self.worker.connector_names()))
            self.worker.stop()
            for store in (self.config_store, self.status_store):
                try:
                    store.stop()
                except Exception:
                    log.exception("Stopping %r failed", store)
        log.info("Herder stopped")

    # ------------------------------------------------------------------ config listener

    def on_connector_config_update(self, connector: str) -> None:
        with self._lock:
            self._state = self.config_store.snapshot()

    def on_connector_config_remove(self, connector: str) -> None:
        with self._lock:
            self._state = self.config_store.snapshot()

    def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        with self._lock:
            self._state = self.config_store.snapshot()

    def on_session_key_update(self, key: dict[str, Any]) -> None:
        pass

    def on_connector_target_state_change(self, connector: str) -> None:
        with self._lock:
            self._state = self.config_store.snapshot()
            target = self._state.target_state(connector)
            if target is None:
                return

            def changed(error: BaseException | None, new_state: TargetState | None) -> None:
                if error is not None:
                    log.error("Failed to transition connector %s to target state %s: %s", connector, target, error)
                elif new_state is TargetState.STARTED:
                    self._submit(self._update_connector_tasks, connector)

            self.worker.set_target_state(connector, target, changed)

    # ------------------------------------------------------------------ read-only queries

    def worker_id(self) -> str:
        return self.worker.worker_id

    def kafka_cluster_id(self) -> str | None:
        return self._cluster_id

    def connectors(self) -> list[str]:
        with self._lock:
            return self._state.connectors()

    def _require(self, name: str) -> dict[str, str]:
        config = self._state.connector_configs.get(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return config

    def connector_info(self, name: str) -> ConnectorInfo:
        with self._lock:
            config = self._require(name)
            return ConnectorInfo(name, dict(config), self._state.tasks(name), common.connector_type(config))

    def connector_config(self, name: str) -> dict[str, str]:
        return self.connector_info(name).config

    def connector_status(self, name: str) -> ConnectorStateInfo:
        with self._lock:
            config = self._state.connector_configs.get(name)
        return common.connector_state_info(name, self.status_store, config)

    def task_status(self, task: ConnectorTaskId) -> AbstractStatus:
        return common.task_state(task, self.status_store)

    def task_configs(self, name: str) -> list[TaskInfo]:
        with self._lock:
            self._require(name)
            return [TaskInfo(t, dict(self._state.task_config(t) or {})) for t in self._state.tasks(name)]

    def connector_active_topics(self, name: str) -> list[str]:
        if not self.worker.config.topic_tracking_enable:
            raise BadRequestError("Topic tracking is disabled.")
        return sorted(t.topic for t in self.status_store.get_topics(name))

    def reset_connector_active_topics(self, name: str) -> None:
        if not self.worker.config.topic_tracking_enable:
            raise BadRequestError("Topic tracking is disabled.")
        if not self.worker.config.topic_tracking_allow_reset:
            raise BadRequestError("Topic tracking reset is disabled.")
        self.status_store.delete_topics(name)

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]:
        return common.plugin_infos(connectors_only)

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        return common.validate_connector_config(
            config, self.worker.policy, self.worker.topic_creation_enabled, self.worker.resolve_config
        )

    # ------------------------------------------------------------------ config changes

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        config = dict(config)
        given = config.get(NAME_CONFIG)
        if given is None:
            config[NAME_CONFIG] = name
        elif given != name:
            raise BadRequestError(
                f"Connector name configuration ({given}) doesn't match connector name in the URL ({name})"
            )
        infos = self.validate_connector_config(config)
        message = common.config_errors_message(infos)
        if message is not None:
            raise BadRequestError(message)
        with self._lock:
            if name in self._state.connector_configs:
                if not allow_replace:
                    raise AlreadyExistsError(f"Connector {name} already exists")
                self.worker.stop_and_await_connector(name)
                created = False
            else:
                created = True
            self.config_store.put_connector_config(name, config, initial_state)
            started = self._start_connector(name)
        try:
            started.result(timeout=START_TIMEOUT_S)
        except TimeoutError:
            raise ConnectError(f"Timed out starting connector {name}") from None
        except ConnectError:
            raise
        except Exception as e:
            raise ConnectError(f"Failed to start connector {name}: {e}") from e
        with self._lock:
            self._update_connector_tasks(name)
            return created, self.connector_info(name)

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        with self._lock:
            current = dict(self._require(name))
        for key, value in patch.items():
            if value is None:
                current.pop(key, None)
            else:
                current[key] = value
        return self.put_connector_config(name, current, True)[1]

    def delete_connector_config(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self._remove_connector_tasks(name)
            self.worker.stop_and_await_connector(name)
            self.config_store.remove_connector_config(name)
            self._applied.pop(name, None)
            self.status.on_deletion(name)

    def pause_connector(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self.config_store.put_target_state(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self.config_store.put_target_state(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        with self._lock:
            self._require(name)
            self._remove_connector_tasks(name)
            self.config_store.put_target_state(name, TargetState.STOPPED)

    # ------------------------------------------------------------------ restarts

    def restart_connector_and_tasks(self, request: RestartRequest) -> ConnectorStateInfo | None:
        with self._lock:
            config = self._state.connector_configs.get(request.connector)
            if config is None:
                raise NotFoundError(f"Unknown connector: {request.connector}")
            plan = common.build_restart_plan(request, self.status_store, config)
            if plan is None:
                raise NotFoundError(f"Status for connector {request.connector} not found")
            log.info("Received %s", plan)
            if plan.restart_connector:
                self.worker.stop_and_await_connector(request.connector)
                self.status.on_restart(request.connector)
            if plan.task_ids:
                self.worker.stop_and_await_tasks(plan.task_ids)
                for tid in plan.task_ids:
                    self.status.on_task_restart(tid)
            if plan.restart_connector:
                self._start_connector(request.connector)
            for tid in plan.task_ids:
                self._start_task(tid)
            log.info("Completed %s", plan)
            return plan.state

    def restart_task(self, task: ConnectorTaskId) -> None:
        with self._lock:
            self._require(task.connector)
            if self._state.task_config(task) is None:
                raise NotFoundError(f"Task {task} not found")
            self.worker.stop_and_await_task(task)
            if not self._start_task(task):
                raise ConnectError(f"Failed to start task: {task}")

    # ------------------------------------------------------------------ offsets (KIP-875)

    def connector_offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        with self._lock:
            config = self._require(name)
        return [(p, o) for p, o in self.worker.connector_offsets(name, dict(config)) if o is not None]

    def _check_stopped(self, name: str) -> dict[str, str]:
        config = self._require(name)
        if self._state.target_state(name) is not TargetState.STOPPED or self._state.task_counts.get(name, 0) != 0:
            raise BadRequestError(STOPPED_OFFSETS_MESSAGE.format(name=name))
        return config

    def alter_connector_offsets(self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> str:
        if not offsets:
            raise BadRequestError("The offsets to be altered may not be null or empty")
        with self._lock:
            config = self._check_stopped(name)
            return self.worker.modify_connector_offsets(name, config, offsets)

    def reset_connector_offsets(self, name: str) -> str:
        with self._lock:
            config = self._check_stopped(name)
            return self.worker.modify_connector_offsets(name, config, None)

    # ------------------------------------------------------------------ connector callbacks

    def request_task_reconfiguration(self, connector: str) -> None:
        """Called by a connector (any thread): served asynchronously on the herder's request thread."""
        self._submit(self._reconfigure, connector)

    def _reconfigure(self, connector: str) -> None:
        with self._lock:
            if connector not in self.worker.connector_names():
                log.error("Task that requested reconfiguration does not exist: %s", connector)
                return
            self._update_connector_tasks(connector)

    def _submit(self, fn: Any, *args: Any) -> None:
        if not self._running:
            return
        try:
            self._requests.submit(self._guarded, fn, *args)
        except RuntimeError:
            pass  # shutting down

    @staticmethod
    def _guarded(fn: Any, *args: Any) -> None:
        try:
            fn(*args)
        except Exception:
            log.exception("Herder request %s%r failed", getattr(fn, "__name__", fn), args)

    # ------------------------------------------------------------------ internals (lock held)

    def _start_connector(self, name: str) -> Future[TargetState | None]:
        done: Future[TargetState | None] = Future()

        def callback(error: BaseException | None, state: TargetState | None) -> None:
            if error is not None:
                done.set_exception(error)
            else:
                done.set_result(state)

        target = self._state.target_state(name) or TargetState.STARTED
        self.worker.start_connector(name, self._state.connector_configs[name], self, self.status, target, callback)
        return done

    def _update_connector_tasks(self, name: str) -> None:
        with self._lock:
            if not self.worker.is_running(name):
                log.info("Skipping update of tasks for connector %s since it is not running", name)
                return
            target = self._state.target_state(name)
            if target is not TargetState.STARTED:
                log.info("Skipping update of tasks for connector %s since its target state is %s", name, target)
                return
            config = self._state.connector_configs[name]
            try:
                new_configs = self.worker.connector_task_configs(name, config)
            except ConnectError as e:
                log.error("Failed to generate task configs for connector %s: %s", name, e)
                return
            if common.task_configs_changed(self._state, name, new_configs, self._applied.get(name)):
                self._remove_connector_tasks(name)
                self.config_store.put_task_configs(name, new_configs)
                self._applied[name] = dict(config)
                for tid in self._state.tasks(name):
                    self._start_task(tid)

    def _remove_connector_tasks(self, name: str) -> None:
        tasks = self._state.tasks(name)
        if tasks:
            self.worker.stop_and_await_tasks(tasks)
            self.config_store.put_task_configs(name, [])
            for tid in tasks:
                self.status.on_task_deletion(tid)

    def _start_task(self, task: ConnectorTaskId) -> bool:
        config = self._state.connector_configs.get(task.connector)
        task_config = self._state.task_config(task)
        if config is None or task_config is None:
            return False
        return self.worker.start_source_task(
            task,
            config,
            task_config,
            self.status,
            self._state.target_state(task.connector) or TargetState.STARTED,
            num_tasks=len(self._state.tasks(task.connector)),
        )


# --------------------------------------------------------------------------- building


def _lookup_cluster_id(worker: Worker) -> str | None:
    from connect_core.kafka.admin import TopicAdmin

    try:
        admin = TopicAdmin(admin_props(worker.config.raw(), {}, worker.policy, f"{worker.worker_id}-cluster-id"))
        return admin.cluster_id(timeout_s=30.0)
    except Exception as e:
        raise ConnectError(
            f"Failed to connect to and describe Kafka cluster. Check worker's broker connection and security "
            f"properties. ({e})"
        ) from e


def default_worker_id(props: Mapping[str, Any]) -> str:
    """Java's standalone worker id is the advertised REST host:port."""
    host = props.get(REST_ADVERTISED_HOST_NAME_CONFIG)
    port = props.get(REST_ADVERTISED_PORT_CONFIG)
    if not host or not port:
        listener = str(props.get(LISTENERS_CONFIG) or "http://:8083").split(",")[0].strip()
        hostport = listener.split("://", 1)[-1]
        lhost, _, lport = hostport.rpartition(":")
        host = host or lhost or socket.gethostname()
        port = port or lport or "8083"
    return f"{host}:{port}"


def build_standalone_herder(
    worker_props: Mapping[str, Any],
    *,
    worker_id: str | None = None,
    runtime_metrics: RuntimeMetrics | None = None,
    on_task_created: Callable[[Any], None] | None = None,
    kafka_offsets: bool = False,
    kafka_status: bool = False,
    offset_store: OffsetBackingStore | None = None,
    status_store: StatusBackingStore | None = None,
    kafka_cluster_id: str | None = None,
    lookup_cluster_id: bool = True,
) -> StandaloneHerder:
    """A StandaloneHerder from worker properties (call ``start()`` on it).

    Offsets: ``offset_store`` if given; the Kafka offsets topic if ``kafka_offsets``; else the
    ``offset.storage.file.filename`` file; else memory. Statuses: memory unless ``kafka_status``.
    """
    props = dict(worker_props)
    config = StandaloneConfig(props)
    if offset_store is None:
        if kafka_offsets:
            from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore

            offset_store = KafkaOffsetBackingStore.from_worker_config(props)
        elif config.offset_file:
            from connect_core.storage.file_offsets import FileOffsetBackingStore

            offset_store = FileOffsetBackingStore(config.offset_file)
        else:
            offset_store = MemoryOffsetBackingStore()
    if status_store is None:
        if kafka_status:
            from connect_core.storage.kafka_status import KafkaStatusBackingStore

            status_store = KafkaStatusBackingStore.from_worker_config(props)
        else:
            status_store = MemoryStatusBackingStore()
    wid = worker_id or default_worker_id(props)
    task_metrics = runtime_metrics.for_task if runtime_metrics is not None else None
    sink_metrics = runtime_metrics.for_sink_task if runtime_metrics is not None else None
    worker = Worker(
        wid,
        config,
        offset_store,
        status_store=status_store,
        task_metrics=task_metrics,
        sink_task_metrics=sink_metrics,
        on_task_created=on_task_created,
    )
    return StandaloneHerder(
        worker,
        status_store=status_store,
        kafka_cluster_id=kafka_cluster_id,
        lookup_cluster_id=lookup_cluster_id,
        state_metrics=runtime_metrics,
    )
