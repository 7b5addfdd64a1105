"""KIP-875 for sinks, the pure part: Java's validation of REST partitions/offsets and the order of the
group operations for GET/PATCH/DELETE, against an in-memory group (the wire is in the integration tests)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from connect_core.api.connector import SinkConnector
from connect_core.api.errors import BadRequestError, ConnectError
from connect_core.api.task import Task
from connect_core.config.configdef import ConfigDef
from connect_core.kafka.group_offsets import GroupActiveError, GroupOffsetsError
from connect_core.model import TopicPartition
from connect_core.runtime.sink_connector_offsets import (
    connector_offsets,
    modify_sink_offsets,
    parse_sink_offsets,
    read_sink_offsets,
)


def _p(topic: Any, partition: Any) -> dict[str, Any]:
    return {"kafka_topic": topic, "kafka_partition": partition}


def _o(offset: Any) -> dict[str, Any]:
    return {"kafka_offset": offset}


class Group:
    """A consumer group in memory that records the operations made on it."""

    def __init__(self, offsets: Mapping[TopicPartition, int] | None = None, *, members: int = 0) -> None:
        self.offsets = dict(offsets or {})
        self.members = members
        self.calls: list[str] = []
        self.fail: ConnectError | None = None

    def committed(self, deadline: float) -> dict[TopicPartition, int]:
        self.calls.append("committed")
        if self.fail is not None:
            raise self.fail
        return dict(self.offsets)

    def require_inactive(self, deadline: float) -> None:
        self.calls.append("require_inactive")
        if self.members:
            raise GroupActiveError("members")

    def alter(self, offsets: Mapping[TopicPartition, int], deadline: float) -> None:
        self.calls.append("alter")
        self.offsets.update(offsets)

    def delete_group(self, deadline: float) -> None:
        self.calls.append("delete_group")
        self.offsets.clear()


class Sink(SinkConnector):
    """A sink whose alter_offsets hook records what it saw (and can refuse)."""

    def __init__(self, answer: bool | BaseException = True) -> None:
        self.answer = answer
        self.seen: list[dict[TopicPartition, int | None]] = []

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        self.seen.append(dict(offsets))
        if isinstance(self.answer, BaseException):
            raise self.answer
        return self.answer

    def start(self, props: dict[str, str]) -> None: ...

    def stop(self) -> None: ...

    def task_class(self) -> type[Task]:
        raise NotImplementedError

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return []

    def config(self) -> ConfigDef:
        return ConfigDef()


class DefaultSink(Sink):
    """A sink that does not override the hook."""

    alter_offsets = SinkConnector.alter_offsets  # type: ignore[assignment]


T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)
ALTERED = "The offsets for this connector have been altered successfully"
RESET = "The offsets for this connector have been reset successfully"


# ------------------------------------------------------------------------------------- parsing


def test_numbers_and_numeric_strings_are_accepted_as_java_does() -> None:
    parsed = parse_sink_offsets([(_p("t", 0), _o(5)), (_p("t", "1"), _o("7")), (_p("u", 2), None)])
    assert parsed == {T0: 5, T1: 7, TopicPartition("u", 2): None}


def test_a_partition_named_twice_takes_the_later_offset() -> None:
    assert parse_sink_offsets([(_p("t", 0), _o(5)), (_p("t", "0"), _o(9))]) == {T0: 9}


@pytest.mark.parametrize(
    ("partition", "offset", "message"),
    [
        (None, _o(1), "The partition for a sink connector offset cannot be null or missing"),
        ({"kafka_topic": "t"}, _o(1),
         "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"),
        ({"kafka_partition": 0}, _o(1),
         "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'"),
        (_p(None, 0), _o(1), "Kafka topic names must be valid strings and may not be null"),
        (_p("t", None), _o(1), "Kafka partitions must be valid numbers and may not be null"),
        (_p("t", "a"), _o(1), "Failed to parse the following Kafka partition value in the provided offsets: 'a'. "
                              "Partition values for sink connectors need to be integers."),
        (_p("t", 1.5), _o(1), "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. "
                              "Partition values for sink connectors need to be integers."),
        (_p("t", True), _o(1), "Failed to parse the following Kafka partition value in the provided offsets: "
                               "'true'. Partition values for sink connectors need to be integers."),
        (_p("t", 2**31), _o(1), "Failed to parse the following Kafka partition value in the provided offsets: "
                                "'2147483648'. Partition values for sink connectors need to be integers."),
        (_p("t", -1), _o(1), "Kafka partitions may not be negative: -1"),
        (_p("t", 0), {"offset": 1}, "The offset for a sink connector should either be null or contain the key "
                                    "'kafka_offset'"),
        (_p("t", 0), _o("x1"), "Failed to parse the following Kafka offset value in the provided offsets: 'x1'. "
                               "Offset values for sink connectors need to be integers."),
        (_p("t", 0), _o(None), "Failed to parse the following Kafka offset value in the provided offsets: 'null'. "
                               "Offset values for sink connectors need to be integers."),
        (_p("t", 0), _o(2**63), "Failed to parse the following Kafka offset value in the provided offsets: "
                                "'9223372036854775808'. Offset values for sink connectors need to be integers."),
        (_p("t", 0), _o(-3), "Kafka offsets may not be negative: -3 for partition t-0"),
    ],
)  # fmt: skip
def test_invalid_partitions_and_offsets_are_bad_requests_with_javas_messages(
    partition: dict[str, Any] | None, offset: dict[str, Any] | None, message: str
) -> None:
    with pytest.raises(BadRequestError) as raised:
        parse_sink_offsets([(partition, offset)])
    assert str(raised.value) == message


def test_rest_shape_is_javas_sorted_by_topic_and_partition() -> None:
    assert connector_offsets({T1: 4, TopicPartition("a", 3): 1, T0: 2}) == [
        (_p("a", 3), _o(1)),
        (_p("t", 0), _o(2)),
        (_p("t", 1), _o(4)),
    ]


# ------------------------------------------------------------------------------------- GET


def test_read_returns_the_groups_offsets_and_wraps_a_failure() -> None:
    group = Group({T0: 3})
    assert read_sink_offsets("s", group, 5) == [(_p("t", 0), _o(3))]
    group.fail = GroupOffsetsError("broker down")
    with pytest.raises(ConnectError, match=r"^Failed to retrieve consumer group offsets for sink connector s: "):
        read_sink_offsets("s", group, 5)


# ------------------------------------------------------------------------------------- PATCH


def test_patch_commits_only_the_given_partitions_after_the_hook_and_the_member_check() -> None:
    group, sink = Group({T0: 10, T1: 20}), Sink()
    assert modify_sink_offsets("s", sink, {}, [(_p("t", 0), _o(4))], group, 5) == ALTERED
    assert sink.seen == [{T0: 4}]
    assert group.calls == ["require_inactive", "alter"]
    assert group.offsets == {T0: 4, T1: 20}


def test_patch_with_a_null_offset_drops_that_partition_and_keeps_the_others() -> None:
    other = TopicPartition("u", 0)
    group, sink = Group({T0: 10, T1: 20, other: 30}), Sink()
    assert modify_sink_offsets("s", sink, {}, [(_p("t", 0), None), (_p("t", 1), _o(15))], group, 5) == ALTERED
    assert sink.seen == [{T0: None, T1: 15}]
    assert group.calls == ["require_inactive", "committed", "delete_group", "alter"]
    assert group.offsets == {T1: 15, other: 30}


def test_a_hook_left_as_default_gets_javas_framework_managed_message() -> None:
    message = modify_sink_offsets("s", DefaultSink(), {}, [(_p("t", 0), _o(1))], Group(), 5)
    assert message.startswith("The Connect framework-managed offsets for this connector have been altered")


def test_the_hook_refusing_leaves_the_group_untouched() -> None:
    group = Group({T0: 10})
    with pytest.raises(BadRequestError, match="no such offset"):
        modify_sink_offsets("s", Sink(BadRequestError("no such offset")), {}, [(_p("t", 0), _o(1))], group, 5)
    with pytest.raises(ConnectError, match="because it doesn't support external modification of offsets"):
        modify_sink_offsets("s", Sink(NotImplementedError()), {}, [(_p("t", 0), _o(1))], group, 5)
    with pytest.raises(ConnectError, match=r"^Failed to modify offsets for sink connector s$"):
        modify_sink_offsets("s", Sink(ValueError("bug")), {}, [(_p("t", 0), _o(1))], group, 5)
    assert group.offsets == {T0: 10} and "alter" not in group.calls


def test_an_invalid_request_reaches_neither_the_hook_nor_the_group() -> None:
    group, sink = Group({T0: 10}), Sink()
    with pytest.raises(BadRequestError):
        modify_sink_offsets("s", sink, {}, [(_p("t", "x"), _o(1))], group, 5)
    assert sink.seen == [] and group.calls == []


def test_a_group_with_members_gets_javas_tasks_not_stopped_message() -> None:
    group = Group({T0: 10}, members=1)
    with pytest.raises(ConnectError) as raised:
        modify_sink_offsets("s", Sink(), {}, [(_p("t", 0), _o(1))], group, 5)
    assert str(raised.value).startswith(
        "Failed to alter consumer group offsets for connector s either because its tasks haven't stopped completely"
    )
    with pytest.raises(ConnectError) as raised:
        modify_sink_offsets("s", Sink(), {}, None, group, 5)
    assert str(raised.value).startswith(
        "Failed to reset consumer group offsets for connector s either because its tasks haven't stopped completely"
    )
    assert group.offsets == {T0: 10}


# ------------------------------------------------------------------------------------- DELETE


def test_reset_shows_the_hook_every_committed_partition_then_deletes_the_group() -> None:
    group, sink = Group({T0: 10, T1: 20}), Sink()
    assert modify_sink_offsets("s", sink, {}, None, group, 5) == RESET
    assert sink.seen == [{T0: None, T1: None}]
    assert group.calls == ["committed", "require_inactive", "delete_group"]
    assert group.offsets == {}


def test_reset_of_a_group_that_cannot_be_listed_says_so() -> None:
    group = Group()
    group.fail = GroupOffsetsError("broker down")
    with pytest.raises(ConnectError, match=r"^Failed to list offsets prior to resetting offsets for sink connector s"):
        modify_sink_offsets("s", Sink(), {}, None, group, 5)


class FailingGroup(Group):
    """A group whose changes the broker refuses."""

    def alter(self, offsets: Mapping[TopicPartition, int], deadline: float) -> None:
        raise GroupOffsetsError("Failed to alter the offsets of consumer group g: TOPIC_AUTHORIZATION_FAILED")

    def delete_group(self, deadline: float) -> None:
        raise GroupOffsetsError("Failed to delete the offsets of consumer group g: GROUP_AUTHORIZATION_FAILED")


def test_a_refused_change_gets_javas_message_with_the_cause() -> None:
    with pytest.raises(ConnectError) as raised:
        modify_sink_offsets("s", Sink(), {}, [(_p("t", 0), _o(1))], FailingGroup({T0: 3}), 5)
    assert str(raised.value).startswith("Failed to alter consumer group offsets for connector s: ")
    assert "TOPIC_AUTHORIZATION_FAILED" in str(raised.value)
    with pytest.raises(ConnectError) as raised:
        modify_sink_offsets("s", Sink(), {}, None, FailingGroup({T0: 3}), 5)
    assert str(raised.value).startswith("Failed to reset consumer group offsets for sink connector s: ")
    assert "GROUP_AUTHORIZATION_FAILED" in str(raised.value)
