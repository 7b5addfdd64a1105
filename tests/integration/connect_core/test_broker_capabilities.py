"""The cluster capability learnt against a real broker: reading a log that holds an aborted transaction with
data decides whether the broker lists aborted transactions, and the verdict matches what a plain
read_committed consumer (librdkafka, which trusts the broker's list) actually sees, on any broker; and the
offsets view reads only what was committed either way."""

from __future__ import annotations

import pytest

from connect_core.kafka.broker_capabilities import BrokerCapabilities, capabilities_for
from connect_core.storage.committed_offsets import read_committed_offsets
from embedded_kafka import KafkaCluster, unique_name

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]


def test_a_read_of_an_aborted_transaction_decides_the_capability_as_a_consumer_sees_it(
    kafka_cluster: KafkaCluster,
) -> None:
    topic = kafka_cluster.create_topic(unique_name("capability"), partitions=1)
    props = {"bootstrap.servers": kafka_cluster.bootstrap_servers}
    producer = kafka_cluster.producer(
        **{"transactional.id": unique_name("capability-probe"), "enable.idempotence": True, "linger.ms": 0}
    )
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce(topic, b"committed", b"k1")
    producer.commit_transaction(30)
    assert read_committed_offsets(topic, props, 30) == [(b"k1", b"committed")]

    producer.begin_transaction()
    producer.produce(topic, b"aborted", b"k1")
    producer.flush(30)
    producer.abort_transaction(30)
    producer.begin_transaction()
    producer.produce(topic, b"later", b"k2")
    producer.commit_transaction(30)

    assert read_committed_offsets(topic, props, 30) == [(b"k1", b"committed"), (b"k2", b"later")]
    learnt = capabilities_for(props)
    assert learnt.aborted_listing_checked
    seen = [m.value() for m in kafka_cluster.read_all(topic, isolation="read_committed", timeout=60)[0]]
    consumer_hides_aborted = b"aborted" not in seen
    assert seen[-1] == b"later"
    assert learnt == BrokerCapabilities(
        filters_aborted_transactions=consumer_hides_aborted, aborted_listing_checked=True
    )
