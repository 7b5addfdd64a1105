"""The offset store of an exactly-once worker against a real broker: only committed offsets are read back.

Offsets of exactly-once source tasks are written inside the tasks' transactions. Here a task's producer
commits an offset, then opens a transaction holding a newer one and freezes (a zombie); the task's next
instance initialises the same transactional id, which aborts the zombie's transaction, and reads its
offsets: it must get the committed offset, never the aborted one (on Tansu, whose read_committed
consumers see aborted records, the store decides from the transaction markers). The worker's own
non-transactional writes stay visible, and lookups catch up incrementally.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from connect_core.kafka.admin import NewTopicSpec
from connect_core.storage.committed_offsets import read_committed_offsets
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
from connect_core.storage.offset_storage import (
    deserialize_offset_value,
    serialize_offset_key,
    serialize_offset_value,
)
from embedded_kafka import KafkaCluster, unique_name
from tests.oracle.committed_reader import read_topic_committed

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

CONNECTOR = "orders-source"
PARTITION = {"topic": "orders", "partition": 0}
KEY = serialize_offset_key(CONNECTOR, PARTITION)


def offset(position: int) -> bytes | None:
    return serialize_offset_value({"offset": position})


def stored(store: KafkaOffsetBackingStore) -> dict[str, Any] | None:
    return deserialize_offset_value(store.get([KEY])[KEY])


def task_producer(cluster: KafkaCluster, transactional_id: str) -> Producer:
    producer = Producer(cluster.client_config(**{"transactional.id": transactional_id, "linger.ms": 0}))
    producer.init_transactions(30)
    return producer


def write_offset(producer: Producer, topic: str, position: int, *, commit: bool | None) -> None:
    """One offset in a transaction: committed, aborted, or (None) left open after reaching the broker."""
    producer.begin_transaction()
    producer.produce(topic, offset(position), KEY)
    producer.flush(30)
    if commit is True:
        producer.commit_transaction(30)
    elif commit is False:
        producer.abort_transaction(30)


@pytest.fixture
def offsets_topic(kafka_cluster: KafkaCluster) -> str:
    topic = unique_name("eos-offsets")
    kafka_cluster.create_topic(topic, 1)
    return topic


@pytest.fixture
def store(kafka_cluster: KafkaCluster, offsets_topic: str) -> Iterator[KafkaOffsetBackingStore]:
    store = KafkaOffsetBackingStore(
        NewTopicSpec(offsets_topic, 1, 1),
        {"bootstrap.servers": kafka_cluster.bootstrap_servers},
        exactly_once=True,
        timeout_s=30,
    )
    store.start()
    try:
        yield store
    finally:
        store.stop()


def test_a_task_taking_over_from_a_zombie_reads_the_committed_offset_not_the_aborted_one(
    kafka_cluster: KafkaCluster, offsets_topic: str, store: KafkaOffsetBackingStore
) -> None:
    transactional_id = unique_name("connect-orders-source-0")
    zombie = task_producer(kafka_cluster, transactional_id)
    write_offset(zombie, offsets_topic, 10, commit=True)
    assert stored(store) == {"offset": 10}

    write_offset(zombie, offsets_topic, 20, commit=None)  # the zombie freezes with its transaction open
    assert stored(store) == {"offset": 10}  # not readable while open

    successor = task_producer(kafka_cluster, transactional_id)  # fences the zombie: ABORT marker
    log = read_topic_committed(kafka_cluster, offsets_topic)[0]
    assert [commit for _offset, _pid, commit in log.markers] == [True, False]  # the broker wrote both markers
    assert stored(store) == {"offset": 10}  # the aborted 20 never surfaces
    assert store.connector_partitions(CONNECTOR) == [PARTITION]

    write_offset(successor, offsets_topic, 30, commit=True)
    assert stored(store) == {"offset": 30}
    successor.flush(10)


def test_an_explicit_abort_and_the_workers_own_plain_writes(
    kafka_cluster: KafkaCluster, offsets_topic: str, store: KafkaOffsetBackingStore
) -> None:
    producer = task_producer(kafka_cluster, unique_name("connect-orders-source-1"))
    write_offset(producer, offsets_topic, 5, commit=True)
    write_offset(producer, offsets_topic, 6, commit=False)
    assert stored(store) == {"offset": 5}
    # the worker's own writes (REST offset alterations) are not transactional: visible at once
    store.set({KEY: offset(7)}).result(30)
    assert stored(store) == {"offset": 7}
    store.set({KEY: None}).result(30)  # a tombstone resets the partition
    assert store.get([KEY]) == {KEY: None}
    assert store.connector_partitions(CONNECTOR) == []


def test_a_one_shot_read_as_a_resuming_backfill_makes_skips_an_abandoned_transactions_offset(
    kafka_cluster: KafkaCluster, offsets_topic: str
) -> None:
    """``mm2 backfill`` resumes from the offsets topic (a rerun, a retried Spark task): an attempt killed
    between writing its offset record and committing leaves an aborted record it must not resume from."""
    transactional_id = unique_name("backfill-orders-0")
    killed = task_producer(kafka_cluster, transactional_id)
    write_offset(killed, offsets_topic, 40, commit=True)
    write_offset(killed, offsets_topic, 90, commit=None)  # killed here: the transaction stays open
    task_producer(kafka_cluster, transactional_id)  # the next attempt fences it: ABORT marker
    props = {"bootstrap.servers": kafka_cluster.bootstrap_servers, "isolation.level": "read_committed"}
    assert [
        (key, deserialize_offset_value(value)) for key, value in read_committed_offsets(offsets_topic, props, 30)
    ] == [(KEY, {"offset": 40})]
