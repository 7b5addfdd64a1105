"""The departed-leader release (connect_core.kafka.departed_leader) on a live broker: a group whose leader
left while the group re-formed (the case Tansu 0.6.0 never recovers from by itself, docs/testing.md)
forms again. On Apache Kafka the broker refuses the release's first join and forms the group itself."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from connect_core.kafka.departed_leader import DepartedLeaderRelease, ReleaseResult, Step, consumer_protocols
from embedded_kafka import KafkaCluster

SESSION_MS = 6000


def _member(cluster: KafkaCluster, topic: str, group: str, name: str) -> tuple[Any, set[int]]:
    """A cooperative consumer and the partitions it holds (an on_assign callback means a completed rebalance)."""
    held: set[int] = set()
    consumer = cluster.consumer(
        **{
            "group.id": group,
            "client.id": name,
            "partition.assignment.strategy": "cooperative-sticky",
            "session.timeout.ms": SESSION_MS,
            "heartbeat.interval.ms": 1000,
            "enable.auto.commit": False,
        }
    )

    def on_assign(c: Any, partitions: list[Any]) -> None:
        c.incremental_assign(partitions)
        held.update(p.partition for p in partitions)

    def on_revoke(c: Any, partitions: list[Any]) -> None:
        c.incremental_unassign(partitions)
        held.difference_update(p.partition for p in partitions)

    consumer.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_revoke)
    return consumer, held


def _poll_until(members: list[tuple[Any, set[int]]], done: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for consumer, _ in members:
            consumer.poll(0.05)
        if done():
            return True
    return False


def test_a_group_whose_leader_left_while_it_reformed_forms_again_after_the_release(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic, group = unique_name("released"), unique_name("released-group")
    kafka_cluster.create_topic(topic, partitions=2)
    c1 = _member(kafka_cluster, topic, group, "c1")
    assert _poll_until([c1], lambda: c1[1] == {0, 1}, 90)
    c2 = _member(kafka_cluster, topic, group, "c2")
    assert _poll_until([c1, c2], lambda: len(c1[1]) == len(c2[1]) == 1, 90)
    c2[0].close()  # the group re-forms; its leader (the first joiner, C1) leaves right after
    c1[0].close()
    n1, n2 = _member(kafka_cluster, topic, group, "n1"), _member(kafka_cluster, topic, group, "n2")
    results: list[ReleaseResult] = []
    release = DepartedLeaderRelease(
        kafka_cluster.bootstrap_servers, {}, group, consumer_protocols("cooperative-sticky"),
        session_timeout_ms=SESSION_MS, rebalance_timeout_ms=300000, client_id="release-test",
    )  # fmt: skip
    thread = threading.Thread(target=lambda: results.append(release.run()), daemon=True)
    thread.start()
    try:
        # the group formed and rebalanced once the release's member expired: each new member holds one
        def formed() -> bool:
            return len(n1[1]) == len(n2[1]) == 1

        assert _poll_until([n1, n2], formed, 120), "the new members were not both assigned"
        thread.join(60)
        assert results and results[0].step is not Step.FAILED, results
    finally:
        for consumer, _ in (n1, n2):
            consumer.close()
