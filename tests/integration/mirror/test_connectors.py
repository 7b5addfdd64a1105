"""MirrorSourceConnector and MirrorCheckpointConnector against real clusters, without a worker."""

from __future__ import annotations

import threading
from collections.abc import Callable

from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import OffsetAndMetadata, TopicPartition
from mirror.connectors.checkpoint_connector import MirrorCheckpointConnector
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.source_connector import MirrorSourceConnector

NameFn = Callable[[str], str]


class RecordingContext:
    def __init__(self) -> None:
        self.reconfigurations = 0
        self.errors: list[BaseException] = []
        self.event = threading.Event()

    def request_task_reconfiguration(self) -> None:
        self.reconfigurations += 1
        self.event.set()

    def raise_error(self, error: BaseException) -> None:
        self.errors.append(error)

    def offset_storage_reader(self) -> object:
        raise NotImplementedError


def base(a: KafkaCluster, b: KafkaCluster, name: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": name,
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "source.cluster.bootstrap.servers": a.bootstrap_servers,
        "target.cluster.bootstrap.servers": b.bootstrap_servers,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "admin.timeout.ms": "15000",
    }


def configs_of(cluster: KafkaCluster, topic: str) -> dict[str, str | None]:
    admin = MirrorAdmin({"bootstrap.servers": cluster.bootstrap_servers}, cluster.name, 10)
    return {e.name: e.value for e in admin.describe_topic_configs([topic])[topic]}


def test_source_connector_creates_topics_syncs_configs_and_refreshes(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, b = two_clusters
    t1, t2, late = unique_name("t1"), unique_name("t2"), unique_name("late")
    a.create_topic(t1, partitions=3, config={"retention.ms": "3600000", "min.insync.replicas": "1"})
    a.create_topic(t2, partitions=1)
    a.create_topic("B.looped", partitions=1)  # came from B: a cycle, never replicated back
    b.create_topic("B.local", partitions=1)
    connector = MirrorSourceConnector()
    context = RecordingContext()
    connector.initialize(context)  # type: ignore[arg-type]
    connector.start(
        {
            **base(a, b, "MirrorSourceConnector"),
            "refresh.topics.interval.seconds": "1",
            "sync.topic.configs.interval.seconds": "1",
        }
    )
    try:
        assert "mm2-offset-syncs.B.internal" in a.topic_names()
        assert b.partitions_for(f"A.{t1}") == [0, 1, 2]
        assert b.partitions_for(f"A.{t2}") == [0]
        assert "A.B.looped" not in b.topic_names()
        assert configs_of(b, f"A.{t1}").get("retention.ms") == "3600000"
        assert "min.insync.replicas" not in configs_of(b, f"A.{t1}")  # excluded by default

        tasks = connector.task_configs(2)
        assigned = [set(c["task.assigned.partitions"].split(",")) for c in tasks]
        assert assigned[0] | assigned[1] == {f"{t1}-0", f"{t1}-1", f"{t1}-2", f"{t2}-0"}
        assert [c["task.index"] for c in tasks] == ["0", "1"]
        assert all(c["source.cluster.alias"] == "A" for c in tasks)

        # Config change on the source reaches the remote topic within the sync interval.
        admin_a = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 10)
        admin_a.incremental_alter_topic_configs({t1: [("retention.ms", "7200000", "SET")]})
        wait_for(
            lambda: configs_of(b, f"A.{t1}").get("retention.ms") == "7200000", 15, message="config change not synced"
        )

        # A new source topic is found by the periodic refresh and triggers a reconfiguration.
        a.create_topic(late, partitions=2)
        assert context.event.wait(15)
        wait_for(lambda: f"A.{late}" in b.topic_names(), 10, message="late topic not created")
        parts = {p for c in connector.task_configs(1) for p in c["task.assigned.partitions"].split(",")}
        assert {f"{late}-0", f"{late}-1"} <= parts
        assert context.errors == []
    finally:
        connector.stop()


def test_source_connector_with_no_topics_has_no_tasks_and_starts_with_unreachable_target(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
) -> None:
    a, b = two_clusters
    connector = MirrorSourceConnector()
    connector.initialize(RecordingContext())  # type: ignore[arg-type]
    props = {
        **base(a, b, "MirrorSourceConnector"),
        "topics": "nothing-matches",
        "admin.timeout.ms": "2000",
        "target.cluster.bootstrap.servers": "127.0.0.1:1",
    }
    connector.start(props)  # start-up admin failures are logged, not raised (as in Kafka)
    try:
        assert connector.task_configs(4) == []
    finally:
        connector.stop()


def test_checkpoint_connector_finds_groups(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn
) -> None:
    a, b = two_clusters
    topic, g1, g2 = unique_name("t"), unique_name("g"), unique_name("g")
    a.create_topic(topic)
    admin = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 10)
    admin.alter_consumer_group_offsets(g1, {TopicPartition(topic, 0): OffsetAndMetadata(1)})
    admin.alter_consumer_group_offsets("console-consumer-1", {TopicPartition(topic, 0): OffsetAndMetadata(1)})
    connector = MirrorCheckpointConnector()
    context = RecordingContext()
    connector.initialize(context)  # type: ignore[arg-type]
    connector.start({**base(a, b, "MirrorCheckpointConnector"), "refresh.groups.interval.seconds": "1"})
    try:
        assert "A.checkpoints.internal" in b.topic_names()
        assert connector.known_consumer_groups == {g1}
        [task] = connector.task_configs(3)
        assert task["task.assigned.groups"] == g1
        admin.alter_consumer_group_offsets(g2, {TopicPartition(topic, 0): OffsetAndMetadata(2)})
        assert context.event.wait(15)
        assert connector.known_consumer_groups == {g1, g2}
        assert len(connector.task_configs(3)) == 2
    finally:
        connector.stop()
