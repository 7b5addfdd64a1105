"""The consumer-group operations behind a sink connector's offsets, on a real broker: read, commit,
delete (and commit again after a delete), a PATCH that drops one partition's offset and keeps the
others, and a group with a live member refused however the broker reports it."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest

from connect_core.connectors.file_stream_sink import FileStreamSinkConnector
from connect_core.kafka.group_offsets import GroupActiveError, GroupOffsetsAdmin
from connect_core.model import TopicPartition
from connect_core.runtime.sink_connector_offsets import modify_sink_offsets
from embedded_kafka import KafkaCluster, wait_for

pytestmark = pytest.mark.integration

DEADLINE_S = 60.0


def _deadline() -> float:
    return time.monotonic() + DEADLINE_S


def test_offsets_are_read_committed_deleted_and_committed_again(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("grp-t")
    kafka_cluster.create_topic(topic, partitions=2)
    admin = GroupOffsetsAdmin(unique_name("grp"), {"bootstrap.servers": kafka_cluster.bootstrap_servers})
    t0, t1 = TopicPartition(topic, 0), TopicPartition(topic, 1)

    assert admin.committed(_deadline()) == {}
    admin.require_inactive(_deadline())  # a group nobody used has no members
    admin.delete_group(_deadline())  # nor anything to delete: not an error

    admin.alter({t0: 5, t1: 7}, _deadline())
    assert admin.committed(_deadline()) == {t0: 5, t1: 7}
    admin.alter({t1: 2}, _deadline())
    assert admin.committed(_deadline()) == {t0: 5, t1: 2}

    admin.delete_group(_deadline())
    assert admin.committed(_deadline()) == {}
    admin.alter({t1: 3}, _deadline())  # the group comes back with the commit
    assert admin.committed(_deadline()) == {t1: 3}


def test_a_patch_with_a_null_offset_drops_only_that_partition(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic, other = unique_name("grp-patch"), unique_name("grp-other")
    kafka_cluster.create_topic(topic, partitions=2)
    kafka_cluster.create_topic(other, partitions=1)
    admin = GroupOffsetsAdmin(unique_name("grp-patch"), {"bootstrap.servers": kafka_cluster.bootstrap_servers})
    t0, t1, o0 = TopicPartition(topic, 0), TopicPartition(topic, 1), TopicPartition(other, 0)
    admin.alter({t0: 10, t1: 20, o0: 30}, _deadline())

    request: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
        ({"kafka_topic": topic, "kafka_partition": 0}, None),
        ({"kafka_topic": topic, "kafka_partition": "1"}, {"kafka_offset": "15"}),
    ]
    message = modify_sink_offsets("s", FileStreamSinkConnector(), {}, request, admin, DEADLINE_S)
    assert message == "The offsets for this connector have been altered successfully"
    assert admin.committed(_deadline()) == {t1: 15, o0: 30}

    assert modify_sink_offsets("s", FileStreamSinkConnector(), {}, None, admin, DEADLINE_S) == (
        "The offsets for this connector have been reset successfully"
    )
    assert admin.committed(_deadline()) == {}


def test_a_group_with_a_live_member_is_refused(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> None:
    topic, group = unique_name("grp-live"), unique_name("grp-live")
    kafka_cluster.create_topic(topic, partitions=1)
    kafka_cluster.produce(topic, ["a", "b"])
    admin = GroupOffsetsAdmin(group, {"bootstrap.servers": kafka_cluster.bootstrap_servers})
    consumer = kafka_cluster.consumer(**{"group.id": group, "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000})
    try:
        consumer.subscribe([topic])
        wait_for(lambda: consumer.poll(0.2) is not None and bool(consumer.assignment()), timeout=DEADLINE_S,
                 message="the consumer joined its group")  # fmt: skip
        with pytest.raises(GroupActiveError):
            admin.require_inactive(_deadline())
        with pytest.raises(GroupActiveError):  # per partition on Kafka and Tansu alike
            admin.alter({TopicPartition(topic, 0): 0}, _deadline())
    finally:
        consumer.close()
    wait_for(lambda: _inactive(admin), timeout=DEADLINE_S, message="the group emptied after the member left")
    admin.alter({TopicPartition(topic, 0): 1}, _deadline())
    assert admin.committed(_deadline()) == {TopicPartition(topic, 0): 1}


def _inactive(admin: GroupOffsetsAdmin) -> bool:
    try:
        admin.require_inactive(_deadline())
    except GroupActiveError:
        return False
    return True
