"""Herder values rendered to Java Connect's JSON shapes, and request bodies parsed from them.

Field names follow Java's Jackson annotations (``worker_id``, ``error_count``, the key
definition's ``order``...). ``trace`` is left out when empty, as Java's ``NON_EMPTY`` does.
Request parsing mirrors Jackson's leniency (scalars become strings in a ``Map<String,String>``)
and its strictness (unknown fields, wrong JSON types), with Jackson-like messages; the status is
400, where Java answers 500 (see :mod:`connect_core.rest.errors`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from connect_core.model import (
    AbstractStatus,
    ConfigInfoKey,
    ConfigInfos,
    ConfigInfoValue,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    PluginInfo,
    TargetState,
    TaskInfo,
)
from connect_core.rest.errors import deserialization_error
from connect_core.rest.secrets import mask_config

UNDEFINED_VERSION = "undefined"

_ENTITY = "org.apache.kafka.connect.runtime.rest.entities"
_STRING_MAP = "java.util.Map<java.lang.String,java.lang.String>"

# ---------------------------------------------------------------------------------- responses


def task_id(tid: ConnectorTaskId) -> dict[str, Any]:
    return {"connector": tid.connector, "task": tid.task}


def connector_info(info: ConnectorInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "config": mask_config(info.config),
        "tasks": [task_id(t) for t in info.tasks],
        "type": info.type,
    }


def _state(status: AbstractStatus) -> dict[str, Any]:
    out: dict[str, Any] = {"state": status.state.value}
    if status.trace:
        out["trace"] = status.trace
    out["worker_id"] = status.worker_id
    return out


def task_state(task: int, status: AbstractStatus) -> dict[str, Any]:
    return {"id": task, **_state(status)}


def connector_state_info(info: ConnectorStateInfo) -> dict[str, Any]:
    return {
        "name": info.name,
        "connector": _state(info.connector),
        "tasks": [task_state(i, info.tasks[i]) for i in sorted(info.tasks)],
        "type": info.type,
    }


def task_info(info: TaskInfo) -> dict[str, Any]:
    return {"id": task_id(info.id), "config": mask_config(info.config)}


def tasks_config(infos: Iterable[TaskInfo]) -> dict[str, Any]:
    """The deprecated ``tasks-config`` map: ``"<connector>-<task>" -> config``."""
    return {str(i.id): mask_config(i.config) for i in infos}


def plugin_info(info: PluginInfo) -> dict[str, Any]:
    out: dict[str, Any] = {"class": info.class_name, "type": info.type}
    if info.version != UNDEFINED_VERSION:
        out["version"] = info.version
    return out


def config_key_info(key: ConfigInfoKey) -> dict[str, Any]:
    return {
        "name": key.name,
        "type": key.type,
        "required": key.required,
        "default_value": key.default_value,
        "importance": key.importance,
        "documentation": key.documentation,
        "group": key.group,
        "width": key.width,
        "display_name": key.display_name,
        "dependents": list(key.dependents),
        "order": key.order_in_group,
    }


def config_value_info(value: ConfigInfoValue) -> dict[str, Any]:
    return {
        "name": value.name,
        "value": value.value,
        "recommended_values": list(value.recommended_values),
        "errors": list(value.errors),
        "visible": value.visible,
    }


def config_infos(infos: ConfigInfos) -> dict[str, Any]:
    return {
        "name": infos.name,
        "error_count": infos.error_count,
        "groups": list(infos.groups),
        "configs": [{"definition": config_key_info(k), "value": config_value_info(v)} for k, v in infos.configs],
    }


def server_info(version: str, commit: str, kafka_cluster_id: str | None) -> dict[str, Any]:
    return {"version": version, "commit": commit, "kafka_cluster_id": kafka_cluster_id}


def message(text: str) -> dict[str, Any]:
    return {"message": text}


def connector_offsets(offsets: Iterable[tuple[Mapping[str, Any], Mapping[str, Any] | None]]) -> dict[str, Any]:
    return {"offsets": [{"partition": dict(p), "offset": None if o is None else dict(o)} for p, o in offsets]}


def active_topics(connector: str, topics: Iterable[str]) -> dict[str, Any]:
    return {connector: {"topics": list(topics)}}


def dumps(body: Any) -> bytes:
    """Compact JSON like Jackson (no spaces), UTF-8; text UTF-8 cannot carry (an unpaired
    surrogate) is escaped rather than failing the response."""
    text = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(body, separators=(",", ":")).encode("ascii")


# ---------------------------------------------------------------------------------- requests


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "Object value (token `JsonToken.START_OBJECT`)"
    if isinstance(value, list):
        return "Array value (token `JsonToken.START_ARRAY`)"
    if isinstance(value, str):
        return "String value"
    if isinstance(value, bool):
        return "Boolean value"
    if isinstance(value, int | float):
        return "Number value"
    return "null value"


def cannot_deserialize(java_type: str, value: Any) -> Exception:
    return deserialization_error(f"Cannot deserialize value of type `{java_type}` from {_json_kind(value)}")


def parse_json(body: bytes) -> Any:
    """Parse a request body; malformed JSON is a 400 with the parser's explanation (Java: 500)."""
    if not body.strip():
        return None
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise deserialization_error(f"Invalid UTF-8 in request body at byte {e.start}") from None
    try:
        value = json.loads(text, parse_constant=_non_standard_number)
        if _SURROGATE_ESCAPE.search(text):
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        return value
    except UnicodeEncodeError:
        # "\ud800" alone: valid JSON syntax, but no UTF-8 string (names, configs, topics) can hold it.
        raise deserialization_error("Invalid Unicode in request body: an unpaired surrogate escape") from None
    except json.JSONDecodeError as e:
        raise deserialization_error(
            f"Malformed JSON in request body: {e.msg} (line: {e.lineno}, column: {e.colno})"
        ) from None
    except RecursionError:
        raise deserialization_error("Malformed JSON in request body: nested too deeply") from None
    except ValueError as e:  # e.g. an integer literal beyond Python's digit limit
        raise deserialization_error(f"Malformed JSON in request body: {e}") from None


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _non_standard_number(token: str) -> Any:
    # Python's parser takes NaN and Infinity; JSON (and Jackson, by default) does not.
    raise ValueError(f"Non-standard token '{token}'")


def _scalar_to_string(value: Any, java_type: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return json.dumps(value)
    raise cannot_deserialize("java.lang.String", value)


def string_map(value: Any) -> dict[str, str | None]:
    """A JSON object as ``Map<String,String>``: scalars coerced to text, nested values refused."""
    if not isinstance(value, dict):
        raise cannot_deserialize(_STRING_MAP, value)
    return {str(k): _scalar_to_string(v, "java.lang.String") for k, v in value.items()}


def _unrecognized(field: str, entity: str, known: Iterable[str]) -> Exception:
    names = ", ".join(f'"{k}"' for k in known)
    return deserialization_error(
        f'Unrecognized field "{field}" (class {_ENTITY}.{entity}), not marked as ignorable (known properties: {names})'
    )


_INITIAL_STATES = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED, "STOPPED": TargetState.STOPPED}


def create_connector_request(
    value: Any,
) -> tuple[str | None, dict[str, str | None] | None, TargetState | None]:
    """``{"name", "config", "initial_state"}`` -> (name, config, initial target state)."""
    entity = "CreateConnectorRequest"
    if value is None:
        return None, None, None
    if not isinstance(value, dict):
        raise cannot_deserialize(f"{_ENTITY}.{entity}", value)
    known = ("name", "config", "initial_state")
    for k in value:
        if k not in known:
            raise _unrecognized(k, entity, known)
    raw_name = value.get("name")
    name = _scalar_to_string(raw_name, "java.lang.String")
    raw_config = value.get("config")
    config = None if raw_config is None else string_map(raw_config)
    raw_state = value.get("initial_state")
    state: TargetState | None = None
    if raw_state is not None:
        if not isinstance(raw_state, str) or raw_state.upper() not in _INITIAL_STATES:
            raise deserialization_error(
                f"Cannot deserialize value of type `{_ENTITY}.{entity}$InitialState` from {_json_kind(raw_state)}"
                f" {json.dumps(raw_state)}: not one of the values accepted: [RUNNING, PAUSED, STOPPED]"
            )
        state = _INITIAL_STATES[raw_state.upper()]
    return name, config, state


def connector_offsets_request(value: Any) -> list[tuple[dict[str, Any], dict[str, Any] | None]] | None:
    """``{"offsets": [{"partition": {..}, "offset": {..}|null}]}``; None/[] when none were given."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise cannot_deserialize(f"{_ENTITY}.ConnectorOffsets", value)
    for k in value:
        if k != "offsets":
            raise _unrecognized(k, "ConnectorOffsets", ("offsets",))
    items = value.get("offsets")
    if items is None:
        return None
    if not isinstance(items, list):
        raise cannot_deserialize(f"java.util.List<{_ENTITY}.ConnectorOffset>", items)
    out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    for item in items:
        if not isinstance(item, dict):
            raise deserialization_error(
                f"Cannot construct instance of `{_ENTITY}.ConnectorOffset` from {_json_kind(item)}: "
                'expected an object with "partition" and "offset"'
            )
        for k in item:
            if k not in ("partition", "offset"):
                raise _unrecognized(k, "ConnectorOffset", ("partition", "offset"))
        partition = item.get("partition")
        offset = item.get("offset")
        if partition is None:
            # No connector can place an offset without its partition (Java leaves this to the
            # connector, whose ConnectException is a 500; the request is what is wrong).
            raise deserialization_error("Partition objects cannot be null")
        if not isinstance(partition, dict):
            raise cannot_deserialize("java.util.Map<java.lang.String,?>", partition)
        if offset is not None and not isinstance(offset, dict):
            raise cannot_deserialize("java.util.Map<java.lang.String,?>", offset)
        out.append((partition, offset))
    return out
