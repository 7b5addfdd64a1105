"""Builds a :class:`WorkerSinkTask` for the worker (Java ``Worker.SinkTaskBuilder``): the task instance,
its converters and transformations, the consumer settings, error tolerance and the dead-letter queue.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from connect_core.model import ConnectorTaskId, TargetState
from connect_core.runtime.connector_config import (
    SinkConnectorConfig,
    ToleranceType,
)
from connect_core.runtime.dead_letter_queue import DeadLetterQueueReporter
from connect_core.runtime.sink_metrics import SinkTaskMetrics
from connect_core.runtime.source_task_collaborators import TaskMetrics
from connect_core.runtime.status import TaskStatusListener
from connect_core.runtime.task_plugins import build_task_plugins
from connect_core.runtime.worker_config import WorkerConfig, admin_props, consumer_props, producer_props
from connect_core.runtime.worker_sink_task import WorkerSinkTask
from connect_core.storage.api import StatusBackingStore

log = logging.getLogger(__name__)

MAX_POLL_RECORDS_CONFIG = "max.poll.records"
DEFAULT_MAX_POLL_RECORDS = 500


def _default_consumer_factory(conf: dict[str, Any]) -> Any:
    from connect_core.kafka.clients import create_consumer

    return create_consumer(conf)


def _client_partition(topic: str, partition: int, offset: int | None = None) -> Any:
    from connect_core.kafka.types import ClientPartition

    return ClientPartition(topic, partition) if offset is None else ClientPartition(topic, partition, offset)


def _names_topics(props: Mapping[str, str]) -> bool:
    return bool(str(props.get("topics") or "").strip() or str(props.get("topics.regex") or "").strip())


def build_sink_task(
    task_id: ConnectorTaskId,
    conf: SinkConnectorConfig,
    conn_props: Mapping[str, str],
    task_props: Mapping[str, str],
    listener: TaskStatusListener,
    target_state: TargetState,
    *,
    worker_config: WorkerConfig,
    converter: Callable[[Mapping[str, str], str, bool | None], Any],
    producer_factory: Callable[[dict[str, Any]], Any],
    admin_factory: Callable[[dict[str, Any]], Any],
    task_metrics: Callable[[ConnectorTaskId], TaskMetrics] | None,
    on_task_created: Callable[[Any], None] | None,
    status_store: StatusBackingStore | None,
    sink_task_metrics: Callable[[ConnectorTaskId], SinkTaskMetrics] | None = None,
) -> WorkerSinkTask:
    """Everything a sink task needs, from already-resolved connector and task configs (``converter`` is
    the worker's: the connector's converter if it names one, else the worker's)."""
    from connect_core.kafka.clients import consumer_config
    from connect_core.kafka.departed_leader import consumer_group_release

    plugins = build_task_plugins(task_id, conf, conn_props, "sink", converter, on_task_created)
    raw = worker_config.raw()
    policy = worker_config.override_policy()
    java_consumer = consumer_props(raw, conn_props, policy, task_id.connector,
                                   f"connector-consumer-{task_id}")  # fmt: skip
    max_poll = int(str(java_consumer.pop(MAX_POLL_RECORDS_CONFIG, DEFAULT_MAX_POLL_RECORDS)).strip())
    dlq = None
    if conf.dlq_topic:
        dlq_producer = producer_props(raw, conn_props, policy, f"connector-dlq-producer-{task_id}")
        dlq_admin = admin_props(raw, conn_props, policy, f"connector-dlq-adminclient-{task_id}")
        dlq = DeadLetterQueueReporter.create(
            task_id, conf.dlq_topic, conf.dlq_replication_factor, conf.dlq_context_headers,
            lambda: admin_factory(dlq_admin), lambda: producer_factory(dlq_producer),
        )  # fmt: skip
    errant = bool(conf.dlq_topic) or conf.errors_log_enable or conf.errors_tolerance is ToleranceType.ALL
    # The task's own topics when its connector splits them between tasks (Java subscribes by the task config).
    own = SinkConnectorConfig({**conn_props, **task_props}) if _names_topics(task_props) else conf
    topics, regex = own.topics, own.topics_regex
    metrics = task_metrics(task_id) if task_metrics is not None else None
    librdkafka_consumer = consumer_config(java_consumer)
    return WorkerSinkTask(
        task_id,
        plugins.task,
        dict(task_props),
        consumer_config=librdkafka_consumer,
        consumer_factory=_default_consumer_factory,
        client_partition=_client_partition,
        topics=topics,
        topics_regex=regex,
        listener=listener,
        key_converter=plugins.key_converter,
        value_converter=plugins.value_converter,
        header_converter=plugins.header_converter,
        transformation_chain=plugins.chain,
        tolerance=plugins.tolerance,
        dead_letter_queue=dlq,
        errant_reporter=errant,
        initial_state=target_state,
        offset_flush_interval_s=worker_config.offset_flush_interval_s,
        offset_flush_timeout_s=worker_config.offset_flush_timeout_s,
        max_poll_records=max_poll,
        status_store=status_store,
        topic_tracking=worker_config.topic_tracking_enable,
        metrics=metrics,
        sink_metrics=sink_task_metrics(task_id) if sink_task_metrics is not None else None,
        group_release=consumer_group_release(java_consumer, librdkafka_consumer),
    )
