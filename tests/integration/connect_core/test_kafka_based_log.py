"""KafkaBasedLog against a real broker: topic creation, ordered replay, the read-to-end barrier."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from confluent_kafka import Message

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.log import KafkaBasedLog
from embedded_kafka import KafkaCluster


class Collector:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[tuple[int, int, bytes | None, bytes | None]] = []

    def __call__(self, msg: Message) -> None:
        with self.lock:
            self.records.append((msg.partition() or 0, msg.offset() or 0, msg.key(), msg.value()))

    def values(self, partition: int | None = None) -> list[bytes | None]:
        with self.lock:
            return [v for p, _, _, v in self.records if partition is None or p == partition]


def _props(cluster: KafkaCluster) -> dict[str, str]:
    return {"bootstrap.servers": cluster.bootstrap_servers}


def test_creates_compacted_topic_and_barrier_sees_every_acknowledged_write(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("log")
    got = Collector()
    spec = NewTopicSpec(topic, 3, -1).compacted()
    log = KafkaBasedLog(topic, _props(kafka_cluster), _props(kafka_cluster), got, topic_spec=spec)
    log.start()
    try:
        assert log.partition_count == 3
        admin = TopicAdmin(_props(kafka_cluster))
        assert admin.partition_counts([topic]) == {topic: 3}
        assert admin.describe_configs([topic])[topic]["cleanup.policy"].value == "compact"
        # Many quick writes: the producer batches them, so an end offset from ListOffsets would be
        # wrong on Tansu; the barrier must still see every one.
        for i in range(300):
            log.send(b"k%d" % (i % 7), b"v%d" % i)
        log.read_to_end().result(timeout=30)
        assert len(got.values()) == 300
        # Per partition, records arrive in offset order.
        with got.lock:
            for p in range(3):
                offsets = [o for part, o, _, _ in got.records if part == p]
                assert offsets == sorted(offsets) == list(range(len(offsets)))
    finally:
        log.stop()


def test_second_instance_replays_everything_and_sees_foreign_writes(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("log")
    kafka_cluster.create_topic(topic, partitions=2, config={"cleanup.policy": "compact"})
    first = KafkaBasedLog(topic, _props(kafka_cluster), _props(kafka_cluster), lambda m: None)
    first.start()
    try:
        done = [first.send_future(b"k", b"a%d" % i) for i in range(50)]
        for f in done:
            f.result(timeout=30)
        got = Collector()
        second = KafkaBasedLog(topic, _props(kafka_cluster), _props(kafka_cluster), got, read_only=True)
        second.start()  # start() returns only after the existing log was read
        try:
            assert sorted(v or b"" for v in got.values()) == sorted(b"a%d" % i for i in range(50))
            # A write by someone else, acknowledged before the barrier, is seen after it.
            kafka_cluster.produce(topic, [{"key": b"x", "value": b"foreign", "partition": 1}])
            second.read_to_end().result(timeout=30)
            assert got.values(1)[-1] == b"foreign"
            with pytest.raises(ConnectError):
                second.send(b"k", b"v")  # read-only
        finally:
            second.stop()
    finally:
        first.stop()


def test_empty_topic_and_repeated_barriers(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> None:
    topic = unique_name("log")
    got = Collector()
    log = KafkaBasedLog(
        topic, _props(kafka_cluster), _props(kafka_cluster), got, topic_spec=NewTopicSpec(topic, 1, -1).compacted()
    )
    log.start()
    try:
        assert got.values() == []
        futures = [log.read_to_end() for _ in range(5)]
        for f in futures:
            f.result(timeout=30)
        log.send(None, None)  # null key and value are legal (tombstones)
        log.read_to_end().result(timeout=30)
        assert got.values() == [None]
    finally:
        log.stop()
    with pytest.raises(ConnectError):
        log.read_to_end().result(timeout=30)


def test_refuses_multi_partition_topic_when_one_is_required(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("cfg")
    kafka_cluster.create_topic(topic, partitions=3)
    log = KafkaBasedLog(
        topic,
        _props(kafka_cluster),
        _props(kafka_cluster),
        lambda m: None,
        require_single_partition="config.storage.topic",
    )
    with pytest.raises(ConfigError) as info:
        log.start()
    assert info.value.issues[0].key == "config.storage.topic"
    assert "single partition" in str(info.value) and "3 partitions" in str(info.value)


def test_missing_topic_without_spec_fails_and_is_not_auto_created(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("missing")
    log = KafkaBasedLog(topic, _props(kafka_cluster), _props(kafka_cluster), lambda m: None, start_timeout_s=2)
    with pytest.raises(ConnectError, match="partition metadata"):
        log.start()
    assert topic not in TopicAdmin(_props(kafka_cluster)).list_topics()


def test_the_barrier_asks_where_the_log_ends_instead_of_waiting_out_the_tails_fetch(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    """The tail long-polls (here 8 s: a barrier that waited for a fresh end-of-partition event would take at
    least that long); a barrier learns each partition's end from a short fetch and completes once the tail's
    positions reach it: at once on a log read to its end, once the tail consumed a new record otherwise."""
    topic = unique_name("log")
    got = Collector()
    slow_tail = {**_props(kafka_cluster), "fetch.max.wait.ms": "8000"}
    log = KafkaBasedLog(topic, _props(kafka_cluster), slow_tail, got, topic_spec=NewTopicSpec(topic, 2, -1))
    log.start()
    try:
        for _ in range(3):
            log.read_to_end().result(timeout=6)  # read to its end already: no wait for the tail's fetch
        log.send(b"k", b"mine")
        log.read_to_end().result(timeout=60)  # the broker answers the tail's waiting fetch once it sees the record
        assert got.values() == [b"mine"]
        log.read_to_end().result(timeout=6)
        kafka_cluster.produce(topic, [{"key": b"f", "value": b"foreign", "partition": 1}])
        log.read_to_end().result(timeout=60)
        assert sorted(v for v in got.values() if v) == [b"foreign", b"mine"]
    finally:
        log.stop()
