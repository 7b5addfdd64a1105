"""Wiring of a DistributedHerder from worker properties (Java ``ConnectDistributed``'s middle part).

Kafka-backed config, status and offset stores on the worker's internal topics, the Worker, and a
:class:`~connect_core.herder.distributed.coordinator.WorkerGroupMember` in ``group.id`` that
advertises this worker's REST URL. Nothing starts here: ``herder.start()`` does that on its thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from connect_core.herder.distributed.collaborators import FenceForwarder, RebalanceListener, TaskConfigForwarder
from connect_core.herder.distributed.herder import DistributedHerder
from connect_core.herder.distributed.leader_configs import DesiredConfigs
from connect_core.runtime.distributed_config import DistributedConfig
from connect_core.runtime.metric_hooks import RebalanceMetrics
from connect_core.storage.api import ClusterConfigState

log = logging.getLogger(__name__)


def _member_client_configs(props: Mapping[str, Any]) -> dict[str, Any]:
    """kafka-python arguments for the group client: the same security translation as every other client."""
    from connect_core.kafka.clients import text_props
    from connect_core.kafka.security import kafka_python_security

    return kafka_python_security(text_props(props))


def member_factory(
    config: DistributedConfig, advertised_url: str, client_id: str
) -> Callable[[RebalanceListener, Callable[[], ClusterConfigState]], Any]:
    def build(listener: RebalanceListener, snapshot: Callable[[], ClusterConfigState]) -> Any:
        from connect_core.herder.distributed.coordinator import WorkerGroupMember

        raw = config.raw()
        return WorkerGroupMember(
            bootstrap_servers=config.bootstrap_servers,
            group_id=config.group_id,
            rest_url=advertised_url,
            config_snapshot=snapshot,
            listener=listener,
            connect_protocol=config.connect_protocol.value,
            session_timeout_ms=int(config.get_int("session.timeout.ms")),
            heartbeat_interval_ms=int(config.get_int("heartbeat.interval.ms")),
            rebalance_timeout_ms=int(config.get_int("rebalance.timeout.ms")),
            scheduled_rebalance_max_delay_ms=config.scheduled_rebalance_max_delay_ms,
            client_id=client_id,
            client_configs=_member_client_configs(raw),
        )

    return build


def build_distributed_herder(
    worker_props: Mapping[str, Any],
    *,
    worker_id: str,
    advertised_url: str | None = None,
    rest_namespace: tuple[str, ...] | None = None,
    on_became_leader: Callable[[], None] | None = None,
    kafka_cluster_id: str | None = None,
    lookup_cluster_id: bool = True,
    runtime_metrics: RebalanceMetrics | None = None,
    on_task_created: Callable[[Any], None] | None = None,
    task_config_forwarder: TaskConfigForwarder | None = None,
    fence_forwarder: FenceForwarder | None = None,
    internal_rest: bool = True,
    leader_connector_configs: DesiredConfigs | None = None,
) -> DistributedHerder:
    """A DistributedHerder for these worker properties (raises ConfigError listing every bad key).

    ``runtime_metrics`` (mirror.driver.metrics_bindings.RuntimeMetrics) receives connector/task
    states, per-task flush metrics (``for_task``) and rebalances; ``on_task_created`` sees every
    task instance before it starts (mm2 hands mirror tasks their metric sinks there).
    ``leader_connector_configs``: the connector configs the host keeps written; the group's leader writes
    those that differ while it assigns (:mod:`~connect_core.herder.distributed.leader_configs`).
    """
    from connect_core.kafka.admin import TopicAdmin
    from connect_core.kafka.clients import client_props
    from connect_core.runtime.worker import Worker
    from connect_core.storage.kafka_config import KafkaConfigBackingStore
    from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
    from connect_core.storage.kafka_status import KafkaStatusBackingStore

    props = dict(worker_props)
    # Without a REST server (MirrorMaker dedicated mode without internal REST) followers cannot send
    # task configs to the leader; the URL is still what the group sees of this worker.
    url = advertised_url or f"http://{worker_id}/"
    config = DistributedConfig(props)
    config.check_supported()
    admin = TopicAdmin(client_props(props, "admin."))
    if kafka_cluster_id is None and lookup_cluster_id:
        try:
            kafka_cluster_id = admin.cluster_id()
        except Exception as e:  # REST reports null, as Java does when the lookup fails
            log.warning("Could not look up the Kafka cluster id: %s", e)
    offset_store = KafkaOffsetBackingStore.from_worker_config(
        props, admin=admin, exactly_once=config.exactly_once_source_enabled
    )
    status_store = KafkaStatusBackingStore.from_worker_config(props, admin=admin)
    config_store = KafkaConfigBackingStore.from_worker_config(props, admin=admin)
    task_metrics = runtime_metrics.for_task if runtime_metrics is not None else None
    sink_metrics = runtime_metrics.for_sink_task if runtime_metrics is not None else None
    worker = Worker(
        worker_id,
        config,
        offset_store,
        status_store=status_store,
        task_metrics=task_metrics,
        sink_task_metrics=sink_metrics,
        on_task_created=on_task_created,
    )
    client_id = str(props.get("client.id") or f"connect-{worker_id}")
    forwarders: dict[str, Any] = {}
    if task_config_forwarder is not None:
        forwarders["task_config_forwarder"] = task_config_forwarder
    if fence_forwarder is not None:  # zombie-fencing requests of exactly-once source tasks (KIP-618)
        forwarders["fence_forwarder"] = fence_forwarder
    elif not internal_rest:  # MirrorMaker dedicated mode without KIP-710's internal REST: Java's error
        from connect_core.herder.distributed.leader_forwarding import no_internal_rest

        forwarders["fence_forwarder"] = no_internal_rest
    return DistributedHerder(
        config,
        worker,
        worker_id,
        url,
        config_store,
        status_store,
        member_factory(config, url, client_id),
        kafka_cluster_id=kafka_cluster_id,
        rest_namespace=tuple(rest_namespace or ()),
        on_became_leader=on_became_leader,
        closers=[admin.close],
        runtime_metrics=runtime_metrics,
        leader_connector_configs=leader_connector_configs,
        **forwarders,
    )
