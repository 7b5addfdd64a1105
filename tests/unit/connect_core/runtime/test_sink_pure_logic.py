"""Pure logic of the sink half: offset bookkeeping, sink config rules, DLQ context headers, SinkRecord."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import BOOLEAN_SCHEMA, INT32_SCHEMA, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA, Schema, Struct
from connect_core.api.sink import SinkRecord, TopicPartition
from connect_core.connectors.file_stream_sink import java_text
from connect_core.converters.json import JsonConverter
from connect_core.converters.string import StringConverter
from connect_core.model import ConnectorTaskId
from connect_core.runtime.connector_config import SinkConnectorConfig, sink_topic_errors
from connect_core.runtime.dead_letter_queue import context_headers
from connect_core.runtime.sink_offsets import SinkOffsets
from connect_core.runtime.worker_config import ConnectorClientConfigOverridePolicy, consumer_props

A0, A1 = TopicPartition("a", 0), TopicPartition("a", 1)


def test_offsets_commit_only_what_was_delivered_and_acknowledged_by_pre_commit() -> None:
    o = SinkOffsets()
    o.assign([A0, A1], {A0: 5})
    assert o.candidates() == {A0: 5}
    o.delivered({A0: 9, A1: 3})
    offered = o.candidates()
    assert offered == {A0: 9, A1: 3}
    # the task may hold some back, never go past what was delivered
    assert o.committable(offered, {A0: 7, A1: 4}) == {A0: 7}
    o.committed({A0: 7})
    assert o.committable(offered, {A0: 7}) is None  # nothing would change
    assert o.committable(offered, {}) is None  # opted out
    assert o.committable(offered, {A0: 9, TopicPartition("b", 0): 1}) == {A0: 9}


def test_offsets_rewinds_revocation_and_reset() -> None:
    o = SinkOffsets()
    o.assign([A0], {A0: 10})
    o.delivered({A0: 20})
    o.request_offsets({A0: 15})
    assert o.candidates() == {A0: 15}
    assert o.take_rewinds() == {A0: 15} and o.take_rewinds() == {}
    o.delivered({A0: 30})
    assert o.reset_to_committed([A0]) == {A0: 10} and o.current[A0] == 10
    o.revoke([A0])
    assert o.candidates() == {} and o.assigned == set()
    o.delivered({A0: 40})  # a late batch of a revoked partition is ignored
    assert o.current == {}


@pytest.mark.parametrize(
    ("props", "errors"),
    [
        ({"topics": "a"}, {}),
        ({"topics.regex": "a.*"}, {}),
        (
            {},
            {
                "topics": ["Must configure one of topics or topics.regex"],
                "topics.regex": ["Must configure one of topics or topics.regex"],
            },
        ),
        (
            {"topics": "a", "topics.regex": "b"},
            {
                "topics": ["topics and topics.regex are mutually exclusive options, but both are set."],
                "topics.regex": ["topics and topics.regex are mutually exclusive options, but both are set."],
            },
        ),
        (
            {"topics": "a, dlq", "errors.deadletterqueue.topic.name": "dlq"},
            {
                "topics": [
                    "The DLQ topic 'dlq' may not be included in the list of topics ('topics=[a, dlq]') consumed "
                    "by the connector"
                ]
            },
        ),
        (
            {"topics.regex": "d.*", "errors.deadletterqueue.topic.name": "dlq"},
            {
                "topics.regex": [
                    "The DLQ topic 'dlq' may not be matched by the regex for the topics "
                    "('topics.regex=d.*') consumed by the connector"
                ]
            },
        ),
    ],
)
def test_sink_topic_rules_use_javas_words(props: dict[str, str], errors: dict[str, list[str]]) -> None:
    assert sink_topic_errors(props) == errors


def test_sink_connector_config_parses_dlq_settings_and_rejects_bad_ones() -> None:
    conf = SinkConnectorConfig(
        {
            "name": "s",
            "connector.class": "FileStreamSink",
            "topics": "a,b,a",
            "errors.deadletterqueue.topic.name": " dlq ",
            "errors.deadletterqueue.topic.replication.factor": "1",
        }
    )
    assert conf.topics == ["a", "b"] and conf.topics_regex is None
    assert (conf.dlq_topic, conf.dlq_replication_factor, conf.dlq_context_headers) == ("dlq", 1, False)
    with pytest.raises(ConfigError, match=r"Must configure one of topics or topics\.regex"):
        SinkConnectorConfig({"name": "s", "connector.class": "FileStreamSink"})


def test_consumer_props_group_client_id_and_overrides() -> None:
    worker = {"bootstrap.servers": "b:9092", "consumer.max.poll.records": "10", "producer.acks": "1"}
    props = consumer_props(
        worker,
        {"consumer.override.auto.offset.reset": "latest"},
        ConnectorClientConfigOverridePolicy("All"),
        "conn",
        "connector-consumer-conn-0",
    )
    assert props["group.id"] == "connect-conn" and props["client.id"] == "connector-consumer-conn-0"
    assert props["enable.auto.commit"] == "false" and props["auto.offset.reset"] == "latest"
    assert props["max.poll.records"] == "10" and "acks" not in props
    custom = consumer_props(
        worker, {"consumer.override.group.id": "mine"}, ConnectorClientConfigOverridePolicy("All"), "conn", "c"
    )
    assert custom["group.id"] == "mine"
    with pytest.raises(ConfigError):
        consumer_props(
            worker, {"consumer.override.group.id": "x"}, ConnectorClientConfigOverridePolicy("None"), "conn", "c"
        )


def test_dlq_context_headers_are_javas() -> None:
    try:
        raise DataError("bad json")
    except DataError as e:
        error = e
    headers = dict(context_headers(ConnectorTaskId("conn", 3), "t", 2, 41, "VALUE_CONVERTER", JsonConverter, error))
    assert list(headers)[:7] == [
        "__connect.errors.topic",
        "__connect.errors.partition",
        "__connect.errors.offset",
        "__connect.errors.connector.name",
        "__connect.errors.task.id",
        "__connect.errors.stage",
        "__connect.errors.class.name",
    ]
    assert headers["__connect.errors.partition"] == b"2" and headers["__connect.errors.offset"] == b"41"
    assert headers["__connect.errors.task.id"] == b"3"
    assert headers["__connect.errors.class.name"] == b"org.apache.kafka.connect.json.JsonConverter"
    assert headers["__connect.errors.exception.class.name"] == b"connect_core.api.errors.DataError"
    assert headers["__connect.errors.exception.message"] == b"bad json"
    assert b"DataError: bad json" in headers["__connect.errors.exception.stacktrace"]


def test_sink_record_keeps_originals_through_transformations() -> None:
    r = SinkRecord("t", 1, None, b"k", None, b"v", 17, 1000)
    moved = r.new_record(topic="u", kafka_partition=4).new_record(value=b"w")
    assert (moved.topic, moved.kafka_partition, moved.value, moved.kafka_offset) == ("u", 4, b"w", 17)
    assert moved.original_partition == TopicPartition("t", 1) and moved.original_kafka_offset == 17


def test_file_sink_lines_match_javas_string_value_of() -> None:
    assert java_text({"n": 1, "ok": True, "l": [1, None]}) == "{n=1, ok=true, l=[1, null]}"
    assert java_text(None) == "null" and java_text(b"caf\xc3\xa9") == "café" and java_text("x") == "x"
    schema = Schema.struct([("a", INT32_SCHEMA), ("b", OPTIONAL_STRING_SCHEMA), ("c", STRING_SCHEMA)])
    assert java_text(Struct(schema, {"a": 1, "c": "x"})) == "Struct{a=1,c=x}"  # unset fields left out, as Java
    nested = Schema.struct([("s", schema), ("l", Schema.array(INT32_SCHEMA)), ("ok", BOOLEAN_SCHEMA)])
    value = Struct(nested, {"s": Struct(schema, {"a": 2}), "l": [1, 2], "ok": False})
    assert java_text(value) == "Struct{s=Struct{a=2},l=[1, 2],ok=false}"
    converter = StringConverter()
    converter.configure({}, False)
    assert converter.from_connect("t", nested, value) == b"Struct{s=Struct{a=2},l=[1, 2],ok=false}"


def test_validation_of_a_sink_config_reports_javas_errors_and_the_plugin_lists_as_sink() -> None:
    from connect_core.herder.common import plugin_infos, validate_connector_config

    policy = ConnectorClientConfigOverridePolicy("All")
    ok = validate_connector_config({"name": "s", "connector.class": "FileStreamSink", "topics": "a"}, policy)
    assert ok.error_count == 0 and ok.name == "FileStreamSink"
    bad = validate_connector_config({"name": "s", "connector.class": "FileStreamSinkConnector"}, policy)
    errors = {v.name: v.errors for _, v in bad.configs if v.errors}
    assert errors == {
        "topics": ["Must configure one of topics or topics.regex"],
        "topics.regex": ["Must configure one of topics or topics.regex"],
    }
    listed = {(p.class_name, p.type) for p in plugin_infos()}
    assert ("org.apache.kafka.connect.file.FileStreamSinkConnector", "sink") in listed


def test_a_stalled_join_is_acted_on_after_three_session_timeouts_within_the_rebalance_timeout() -> None:
    from connect_core.runtime.worker_sink_task import MIN_JOIN_STALL_S, join_stall_timeout_s

    assert join_stall_timeout_s({}) == 135.0  # Kafka's defaults: 45 s sessions, 300 s rebalance timeout
    assert join_stall_timeout_s({"session.timeout.ms": "6000"}) == MIN_JOIN_STALL_S == 30.0
    assert join_stall_timeout_s({"session.timeout.ms": "20000", "max.poll.interval.ms": "40000"}) == 40.0
