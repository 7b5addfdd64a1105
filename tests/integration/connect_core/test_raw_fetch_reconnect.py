"""The raw fetcher behind an exactly-once worker's offset reads survives a broker restart: its connection
died with the broker, the next read connects anew (an exactly-once task restarted after a target broker
restart read its offsets through a dead connection and failed)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from connect_core.kafka.raw_fetch import RawFetcher
from embedded_kafka import KafkaCluster

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]


def test_a_read_after_the_broker_restarted_connects_anew(
    durable_cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    (cluster,) = durable_cluster_factory(["B"])
    topic = cluster.create_topic(unique_name("raw"), partitions=1)
    cluster.produce(topic, [b"v"])
    fetcher = RawFetcher(cluster.bootstrap_servers, {}, "raw-fetch-test")
    try:
        assert fetcher.fetch(topic, {0: 0}, 500)[0].high_watermark == 1
        cluster.restart()  # type: ignore[attr-defined]
        assert fetcher.fetch(topic, {0: 0}, 500)[0].high_watermark == 1
    finally:
        fetcher.close()
