"""Keys and values of Connect's internal topics, byte-compatible with Java Connect.

Java workers serialize every internal-topic value with ``JsonConverter`` and
``schemas.enable=false`` (``Worker``'s internal converter, fixed since KIP-174), so a value is the
*payload* of the Struct the store builds, as compact JSON with the struct's fields in schema
order. Keys are plain strings. Reading also accepts a ``{"schema":..,"payload":..}`` envelope, in
case some worker was (mis)configured to write schemas.

Config topic (``KafkaConfigBackingStore``)::

    connector-<name>            {"properties":{...}}                      null = connector deleted
    task-<name>-<n>             {"properties":{...}}                      applied only on commit
    commit-<name>               {"tasks":<count>}
    target-state-<name>         {"state":"PAUSED","state.v2":"STOPPED"}   "state" is v1 (no STOPPED)
    tasks-fencing-<name>        {"task-count":<n>}
    session-key                 {"key":"<base64>","algorithm":"HmacSHA256","creation-timestamp":<ms>}
    restart-connector-<name>    {"include-tasks":false,"only-failed":false}
    logger-cluster-<namespace>  {"level":"DEBUG"}

Status topic (``KafkaStatusBackingStore``)::

    status-connector-<name>              {"state":"RUNNING","trace":null,"worker_id":"host:8083","generation":3}
    status-task-<name>-<n>               same shape; null = task destroyed
    status-topic-<topic>:connector-<name>  {"topic":{"name":..,"connector":..,"task":0,"discoverTimestamp":<ms>}}

Offset topic: see :mod:`connect_core.storage.offset_storage` (re-exported here).
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass, field
from typing import Any

from connect_core.api.errors import DataError
from connect_core.model import ConnectorTaskId, RestartRequest, State, TargetState
from connect_core.storage.api import ConnectorStatus, TaskStatus, TopicStatus
from connect_core.storage.offset_storage import (
    deserialize_offset_key,
    deserialize_offset_value,
    java_hashmap_order,
    serialize_offset_key,
    serialize_offset_value,
)

__all__ = [
    "COMMIT_TASKS_PREFIX",
    "CONNECTOR_PREFIX",
    "CONNECTOR_STATUS_PREFIX",
    "LOGGER_CLUSTER_PREFIX",
    "RESTART_PREFIX",
    "SESSION_KEY_KEY",
    "TARGET_STATE_PREFIX",
    "TASK_COUNT_RECORD_PREFIX",
    "TASK_PREFIX",
    "TASK_STATUS_PREFIX",
    "TOPIC_STATUS_PREFIX",
    "TOPIC_STATUS_SEPARATOR",
    "ConfigRecord",
    "StatusKey",
    "commit_key",
    "connector_key",
    "connector_status_key",
    "decode_config_record",
    "decode_connector_status",
    "decode_status_key",
    "decode_task_status",
    "decode_topic_status",
    "deserialize_offset_key",
    "deserialize_offset_value",
    "encode_connector_config",
    "encode_connector_status",
    "encode_logger_level",
    "encode_restart_request",
    "encode_session_key",
    "encode_session_key_map",
    "encode_target_state",
    "encode_task_commit",
    "encode_task_config",
    "encode_task_count_record",
    "encode_task_status",
    "encode_topic_status",
    "java_hashmap_order",
    "logger_cluster_key",
    "parse_task_key",
    "restart_key",
    "serialize_offset_key",
    "serialize_offset_value",
    "target_state_key",
    "task_count_record_key",
    "task_key",
    "task_status_key",
    "topic_status_key",
]

# ------------------------------------------------------------------------------ config topic keys

CONNECTOR_PREFIX = "connector-"
TASK_PREFIX = "task-"
COMMIT_TASKS_PREFIX = "commit-"
TARGET_STATE_PREFIX = "target-state-"
TASK_COUNT_RECORD_PREFIX = "tasks-fencing-"
SESSION_KEY_KEY = "session-key"
RESTART_PREFIX = "restart-connector-"
LOGGER_CLUSTER_PREFIX = "logger-cluster-"


def connector_key(connector: str) -> str:
    return CONNECTOR_PREFIX + connector


def task_key(connector: str | ConnectorTaskId, task: int | None = None) -> str:
    if isinstance(connector, ConnectorTaskId):
        return f"{TASK_PREFIX}{connector.connector}-{connector.task}"
    return f"{TASK_PREFIX}{connector}-{task}"


def commit_key(connector: str) -> str:
    return COMMIT_TASKS_PREFIX + connector


def target_state_key(connector: str) -> str:
    return TARGET_STATE_PREFIX + connector


def task_count_record_key(connector: str) -> str:
    return TASK_COUNT_RECORD_PREFIX + connector


def restart_key(connector: str) -> str:
    return RESTART_PREFIX + connector


def logger_cluster_key(namespace: str) -> str:
    return LOGGER_CLUSTER_PREFIX + namespace


def parse_task_key(key: str) -> ConnectorTaskId | None:
    """``task-<connector>-<n>`` (the connector may contain dashes), as Java parses it."""
    parts = key.split("-")
    if len(parts) < 3:
        return None
    try:
        task = int(parts[-1])
    except ValueError:
        return None
    return ConnectorTaskId("-".join(parts[1:-1]), task)


# ------------------------------------------------------------------------------ JSON helpers


def _dumps(value: Any) -> bytes:
    """Compact UTF-8 JSON, as JsonConverter (schemas.enable=false) writes a struct payload."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _loads(value: bytes) -> Any:
    try:
        parsed = json.loads(value)
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"Internal topic record is not JSON: {e}") from e
    # Tolerate a schemas.enable=true envelope.
    if isinstance(parsed, dict) and len(parsed) == 2 and "schema" in parsed and "payload" in parsed:
        return parsed["payload"]
    return parsed


def _props(props: dict[str, str | None]) -> dict[str, str | None]:
    for k, v in props.items():
        if not isinstance(k, str) or (v is not None and not isinstance(v, str)):
            raise DataError("Connector and task configs must map strings to strings")
    return props


# ------------------------------------------------------------------------------ config topic values


def encode_connector_config(props: dict[str, str]) -> bytes:
    return _dumps({"properties": _props(dict(props))})


def encode_task_config(props: dict[str, str]) -> bytes:
    return _dumps({"properties": _props(dict(props))})


def encode_task_commit(task_count: int) -> bytes:
    return _dumps({"tasks": int(task_count)})


def encode_target_state(state: TargetState) -> bytes:
    """v1 record: ``state`` for workers that predate STOPPED (they read PAUSED), ``state.v2`` exact."""
    v1 = TargetState.PAUSED if state is TargetState.STOPPED else state
    return _dumps({"state": v1.value, "state.v2": state.value})


def encode_task_count_record(task_count: int) -> bytes:
    return _dumps({"task-count": int(task_count)})


def encode_session_key(key: bytes, algorithm: str, creation_timestamp: int) -> bytes:
    return _dumps(
        {
            "key": base64.b64encode(key).decode("ascii"),
            "algorithm": algorithm,
            "creation-timestamp": int(creation_timestamp),
        }
    )


def encode_restart_request(include_tasks: bool, only_failed: bool) -> bytes:
    return _dumps({"include-tasks": bool(include_tasks), "only-failed": bool(only_failed)})


def encode_logger_level(level: str) -> bytes:
    return _dumps({"level": level})


@dataclass
class ConfigRecord:
    """One decoded config-topic record.

    ``kind`` is one of ``connector``, ``task``, ``commit``, ``target_state``, ``task_count``,
    ``session_key``, ``restart``, ``logger_level`` or ``invalid`` (unknown key or malformed
    value; ``error`` says why, and Java ignores such records too). ``deleted`` marks a tombstone.
    """

    kind: str
    key: str
    connector: str | None = None
    task: ConnectorTaskId | None = None
    properties: dict[str, str] | None = None
    task_count: int | None = None
    target_state: TargetState | None = None
    session_key: dict[str, Any] | None = None
    restart: RestartRequest | None = None
    level: str | None = None
    deleted: bool = False
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def _int_value(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise DataError("Expected integer value to be either Integer or Long")
    return value


def _invalid(key: str, connector: str | None, message: str) -> ConfigRecord:
    return ConfigRecord("invalid", key, connector=connector, error=message)


def decode_config_record(key: str | bytes | None, value: bytes | None) -> ConfigRecord:
    """Classify and decode a config-topic record (never raises: bad records come back ``invalid``)."""
    if isinstance(key, bytes):
        key = key.decode("utf-8", errors="replace")
    if key is None:
        return _invalid("", None, "null key")
    try:
        payload = _loads(value) if value is not None else None
    except DataError as e:
        return _invalid(key, None, str(e))

    if key.startswith(TARGET_STATE_PREFIX):
        name = key[len(TARGET_STATE_PREFIX) :]
        if payload is None:
            return ConfigRecord("target_state", key, connector=name, deleted=True)
        if not isinstance(payload, dict):
            return _invalid(key, name, f"target state for connector '{name}' is in the wrong format")
        raw = payload.get("state.v2")
        if raw is not None and not isinstance(raw, str):
            raw = None
        if raw is None:
            raw = payload.get("state")
            if not isinstance(raw, str):
                return _invalid(key, name, f"invalid target state for connector '{name}': 'state' is not a string")
        try:
            return ConfigRecord("target_state", key, connector=name, target_state=TargetState(raw))
        except ValueError:
            return _invalid(key, name, f"Invalid target state for connector '{name}': {raw}")

    if key.startswith(CONNECTOR_PREFIX):
        name = key[len(CONNECTOR_PREFIX) :]
        if payload is None:
            return ConfigRecord("connector", key, connector=name, deleted=True)
        props = payload.get("properties") if isinstance(payload, dict) else None
        if not isinstance(props, dict):
            return _invalid(key, name, f"config for connector '{name}': 'properties' field should be a Map")
        return ConfigRecord("connector", key, connector=name, properties=props)

    if key.startswith(TASK_PREFIX):
        task_id = parse_task_key(key)
        if task_id is None:
            return _invalid(key, None, f"{key} couldn't be parsed as a task config key")
        if payload is None:
            return _invalid(key, task_id.connector, f"task configuration for task {task_id} is unexpectedly null")
        props = payload.get("properties") if isinstance(payload, dict) else None
        if not isinstance(props, dict):
            return _invalid(key, task_id.connector, f"config of task {task_id}: 'properties' field should be a Map")
        return ConfigRecord("task", key, connector=task_id.connector, task=task_id, properties=props)

    if key.startswith(COMMIT_TASKS_PREFIX):
        name = key[len(COMMIT_TASKS_PREFIX) :]
        if not isinstance(payload, dict):
            return _invalid(key, name, f"tasks commit for connector '{name}' is in the wrong format")
        try:
            count = _int_value(payload.get("tasks"))
        except DataError as e:
            return _invalid(key, name, str(e))
        return ConfigRecord("commit", key, connector=name, task_count=count)

    if key.startswith(RESTART_PREFIX):
        name = key[len(RESTART_PREFIX) :]
        if not isinstance(payload, dict):
            return _invalid(key, name, "restart request value is not a Map")
        only_failed = payload.get("only-failed")
        include_tasks = payload.get("include-tasks")
        return ConfigRecord(
            "restart",
            key,
            connector=name,
            restart=RestartRequest(
                name,
                only_failed=only_failed if isinstance(only_failed, bool) else False,
                include_tasks=include_tasks if isinstance(include_tasks, bool) else False,
            ),
        )

    if key.startswith(TASK_COUNT_RECORD_PREFIX):
        name = key[len(TASK_COUNT_RECORD_PREFIX) :]
        if not isinstance(payload, dict):
            return _invalid(key, name, f"task count record for connector '{name}' is in the wrong format")
        try:
            count = _int_value(payload.get("task-count"))
        except DataError as e:
            return _invalid(key, name, str(e))
        return ConfigRecord("task_count", key, connector=name, task_count=count)

    if key == SESSION_KEY_KEY:
        if not isinstance(payload, dict):
            return _invalid(key, None, "session key is null or not a Map")
        raw_key, algorithm, created = payload.get("key"), payload.get("algorithm"), payload.get("creation-timestamp")
        if not isinstance(raw_key, str) or not isinstance(algorithm, str):
            return _invalid(key, None, "session key 'key' and 'algorithm' must be strings")
        if isinstance(created, bool) or not isinstance(created, int):
            return _invalid(key, None, "session key 'creation-timestamp' must be a long")
        try:
            secret = base64.b64decode(raw_key, validate=True)
        except (binascii.Error, ValueError):
            return _invalid(key, None, "session key 'key' is not base64")
        return ConfigRecord(
            "session_key",
            key,
            session_key={"key": secret, "algorithm": algorithm, "creation_timestamp": created},
        )

    if key.startswith(LOGGER_CLUSTER_PREFIX):
        namespace = key[len(LOGGER_CLUSTER_PREFIX) :]
        level = payload.get("level") if isinstance(payload, dict) else None
        if not isinstance(level, str):
            return _invalid(key, None, f"logging level for namespace {namespace} is not a string")
        return ConfigRecord("logger_level", key, level=level, extra={"namespace": namespace})

    return _invalid(key, None, f"config update record with invalid key: {key}")


# ------------------------------------------------------------------------------ status topic

CONNECTOR_STATUS_PREFIX = "status-connector-"
TASK_STATUS_PREFIX = "status-task-"
TOPIC_STATUS_PREFIX = "status-topic-"
TOPIC_STATUS_SEPARATOR = ":connector-"


def connector_status_key(connector: str) -> str:
    return CONNECTOR_STATUS_PREFIX + connector


def task_status_key(task: ConnectorTaskId) -> str:
    return f"{TASK_STATUS_PREFIX}{task.connector}-{task.task}"


def topic_status_key(topic: str, connector: str) -> str:
    return f"{TOPIC_STATUS_PREFIX}{topic}{TOPIC_STATUS_SEPARATOR}{connector}"


@dataclass(frozen=True)
class StatusKey:
    """A parsed status-topic key: ``kind`` is ``connector``, ``task`` or ``topic``."""

    kind: str
    connector: str
    task: ConnectorTaskId | None = None
    topic: str | None = None


def decode_status_key(key: str | bytes | None) -> StatusKey | None:
    """Parse a status key as Java does; None for keys Java would discard."""
    if isinstance(key, bytes):
        key = key.decode("utf-8", errors="replace")
    if key is None:
        return None
    if key.startswith(CONNECTOR_STATUS_PREFIX):
        name = key[len(CONNECTOR_STATUS_PREFIX) :]
        return StatusKey("connector", name) if name else None
    if key.startswith(TASK_STATUS_PREFIX):
        parts = key.split("-")
        if len(parts) < 4:
            return None
        try:
            n = int(parts[-1])
        except ValueError:
            return None
        connector = "-".join(parts[2:-1])
        return StatusKey("task", connector, task=ConnectorTaskId(connector, n))
    if key.startswith(TOPIC_STATUS_PREFIX):
        sep = key.find(":")
        begin = len(TOPIC_STATUS_PREFIX)
        if sep < begin:
            return None
        topic = key[begin:sep]
        connector = key[sep + len(TOPIC_STATUS_SEPARATOR) :]
        if not topic or not connector or sep + len(TOPIC_STATUS_SEPARATOR) > len(key):
            return None
        return StatusKey("topic", connector, topic=topic)
    return None


def _encode_status(state: State, trace: str | None, worker_id: str, generation: int) -> bytes | None:
    if state is State.DESTROYED:
        return None
    return _dumps({"state": state.value, "trace": trace, "worker_id": worker_id, "generation": int(generation)})


def encode_connector_status(status: ConnectorStatus) -> bytes | None:
    """The status value; None (a tombstone) for DESTROYED, as Java writes it."""
    return _encode_status(status.state, status.trace, status.worker_id, status.generation)


def encode_task_status(status: TaskStatus) -> bytes | None:
    return _encode_status(status.state, status.trace, status.worker_id, status.generation)


def encode_topic_status(status: TopicStatus | None) -> bytes | None:
    if status is None:
        return None
    return _dumps(
        {
            "topic": {
                "name": status.topic,
                "connector": status.connector,
                "task": int(status.task),
                "discoverTimestamp": int(status.discover_timestamp),
            }
        }
    )


def _decode_status_fields(value: bytes) -> tuple[State, str | None, str, int]:
    payload = _loads(value)
    if not isinstance(payload, dict):
        raise DataError("Invalid status value: not a Map")
    try:
        state = State(payload.get("state"))
    except ValueError:
        raise DataError(f"Invalid status state {payload.get('state')!r}") from None
    trace = payload.get("trace")
    worker = payload.get("worker_id")
    generation = payload.get("generation")
    if trace is not None and not isinstance(trace, str):
        raise DataError("Invalid status trace: not a string")
    if not isinstance(worker, str):
        raise DataError("Invalid status worker_id: not a string")
    return state, trace, worker, _int_value(generation)


def decode_connector_status(connector: str, value: bytes) -> ConnectorStatus:
    state, trace, worker, generation = _decode_status_fields(value)
    return ConnectorStatus(connector, state, worker, trace, generation)


def decode_task_status(task: ConnectorTaskId, value: bytes) -> TaskStatus:
    state, trace, worker, generation = _decode_status_fields(value)
    return TaskStatus(task, state, worker, trace, generation)


def decode_topic_status(value: bytes) -> TopicStatus:
    payload = _loads(value)
    inner = payload.get("topic") if isinstance(payload, dict) else None
    if not isinstance(inner, dict):
        raise DataError("Invalid topic status value: no 'topic' map")
    name, connector = inner.get("name"), inner.get("connector")
    if not isinstance(name, str) or not isinstance(connector, str):
        raise DataError("Invalid topic status value: name and connector must be strings")
    return TopicStatus(name, connector, _int_value(inner.get("task")), _int_value(inner.get("discoverTimestamp")))


def encode_session_key_map(session_key: dict[str, Any]) -> bytes:
    """:func:`encode_session_key` for the dict form decoding produces
    (``{"key": bytes, "algorithm": str, "creation_timestamp": int}``)."""
    created = session_key.get("creation_timestamp", session_key.get("creation-timestamp"))
    return encode_session_key(session_key["key"], session_key["algorithm"], int(created or 0))
