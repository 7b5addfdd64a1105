"""The read_committed test reader on a real broker: what a committed-only consumer must see.

Aborted, committed, plain and still-open transactions, and a zombie fenced by a newer producer of the same
transactional.id, on one partition; the reader returns exactly the committed records in log order. On
Tansu a read_committed consumer would also return the aborted ones (broker-notes.md): this reader does not
depend on the broker hiding them, so "no committed duplicate" is checkable on every broker. The reader is
the suite's own (tests/oracle): none of the product's code decides what it returns.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from confluent_kafka import KafkaException, Producer

from connect_core.kafka.client_logging import RDKAFKA_LOG
from embedded_kafka import KafkaCluster
from tests.oracle.committed_reader import committed_values, read_topic_committed, read_topics_committed

pytestmark = pytest.mark.integration


def _producer(cluster: KafkaCluster, **extra: str) -> Producer:
    return Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "linger.ms": 0,
            "logger": RDKAFKA_LOG,
            "allow.auto.create.topics": False,
            **extra,
        }
    )


def test_only_committed_records_in_log_order(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> None:
    topic, tid = unique_name("txn"), unique_name("tid")
    kafka_cluster.create_topic(topic, partitions=2)
    txn = _producer(kafka_cluster, **{"transactional.id": tid})
    txn.init_transactions(30)
    txn.begin_transaction()
    for i in range(3):
        txn.produce(topic, f"aborted-{i}".encode(), partition=0)
    txn.flush(30)
    txn.abort_transaction(30)
    txn.begin_transaction()
    txn.produce(topic, b"committed-0", key=b"k", headers=[("h", b"v")], partition=0, timestamp=1_700_000_000_000)
    txn.produce(topic, b"committed-1", partition=1)
    txn.commit_transaction(30)
    plain = _producer(kafka_cluster)
    plain.produce(topic, b"plain", partition=0)
    assert plain.flush(30) == 0

    txn.begin_transaction()  # the zombie: a newer producer re-initialises its id
    txn.produce(topic, b"zombie", partition=0)
    txn.flush(30)
    newer = _producer(kafka_cluster, **{"transactional.id": tid})
    newer.init_transactions(30)
    newer.begin_transaction()
    newer.produce(topic, b"newer", partition=0)
    newer.commit_transaction(30)
    with pytest.raises(KafkaException):
        txn.commit_transaction(10)

    logs = read_topic_committed(kafka_cluster, topic)
    assert [r.value for r in logs[0].committed] == [b"committed-0", b"plain", b"newer"]
    first = logs[0].committed[0]
    assert (first.key, first.headers, first.timestamp) == (b"k", (("h", b"v"),), 1_700_000_000_000)
    assert logs[0].aborted == 4 and logs[0].open == 0  # 3 aborted by the producer, 1 by the fencing
    assert [commit for _offset, _pid, commit in logs[0].markers] == [False, True, False, True]
    assert committed_values(kafka_cluster, topic, [1]) == {1: [b"committed-1"]}
    assert read_topics_committed(kafka_cluster, [topic]) == {topic: logs}  # one connection for all partitions


def test_an_open_transaction_holds_back_everything_after_it(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("open")
    kafka_cluster.create_topic(topic, partitions=1)
    plain = _producer(kafka_cluster)
    plain.produce(topic, b"before", partition=0)
    assert plain.flush(30) == 0
    txn = _producer(kafka_cluster, **{"transactional.id": unique_name("tid")})
    txn.init_transactions(30)
    txn.begin_transaction()
    txn.produce(topic, b"open", partition=0)
    txn.flush(30)
    plain.produce(topic, b"after", partition=0)
    assert plain.flush(30) == 0
    log = read_topic_committed(kafka_cluster, topic)[0]
    assert [r.value for r in log.committed] == [b"before"] and log.open == 2
    txn.commit_transaction(30)
    assert committed_values(kafka_cluster, topic) == {0: [b"before", b"open", b"after"]}
