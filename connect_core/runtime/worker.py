"""The Worker: runs connector instances and source tasks of this process (Kafka's ``Worker``).

A herder decides *what* runs here; the worker builds and runs it: one thread per connector
(:class:`WorkerConnector`) and one per task (:class:`WorkerSourceTask`), each task with its own
producer, converters, transformation chain, offset reader/writer and, when the connector uses
``topic.creation.*``, a TopicAdmin. Stops are graceful and bounded: connectors get 5 s, tasks
share ``task.shutdown.graceful.timeout.ms``; whatever overruns is cancelled (abandoned).

Client settings: see :mod:`connect_core.runtime.worker_config` (worker keys, ``producer.``/``admin.``
prefixes, connector ``producer.override.``/``admin.override.`` keys under the override policy).
Sink connectors run the same way, each task a :class:`WorkerSinkTask` with its own consumer (and a
dead-letter-queue producer when one is configured); see :mod:`connect_core.runtime.worker_sink_task`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from functools import partial
from typing import Any

from connect_core.api.connector import SinkConnector, SourceConnector
from connect_core.api.errors import BadRequestError, ConfigError, ConnectError, DataError
from connect_core.api.task import SourceTask
from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.security import kafka_python_security
from connect_core.kafka.transactional_batch_producer import TransactionalBatchProducer
from connect_core.model import ConnectorTaskId, TargetState
from connect_core.plugins import Plugins
from connect_core.runtime.config_references import WorkerConfigTransformer, reverse_transform
from connect_core.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    OFFSETS_TOPIC_CONFIG,
    ConnectorConfig,
    SinkConnectorConfig,
    SourceConnectorConfig,
    TopicCreationGroup,
)
from connect_core.runtime.distributed_config import DistributedConfig
from connect_core.runtime.exactly_once_config import ExactlyOnceSettings
from connect_core.runtime.exactly_once_source_task import (
    MAX_RECOVERIES,
    RECOVERY_WINDOW_S,
    ExactlyOnceWorkerSourceTask,
    transaction_call_timeout_s,
)
from connect_core.runtime.sink_connector_offsets import (
    GroupAdmin,
    modify_sink_offsets,
    read_sink_offsets,
    success_message,
)
from connect_core.runtime.sink_metrics import SinkTaskMetrics
from connect_core.runtime.source_task_collaborators import ProducerLike, TaskMetrics
from connect_core.runtime.status import ConnectorStatusListener, TaskStatusListener
from connect_core.runtime.task_plugins import build_task_plugins
from connect_core.runtime.transaction_errors import RecoveryBudget
from connect_core.runtime.transactional_ids import source_task_transactional_id
from connect_core.runtime.worker_config import (
    SOURCE_PRODUCER_DEFAULTS,
    WorkerConfig,
    admin_props,
    consumer_props,
    keeps_partition_order,
    producer_props,
)
from connect_core.runtime.worker_connector import HerderHooks, StateCallback, WorkerConnector
from connect_core.runtime.worker_sink_task import WorkerSinkTask
from connect_core.runtime.worker_source_task import WorkerSourceTask
from connect_core.storage.api import OffsetBackingStore, StatusBackingStore
from connect_core.storage.offset_storage import (
    OffsetStorageReaderImpl,
    OffsetStorageWriter,
    validate_offset_format,
)

log = logging.getLogger(__name__)

CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_S = 5.0
MODIFY_OFFSETS_TIMEOUT_S = 90.0
TASK_CLASS_CONFIG = "task.class"
#: The producer's (Java's and librdkafka's) default transaction.timeout.ms.
DEFAULT_TRANSACTION_TIMEOUT_MS = 60000

ProducerFactory = Callable[[dict[str, Any]], ProducerLike]
AdminFactory = Callable[[dict[str, Any]], Any]
TaskMetricsFactory = Callable[[ConnectorTaskId], TaskMetrics]
#: An admin on one consumer group (its id, Java-style admin properties): a sink connector's offsets.
GroupAdminFactory = Callable[[str, dict[str, Any]], GroupAdmin]
SinkTaskMetricsFactory = Callable[[ConnectorTaskId], SinkTaskMetrics]
#: Sees every task instance right after it is created, before ``initialize``/``start`` (mm2 hands the
#: mirror tasks their metric sinks here).
TaskCreatedHook = Callable[[SourceTask], None]


def _default_producer_factory(props: dict[str, Any]) -> ProducerLike:
    from connect_core.kafka.clients import create_producer, producer_config

    return create_producer(producer_config(props))


def batch_producer_for(props: Mapping[str, Any], transactional_id: str | None = None) -> Callable[[], BatchProducer]:
    """The batch path's producer to the same target, with the same security settings as the task's
    librdkafka producer (Java keys: ``bootstrap.servers``, ``ssl.*``, ``sasl.*``, ``acks``, timeouts); for an
    exactly-once task a transactional one with the task's transactional id and ``transaction.timeout.ms``."""

    def number(key: str, default: int) -> int:
        try:
            return int(str(props.get(key, default)).strip())
        except ValueError:
            return default

    acks = str(props.get("acks", "all")).strip().lower()

    def create() -> BatchProducer:
        if transactional_id is not None:
            return TransactionalBatchProducer(
                str(props.get("bootstrap.servers", "")),
                kafka_python_security(props),
                f"{props.get('client.id', 'connect')}-batches",
                transactional_id,
                transaction_timeout_s=number("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS) / 1000,
                request_timeout_s=number("request.timeout.ms", 30_000) / 1000,
                delivery_timeout_s=number("delivery.timeout.ms", 120_000) / 1000,
            )
        return BatchProducer(
            str(props.get("bootstrap.servers", "")),
            kafka_python_security(props),
            f"{props.get('client.id', 'connect')}-batches",
            acks=-1 if acks in ("all", "-1") else int(acks),
            request_timeout_s=number("request.timeout.ms", 30_000) / 1000,
            delivery_timeout_s=number("delivery.timeout.ms", 120_000) / 1000,
        )

    return create


def _client_error_reporter(metrics: TaskMetrics) -> Callable[[Any], None]:
    """librdkafka's ``error_cb`` for a task's producer: client-level errors (a target broker that
    cannot be reached...) go to the task's metrics. With the unbounded ``delivery.timeout.ms`` of
    Connect's producers no delivery fails while the target is down: these are the only signal."""

    def on_error(err: Any) -> None:
        try:
            metrics.record_client_error(str(err.name()), bool(err.fatal()))
        except Exception:  # a metrics hook must never break the client's poll
            log.debug("Recording a client error failed", exc_info=True)

    return on_error


def _default_group_admin_factory(group: str, props: dict[str, Any]) -> GroupAdmin:
    from connect_core.kafka.group_offsets import GroupOffsetsAdmin

    return GroupOffsetsAdmin(group, props)


def _default_admin_factory(props: dict[str, Any]) -> Any:
    from connect_core.kafka.admin import TopicAdmin

    return TopicAdmin(props)


class TooManyTasksError(ConnectError):
    def __init__(self, connector: str, num_tasks: int, max_tasks: int) -> None:
        super().__init__(
            f"The connector {connector} has generated {num_tasks} tasks, which is greater than {max_tasks}, the "
            "maximum number of tasks it is configured to create. This behaviour should be considered a bug and is "
            "disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' "
            "set to false; however, this option will be removed in a future release of Kafka Connect."
        )


def _enforce_tasks_max(task_id: ConnectorTaskId, conf: ConnectorConfig, num_tasks: int | None) -> None:
    """A connector that generated more task configs than its tasks.max may not run them (unless not enforced)."""
    if num_tasks is not None and num_tasks > conf.tasks_max and conf.enforce_tasks_max:
        raise TooManyTasksError(task_id.connector, num_tasks, conf.tasks_max)


def task_class_name(connector_cls: type, task_cls: type) -> str:
    """The ``task.class`` written into task configs: Java's name for bundled connectors, else a Python path."""
    java = Plugins.java_name_of(connector_cls)
    if java.startswith("org.apache.kafka.") and "." in java:
        return f"{java.rsplit('.', 1)[0]}.{task_cls.__name__}"
    return f"{task_cls.__module__}:{task_cls.__qualname__}"


def _converter_configs(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    n = len(prefix)
    return {k[n:]: v for k, v in props.items() if k.startswith(prefix) and len(k) > n}


def exactly_once_producer_props(props: Mapping[str, Any], transactional_id: str) -> dict[str, Any]:
    """A source task's producer made transactional, as Java's worker forces it (a user's value is overridden)."""
    out = dict(props)
    for key, value in (("enable.idempotence", "true"), ("transactional.id", transactional_id)):
        given = out.get(key)
        default = SOURCE_PRODUCER_DEFAULTS.get(key)
        if given is not None and str(given).strip().lower() not in (value.lower(), default):
            log.warning("Overriding producer property %s=%s with %s: exactly-once source support is enabled",
                        key, given, value)  # fmt: skip
        out[key] = value
    # librdkafka refuses a transactional producer whose messages may outlive the transaction (Connect's
    # unbounded delivery.timeout.ms): a record not delivered within the transaction fails it anyway.
    transaction_timeout = int(str(out.get("transaction.timeout.ms", DEFAULT_TRANSACTION_TIMEOUT_MS)))
    for key in ("delivery.timeout.ms", "message.timeout.ms"):
        if key in out and int(str(out[key])) > transaction_timeout:
            out[key] = str(transaction_timeout)
    return out


def normalize_offsets(
    offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
    """Validate and JSON round-trip partitions/offsets, so connectors see what a reader would return."""
    out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for partition, offset in offsets:
        try:
            validate_offset_format(partition)
            validate_offset_format(offset)
        except DataError as e:
            raise BadRequestError(str(e)) from e
        p = json.loads(json.dumps(dict(partition)))
        o = None if offset is None else json.loads(json.dumps(dict(offset)))
        out.append((p, o))
    return out


class Worker:
    def __init__(
        self,
        worker_id: str,
        config: WorkerConfig,
        offset_store: OffsetBackingStore,
        *,
        status_store: StatusBackingStore | None = None,
        producer_factory: ProducerFactory | None = None,
        admin_factory: AdminFactory | None = None,
        task_metrics: TaskMetricsFactory | None = None,
        sink_task_metrics: SinkTaskMetricsFactory | None = None,
        on_task_created: TaskCreatedHook | None = None,
        group_admin_factory: GroupAdminFactory | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.config = config
        self.offset_store = offset_store
        self.status_store = status_store
        self.policy = config.override_policy()
        self._producer_factory = producer_factory or _default_producer_factory
        self._real_producers = producer_factory is None
        self._admin_factory = admin_factory or _default_admin_factory
        self._group_admin_factory = group_admin_factory or _default_group_admin_factory
        self._task_metrics = task_metrics
        self._sink_task_metrics = sink_task_metrics
        self._on_task_created = on_task_created
        self._lock = threading.RLock()
        self._connectors: dict[str, WorkerConnector] = {}
        self._tasks: dict[ConnectorTaskId, WorkerSourceTask | WorkerSinkTask] = {}
        # ${provider:...} in connector/task configs, resolved with this worker's own providers
        self.config_transformer = WorkerConfigTransformer(config.raw())

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        log.info("Worker %s starting", self.worker_id)
        self.offset_store.start()

    def stop(self) -> None:
        """Stop every connector and task still running (the herder normally did already)."""
        log.info("Worker %s stopping", self.worker_id)
        self.stop_and_await_tasks(list(self._tasks))
        self.stop_and_await_connectors(list(self._connectors))
        self.offset_store.stop()
        self.config_transformer.close()

    def resolve_config(self, props: Mapping[str, str]) -> dict[str, str]:
        """``props`` with the references this worker's providers resolve replaced (for validation)."""
        return self.config_transformer.transform(props)

    @property
    def topic_creation_enabled(self) -> bool:
        return self.config.topic_creation_enable

    # ------------------------------------------------------------------ connectors

    def start_connector(
        self,
        name: str,
        props: dict[str, str],
        herder: HerderHooks | None,
        listener: ConnectorStatusListener,
        target_state: TargetState,
        callback: StateCallback,
    ) -> None:
        """Instantiate and start the connector on its thread; ``callback`` reports the first transition."""
        with self._lock:
            if name in self._connectors:
                callback(ConnectError(f"Connector with name {name} already exists"), None)
                return
            try:
                props = self.config_transformer.transform(props, f"config of connector {name}")
                cls = Plugins.load(props.get(CONNECTOR_CLASS_CONFIG, ""), key=CONNECTOR_CLASS_CONFIG)
                connector = cls()
                if isinstance(connector, SinkConnector):
                    SinkConnectorConfig(props)
                elif isinstance(connector, SourceConnector):
                    SourceConnectorConfig(props, self.topic_creation_enabled)
                else:
                    raise ConnectError(f"Connector {name}: {cls.__name__} is neither a source nor a sink connector")
                reader = OffsetStorageReaderImpl(self.offset_store, name)
                wc = WorkerConnector(name, connector, dict(props), listener, herder, reader)
                log.info("Instantiated connector %s of type %s", name, cls.__name__)
            except Exception as e:
                log.error("Failed to start connector %s: %s", name, e)
                listener.on_failure(name, e)
                callback(e, None)
                return
            self._connectors[name] = wc
            wc.transition_to(target_state, callback)
            wc.start()

    def connector_task_configs(self, name: str, props: Mapping[str, str]) -> list[dict[str, str]]:
        """The connector's task configs (``task.class`` added); fails the connector if tasks.max is exceeded.

        ``props`` is the stored connector config: a key holding a reference there holds the same
        reference in the task configs returned (they are stored too), not the value it resolved to.
        """
        wc = self._connectors.get(name)
        if wc is None:
            raise ConnectError(f"Connector {name} not found in this worker.")
        conf = ConnectorConfig(self.config_transformer.transform(props, f"config of connector {name}"))
        max_tasks = conf.tasks_max
        configs = wc.task_configs(max_tasks)
        if len(configs) > max_tasks:
            if conf.enforce_tasks_max:
                error = TooManyTasksError(name, len(configs), max_tasks)
                wc.fail(error)
                raise error
            log.warning("The connector %s has generated %d tasks, which is greater than tasks.max=%d",
                        name, len(configs), max_tasks)  # fmt: skip
        task_class = task_class_name(type(wc.connector), wc.connector.task_class())
        return reverse_transform(props, [{**c, TASK_CLASS_CONFIG: task_class} for c in configs])

    def stop_and_await_connector(self, name: str) -> None:
        self.stop_and_await_connectors([name])

    def stop_and_await_connectors(self, names: Iterable[str]) -> None:
        names = list(names)
        for name in names:
            wc = self._connectors.get(name)
            if wc is not None:
                log.info("Stopping connector %s", name)
                wc.shutdown()
        deadline = time.monotonic() + CONNECTOR_GRACEFUL_SHUTDOWN_TIMEOUT_S
        for name in names:
            with self._lock:
                wc = self._connectors.pop(name, None)
            if wc is None:
                continue
            if not wc.await_shutdown(deadline - time.monotonic()):
                log.error("Connector '%s' failed to properly shut down, has become unresponsive, and may be consuming "
                          "external resources. Correct the configuration for this connector or remove the connector. "
                          "After fixing the connector, it may be necessary to restart this worker to release any "
                          "consumed resources.", name)  # fmt: skip
                wc.cancel()

    def connector_names(self) -> set[str]:
        return set(self._connectors)

    def is_running(self, name: str) -> bool:
        wc = self._connectors.get(name)
        return wc is not None and wc.is_running

    def set_target_state(self, name: str, state: TargetState, callback: StateCallback | None = None) -> None:
        log.info("Setting connector %s state to %s", name, state.value)
        wc = self._connectors.get(name)
        if wc is not None:
            wc.transition_to(state, callback)
        for tid, task in list(self._tasks.items()):
            if tid.connector == name:
                task.transition_to(state)

    # ------------------------------------------------------------------ tasks

    def start_source_task(
        self,
        task_id: ConnectorTaskId,
        conn_props: Mapping[str, str],
        task_props: Mapping[str, str],
        listener: TaskStatusListener,
        target_state: TargetState,
        num_tasks: int | None = None,
    ) -> bool:
        """Build and start one task; on any setup error report FAILED and return False."""
        log.info("Creating task %s", task_id)
        with self._lock:
            if task_id in self._tasks:
                raise ConnectError(f"Task already exists in this worker: {task_id}")
            try:
                task = self._build_task(task_id, conn_props, task_props, listener, target_state, num_tasks)
            except Exception as e:
                log.error("Failed to start task %s: %s", task_id, e, exc_info=not isinstance(e, ConfigError))
                listener.on_task_failure(task_id, e)
                return False
            self._tasks[task_id] = task
        task.start()
        return True

    def _build_task(
        self,
        task_id: ConnectorTaskId,
        conn_props: Mapping[str, str],
        task_props: Mapping[str, str],
        listener: TaskStatusListener,
        target_state: TargetState,
        num_tasks: int | None,
        recovery: RecoveryBudget | None = None,
    ) -> WorkerSourceTask | WorkerSinkTask:
        restarter = partial(
            self._restart_task, conn_props=conn_props, task_props=task_props, listener=listener, num_tasks=num_tasks
        )  # the untransformed configs: a restart resolves them anew
        conn_props = self.config_transformer.transform(conn_props, f"config of connector {task_id.connector}")
        task_props = self.config_transformer.transform(task_props, f"config of task {task_id}")
        if issubclass(
            Plugins.load(conn_props.get(CONNECTOR_CLASS_CONFIG, ""), key=CONNECTOR_CLASS_CONFIG), SinkConnector
        ):
            return self._build_sink_task(task_id, conn_props, task_props, listener, target_state, num_tasks)
        conf = SourceConnectorConfig(conn_props, self.topic_creation_enabled)
        _enforce_tasks_max(task_id, conf, num_tasks)
        plugins = build_task_plugins(task_id, conf, conn_props, "source", self._converter,
                                     self._on_task_created)  # fmt: skip
        java_producer = producer_props(self.config.raw(), conn_props, self.policy, f"connector-producer-{task_id}")
        transactional_id = self._transactional_id(task_id)
        if transactional_id is not None:
            java_producer = exactly_once_producer_props(java_producer, transactional_id)
        metrics = self._task_metrics(task_id) if self._task_metrics is not None else None
        producer_conf: dict[str, Any] = dict(java_producer)
        if metrics is not None:
            producer_conf["error_cb"] = _client_error_reporter(metrics)
        producer = self._producer_factory(producer_conf)
        groups = conf.topic_creation_groups()
        creator = self._topic_creator(task_id, conn_props, groups) if groups else None
        reader = OffsetStorageReaderImpl(self.offset_store, task_id.connector)
        writer = OffsetStorageWriter(self.offset_store, task_id.connector)
        eos: dict[str, Any] = {}
        task_cls: type[WorkerSourceTask] = WorkerSourceTask
        if transactional_id is not None:
            task_cls = ExactlyOnceWorkerSourceTask
            eos = {
                "transactional_id": transactional_id,
                "offsets_topic": self._offsets_topic(conn_props),
                "settings": ExactlyOnceSettings.from_props(conn_props, self.config.offset_flush_interval_s),
                "recovery": recovery or RecoveryBudget(MAX_RECOVERIES, RECOVERY_WINDOW_S),
                "restarter": restarter,
                "call_timeout_s": transaction_call_timeout_s(java_producer),
            }
        return task_cls(
            task_id,
            plugins.task,
            dict(task_props),
            producer=producer,
            offset_reader=reader,
            offset_writer=writer,
            listener=listener,
            key_converter=plugins.key_converter,
            value_converter=plugins.value_converter,
            header_converter=plugins.header_converter,
            transformation_chain=plugins.chain,
            tolerance=plugins.tolerance,
            initial_state=target_state,
            offset_flush_interval_s=self.config.offset_flush_interval_s,
            offset_flush_timeout_s=self.config.offset_flush_timeout_s,
            topic_creation_groups=groups,
            topic_creator=creator,
            status_store=self.status_store,
            topic_tracking=self.config.topic_tracking_enable,
            metrics=metrics,
            ordered_delivery=keeps_partition_order(java_producer),
            # batches as bytes: only with the real client (not a test double); transactional for exactly-once
            batch_producer_factory=(
                batch_producer_for(java_producer, transactional_id) if self._real_producers else None
            ),
            **eos,
        )

    def _restart_task(
        self,
        old: ExactlyOnceWorkerSourceTask,
        *,
        conn_props: Mapping[str, str],
        task_props: Mapping[str, str],
        listener: TaskStatusListener,
        num_tasks: int | None,
    ) -> bool:
        """Replace a closed exactly-once task instance with a fresh one (its recovery from a producer
        failure); False when the instance is no longer this worker's task (it was being stopped)."""
        with self._lock:
            if self._tasks.get(old.id) is not old or old.is_stopping:
                return False
            log.info("Creating task %s again", old.id)
            task = self._build_task(old.id, conn_props, task_props, listener, old.target_state, num_tasks,
                                    old.recovery)  # fmt: skip
            self._tasks[old.id] = task
        task.start()
        return True

    @property
    def exactly_once_source_enabled(self) -> bool:
        """``exactly.once.source.support=enabled`` on this (distributed) worker: source tasks are transactional."""
        return isinstance(self.config, DistributedConfig) and self.config.exactly_once_source_enabled

    def _transactional_id(self, task_id: ConnectorTaskId) -> str | None:
        if not isinstance(self.config, DistributedConfig) or not self.config.exactly_once_source_enabled:
            return None
        return source_task_transactional_id(self.config.group_id, task_id.connector, task_id.task)

    def _offsets_topic(self, conn_props: Mapping[str, str]) -> str:
        """Where an exactly-once task writes its offsets: the worker's offsets topic."""
        own = str(conn_props.get(OFFSETS_TOPIC_CONFIG) or "").strip()
        topic = getattr(self.offset_store, "topic", None)
        if own and own != topic:
            raise ConfigError(
                f"{OFFSETS_TOPIC_CONFIG}={own}: a separate offsets topic per connector is not supported by mm2 yet; "
                "remove the key to use the worker's offsets topic",
                key=OFFSETS_TOPIC_CONFIG,
            )
        if not isinstance(topic, str) or not topic:
            raise ConnectError("Exactly-once source tasks need a Kafka offsets topic (distributed mode)")
        return topic

    def _build_sink_task(
        self,
        task_id: ConnectorTaskId,
        conn_props: Mapping[str, str],
        task_props: Mapping[str, str],
        listener: TaskStatusListener,
        target_state: TargetState,
        num_tasks: int | None,
    ) -> WorkerSinkTask:
        from connect_core.runtime.sink_task_builder import build_sink_task

        conf = SinkConnectorConfig(conn_props)
        _enforce_tasks_max(task_id, conf, num_tasks)
        return build_sink_task(
            task_id, conf, conn_props, task_props, listener, target_state,
            worker_config=self.config, converter=self._converter, producer_factory=self._producer_factory,
            admin_factory=self._admin_factory, task_metrics=self._task_metrics,
            sink_task_metrics=self._sink_task_metrics,
            on_task_created=self._on_task_created, status_store=self.status_store,
        )  # fmt: skip

    def _converter(self, conn_props: Mapping[str, str], key: str, is_key: bool | None) -> Any:
        """Connector-level converter if configured, else the worker's (as Java's Plugins.newConverter)."""
        kind = "header_converter" if is_key is None else "converter"
        if conn_props.get(key):
            name, configs = conn_props[key], _converter_configs(conn_props, key + ".")
        else:
            worker = self.config.raw()
            name = worker.get(key) or self.config.get(key)
            configs = _converter_configs(worker, key + ".")
        converter = Plugins.load(name, kind, key=key)()
        if is_key is None:
            converter.configure(configs)
        else:
            converter.configure(configs, is_key)
        return converter

    def _topic_creator(
        self, task_id: ConnectorTaskId, conn_props: Mapping[str, str], groups: list[TopicCreationGroup]
    ) -> Callable[[str, TopicCreationGroup | None], bool]:
        from connect_core.kafka.admin import NewTopicSpec

        props = admin_props(self.config.raw(), conn_props, self.policy, f"connector-adminclient-{task_id}")
        holder: dict[str, Any] = {}

        def create(topic: str, group: TopicCreationGroup | None) -> bool:
            admin = holder.get("admin")
            if admin is None:
                admin = holder["admin"] = self._admin_factory(props)
            if topic in admin.describe_topics([topic]):
                log.info("Topic '%s' already exists.", topic)
                return True
            if group is None:
                return False
            spec = NewTopicSpec(topic, group.partitions, group.replication_factor, dict(group.other_configs))
            log.info("Creating topic '%s' for group %s of connector %s", topic, group.name, task_id.connector)
            result = admin.create_topics_if_missing([spec])
            return bool(result.is_created_or_existing(topic))

        return create

    def stop_and_await_task(self, task_id: ConnectorTaskId) -> None:
        self.stop_and_await_tasks([task_id])

    def stop_and_await_tasks(self, ids: Iterable[ConnectorTaskId]) -> None:
        ids = list(ids)
        for tid in ids:
            task = self._tasks.get(tid)
            if task is not None:
                log.info("Stopping task %s", tid)
                task.stop()
        deadline = time.monotonic() + self.config.task_shutdown_timeout_s
        for tid in ids:
            with self._lock:
                task = self._tasks.pop(tid, None)
            if task is None:
                continue
            task.stop()  # again: a recovering task may have been replaced by its successor meanwhile
            if not task.await_stop(deadline - time.monotonic()):
                log.error("Graceful stop of task %s failed.", tid)
                task.cancel()

    def task_ids(self) -> set[ConnectorTaskId]:
        return set(self._tasks)

    def task(self, task_id: ConnectorTaskId) -> WorkerSourceTask | WorkerSinkTask | None:
        return self._tasks.get(task_id)

    # ------------------------------------------------------------------ offsets (KIP-875)

    def connector_offsets(
        self, name: str, conn_props: Mapping[str, str]
    ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """The connector's committed offsets: a source's from the offset store, a sink's from its group."""
        if self._is_sink(conn_props):
            resolved = self.config_transformer.transform(conn_props, f"config of connector {name}")
            admin = self._sink_group_admin(name, resolved)
            return list(read_sink_offsets(name, admin, MODIFY_OFFSETS_TIMEOUT_S))
        partitions = self.offset_store.connector_partitions(name)
        reader = OffsetStorageReaderImpl(self.offset_store, name)
        try:
            return [(p, o) for p, o in reader.offsets(partitions) if o is not None]
        finally:
            reader.close()

    @staticmethod
    def _is_sink(conn_props: Mapping[str, str]) -> bool:
        cls = Plugins.load(conn_props.get(CONNECTOR_CLASS_CONFIG, ""), key=CONNECTOR_CLASS_CONFIG)
        return issubclass(cls, SinkConnector)

    def _sink_group_admin(self, name: str, conn_props: Mapping[str, str]) -> GroupAdmin:
        """An admin on the sink's consumer group (``connect-<name>`` or its ``consumer.override.group.id``)."""
        raw = self.config.raw()
        group = str(consumer_props(raw, conn_props, self.policy, name, f"connector-consumer-{name}")["group.id"])
        props = admin_props(raw, conn_props, self.policy, f"connector-worker-adminclient-{name}")
        return self._group_admin_factory(group, props)

    def _modify_sink_offsets(
        self,
        name: str,
        conn_props: Mapping[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]] | None,
    ) -> str:
        cls = Plugins.load(conn_props.get(CONNECTOR_CLASS_CONFIG, ""), "sink", key=CONNECTOR_CLASS_CONFIG)
        resolved = self.config_transformer.transform(conn_props, f"config of connector {name}")
        admin = self._sink_group_admin(name, resolved)
        return modify_sink_offsets(name, cls(), dict(resolved), offsets, admin, MODIFY_OFFSETS_TIMEOUT_S)

    def modify_connector_offsets(
        self,
        name: str,
        conn_props: Mapping[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]] | None,
    ) -> str:
        """Alter (or, with None, reset) a stopped connector's offsets; returns Java's success message."""
        if self._is_sink(conn_props):
            return self._modify_sink_offsets(name, conn_props, offsets)
        connector_cls = Plugins.load(conn_props.get(CONNECTOR_CLASS_CONFIG, ""), "source", key=CONNECTOR_CLASS_CONFIG)
        connector = connector_cls()
        conn_props = self.config_transformer.transform(conn_props, f"config of connector {name}")
        is_reset = offsets is None
        to_write: list[tuple[dict[str, Any], dict[str, Any] | None]] = (
            [(p, None) for p in self.offset_store.connector_partitions(name)] if offsets is None else offsets
        )
        normalized = normalize_offsets(to_write)
        try:
            handled = connector.alter_offsets(dict(conn_props), normalized)
        except NotImplementedError as e:
            raise ConnectError(
                f"Failed to modify offsets for connector {name} because it doesn't support external modification of "
                "offsets"
            ) from e
        except (BadRequestError, ConfigError):
            raise
        except ConnectError as e:
            raise ConnectError(f"Failed to modify offsets for source connector {name}: {e}") from e
        if normalized:
            writer = OffsetStorageWriter(self.offset_store, name)
            for partition, offset in normalized:
                writer.offset(partition, offset)
            writer.begin_flush()
            future = writer.do_flush()
            if future is None:
                writer.cancel_flush()
                raise ConnectError(f"Failed to modify offsets for source connector {name}: offsets not serializable")
            try:
                future.result(timeout=MODIFY_OFFSETS_TIMEOUT_S)
            except TimeoutError as e:
                raise ConnectError(f"Timed out while attempting to modify offsets for source connector {name}") from e
            except Exception as e:
                raise ConnectError(f"Failed to modify offsets for source connector {name}: {e}") from e
        else:
            log.info("No offsets found for source connector %s - this can occur due to a prior attempt to reset "
                     "offsets or if the source connector hasn't committed any offsets yet", name)  # fmt: skip
        return success_message(handled, is_reset)
