"""The OpenAPI 3.1 document of the Connect REST API, generated from the routing table.

Each route carries a :class:`~connect_core.rest.routes.Doc` beside its declaration; this module
holds the JSON shapes (component schemas, JSON Schema 2020-12 as OpenAPI 3.1 uses it) and turns
the table into a document, so a route cannot exist without being documented (tests also check
the shapes against real answers).

The document is served at ``GET /openapi.json``, outside any herder namespace: Connect has no such
path, and in MirrorMaker's dedicated mode (namespace depth 2) a one-segment path can never be a
``/{source}/{target}/...`` flow. There its paths carry the ``/{source}/{target}`` prefix as two
path parameters whose values are the flows served at the time of the request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from http import HTTPStatus
from typing import Any

from connect_core import __version__
from connect_core.rest.routes import Doc, Router

OPENAPI_PATH = "/openapi.json"
OPENAPI_VERSION = "3.1.0"
TITLE = "mm2 Connect REST API"

_STR: dict[str, Any] = {"type": "string"}
_NULLABLE_STR: dict[str, Any] = {"type": ["string", "null"]}
_INT: dict[str, Any] = {"type": "integer"}
_BOOL: dict[str, Any] = {"type": "boolean"}
_STATES = ["UNASSIGNED", "RUNNING", "PAUSED", "STOPPED", "FAILED", "RESTARTING", "DESTROYED"]


def _ref(name: str) -> dict[str, Any]:
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(required: Iterable[str] = (), /, **props: Any) -> dict[str, Any]:
    """A closed object: a field we start sending must be documented first (the tests see to it)."""
    return {"type": "object", "properties": props, "required": list(required), "additionalProperties": False}


def _array(items: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": dict(items)}


def _state(with_id: bool) -> dict[str, Any]:
    props: dict[str, Any] = {"state": {"enum": _STATES}, "trace": _STR, "worker_id": _STR}
    if with_id:
        props = {"id": _INT, **props}
    return _obj(["id", "state", "worker_id"] if with_id else ["state", "worker_id"], **props)


_CONNECTOR_TYPE = {"enum": ["source", "sink", "unknown"]}

SCHEMAS: dict[str, dict[str, Any]] = {
    "ErrorMessage": _obj(["error_code", "message"], error_code=_INT, message=_NULLABLE_STR),
    "ServerInfo": _obj(
        ["version", "commit", "kafka_cluster_id"], version=_STR, commit=_STR, kafka_cluster_id=_NULLABLE_STR
    ),
    "HealthStatus": _obj(["status", "message"], status={"enum": ["healthy", "starting", "unhealthy"]}, message=_STR),
    "StringMap": {"type": "object", "additionalProperties": _STR},
    "ConnectorConfig": {
        "type": "object",
        "additionalProperties": _STR,
        "required": ["connector.class"],
        "description": "A connector's config; connector.class names an installed connector.",
    },
    "ConfigPatch": {
        "type": "object",
        "additionalProperties": _NULLABLE_STR,
        "description": "Keys to set; a null value removes the key.",
    },
    "ConnectorTaskId": _obj(["connector", "task"], connector=_STR, task=_INT),
    "ConnectorInfo": _obj(
        ["name", "config", "tasks", "type"],
        name=_STR,
        config=_ref("StringMap"),
        tasks=_array(_ref("ConnectorTaskId")),
        type=_CONNECTOR_TYPE,
    ),
    "ConnectorState": _state(with_id=False),
    "TaskState": _state(with_id=True),
    "ConnectorStateInfo": _obj(
        ["name", "connector", "tasks", "type"],
        name=_STR,
        connector=_ref("ConnectorState"),
        tasks=_array(_ref("TaskState")),
        type=_CONNECTOR_TYPE,
    ),
    "ConnectorList": {
        "description": "Connector names; with ?expand=, an object of each connector's expansions.",
        "oneOf": [
            _array(_STR),
            {
                "type": "object",
                "additionalProperties": _obj(status=_ref("ConnectorStateInfo"), info=_ref("ConnectorInfo")),
            },
        ],
    },
    "CreateConnectorRequest": _obj(
        ["name", "config"],
        name=_STR,
        config=_ref("ConnectorConfig"),
        initial_state={"enum": ["RUNNING", "PAUSED", "STOPPED"]},
    ),
    "TaskInfo": _obj(["id", "config"], id=_ref("ConnectorTaskId"), config=_ref("StringMap")),
    "TaskInfoList": _array(_ref("TaskInfo")),
    "TasksConfig": {
        "type": "object",
        "additionalProperties": _ref("StringMap"),
        "description": "Each task's config by '<connector>-<task>' (deprecated endpoint).",
    },
    "TaskConfigs": _array(_ref("StringMap")),
    "ActiveTopics": {"type": "object", "additionalProperties": _obj(["topics"], topics=_array(_STR))},
    "ConnectorOffsets": _obj(
        ["offsets"],
        offsets=_array(
            _obj(
                ["partition", "offset"],
                partition={"type": "object"},
                offset={"type": ["object", "null"]},
            )
        ),
    ),
    "AlterOffsetsRequest": _obj(
        ["offsets"],
        offsets={
            **_array(
                _obj(
                    ["partition", "offset"],
                    partition={"type": "object"},
                    offset={"type": ["object", "null"]},
                )
            ),
            "minItems": 1,
        },
    ),
    "Message": _obj(["message"], message=_STR),
    "PluginInfo": _obj(
        ["class", "type"],
        **{
            "class": _STR,
            "type": {"enum": ["source", "sink", "converter", "header_converter", "transformation", "predicate"]},
            "version": _STR,
        },
    ),
    "PluginInfoList": _array(_ref("PluginInfo")),
    "ConfigKeyInfo": _obj(
        [
            "name",
            "type",
            "required",
            "default_value",
            "importance",
            "documentation",
            "group",
            "width",
            "display_name",
            "dependents",
            "order",
        ],
        name=_STR,
        type=_STR,
        required=_BOOL,
        default_value=_NULLABLE_STR,
        importance=_STR,
        documentation=_NULLABLE_STR,
        group=_NULLABLE_STR,
        width=_STR,
        display_name=_STR,
        dependents=_array(_STR),
        order=_INT,
    ),
    "ConfigKeyInfoList": _array(_ref("ConfigKeyInfo")),
    "ConfigValueInfo": _obj(
        ["name", "value", "recommended_values", "errors", "visible"],
        name=_STR,
        value=_NULLABLE_STR,
        recommended_values=_array(_STR),
        errors=_array(_STR),
        visible=_BOOL,
    ),
    "ConfigInfos": _obj(
        ["name", "error_count", "groups", "configs"],
        name=_STR,
        error_count=_INT,
        groups=_array(_STR),
        configs=_array(_obj(["definition", "value"], definition=_ref("ConfigKeyInfo"), value=_ref("ConfigValueInfo"))),
    ),
    "OpenApiDocument": {"type": "object", "required": ["openapi", "info", "paths"]},
}

_TEMPLATE_PARAM = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(?::(int))?\}")
_NAMESPACE_PARAMS = ("source", "target")

OPENAPI_DOC = Doc("This OpenAPI document", {200: "OpenApiDocument"})


def openapi_path(template: str, depth: int) -> tuple[str, list[dict[str, Any]]]:
    """The OpenAPI path of a route template (``{task:int}`` -> ``{task}``) and its path parameters,
    behind the ``/{source}/{target}`` prefix when ``depth`` is 2."""
    if depth not in (0, len(_NAMESPACE_PARAMS)):
        raise ValueError(f"no OpenAPI naming for a namespace of depth {depth}")
    prefix = "".join(f"/{{{n}}}" for n in _NAMESPACE_PARAMS[:depth])
    params: list[dict[str, Any]] = []
    for m in _TEMPLATE_PARAM.finditer(template):
        schema = _INT if m.group(2) == "int" else _STR
        params.append({"name": m.group(1), "in": "path", "required": True, "schema": schema})
    path = _TEMPLATE_PARAM.sub(lambda m: "{" + m.group(1) + "}", template)
    if prefix:
        path = prefix + ("" if path == "/" else path)
    return path, params


def _namespace_params(namespaces: Iterable[tuple[str, ...]], depth: int) -> list[dict[str, Any]]:
    keys = list(namespaces)
    out = []
    for i, name in enumerate(_NAMESPACE_PARAMS[:depth]):
        values = sorted({k[i] for k in keys})
        schema: dict[str, Any] = {"type": "string", "enum": values} if values else {"type": "string"}
        what = "source" if name == "source" else "target"
        out.append(
            {
                "name": name,
                "in": "path",
                "required": True,
                "schema": schema,
                "description": f"The {what} cluster alias of a replication flow served here.",
            }
        )
    return out


def _json(schema: str) -> dict[str, Any]:
    if schema not in SCHEMAS:
        raise KeyError(f"route documentation names an unknown schema {schema!r}")
    return {"application/json": {"schema": _ref(schema)}}


def _operation(operation_id: str, doc: Doc, internal: bool, extra_params: list[dict[str, Any]]) -> dict[str, Any]:
    responses: dict[str, Any] = {}
    for status, schema in sorted({**doc.responses, **doc.errors}.items()):
        entry: dict[str, Any] = {"description": HTTPStatus(status).phrase}
        if schema is not None:
            entry["content"] = _json(schema)
        responses[str(status)] = entry
    responses["default"] = {"description": "An error, in Connect's error body", "content": _json("ErrorMessage")}
    op: dict[str, Any] = {
        "operationId": operation_id,
        "summary": doc.summary,
        "tags": ["internal" if internal else "public"],
        "responses": responses,
    }
    params = extra_params + [
        {
            "name": p.name,
            "in": p.location,
            "required": False,
            "schema": dict(p.schema),
            **({"description": p.description} if p.description else {}),
        }
        for p in doc.params
    ]
    if params:
        op["parameters"] = params
    if doc.request is not None:
        op["requestBody"] = {"required": True, "content": _json(doc.request)}
    return op


def build_document(
    router: Router, depth: int = 0, namespaces: Iterable[tuple[str, ...]] = (), version: str = __version__
) -> dict[str, Any]:
    """The OpenAPI document of every route in ``router`` (an undocumented route is an error)."""
    ns_params = _namespace_params(namespaces, depth)
    paths: dict[str, dict[str, Any]] = {}
    for route in router.routes:
        if route.doc is None:
            raise ValueError(f"route {route.method} {route.template} has no documentation")
        path, params = openapi_path(route.template, depth)
        op = _operation(route.handler.__name__, route.doc, route.internal, ns_params + params)
        paths.setdefault(path, {})[route.method.lower()] = op
    paths[OPENAPI_PATH] = {"get": _operation("openapi_document", OPENAPI_DOC, False, [])}
    return {
        "openapi": OPENAPI_VERSION,
        "info": {
            "title": TITLE,
            "version": version,
            "description": (
                "The Kafka Connect REST API as mm2 serves it: Java Connect's paths, JSON shapes and status "
                "codes, except that a request body that cannot be read (not UTF-8, not JSON, wrong shape) "
                "is a 400 where Java answers 500."
                + (" Each path is one replication flow's API, under /{source}/{target}." if depth else "")
            ),
        },
        "paths": dict(sorted(paths.items())),
        "components": {"schemas": SCHEMAS},
    }
