"""The read_to_end barrier's probe learns every partition's end without fetching the log: the broker is
asked for a byte per partition in all (Tansu fills an answer to the request's limit, ignoring the
per-partition one, so a probe once carried up to 16 MB of an offsets topic at every barrier)."""

from __future__ import annotations

from collections.abc import Callable

from confluent_kafka import Producer

from connect_core.kafka.client_logging import RDKAFKA_LOG
from connect_core.kafka.log_ends import LogEnds
from connect_core.kafka.raw_fetch import RawFetcher
from embedded_kafka import KafkaCluster

PARTITIONS = 5
PER_PARTITION = 2_000


def test_the_probe_answers_every_end_with_at_most_a_batch(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("ends"), partitions=PARTITIONS)
    producer = Producer({"bootstrap.servers": kafka_cluster.bootstrap_servers, "linger.ms": 5, "logger": RDKAFKA_LOG})
    for i in range(PARTITIONS * PER_PARTITION):
        producer.produce(topic, b"v" * 200, f"k{i}".encode(), partition=i % PARTITIONS)
        if i % 1000 == 999:  # a flush ends every partition's batch: many batches per partition
            assert producer.flush(30) == 0
    start = dict.fromkeys(range(PARTITIONS), 0)

    ends = LogEnds(topic, {"bootstrap.servers": kafka_cluster.bootstrap_servers}, False, 10)
    try:
        assert ends.now(start) == {p: (PER_PARTITION, 0) for p in range(PARTITIONS)}
    finally:
        ends.close()

    fetcher = RawFetcher(kafka_cluster.bootstrap_servers, {}, "log-ends-probe-test")
    try:
        probe = fetcher.fetch(topic, start, 5, partition_max_bytes=1)
        full = fetcher.fetch(topic, start, 5)
    finally:
        fetcher.close()
    assert {p: a.high_watermark for p, a in probe.items()} == dict.fromkeys(range(PARTITIONS), PER_PARTITION)
    assert sum(len(a.batches) for a in probe.values()) <= 1, "the probe carried records"
    assert sum(len(a.batches) for a in full.values()) > PARTITIONS, "a full read of the same log carries many"
