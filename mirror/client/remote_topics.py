"""Pure topic analysis of Kafka's ``MirrorClient`` / ``RemoteClusterUtils``.

Everything here works on a list of topic names (from an Admin ``list_topics`` done by the caller)
and a :class:`~mirror.client.policy.ReplicationPolicy`, so applications, the CLI and Spark jobs answer
"where does this cluster get data from, and how far away is it?" without a client library.

Heartbeat topics (``heartbeats``, ``A.heartbeats``, ``B.A.heartbeats`` ...) are replicated along every
flow, so their names describe the replication topology: ``B.A.heartbeats`` on this cluster means A
reaches it in two hops via B.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.policy import ReplicationPolicy

_PARTITION = re.compile(r"\+?[0-9]+")
_INT32_MAX = 2**31 - 1


def is_heartbeat_topic(policy: ReplicationPolicy, topic: str) -> bool:
    return policy.is_heartbeats_topic(topic)


def is_checkpoint_topic(policy: ReplicationPolicy, topic: str) -> bool:
    return policy.is_checkpoints_topic(topic)


def is_remote_topic(policy: ReplicationPolicy, topic: str) -> bool:
    """A replicated topic: not internal, and the policy can name its source."""
    return not policy.is_internal_topic(topic) and policy.topic_source(topic) is not None


def heartbeat_topics(topics: Iterable[str], policy: ReplicationPolicy) -> set[str]:
    """All heartbeats topics, local and replicated."""
    return {t for t in topics if policy.is_heartbeats_topic(t)}


def checkpoint_topics(topics: Iterable[str], policy: ReplicationPolicy) -> set[str]:
    """All checkpoints topics (one per source cluster replicating here)."""
    return {t for t in topics if policy.is_checkpoints_topic(t)}


def all_sources(topic: str, policy: ReplicationPolicy) -> set[str]:
    """Every cluster alias in the topic's replication path (stops at a repeated alias)."""
    sources: set[str] = set()
    source = policy.topic_source(topic)
    while source is not None and source not in sources:
        sources.add(source)
        upstream = policy.upstream_topic(topic)
        if upstream is None:
            break
        topic = upstream
        source = policy.topic_source(topic)
    return sources


def upstream_clusters(topics: Iterable[str], policy: ReplicationPolicy) -> set[str]:
    """Clusters, any number of hops away, whose heartbeats reach this cluster."""
    out: set[str] = set()
    for t in topics:
        if policy.is_heartbeats_topic(t):
            out |= all_sources(t, policy)
    return out


def count_hops_for_topic(topic: str, source_cluster_alias: str, policy: ReplicationPolicy) -> int:
    """Hops from ``source_cluster_alias`` along ``topic``'s path, or -1 if it is not on it.

    A repeated alias means a cycle (possible with policies that cannot prevent them): -1.
    """
    hops = 0
    visited: set[str] = set()
    current: str | None = topic
    while current is not None:
        hops += 1
        source = policy.topic_source(current)
        if source is None:
            return -1
        if source == source_cluster_alias:
            return hops
        if source in visited:
            return -1
        visited.add(source)
        current = policy.upstream_topic(current)
    return -1


def replication_hops(topics: Iterable[str], policy: ReplicationPolicy, upstream_cluster_alias: str) -> int:
    """Fewest hops from ``upstream_cluster_alias`` to this cluster (A->B->C: 2 from A), -1 if none."""
    best = -1
    for t in topics:
        if not policy.is_heartbeats_topic(t):
            continue
        hops = count_hops_for_topic(t, upstream_cluster_alias, policy)
        if hops != -1 and (best == -1 or hops < best):
            best = hops
    return best


def remote_topics(topics: Iterable[str], policy: ReplicationPolicy, source: str | None = None) -> set[str]:
    """Replicated (non-internal) topics; only those replicated directly from ``source`` if given."""
    out = {t for t in topics if is_remote_topic(policy, t)}
    if source is not None:
        out = {t for t in out if policy.topic_source(t) == source}
    return out


def remote_consumer_offsets(
    checkpoints: Iterable[Checkpoint], consumer_group_id: str
) -> dict[TopicPartition, OffsetAndMetadata]:
    """Fold a checkpoints topic (read from the start) into a group's translated offsets.

    Keys are local (downstream) topic-partitions; the last checkpoint per partition wins, as in
    ``MirrorClient.remoteConsumerOffsets``.
    """
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for cp in checkpoints:
        if cp.consumer_group_id == consumer_group_id:
            offsets[cp.topic_partition] = cp.offset_and_metadata
    return offsets


def encode_topic_partition(topic_partition: TopicPartition) -> str:
    """``topic-partition``, the form used in ``task.assigned.partitions``."""
    return f"{topic_partition.topic}-{topic_partition.partition}"


def decode_topic_partition(text: str) -> TopicPartition:
    """Inverse of :func:`encode_topic_partition`: splits on the LAST dash (topics may contain dashes)."""
    sep = text.rfind("-")
    if sep < 0:
        raise ValueError(f"not a topic-partition: {text!r}")
    partition_text = text[sep + 1 :]
    if not _PARTITION.fullmatch(partition_text) or int(partition_text) > _INT32_MAX:
        raise ValueError(f"not a topic-partition (bad partition {partition_text!r}): {text!r}")
    return TopicPartition(text[:sep], int(partition_text))


__all__ = [
    "all_sources",
    "checkpoint_topics",
    "count_hops_for_topic",
    "decode_topic_partition",
    "encode_topic_partition",
    "heartbeat_topics",
    "is_checkpoint_topic",
    "is_heartbeat_topic",
    "is_remote_topic",
    "remote_consumer_offsets",
    "remote_topics",
    "replication_hops",
    "upstream_clusters",
]
