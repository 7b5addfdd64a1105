"""Internal-topic records match what Java Connect writes (JsonConverter, schemas.enable=false).

The literals are the payloads of the Structs Java's KafkaConfigBackingStore and
KafkaStatusBackingStore build (fields in schema order, compact JSON, optional unset -> null).
"""

from __future__ import annotations

import pytest

from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.storage import formats as f
from connect_core.storage.api import ConnectorStatus, TaskStatus, TopicStatus


def test_config_keys() -> None:
    assert f.connector_key("mm2") == "connector-mm2"
    assert f.task_key("mm2", 3) == "task-mm2-3"
    assert f.task_key(ConnectorTaskId("a-b", 0)) == "task-a-b-0"
    assert f.commit_key("mm2") == "commit-mm2"
    assert f.target_state_key("mm2") == "target-state-mm2"
    assert f.task_count_record_key("mm2") == "tasks-fencing-mm2"
    assert f.restart_key("mm2") == "restart-connector-mm2"
    assert f.SESSION_KEY_KEY == "session-key"
    assert f.parse_task_key("task-my-conn-12") == ConnectorTaskId("my-conn", 12)
    assert f.parse_task_key("task-x") is None
    assert f.parse_task_key("task-conn-x") is None


@pytest.mark.parametrize(
    ("encoded", "literal"),
    [
        (f.encode_connector_config({"connector.class": "MirrorSourceConnector", "name": "m"}),
         b'{"properties":{"connector.class":"MirrorSourceConnector","name":"m"}}'),
        (f.encode_task_config({"task.index": "0"}), b'{"properties":{"task.index":"0"}}'),
        (f.encode_task_commit(2), b'{"tasks":2}'),
        (f.encode_target_state(TargetState.STARTED), b'{"state":"STARTED","state.v2":"STARTED"}'),
        (f.encode_target_state(TargetState.PAUSED), b'{"state":"PAUSED","state.v2":"PAUSED"}'),
        (f.encode_target_state(TargetState.STOPPED), b'{"state":"PAUSED","state.v2":"STOPPED"}'),
        (f.encode_task_count_record(4), b'{"task-count":4}'),
        (f.encode_session_key(b"\x01\x02\xff", "HmacSHA256", 1700000000000),
         b'{"key":"AQL/","algorithm":"HmacSHA256","creation-timestamp":1700000000000}'),
        (f.encode_restart_request(True, False), b'{"include-tasks":true,"only-failed":false}'),
        (f.encode_logger_level("DEBUG"), b'{"level":"DEBUG"}'),
    ],
)  # fmt: skip
def test_config_values_are_byte_exact(encoded: bytes, literal: bytes) -> None:
    assert encoded == literal


def test_non_ascii_is_raw_utf8_like_jackson() -> None:
    assert f.encode_connector_config({"k": "é"}) == '{"properties":{"k":"é"}}'.encode()


def test_decode_every_config_record_kind() -> None:
    r = f.decode_config_record("connector-m", b'{"properties":{"a":"1"}}')
    assert (r.kind, r.connector, r.properties, r.deleted) == ("connector", "m", {"a": "1"}, False)
    r = f.decode_config_record(b"connector-m", None)
    assert (r.kind, r.deleted) == ("connector", True)
    r = f.decode_config_record("task-m-1", b'{"properties":{"t":"x"}}')
    assert (r.kind, r.task, r.properties) == ("task", ConnectorTaskId("m", 1), {"t": "x"})
    r = f.decode_config_record("commit-m", b'{"tasks":3}')
    assert (r.kind, r.connector, r.task_count) == ("commit", "m", 3)
    r = f.decode_config_record("target-state-m", b'{"state":"PAUSED","state.v2":"STOPPED"}')
    assert (r.kind, r.target_state) == ("target_state", TargetState.STOPPED)
    # v0 records (older workers) only have "state"
    assert f.decode_config_record("target-state-m", b'{"state":"PAUSED"}').target_state is TargetState.PAUSED
    assert f.decode_config_record("target-state-m", None).deleted
    r = f.decode_config_record("tasks-fencing-m", b'{"task-count":2}')
    assert (r.kind, r.task_count) == ("task_count", 2)
    r = f.decode_config_record("session-key", b'{"key":"AQL/","algorithm":"HmacSHA256","creation-timestamp":5}')
    assert r.kind == "session_key"
    assert r.session_key == {"key": b"\x01\x02\xff", "algorithm": "HmacSHA256", "creation_timestamp": 5}
    assert f.encode_session_key_map(r.session_key) == b'{"key":"AQL/","algorithm":"HmacSHA256","creation-timestamp":5}'
    r = f.decode_config_record("restart-connector-m", b'{"include-tasks":true,"only-failed":"yes"}')
    assert r.restart is not None and (r.restart.include_tasks, r.restart.only_failed) == (True, False)
    r = f.decode_config_record("logger-cluster-org.foo", b'{"level":"WARN"}')
    assert (r.kind, r.level, r.extra) == ("logger_level", "WARN", {"namespace": "org.foo"})


def test_decode_tolerates_schema_envelope() -> None:
    enveloped = (
        b'{"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"tasks"}],'
        b'"optional":false},"payload":{"tasks":2}}'
    )
    assert f.decode_config_record("commit-m", enveloped).task_count == 2


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("bogus-key", b"{}"),
        ("connector-m", b"not json"),
        ("connector-m", b'{"properties":"x"}'),
        ("task-m-0", None),
        ("task-m", b'{"properties":{}}'),
        ("commit-m", b'{"tasks":"2"}'),
        ("target-state-m", b'{"state":"SLEEPING"}'),
        ("session-key", b'{"key":"!!","algorithm":"a","creation-timestamp":1}'),
    ],
)
def test_malformed_config_records_are_invalid_not_errors(key: str, value: bytes | None) -> None:
    r = f.decode_config_record(key, value)
    assert r.kind == "invalid" and r.error


def test_status_keys() -> None:
    assert f.connector_status_key("m") == "status-connector-m"
    assert f.task_status_key(ConnectorTaskId("m-x", 2)) == "status-task-m-x-2"
    assert f.topic_status_key("orders", "m") == "status-topic-orders:connector-m"
    assert f.decode_status_key("status-connector-m") == f.StatusKey("connector", "m")
    assert f.decode_status_key(b"status-task-m-x-2") == f.StatusKey("task", "m-x", task=ConnectorTaskId("m-x", 2))
    assert f.decode_status_key("status-topic-orders:connector-m") == f.StatusKey("topic", "m", topic="orders")
    for bad in ("status-connector-", "status-task-m", "status-task-m-x", "status-topic-:connector-m",
                "status-topic-orders:connector-", "status-unknown"):  # fmt: skip
        assert f.decode_status_key(bad) is None, bad


def test_status_values_are_byte_exact_and_round_trip() -> None:
    c = ConnectorStatus("m", State.RUNNING, "10.0.0.1:8083", None, 3)
    raw = f.encode_connector_status(c)
    assert raw == b'{"state":"RUNNING","trace":null,"worker_id":"10.0.0.1:8083","generation":3}'
    assert f.decode_connector_status("m", raw) == c
    t = TaskStatus(ConnectorTaskId("m", 0), State.FAILED, "w1", "Traceback...\n  boom", 7)
    raw = f.encode_task_status(t)
    assert raw == b'{"state":"FAILED","trace":"Traceback...\\n  boom","worker_id":"w1","generation":7}'
    assert f.decode_task_status(ConnectorTaskId("m", 0), raw) == t
    assert f.encode_task_status(TaskStatus(ConnectorTaskId("m", 0), State.DESTROYED, "w1")) is None
    ts = TopicStatus("orders", "m", 0, 1600000000000)
    raw = f.encode_topic_status(ts)
    assert raw == b'{"topic":{"name":"orders","connector":"m","task":0,"discoverTimestamp":1600000000000}}'
    assert f.decode_topic_status(raw) == ts
    assert f.encode_topic_status(None) is None


def test_java_written_status_with_other_member_order_decodes() -> None:
    raw = b'{"worker_id":"w","generation":1,"state":"PAUSED","trace":null}'
    assert f.decode_connector_status("m", raw) == ConnectorStatus("m", State.PAUSED, "w", None, 1)


def test_malformed_status_raises_data_error() -> None:
    from connect_core.api.errors import DataError

    for raw in (b"invalid", b'{"state":"NOPE","worker_id":"w","generation":1}', b'{"state":"RUNNING"}'):
        with pytest.raises(DataError):
            f.decode_connector_status("m", raw)
    with pytest.raises(DataError):
        f.decode_topic_status(b'{"topic":"x"}')


def test_offset_records_match_java_hashmap_order() -> None:
    # MirrorSourceTask's partition is a HashMap filled topic, partition, cluster; Java iterates it in
    # bucket order, and its offset store looks keys up by these exact bytes.
    key = f.serialize_offset_key("MirrorSourceConnector", {"topic": "t", "partition": 0, "cluster": "A"})
    assert key == b'["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t"}]'
    assert f.serialize_offset_value({"offset": 41}) == b'{"offset":41}'
    assert f.deserialize_offset_key(key) == ("MirrorSourceConnector", {"cluster": "A", "partition": 0, "topic": "t"})
    assert f.deserialize_offset_value(b'{"position":12}') == {"position": 12}
    assert f.serialize_offset_value(None) is None
