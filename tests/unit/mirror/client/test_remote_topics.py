"""Pure MirrorClient topic analysis (Kafka's MirrorClientTest) and topic-partition encoding."""

from __future__ import annotations

import pytest

from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.policy import DefaultReplicationPolicy, IdentityReplicationPolicy, ReplicationPolicy
from mirror.client.remote_topics import (
    all_sources,
    checkpoint_topics,
    count_hops_for_topic,
    decode_topic_partition,
    encode_topic_partition,
    heartbeat_topics,
    is_checkpoint_topic,
    is_heartbeat_topic,
    is_remote_topic,
    remote_consumer_offsets,
    remote_topics,
    replication_hops,
    upstream_clusters,
)

DEFAULT = DefaultReplicationPolicy()


def identity(source: str) -> ReplicationPolicy:
    p = IdentityReplicationPolicy()
    p.configure({"source.cluster.alias": source})
    return p


def test_is_heartbeat_topic() -> None:
    assert is_heartbeat_topic(DEFAULT, "heartbeats")
    assert is_heartbeat_topic(DEFAULT, "source1.heartbeats")
    assert is_heartbeat_topic(DEFAULT, "source2.source1.heartbeats")
    for t in ("heartbeats!", "!heartbeats", "source1heartbeats", "source1-heartbeats"):
        assert not is_heartbeat_topic(DEFAULT, t), t


def test_is_checkpoint_topic() -> None:
    assert is_checkpoint_topic(DEFAULT, "source1.checkpoints.internal")
    for t in (
        "checkpoints.internal",
        "checkpoints-internal",
        "checkpoints.internal!",
        "!checkpoints.internal",
        "source1checkpointsinternal",
    ):
        assert not is_checkpoint_topic(DEFAULT, t), t


def test_count_hops_for_topic() -> None:
    assert count_hops_for_topic("topic", "source", DEFAULT) == -1
    assert count_hops_for_topic("source", "source", DEFAULT) == -1
    assert count_hops_for_topic("sourcetopic", "source", DEFAULT) == -1
    assert count_hops_for_topic("source1.topic", "source2", DEFAULT) == -1
    assert count_hops_for_topic("source1.topic", "source1", DEFAULT) == 1
    assert count_hops_for_topic("source2.source1.topic", "source2", DEFAULT) == 1
    assert count_hops_for_topic("source2.source1.topic", "source1", DEFAULT) == 2
    assert count_hops_for_topic("source3.source2.source1.topic", "source1", DEFAULT) == 3
    assert count_hops_for_topic("source3.source2.source1.topic", "source4", DEFAULT) == -1


def test_count_hops_is_loop_safe_with_identity_policy() -> None:
    p = identity("a")
    # identity: topic_source is always "a" and upstream_topic is the topic itself
    assert count_hops_for_topic("topic", "a", p) == 1
    assert count_hops_for_topic("topic", "b", p) == -1


def test_heartbeat_topics() -> None:
    topics = [
        "topic1",
        "topic2",
        "heartbeats",
        "source1.heartbeats",
        "source2.source1.heartbeats",
        "source3.heartbeats",
    ]
    assert heartbeat_topics(topics, DEFAULT) == {
        "heartbeats",
        "source1.heartbeats",
        "source2.source1.heartbeats",
        "source3.heartbeats",
    }


def test_checkpoint_topics() -> None:
    topics = [
        "topic1",
        "topic2",
        "checkpoints.internal",
        "source1.checkpoints.internal",
        "source2.source1.checkpoints.internal",
        "source3.checkpoints.internal",
    ]
    assert checkpoint_topics(topics, DEFAULT) == {
        "source1.checkpoints.internal",
        "source2.source1.checkpoints.internal",
        "source3.checkpoints.internal",
    }


def test_replication_hops() -> None:
    topics = [
        "topic1",
        "topic2",
        "heartbeats",
        "source1.heartbeats",
        "source1.source2.heartbeats",
        "source3.heartbeats",
    ]
    assert replication_hops(topics, DEFAULT, "source1") == 1
    assert replication_hops(topics, DEFAULT, "source2") == 2
    assert replication_hops(topics, DEFAULT, "source3") == 1
    assert replication_hops(topics, DEFAULT, "source4") == -1
    # the minimum over all paths
    assert replication_hops(["b.a.heartbeats", "a.heartbeats"], DEFAULT, "a") == 1
    # only heartbeat topics count
    assert replication_hops(["x.topic"], DEFAULT, "x") == -1


def test_upstream_clusters() -> None:
    topics = [
        "topic1",
        "topic2",
        "heartbeats",
        "source1.heartbeats",
        "source1.source2.heartbeats",
        "source3.source4.source5.heartbeats",
    ]
    sources = upstream_clusters(topics, DEFAULT)
    assert sources == {"source1", "source2", "source3", "source4", "source5"}


def test_identity_replication_upstream_clusters() -> None:
    topics = [
        "topic1",
        "topic2",
        "heartbeats",
        "source1.heartbeats",
        "source1.source2.heartbeats",
        "source3.source4.source5.heartbeats",
    ]
    sources = upstream_clusters(topics, identity("source"))
    assert sources == {"source1", "source2", "source3", "source4", "source5"}


def test_all_sources_stops_on_repeated_alias() -> None:
    assert all_sources("a.b.a.heartbeats", DEFAULT) == {"a", "b"}
    assert all_sources("plain", DEFAULT) == set()


def test_remote_topics() -> None:
    topics = [
        "topic1",
        "topic2",
        "topic3",
        "source1.topic4",
        "source1.source2.topic5",
        "source3.source4.source5.topic6",
    ]
    assert remote_topics(topics, DEFAULT) == {
        "source1.topic4",
        "source1.source2.topic5",
        "source3.source4.source5.topic6",
    }
    assert remote_topics(topics, DEFAULT, "source1") == {"source1.topic4", "source1.source2.topic5"}
    assert remote_topics(topics, DEFAULT, "source2") == set()


def test_remote_topics_exclude_internal_topics() -> None:
    topics = ["A.checkpoints.internal", "mm2-offset-syncs.B.internal", "__consumer_offsets", "A.t", ".A.hidden"]
    assert remote_topics(topics, DEFAULT) == {"A.t"}
    assert not is_remote_topic(DEFAULT, "A.checkpoints.internal")


def test_identity_replication_remote_topics() -> None:
    topics = ["topic1", "topic2", "topic3", "heartbeats", "backup.heartbeats"]
    assert remote_topics(topics, identity("source")) == {"topic1", "topic2", "topic3", "backup.heartbeats"}


def test_remote_topics_separator() -> None:
    p = DefaultReplicationPolicy()
    p.configure({"replication.policy.separator": "__"})
    topics = [
        "topic1",
        "topic2",
        "topic3",
        "source1__topic4",
        "source1__source2__topic5",
        "source3__source4__source5__topic6",
    ]
    assert remote_topics(topics, p) == {
        "source1__topic4",
        "source1__source2__topic5",
        "source3__source4__source5__topic6",
    }


def test_remote_consumer_offsets_last_wins() -> None:
    tp = TopicPartition("A.t", 0)
    cps = [
        Checkpoint("g", tp, 10, 5, "m1"),
        Checkpoint("other", tp, 99, 99, ""),
        Checkpoint("g", TopicPartition("A.t", 1), 3, 3, ""),
        Checkpoint("g", tp, 8, 4, "m2"),  # an upstream rewind: still the latest
    ]
    assert remote_consumer_offsets(cps, "g") == {
        tp: OffsetAndMetadata(4, "m2"),
        TopicPartition("A.t", 1): OffsetAndMetadata(3, ""),
    }
    assert remote_consumer_offsets(cps, "nobody") == {}


@pytest.mark.parametrize(
    ("text", "tp"),
    [
        ("name-3", TopicPartition("name", 3)),
        ("my-topic-12", TopicPartition("my-topic", 12)),
        ("t--1", TopicPartition("t-", 1)),
        ("-0", TopicPartition("", 0)),
        ("a.b_c-2147483647", TopicPartition("a.b_c", 2147483647)),
    ],
)
def test_decode_topic_partition(text: str, tp: TopicPartition) -> None:
    assert decode_topic_partition(text) == tp
    if tp.topic:
        assert encode_topic_partition(tp) == text


@pytest.mark.parametrize("text", ["name", "name-", "name-x", "name- 3", "name-2147483648", "name-3.0"])
def test_decode_topic_partition_rejects(text: str) -> None:
    with pytest.raises(ValueError):
        decode_topic_partition(text)


def test_encode_matches_str() -> None:
    tp = TopicPartition("orders-eu", 7)
    assert encode_topic_partition(tp) == str(tp) == "orders-eu-7"
