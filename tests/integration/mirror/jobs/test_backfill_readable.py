"""Why a backfill's tasks never share a partition of the offsets topic (issue 37, item 5, second half).

The job's tasks run transactions at once, and each also writes its units' progress to the flow's offsets
topic. Where two tasks' progress keys land on one partition there, their transactions share it, and
Tansu 0.6.0 then keeps a transaction that ends while another sharing a partition with it is open
"prepared" (markers written, last stable offset held at its first record) until a later transaction
sharing a partition with it ends with none open: in a chain T1 - T2 - T3 where T1 and T3 share nothing,
T1 stays held for good, and a plain (read_committed) consumer never reads its partitions. The first test
documents that on Tansu and that Apache Kafka holds nothing. The product plans tasks on disjoint
offsets-topic partitions from the key's partition (:mod:`connect_core.kafka.partitioning`), which the
second test checks against the partitions librdkafka really picks.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

import pytest
from confluent_kafka import Producer

from connect_core.kafka.client_logging import RDKAFKA_LOG
from connect_core.kafka.raw_fetch import RawFetcher
from embedded_kafka import Engine, KafkaCluster
from mirror.jobs.backfill.copy import offset_key, plain_producer_config
from mirror.jobs.backfill.flow import create_internal_topics, prepare
from mirror.jobs.backfill.tasks import progress_partition
from tests.integration.mirror.jobs.test_backfill_job import mm2_config

pytestmark = pytest.mark.integration

DEADLINE_S = 120.0


def stable_and_high(cluster: KafkaCluster, topic: str, partitions: Sequence[int]) -> dict[int, tuple[int, int]]:
    """partition -> (last stable offset, high watermark), from one read_committed Fetch."""
    fetcher = RawFetcher(cluster.bootstrap_servers, {}, "stable-offsets-test", read_committed=True)
    try:
        answers = fetcher.fetch(topic, dict.fromkeys(partitions, 0), 100)
    finally:
        fetcher.close()
    return {p: (a.last_stable_offset, a.high_watermark) for p, a in answers.items()}


def eventually_stable(cluster: KafkaCluster, topics: Sequence[str]) -> None:
    """Every partition's last stable offset reaches its high watermark (markers are written asynchronously)."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        trailing = {(t, p): o for t in topics for p, o in stable_and_high(cluster, t, [0]).items() if o[0] < o[1]}
        if not trailing:
            return
        assert time.monotonic() < deadline, f"last stable offset below the high watermark: {trailing}"
        time.sleep(0.2)


def transactional(cluster: KafkaCluster, name: str) -> Producer:
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "transactional.id": name,
            "linger.ms": 0,
            "logger": RDKAFKA_LOG,
            "allow.auto.create.topics": False,
        }
    )
    producer.init_transactions(60)
    return producer


def write(producer: Producer, writes: Sequence[str]) -> None:
    for topic in writes:
        producer.produce(topic, b"v", partition=0)
    assert producer.flush(60) == 0


def test_a_transaction_ended_beside_an_open_one_is_held_until_one_sharing_its_partition_ends(
    kafka_cluster: KafkaCluster, kafka_engine: Engine
) -> None:
    """T1 {a, s1} ends while T2 {s1, s2} is open; T2 ends while T3 {s2} is open; T3 ends. Tansu completes
    T2 with T3 and holds T1 (a: 0 < 2, s1: 1 < 4) until a fourth transaction writing to s1 ends."""
    a, s1, s2 = (f"chain-{n}-{uuid.uuid4().hex[:8]}" for n in ("a", "s1", "s2"))
    for topic in (a, s1, s2):
        kafka_cluster.create_topic(topic, partitions=1)
    t1, t2, t3 = (transactional(kafka_cluster, f"chain-{n}-{uuid.uuid4().hex[:8]}") for n in (1, 2, 3))
    t3.begin_transaction()
    write(t3, [s2])
    t2.begin_transaction()
    write(t2, [s1, s2])
    t1.begin_transaction()
    write(t1, [a, s1])
    for producer in (t1, t2, t3):
        producer.commit_transaction(60)
    if kafka_engine is Engine.TANSU:
        held = {t: stable_and_high(kafka_cluster, t, [0])[0] for t in (a, s1, s2)}
        assert held == {a: (0, 2), s1: (1, 4), s2: (4, 4)}, held
    else:
        eventually_stable(kafka_cluster, [a, s1, s2])
    closing = transactional(kafka_cluster, f"chain-closing-{uuid.uuid4().hex[:8]}")
    closing.begin_transaction()
    write(closing, [s1])
    closing.commit_transaction(60)
    eventually_stable(kafka_cluster, [a, s1, s2])


def test_the_planned_partition_of_each_progress_key_is_the_one_the_producer_picks(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
) -> None:
    """Progress keys of 120 source partitions, written by the job's own producer settings to the flow's
    offsets topic (25 partitions): each lands where the planner said it would."""
    a, b = two_clusters
    topic = f"keys-{uuid.uuid4().hex[:8]}"
    a.create_topic(topic, partitions=120)
    a.produce(topic, [{"value": b"x", "partition": p} for p in range(120)])
    prepared = prepare(mm2_config(a, b), "A", "B", topic)
    create_internal_topics(prepared.flow)
    clients = prepared.clients
    partitions = b.admin().list_topics(clients.offsets_topic, timeout=30).topics[clients.offsets_topic].partitions
    planned = progress_partition(clients, len(partitions))
    producer = Producer({**plain_producer_config(clients), "logger": RDKAFKA_LOG})
    landed: dict[str, int] = {}
    for unit in prepared.plan.units:
        producer.produce(
            clients.offsets_topic,
            None,
            offset_key(clients, unit),
            on_delivery=lambda err, msg, name=unit.name: landed.__setitem__(name, msg.partition()),
        )
    assert producer.flush(60) == 0
    assert len(partitions) == 25
    assert landed == {unit.name: planned(unit) for unit in prepared.plan.units}
    assert len(set(landed.values())) > 1
