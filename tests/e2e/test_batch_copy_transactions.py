"""A transactional source on the batch path (``mm2 run``, stock settings: the batch path is the default): committed
transactions arrive, aborted ones never reach the target (not even as aborted records: Tansu lists no
aborted transactions, the markers decide), an open transaction and everything after it wait until it
commits, and control batches are never copied. B is read with the read_committed test reader and raw."""

from __future__ import annotations

from pathlib import Path

from confluent_kafka import Producer

from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import Mm2Process, eventually, mirrored_identically, mm2_properties, write_properties
from tests.oracle.committed_reader import committed_values, raw_batches
from tests.raw_batch_bytes import stored_batches

STARTUP_S = 120.0


def _plain(cluster: KafkaCluster, topic: str, values: list[bytes]) -> None:
    producer = cluster.producer(**{"linger.ms": 20, "batch.num.messages": 1000})
    for v in values:
        producer.produce(topic, value=v, partition=0)
    assert producer.flush(30) == 0


def _transactional(cluster: KafkaCluster, txn_id: str) -> Producer:
    producer = Producer(cluster.client_config(**{"transactional.id": txn_id, "linger.ms": 20}))
    producer.init_transactions(30)
    return producer


def _in_txn(producer: Producer, topic: str, values: list[bytes]) -> None:
    producer.begin_transaction()
    for v in values:
        producer.produce(topic, value=v, partition=0)
    producer.flush(30)


def _committed(cluster: KafkaCluster, topic: str) -> dict[int, list[bytes | None]] | None:
    """What a read_committed reader sees of the target topic (None before it exists)."""
    if topic not in cluster.topic_names():
        return None
    return committed_values(cluster, topic)


def _raw_values(cluster: KafkaCluster, topic: str) -> list[bytes | None]:
    """Every record value the target partition stores, whatever its transaction's fate; every stored CRC right."""
    assert all(batch.crc_ok for batch in stored_batches(cluster.bootstrap_servers, topic, 0))
    batches, _high_watermark = raw_batches(cluster.bootstrap_servers, topic, 0, 30)
    return [r.value for batch in batches if not batch.is_control_batch for r in batch.records]


def test_committed_aborted_and_open_transactions(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    topic = a.create_topic("txn", 1)
    probe = a.create_topic("txn-probe", 1)
    _plain(a, topic, [b"plain-1a", b"plain-1b"])
    t1 = _transactional(a, "test-txn-1")
    _in_txn(t1, topic, [b"t1-a", b"t1-b", b"t1-c"])
    t1.commit_transaction(30)
    t2 = _transactional(a, "test-txn-2")
    _in_txn(t2, topic, [b"t2-a", b"t2-b", b"t2-c"])
    t2.abort_transaction(30)
    _plain(a, topic, [b"plain-2a", b"plain-2b"])
    t3 = _transactional(a, "test-txn-3")
    _in_txn(t3, topic, [b"t3-a", b"t3-b", b"t3-c"])  # left open while mm2 runs
    _plain(a, topic, [b"plain-3a", b"plain-3b"])  # behind the open transaction: not stable yet
    stable = [b"plain-1a", b"plain-1b", b"t1-a", b"t1-b", b"t1-c", b"plain-2a", b"plain-2b"]

    config = write_properties(
        tmp_path / "mm2.properties",
        mm2_properties({"A": a, "B": b}, ["A->B"], topics="txn.*"),  # stock: the batch path
    )
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(
            lambda: _committed(b, "A.txn") == {0: stable} or None,
            STARTUP_S,
            "the stable prefix on B",
            mm2,
            interval=1.0,
        )
        # a record written after everything above, in a partition the same task reads: once it is on B the
        # task has fetched the transactional topic past the open transaction too
        a.produce(probe, [b"probe"])
        eventually(lambda: mirrored_identically(a, probe, b, "A.txn-probe", at_least=1), 60, "the probe on B", mm2)
        assert _raw_values(b, "A.txn") == stable  # nothing aborted, nothing of the open transaction

        t3.commit_transaction(30)
        everything = [*stable, b"t3-a", b"t3-b", b"t3-c", b"plain-3a", b"plain-3b"]
        eventually(
            lambda: _committed(b, "A.txn") == {0: everything} or None,
            60,
            "the rest after the commit",
            mm2,
            interval=1.0,
        )
        assert _raw_values(b, "A.txn") == everything
        assert mm2.terminate() == 0
    finally:
        mm2.close()
