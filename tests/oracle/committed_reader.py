"""The suite's read_committed reader: what a committed-only consumer sees, decided without the product.

Tansu writes correct COMMIT/ABORT control batches but never lists aborted transactions in its fetch
answers, so its read_committed consumers see aborted records (broker-notes.md). A test that claims "no
gap" or "no duplicate" on transactional output reads with this module instead: raw Fetch requests
(:mod:`tests.oracle.fetch`), batches parsed and CRC-checked (:mod:`tests.oracle.batches`) and Kafka's
rule applied (:mod:`tests.oracle.rule`), all written for the suite. Nothing of ``connect_core`` or
``mirror`` is on that path, so a bug in the product's own rule (the one its exactly-once offset store and
the backfill's resume apply) cannot hide the duplicate or gap it causes. The answer is Kafka's on any
broker, so tests that use it need no capability gate.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from tests.oracle.batches import Batch
from tests.oracle.fetch import BrokerConnection, FetchError, PartitionBatches, fetch_all
from tests.oracle.rule import CommittedRecord, PartitionLog, apply_read_committed

if TYPE_CHECKING:
    from embedded_kafka.cluster import KafkaCluster

__all__ = [
    "CommittedRecord",
    "FetchError",
    "PartitionLog",
    "apply_read_committed",
    "committed_values",
    "leaders",
    "raw_batches",
    "read_committed",
    "read_topic_committed",
    "read_topics_committed",
    "topic_leaders",
]


def tls_context(client_config: Mapping[str, Any]) -> ssl.SSLContext | None:
    """The TLS a cluster's own clients use (librdkafka's ``ssl.*`` keys), or None for a plaintext cluster."""
    if str(client_config.get("security.protocol", "PLAINTEXT")).upper() not in ("SSL", "SASL_SSL"):
        return None
    context = ssl.create_default_context(cafile=client_config.get("ssl.ca.location"))
    if client_config.get("ssl.endpoint.identification.algorithm") == "none":
        context.check_hostname = False
    if client_config.get("ssl.certificate.location"):
        context.load_cert_chain(
            client_config["ssl.certificate.location"],
            client_config.get("ssl.key.location"),
            client_config.get("ssl.key.password"),
        )
    return context


def raw_batches(
    address: str, topic: str, partition: int, timeout_s: float = 30.0, tls: ssl.SSLContext | None = None
) -> tuple[list[Batch], int]:
    """Every batch of the partition in log order (control batches included), and its high watermark."""
    found = fetch_all(address, topic, partition, timeout_s, tls)
    return found.batches, found.high_watermark


def read_committed(
    address: str, topic: str, partition: int, timeout_s: float = 30.0, tls: ssl.SSLContext | None = None
) -> PartitionLog:
    """The partition as a read_committed consumer sees it, whatever the broker lists as aborted."""
    return _decided(fetch_all(address, topic, partition, timeout_s, tls))


def _decided(found: PartitionBatches) -> PartitionLog:
    log = apply_read_committed(found.batches)
    log.high_watermark = found.high_watermark
    return log


def topic_leaders(cluster: KafkaCluster, topics: Sequence[str], timeout_s: float = 10.0) -> dict[str, dict[int, str]]:
    """Topic -> partition -> "host:port" of its leader, from one metadata request (a Fetch must go to the
    leader on a multi-broker cluster).

    A full metadata request: asking for one named topic auto-creates it on Tansu.
    """
    metadata = cluster.admin().list_topics(timeout=timeout_s)
    missing = [t for t in topics if t not in metadata.topics]
    if missing:
        raise FetchError(f"topics {missing} do not exist on cluster {cluster.name}")
    brokers = {b.id: f"{b.host}:{b.port}" for b in metadata.brokers.values()}
    return {
        t: {p.id: brokers.get(p.leader, cluster.bootstrap_servers) for p in metadata.topics[t].partitions.values()}
        for t in topics
    }


def leaders(cluster: KafkaCluster, topic: str, timeout_s: float = 10.0) -> dict[int, str]:
    """Partition -> "host:port" of its leader."""
    return topic_leaders(cluster, [topic], timeout_s)[topic]


def read_topics_committed(
    cluster: KafkaCluster, topics: Sequence[str], timeout_s: float = 30.0
) -> dict[str, dict[int, PartitionLog]]:
    """Topic -> partition -> what a read_committed consumer sees of it (many topics: one metadata request
    and one connection per broker)."""
    found = topic_leaders(cluster, topics)
    tls = tls_context(cluster.client_config())
    out: dict[str, dict[int, PartitionLog]] = {t: {} for t in topics}
    for address in sorted({a for partitions in found.values() for a in partitions.values()}):
        with BrokerConnection(address, timeout_s, tls) as connection:
            for topic in topics:
                for partition in sorted(p for p, leader in found[topic].items() if leader == address):
                    out[topic][partition] = _decided(connection.fetch_all(topic, partition, timeout_s))
    return {t: dict(sorted(logs.items())) for t, logs in out.items()}


def read_topic_committed(
    cluster: KafkaCluster, topic: str, partitions: Sequence[int] | None = None, timeout_s: float = 30.0
) -> dict[int, PartitionLog]:
    """Partition -> what a read_committed consumer sees of it (every partition unless some are named)."""
    found = leaders(cluster, topic)
    tls = tls_context(cluster.client_config())
    wanted = sorted(found) if partitions is None else list(partitions)
    return {p: read_committed(found[p], topic, p, timeout_s, tls) for p in wanted}


def committed_values(
    cluster: KafkaCluster, topic: str, partitions: Sequence[int] | None = None, timeout_s: float = 30.0
) -> dict[int, list[bytes | None]]:
    """Partition -> the values a read_committed consumer sees, in order (the usual "no duplicate" check)."""
    logs = read_topic_committed(cluster, topic, partitions, timeout_s)
    return {p: [r.value for r in log.committed] for p, log in logs.items()}
