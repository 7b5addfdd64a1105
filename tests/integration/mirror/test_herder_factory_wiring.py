"""What the driver hands each herder builder reaches the herder: the flow's metrics and, for the
distributed herder, the advertised REST URL the group sees and the leadership hook.

The builders are the real ones on a real broker; the proof is read from the herder's effects
(metric samples of the flow, the URL in the group's assignment), not from what was passed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from connect_core.herder.distributed.herder import DistributedHerder
from embedded_kafka import KafkaCluster, unique_name, wait_for
from mirror.driver.herder_factory import FlowHerder, HerderSpec, distributed_factory, standalone_factory
from mirror.driver.maker_config import SourceAndTarget
from mirror.driver.metrics import Mm2Metrics

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

PAIR = SourceAndTarget("A", "B")
ADVERTISED = "http://127.0.0.1:1/"  # never dialled: a single worker forwards nothing


def worker_props(cluster: KafkaCluster) -> dict[str, str]:
    prefix = unique_name("wiring")
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": prefix,
        "key.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "value.converter": "org.apache.kafka.connect.converters.ByteArrayConverter",
        "config.storage.topic": f"{prefix}-configs",
        "offset.storage.topic": f"{prefix}-offsets",
        "status.storage.topic": f"{prefix}-status",
        "config.storage.replication.factor": "-1",
        "offset.storage.replication.factor": "-1",
        "status.storage.replication.factor": "-1",
        "offset.storage.partitions": "1",
        "status.storage.partitions": "1",
    }


def heartbeat_connector(cluster: KafkaCluster) -> dict[str, str]:
    return {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "source.cluster.alias": PAIR.source,
        "target.cluster.alias": PAIR.target,
        "target.cluster.bootstrap.servers": cluster.bootstrap_servers,
        "heartbeats.topic.replication.factor": "1",
    }


def sample(metrics: Mm2Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, {"source": PAIR.source, "target": PAIR.target, **labels})
    return 0.0 if value is None else value


@pytest.fixture
def started() -> Iterator[list[FlowHerder]]:
    flows: list[FlowHerder] = []
    yield flows
    for flow in flows:
        flow.stop()


def test_standalone_flow_reports_through_the_flow_metrics(
    kafka_cluster: KafkaCluster, started: list[FlowHerder]
) -> None:
    metrics = Mm2Metrics()
    led = threading.Event()
    spec = HerderSpec(
        PAIR, worker_props(kafka_cluster), "A->B", on_became_leader=led.set, metrics=metrics, rest_url=ADVERTISED
    )
    flow = standalone_factory(spec)
    started.append(flow)
    flow.start()
    assert led.is_set()  # a standalone herder leads as soon as it runs
    flow.herder.put_connector_config("MirrorHeartbeatConnector", heartbeat_connector(kafka_cluster), False)
    # runtime_metrics: connector and task states of this flow
    wait_for(
        lambda: sample(metrics, "mm2_connector_state", connector="MirrorHeartbeatConnector", state="RUNNING") == 1.0,
        timeout=60,
        message="connector RUNNING in the flow's metrics",
    )
    wait_for(
        lambda: (
            sample(metrics, "mm2_task_state", connector="MirrorHeartbeatConnector", task="0", state="RUNNING") == 1.0
        ),
        timeout=60,
        message="task RUNNING in the flow's metrics",
    )
    # on_task_created: the heartbeat task got the flow's sink, so its acknowledged heartbeats count
    wait_for(
        lambda: sample(metrics, "mm2_heartbeats_total") >= 1.0, timeout=60, message="heartbeats counted for the flow"
    )


def test_distributed_flow_gets_its_url_leadership_and_metrics(
    kafka_cluster: KafkaCluster, started: list[FlowHerder]
) -> None:
    metrics = Mm2Metrics()
    led = threading.Event()
    spec = HerderSpec(
        PAIR,
        worker_props(kafka_cluster),
        "A->B",
        on_became_leader=led.set,
        metrics=metrics,
        rest_url=ADVERTISED,
        rest_namespace=("A", "B"),
    )
    flow = distributed_factory(spec)
    started.append(flow)
    flow.start()
    herder = flow.herder
    assert isinstance(herder, DistributedHerder)
    assert led.wait(60), "the leadership hook was never called"
    # advertised_url: the URL the group's assignment names for its leader (this worker)
    wait_for(lambda: herder.is_ready(), timeout=60, message="the herder joined its group")
    assert herder._leader_url() == ADVERTISED
    # runtime_metrics: the group's rebalance is counted for this flow
    wait_for(
        lambda: sample(metrics, "mm2_rebalances_total") >= 1.0,
        timeout=60,
        message="the rebalance counted in the flow's metrics",
    )
