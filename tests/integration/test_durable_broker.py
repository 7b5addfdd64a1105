"""The durable embedded broker: Tansu on S3 storage (a local moto server) survives SIGKILL and restart.

What restart-fault tests rely on: after ``kill()`` (SIGKILL) and ``restart()`` the broker answers on the
same address with its topics, every acknowledged record, the committed group offsets, and new records
continue the old offsets. The default memory storage comes back empty, which is why this engine exists.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest
from confluent_kafka import ConsumerGroupTopicPartitions, KafkaException
from confluent_kafka import TopicPartition as TP

from embedded_kafka import BrokerStartError, EmbeddedKafkaCluster, KafkaCluster, unique_name

Factory = Callable[[Sequence[str]], list[KafkaCluster]]


def _group_offsets(cluster: KafkaCluster, group: str, topic: str, partitions: int) -> dict[int, int]:
    admin = cluster.admin()  # keep the client alive until the future completes
    request = [ConsumerGroupTopicPartitions(group, [TP(topic, p) for p in range(partitions)])]
    result = admin.list_consumer_group_offsets(request)[group].result(timeout=15)
    return {tp.partition: tp.offset for tp in result.topic_partitions if tp.offset >= 0}


def _view(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[int, bytes | None, bytes | None]]]:
    return {p: [(m.offset() or 0, m.key(), m.value()) for m in msgs] for p, msgs in cluster.read_all(topic).items()}


def test_sigkill_and_restart_keep_topics_records_and_group_offsets(durable_cluster_factory: Factory) -> None:
    (cluster,) = durable_cluster_factory(["A"])
    assert isinstance(cluster, EmbeddedKafkaCluster) and cluster.storage == "s3"
    topic, group = unique_name("durable"), unique_name("group")
    cluster.create_topic(topic, 3, {"retention.ms": "3600000"})
    cluster.produce(topic, [{"key": f"k{i}", "value": f"v{i}", "partition": i % 3} for i in range(60)])
    consumer = cluster.consumer(**{"group.id": group})
    try:
        consumer.commit(offsets=[TP(topic, 0, 5), TP(topic, 1, 20), TP(topic, 2, 7)], asynchronous=False)
    finally:
        consumer.close()
    before = _view(cluster, topic)
    address, pid = cluster.bootstrap_servers, cluster.pid

    cluster.kill()
    assert not cluster.running
    with pytest.raises(KafkaException):
        cluster.admin().list_topics(timeout=1)  # really gone, not only forgotten

    cluster.restart()
    assert cluster.running and cluster.pid != pid
    assert cluster.bootstrap_servers == address  # clients configured before the crash find it again
    assert topic in cluster.topic_names()
    assert cluster.partitions_for(topic) == [0, 1, 2]
    assert _view(cluster, topic) == before
    assert _group_offsets(cluster, group, topic, 3) == {0: 5, 1: 20, 2: 7}

    # the log goes on where it was, and a second crash keeps the new records too
    assert cluster.produce(topic, [{"value": "after", "partition": 1}]) == [(1, 20)]
    cluster.restart()  # restart() of a running broker SIGKILLs it first
    assert cluster.end_offsets(topic) == {0: 20, 1: 21, 2: 20}


def test_memory_storage_comes_back_empty() -> None:
    """The default engine: a restart is a new, empty broker on the same address."""
    with EmbeddedKafkaCluster("volatile") as cluster:
        topic = cluster.create_topic(unique_name("gone"))
        cluster.restart()
        assert topic not in cluster.topic_names()


def test_restart_before_start_is_refused() -> None:
    cluster = EmbeddedKafkaCluster("never", storage="s3")
    with pytest.raises(BrokerStartError, match="never started"):
        cluster.restart()
    with pytest.raises(BrokerStartError, match="not started"):
        cluster.kill()
