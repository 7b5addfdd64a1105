"""How many group rebalances ``mm2 run``'s driver needs before its tasks run, on a real broker.

Every rebalance is a JoinGroup round trip (on the test broker half a session timeout), so a start's cost is
counted in completed rebalances of the flow's herder (``mm2_rebalances_total``), read when the tasks run
and again once a record has been mirrored. A fresh flow (empty config topic): the leader writes the three
connector configs while it assigns the first generation, so one rebalance assigns the connectors and one
more their tasks. A restart over configs already stored: one rebalance, and nothing rewritten. A flow with
nothing to mirror yet (no topic, no group, no heartbeats: no task configs to write): one rebalance, and the
config updates of the leader's own writes ask for no other.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from connect_core.herder.distributed.herder import DistributedHerder
from connect_core.model import ConnectorTaskId
from embedded_kafka import KafkaCluster, wait_for
from mirror.driver.driver import MirrorMaker, make_config
from mirror.driver.herder_factory import distributed_factory
from mirror.driver.maker_config import CHECKPOINT_CONNECTOR, HEARTBEAT_CONNECTOR, SOURCE_CONNECTOR, SourceAndTarget
from mirror.driver.metrics import Mm2Metrics
from tests.e2e.mm2_helpers import mm2_properties

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

AB = SourceAndTarget("A", "B")
WAIT_S = 120.0
CONFIG_TOPIC = "mm2-configs.A.internal"


def properties(a: KafkaCluster, b: KafkaCluster) -> dict[str, str]:
    """The e2e suite's test bed (one replica; the test broker holds each join for half the session timeout)."""
    return mm2_properties({"A": a, "B": b}, ["A->B"], **{"refresh.topics.interval.seconds": "1"})


class Node:
    """One in-process ``mm2 run`` driver over the distributed herder, with its flow's metrics."""

    def __init__(self, props: dict[str, str]) -> None:
        self.metrics = Mm2Metrics()
        self.maker = MirrorMaker(make_config(props), distributed_factory, metrics=self.metrics)

    def rebalances(self) -> float:
        value = self.metrics.registry.get_sample_value("mm2_rebalances_total", {"source": "A", "target": "B"})
        return 0.0 if value is None else value

    def source_task_running(self) -> bool:
        try:
            status = self.maker.herder(AB).task_status(ConnectorTaskId(SOURCE_CONNECTOR, 0))
        except Exception:  # not configured yet
            return False
        return status.state.value == "RUNNING"


@pytest.fixture
def nodes() -> Iterator[list[Node]]:
    started: list[Node] = []
    yield started
    for node in started:
        node.maker.stop()


def start(props: dict[str, str], nodes: list[Node]) -> Node:
    node = Node(props)
    nodes.append(node)
    node.maker.start()
    return node


def mirrored(b: KafkaCluster, topic: str, count: int) -> bool:
    if topic not in b.topic_names():
        return False
    return sum(len(m) for m in b.read_all(topic).values()) >= count


def test_a_fresh_flow_runs_its_tasks_after_two_rebalances_and_a_restart_after_one(
    two_clusters: tuple[KafkaCluster, KafkaCluster], nodes: list[Node]
) -> None:
    a, b = two_clusters
    a.create_topic("orders", 1)
    a.produce("orders", [{"value": b"first", "partition": 0}])
    props = properties(a, b)

    first = start(props, nodes)
    wait_for(first.source_task_running, WAIT_S, 0.2, "the source task RUNNING after a fresh start")
    assert first.rebalances() == 2, "one rebalance assigns the connectors the leader wrote, one their tasks"
    wait_for(lambda: mirrored(b, "A.orders", 1), WAIT_S, 0.5, "the record mirrored")
    assert first.rebalances() == 2, "no further rebalance once the tasks run"
    assert first.maker.leaderships_handled.get(AB) == 1
    assert first.maker.configured.get(AB, []) == [], "the leader had written the configs while assigning"
    stored = b.read_all(CONFIG_TOPIC)[0]
    connector_records = [m for m in stored if (m.key() or b"").startswith(b"connector-")]
    assert len(connector_records) == 3, [m.key() for m in stored]
    first.maker.stop()
    nodes.remove(first)

    a.produce("orders", [{"value": b"second", "partition": 0}])
    second = start(props, nodes)
    wait_for(second.source_task_running, WAIT_S, 0.2, "the source task RUNNING after the restart")
    wait_for(lambda: mirrored(b, "A.orders", 2), WAIT_S, 0.5, "the second record mirrored")
    wait_for(lambda: second.maker.leaderships_handled.get(AB) == 1, WAIT_S, 0.2, "the restart's leadership handled")
    assert second.rebalances() == 1, "configs and task configs already stored: one rebalance"
    assert second.maker.configured.get(AB, []) == []
    assert len(b.read_all(CONFIG_TOPIC)[0]) == len(stored), "nothing rewritten on a restart"


def settled(herder: DistributedHerder) -> bool:
    """The herder handled every config update it heard of and its group wants no rejoin."""
    member = herder._member
    return (
        herder.is_ready()
        and not herder._needs_reconfig_rebalance
        and member is not None
        and not member.coordinator.need_rejoin()  # type: ignore[attr-defined]
    )


def test_a_flow_with_nothing_to_mirror_yet_settles_after_one_rebalance(
    two_clusters: tuple[KafkaCluster, KafkaCluster], nodes: list[Node]
) -> None:
    a, b = two_clusters
    props = {**properties(a, b), "A->B.emit.heartbeats.enabled": "false"}  # no heartbeat task either
    node = start(props, nodes)
    herder = node.maker.herder(AB)
    assert isinstance(herder, DistributedHerder)

    def connectors_running() -> bool:
        names = (SOURCE_CONNECTOR, HEARTBEAT_CONNECTOR, CHECKPOINT_CONNECTOR)
        try:
            return all(herder.connector_status(n).connector.state.value == "RUNNING" for n in names)
        except Exception:  # not configured yet
            return False

    wait_for(connectors_running, WAIT_S, 0.2, "the three connectors RUNNING")
    wait_for(lambda: node.maker.leaderships_handled.get(AB) == 1, WAIT_S, 0.2, "the leadership handled")
    wait_for(lambda: settled(herder), WAIT_S, 0.2, "the herder settled")
    assert node.rebalances() == 1, "the leader's own connector writes were already assigned"
    assert all(not herder.task_configs(n) for n in (SOURCE_CONNECTOR, HEARTBEAT_CONNECTOR, CHECKPOINT_CONNECTOR))
