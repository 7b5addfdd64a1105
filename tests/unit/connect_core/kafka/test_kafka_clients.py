"""Java client properties -> librdkafka configs, client construction, and error mapping (no broker)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import trustme
from confluent_kafka import KafkaError, KafkaException

from connect_core.api.errors import ConfigError, ConnectError, RetriableError
from connect_core.kafka.admin import NewTopicSpec, is_unsupported
from connect_core.kafka.clients import (
    admin_config,
    client_props,
    consumer_config,
    create_admin,
    create_consumer,
    create_producer,
    producer_config,
)
from connect_core.kafka.errors import (
    KafkaClientError,
    RetriableKafkaError,
    from_exception,
    from_kafka_error,
    map_kafka_errors,
)
from connect_core.storage.internal_topics import internal_topic_spec

JAVA_PRODUCER = {
    "bootstrap.servers": "h1:9092, h2:9092",
    "key.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
    "value.serializer": "org.apache.kafka.common.serialization.ByteArraySerializer",
    "max.block.ms": "60000",
    "acks": "all",
    "retries": "2147483647",
    "linger.ms": "10",
    "max.request.size": "2097152",
    "request.timeout.ms": "30000",
    "group.id": "not-for-producers",
    "interceptor.classes": "",
}


def test_every_role_disables_auto_topic_creation() -> None:
    for build in (producer_config, consumer_config, admin_config):
        conf = build({"bootstrap.servers": "x", "allow.auto.create.topics": "true"})
        assert conf["allow.auto.create.topics"] is False
        assert (
            build({"bootstrap.servers": "x"}, {"allow.auto.create.topics": True})["allow.auto.create.topics"] is False
        )


def test_producer_config_maps_and_drops_java_keys() -> None:
    conf = producer_config(JAVA_PRODUCER)
    assert conf["bootstrap.servers"] == "h1:9092,h2:9092"
    assert conf["message.max.bytes"] == "2097152"
    assert conf["acks"] == "all" and conf["retries"] == "2147483647" and conf["request.timeout.ms"] == "30000"
    for dropped in (
        "key.serializer",
        "value.serializer",
        "max.block.ms",
        "group.id",
        "interceptor.classes",
        "max.request.size",
    ):
        assert dropped not in conf
    create_producer(conf)  # librdkafka accepts every key that is left


def test_consumer_config_maps_java_keys_and_drops_producer_ones() -> None:
    conf = consumer_config(
        {
            "bootstrap.servers": "x",
            "group.id": "g",
            "key.deserializer": "x",
            "fetch.max.wait.ms": "250",
            "receive.buffer.bytes": "65536",
            "auto.offset.reset": "none",
            "max.poll.records": "500",
            "partition.assignment.strategy": "org.apache.kafka.clients.consumer.CooperativeStickyAssignor",
            "acks": "all",
            "isolation.level": "read_committed",
        }
    )
    assert conf["fetch.wait.max.ms"] == "250"
    assert conf["socket.receive.buffer.bytes"] == "65536"
    assert conf["auto.offset.reset"] == "error"
    assert conf["partition.assignment.strategy"] == "cooperative-sticky"
    assert conf["isolation.level"] == "read_committed"
    assert "max.poll.records" not in conf and "acks" not in conf and "key.deserializer" not in conf
    create_consumer(conf).close()


def test_admin_config_keeps_only_common_keys() -> None:
    conf = admin_config({**JAVA_PRODUCER, "security.protocol": "PLAINTEXT"})
    assert "acks" not in conf and "linger.ms" not in conf and "group.id" not in conf
    assert conf["security.protocol"] == "PLAINTEXT"
    create_admin(conf)


def test_sasl_jaas_config_becomes_username_and_password(tmp_path: Path) -> None:
    ca = tmp_path / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(ca))
    conf = producer_config(
        {
            "bootstrap.servers": "x",
            "security.protocol": "SASL_SSL",
            "sasl.mechanism": "SCRAM-SHA-512",
            "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule required "
            'username="alice" password="s3cr\\"et";',
            "ssl.endpoint.identification.algorithm": "",
            "ssl.truststore.type": "PEM",
            "ssl.truststore.location": str(ca),
        }
    )
    assert conf["sasl.username"] == "alice" and conf["sasl.password"] == 's3cr"et'  # JAAS unescapes, as Java
    assert "sasl.jaas.config" not in conf
    assert conf["ssl.endpoint.identification.algorithm"] == "none"
    assert conf["ssl.ca.pem"] == ca.read_text() and "ssl.truststore.location" not in conf


def test_truststore_of_a_plaintext_client_is_not_read_and_a_missing_one_of_a_tls_client_is_an_error() -> None:
    conf = consumer_config({"bootstrap.servers": "x", "ssl.truststore.location": "/etc/t.jks"})
    assert "ssl.truststore.location" not in conf and "ssl.ca.pem" not in conf  # Java ignores ssl.* too
    with pytest.raises(ConfigError) as info:
        consumer_config({"bootstrap.servers": "x", "security.protocol": "SSL", "ssl.truststore.location": "/etc/t.jks"})
    assert info.value.issues[0].key == "ssl.truststore.location" and "/etc/t.jks" in str(info.value)


def test_unknown_property_is_dropped_at_construction(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        create_producer({"bootstrap.servers": "x", "some.java.only.thing": "1", "allow.auto.create.topics": False})
    assert "some.java.only.thing" in caplog.text


def test_invalid_value_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as info:
        create_producer(producer_config({"bootstrap.servers": "x", "acks": "banana"}))
    assert info.value.issues[0].key == "request.required.acks"


def test_client_props_shares_connection_keys_and_applies_prefix() -> None:
    worker = {
        "bootstrap.servers": "b:9092",
        "security.protocol": "SSL",
        "ssl.ca.location": "/ca",
        "offset.storage.topic": "o",
        "producer.linger.ms": "50",
        "producer.bootstrap.servers": "p:9092",
        "consumer.fetch.min.bytes": "1",
    }
    assert client_props(worker, "producer.") == {
        "bootstrap.servers": "p:9092",
        "security.protocol": "SSL",
        "ssl.ca.location": "/ca",
        "linger.ms": "50",
    }
    assert client_props(worker, "") == {
        "bootstrap.servers": "b:9092",
        "security.protocol": "SSL",
        "ssl.ca.location": "/ca",
    }


def test_error_mapping_retriable_vs_fatal() -> None:
    transient = from_kafka_error(KafkaError(KafkaError._TRANSPORT), "fetching")
    assert isinstance(transient, RetriableKafkaError) and isinstance(transient, RetriableError)
    assert transient.retriable and transient.code == KafkaError._TRANSPORT and "fetching" in str(transient)
    for code in (KafkaError.NOT_LEADER_FOR_PARTITION, KafkaError.REQUEST_TIMED_OUT, KafkaError._MSG_TIMED_OUT):
        assert isinstance(from_kafka_error(KafkaError(code)), RetriableError)
    denied = from_kafka_error(KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED))
    assert type(denied) is KafkaClientError and not denied.retriable
    fatal = from_kafka_error(KafkaError(KafkaError._TRANSPORT, fatal=True))
    assert not isinstance(fatal, RetriableError) and fatal.fatal
    with pytest.raises(RetriableKafkaError), map_kafka_errors("x"):
        raise KafkaException(KafkaError(KafkaError._TIMED_OUT))
    assert isinstance(from_exception(RuntimeError("boom")), ConnectError)
    unsupported = from_exception(KafkaException(KafkaError(KafkaError._UNSUPPORTED_FEATURE)))
    assert is_unsupported(unsupported) and is_unsupported(KafkaException(KafkaError(KafkaError.UNSUPPORTED_VERSION)))
    assert not is_unsupported(transient)


def test_internal_topic_specs_from_worker_keys() -> None:
    worker = {
        "offset.storage.topic": "o",
        "offset.storage.partitions": "7",
        "offset.storage.replication.factor": "-1",
        "offset.storage.min.insync.replicas": "2",
        "config.storage.topic": "c",
        "config.storage.partitions": "5",  # ignored: the config topic always has one partition
    }
    assert internal_topic_spec(worker, "offset.storage") == NewTopicSpec(
        "o", 7, -1, {"min.insync.replicas": "2", "cleanup.policy": "compact"}
    )
    assert internal_topic_spec(worker, "config.storage").partitions == 1
    status = internal_topic_spec({}, "status.storage")
    assert (status.name, status.partitions, status.replication_factor) == ("connect-status", 5, 3)
    with pytest.raises(ConfigError):
        internal_topic_spec({"offset.storage.cleanup.policy": "delete"}, "offset.storage")
    with pytest.raises(ConfigError):
        internal_topic_spec({"status.storage.partitions": "0"}, "status.storage")


def test_callbacks_in_the_properties_reach_the_client_untouched() -> None:
    """The worker hands its task producers an ``error_cb`` (client errors into metrics) this way."""
    from connect_core.kafka.clients import producer_config

    def on_error(err: object) -> None:
        return None

    conf = producer_config({"bootstrap.servers": "b:9092", "error_cb": on_error})
    assert conf["error_cb"] is on_error
    assert producer_config({"bootstrap.servers": "b:9092", "client.id": "x"})["client.id"] == "x"
