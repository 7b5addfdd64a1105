"""Handlers of the Connect REST API: each renders one :class:`~connect_core.herder.api.Herder` call.

Status codes follow Java's ``ConnectorsResource``/``ConnectorPluginsResource``/``RootResource``:
create 201 (+ ``Location``), replace 200, pause/resume/topic-reset 202, stop/delete/task restart
204, connector restart 204 (connector only) or 202 with the pending status. Handlers are plain
functions of a :class:`Request`; :func:`dispatch` adds routing, the error table and forwarding
to the leader, so the whole API is testable without a socket.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from connect_core.api.errors import BadRequestError, NotFoundError, NotLeaderError
from connect_core.config.config_info import config_key_info
from connect_core.config.configdef import HIDDEN
from connect_core.herder.api import Herder
from connect_core.herder.distributed.session_key import SIGNATURE_ALGORITHM_HEADER, SIGNATURE_HEADER
from connect_core.model import ConfigInfoKey, ConnectorTaskId, RestartRequest
from connect_core.rest import entities
from connect_core.rest.errors import (
    RestError,
    bad_request,
    deserialization_error,
    error_headers,
    error_response,
    method_not_allowed,
)
from connect_core.rest.exchange import Request, Response, RestSettings
from connect_core.rest.openapi import OPENAPI_PATH, build_document
from connect_core.rest.routes import Doc, HerderSelector, Param, Router
from connect_core.rest.secrets import mask_config, restore_hidden

log = logging.getLogger(__name__)

HEALTHY_MESSAGE = "Worker has completed startup and is ready to handle requests."


# ------------------------------------------------------------------------------------ root


def server_info(req: Request) -> Response:
    herder: Herder = req.herder
    return Response(200, entities.server_info(req.settings.version, req.settings.commit, herder.kafka_cluster_id()))


def health(req: Request) -> Response:
    ready = getattr(req.herder, "is_ready", None)
    if callable(ready) and not ready():
        return Response(503, {"status": "starting", "message": "Worker is still starting up."})
    return Response(200, {"status": "healthy", "message": HEALTHY_MESSAGE})


# ------------------------------------------------------------------------------------ connectors


def list_connectors(req: Request) -> Response:
    herder: Herder = req.herder
    expansions = req.query.get("expand")
    if expansions is None:
        return Response(200, herder.connectors())
    out: dict[str, dict[str, Any]] = {}
    for name in herder.connectors():
        try:
            entry: dict[str, Any] = {}
            for expansion in expansions:
                if expansion == "status":
                    entry["status"] = entities.connector_state_info(herder.connector_status(name))
                elif expansion == "info":
                    entry["info"] = entities.connector_info(herder.connector_info(name))
                else:
                    log.info("Ignoring unknown expansion type %s", expansion)
            out[name] = entry
        except NotFoundError:
            # Deleted while we were looking: leave it out, as Java does.
            log.debug("Unable to get connector info for %s on this worker", name)
    return Response(200, out)


def _require_string_config(config: Mapping[str, str | None]) -> dict[str, str]:
    nulls = [k for k, v in config.items() if v is None]
    if nulls:
        raise BadRequestError(
            f"Connector configuration is invalid and contains the following {len(nulls)} error(s):\n"
            + "\n".join("Null value can not be supplied as the configuration value." for _ in nulls)
            + "\nYou can also find the above list of errors at the endpoint "
            "`/connector-plugins/{connectorType}/config/validate`"
        )
    return {k: v for k, v in config.items() if v is not None}


def _check_and_put_name(name: str, config: dict[str, str | None]) -> None:
    included = config.get("name")
    if included is not None:
        if included != name:
            raise bad_request(
                f"Connector name configuration ({included}) doesn't match connector name in the URL ({name})"
            )
    else:
        config["name"] = name


def _location(req: Request, name: str) -> dict[str, str]:
    return {"Location": f"{req.base_url}/connectors/{quote(name, safe='')}"}


def create_connector(req: Request) -> Response:
    herder: Herder = req.herder
    raw = req.json()
    if raw is None:
        raise deserialization_error('A JSON object with the connector\'s "name" and "config" is required')
    name, config, initial_state = entities.create_connector_request(raw)
    name = "" if name is None else name.strip()
    if config is None:
        # Java fails here with a NullPointerException (500); a 400 here, saying what is wrong.
        raise deserialization_error('Connector config is missing: the request needs a "config" object')
    _check_and_put_name(name, config)
    created, info = herder.put_connector_config(name, _require_string_config(config), False, initial_state)
    del created
    return Response(201, entities.connector_info(info), _location(req, name))


def get_connector(req: Request) -> Response:
    herder: Herder = req.herder
    return Response(200, entities.connector_info(herder.connector_info(req.params["connector"])))


def get_connector_config(req: Request) -> Response:
    herder: Herder = req.herder
    return Response(200, mask_config(herder.connector_config(req.params["connector"])))


def _stored_config(herder: Herder, name: str) -> dict[str, str] | None:
    """The current config, to restore secrets a client sent back as ``[hidden]``."""
    try:
        return dict(herder.connector_config(name))
    except NotFoundError:
        return None


def put_connector_config(req: Request) -> Response:
    herder: Herder = req.herder
    name: str = req.params["connector"]
    raw = req.json()
    if raw is None:
        raise deserialization_error("A JSON object of connector configuration is required")
    config = restore_hidden(entities.string_map(raw), _stored_config(herder, name))
    _check_and_put_name(name, config)
    created, info = herder.put_connector_config(name, _require_string_config(config), True)
    if created:
        return Response(201, entities.connector_info(info), _location(req, name))
    return Response(200, entities.connector_info(info))


def patch_connector_config(req: Request) -> Response:
    herder: Herder = req.herder
    raw = req.json()
    if raw is None:
        raise deserialization_error("A JSON object of configuration changes is required")
    patch = entities.string_map(raw)
    stored = _stored_config(herder, req.params["connector"])
    patch = {k: (stored[k] if v == HIDDEN and stored and k in stored else v) for k, v in patch.items()}
    info = herder.patch_connector_config(req.params["connector"], patch)
    return Response(200, entities.connector_info(info))


def delete_connector(req: Request) -> Response:
    herder: Herder = req.herder
    herder.delete_connector_config(req.params["connector"])
    return Response(204)


def connector_status(req: Request) -> Response:
    herder: Herder = req.herder
    return Response(200, entities.connector_state_info(herder.connector_status(req.params["connector"])))


def task_configs(req: Request) -> Response:
    herder: Herder = req.herder
    return Response(200, [entities.task_info(t) for t in herder.task_configs(req.params["connector"])])


def tasks_config(req: Request) -> Response:
    """Deprecated in Java but still served: ``{"<name>-<task>": config}``."""
    herder: Herder = req.herder
    log.warning(
        "The 'GET /connectors/{connector}/tasks-config' endpoint is deprecated; use 'GET /connectors/{connector}/tasks'"
    )
    return Response(200, entities.tasks_config(herder.task_configs(req.params["connector"])))


def task_status(req: Request) -> Response:
    herder: Herder = req.herder
    task = ConnectorTaskId(req.params["connector"], req.params["task"])
    return Response(200, entities.task_state(task.task, herder.task_status(task)))


def restart_task(req: Request) -> Response:
    herder: Herder = req.herder
    herder.restart_task(ConnectorTaskId(req.params["connector"], req.params["task"]))
    return Response(204)


def restart_connector(req: Request) -> Response:
    herder: Herder = req.herder
    request = RestartRequest(
        req.params["connector"],
        only_failed=req.query_bool("onlyFailed", False),
        include_tasks=req.query_bool("includeTasks", False),
    )
    result = herder.restart_connector_and_tasks(request)
    if not request.include_tasks and not request.only_failed:
        # Backward compatible form: restart only the connector, no entity (Java 204).
        return Response(204)
    if result is None:
        result = herder.connector_status(request.connector)
    return Response(202, entities.connector_state_info(result))


def pause_connector(req: Request) -> Response:
    herder: Herder = req.herder
    herder.pause_connector(req.params["connector"])
    return Response(202)


def resume_connector(req: Request) -> Response:
    herder: Herder = req.herder
    herder.resume_connector(req.params["connector"])
    return Response(202)


def stop_connector(req: Request) -> Response:
    herder: Herder = req.herder
    herder.stop_connector(req.params["connector"])
    return Response(204)


def active_topics(req: Request) -> Response:
    herder: Herder = req.herder
    if not req.settings.topic_tracking_enabled:
        raise RestError(403, "Topic tracking is disabled.")
    name: str = req.params["connector"]
    return Response(200, entities.active_topics(name, herder.connector_active_topics(name)))


def reset_active_topics(req: Request) -> Response:
    herder: Herder = req.herder
    if not req.settings.topic_tracking_enabled:
        raise RestError(403, "Topic tracking is disabled.")
    if not req.settings.topic_tracking_reset_enabled:
        raise RestError(403, "Topic tracking reset is disabled.")
    herder.reset_connector_active_topics(req.params["connector"])
    return Response(202)


def get_offsets(req: Request) -> Response:
    herder: Herder = req.herder
    return Response(200, entities.connector_offsets(herder.connector_offsets(req.params["connector"])))


def alter_offsets(req: Request) -> Response:
    herder: Herder = req.herder
    offsets = entities.connector_offsets_request(req.json())
    if not offsets:
        raise bad_request("Partitions / offsets need to be provided for an alter offsets request")
    text = herder.alter_connector_offsets(req.params["connector"], offsets)
    return Response(200, entities.message(text))


def reset_offsets(req: Request) -> Response:
    herder: Herder = req.herder
    text = herder.reset_connector_offsets(req.params["connector"])
    return Response(200, entities.message(text))


# ------------------------------------------------------------------------------------ plugins

_ALIAS_SUFFIX = "Connector"


def _normalized_plugin_name(name: str) -> str:
    if name.endswith(_ALIAS_SUFFIX) and len(name) > len(_ALIAS_SUFFIX):
        return name[: -len(_ALIAS_SUFFIX)]
    return name


def list_plugins(req: Request) -> Response:
    herder: Herder = req.herder
    connectors_only = req.query_bool("connectorsOnly", True)
    plugins = herder.connector_plugins(connectors_only)
    if connectors_only:
        plugins = [p for p in plugins if p.type in ("source", "sink")]
    return Response(200, [entities.plugin_info(p) for p in plugins])


def plugin_config(req: Request) -> Response:
    herder = req.herder
    name: str = req.params["plugin"]
    fn: Callable[[str], list[ConfigInfoKey]] | None = getattr(herder, "connector_plugin_config", None)
    try:
        keys = fn(name) if fn is not None else plugin_config_keys(name)
    except Exception as e:
        from connect_core.plugins import PluginNotFoundError

        if isinstance(e, PluginNotFoundError):
            raise RestError(404, f"Unknown plugin {name}.") from None
        raise
    return Response(200, [entities.config_key_info(k) for k in keys])


def plugin_config_keys(name: str) -> list[ConfigInfoKey]:
    """A plugin's own ConfigDef as key infos; used when the herder offers no richer answer
    (Java's herder also merges the framework's connector-level keys for connectors)."""
    from connect_core.plugins import Plugins

    cls = Plugins.load(name)
    # Checked on the class, before instantiating it: a name may be any importable class
    # ("package.module:Class"), and constructing an arbitrary one is not this endpoint's business.
    if not callable(getattr(cls, "config", None)):
        raise bad_request(
            f"Invalid plugin class {name}. Valid types are sink, source, converter, header_converter, "
            "transformation, predicate."
        )
    instance = cls()
    keys = dict(instance.config().config_keys())
    from connect_core.api.connector import SinkConnector, SourceConnector

    if isinstance(instance, SourceConnector):
        # The framework's connector-level keys, the plugin's own definitions taking precedence.
        from connect_core.runtime.connector_config import source_connector_config_def

        for key_name, key in source_connector_config_def().config_keys().items():
            keys.setdefault(key_name, key)
    elif isinstance(instance, SinkConnector):
        from connect_core.runtime.connector_config import sink_connector_config_def

        for key_name, key in sink_connector_config_def().config_keys().items():
            keys.setdefault(key_name, key)
    return [config_key_info(k) for k in keys.values()]


def validate_config(req: Request) -> Response:
    herder: Herder = req.herder
    plugin: str = req.params["plugin"]
    raw = req.json()
    if raw is None:
        raise deserialization_error("A JSON object of connector configuration is required")
    config = entities.string_map(raw)
    included = config.get("connector.class")
    if included is not None and not _normalized_plugin_name(included).endswith(_normalized_plugin_name(plugin)):
        raise bad_request(f"Included connector type {included} does not match request type {plugin}")
    return Response(200, entities.config_infos(herder.validate_connector_config(config)))  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------ table


_BOOL_PARAM: dict[str, Any] = {"type": "boolean"}
_EXPAND = Param(
    "expand",
    {"type": "array", "items": {"type": "string"}},
    "status and/or info: answer an object of each connector's expansions instead of the names "
    "(other values are ignored)",
)
# Java's status for a connector.class naming no installed connector; kept for its clients.
_UNKNOWN_CLASS = {500: "ErrorMessage"}
_INCLUDE_TASKS = Param("includeTasks", _BOOL_PARAM, "Restart the tasks too")
_ONLY_FAILED = Param("onlyFailed", _BOOL_PARAM, "Restart only what has failed")
_CONNECTORS_ONLY = Param("connectorsOnly", _BOOL_PARAM, "List only connectors (default true)")


def build_router() -> Router:
    """The public Connect REST API (Java's RootResource, ConnectorsResource, ConnectorPluginsResource)."""
    r = Router()
    r.add("GET", "/", server_info, doc=Doc("Worker version and Kafka cluster id", {200: "ServerInfo"}))
    r.add(
        "GET",
        "/health",
        health,
        doc=Doc(
            "Whether the worker has started and can serve requests", {200: "HealthStatus"}, errors={503: "HealthStatus"}
        ),
    )
    r.add(
        "GET",
        "/connectors",
        list_connectors,
        doc=Doc("Connector names, or their status/info", {200: "ConnectorList"}, params=(_EXPAND,)),
    )
    r.add(
        "POST",
        "/connectors",
        create_connector,
        forwardable=True,
        body=True,
        doc=Doc("Create a connector", {201: "ConnectorInfo"}, request="CreateConnectorRequest", errors=_UNKNOWN_CLASS),
    )
    r.add(
        "GET",
        "/connectors/{connector}",
        get_connector,
        doc=Doc("A connector's config, tasks and type", {200: "ConnectorInfo"}),
    )
    r.add(
        "DELETE",
        "/connectors/{connector}",
        delete_connector,
        forwardable=True,
        doc=Doc("Delete a connector", {204: None}),
    )
    r.add(
        "GET",
        "/connectors/{connector}/config",
        get_connector_config,
        doc=Doc("A connector's config (secrets hidden)", {200: "StringMap"}),
    )
    r.add(
        "PUT",
        "/connectors/{connector}/config",
        put_connector_config,
        forwardable=True,
        body=True,
        doc=Doc(
            "Create or replace a connector's config",
            {200: "ConnectorInfo", 201: "ConnectorInfo"},
            request="ConnectorConfig",
            errors=_UNKNOWN_CLASS,
        ),
    )
    r.add(
        "PATCH",
        "/connectors/{connector}/config",
        patch_connector_config,
        forwardable=True,
        body=True,
        doc=Doc(
            "Change some keys of a connector's config",
            {200: "ConnectorInfo"},
            request="ConfigPatch",
            errors=_UNKNOWN_CLASS,
        ),
    )
    r.add(
        "GET",
        "/connectors/{connector}/status",
        connector_status,
        doc=Doc("A connector's and its tasks' states", {200: "ConnectorStateInfo"}),
    )
    r.add(
        "GET",
        "/connectors/{connector}/tasks",
        task_configs,
        doc=Doc("A connector's tasks and their configs", {200: "TaskInfoList"}),
    )
    r.add(
        "GET",
        "/connectors/{connector}/tasks-config",
        tasks_config,
        doc=Doc("Each task's config (deprecated: use /tasks)", {200: "TasksConfig"}),
    )
    r.add(
        "GET",
        "/connectors/{connector}/tasks/{task:int}/status",
        task_status,
        doc=Doc("One task's state", {200: "TaskState"}),
    )
    r.add(
        "POST",
        "/connectors/{connector}/tasks/{task:int}/restart",
        restart_task,
        forwardable=True,
        doc=Doc("Restart one task", {204: None}),
    )
    r.add(
        "POST",
        "/connectors/{connector}/restart",
        restart_connector,
        forwardable=True,
        doc=Doc(
            "Restart a connector (and its tasks with includeTasks)",
            {202: "ConnectorStateInfo", 204: None},
            params=(_INCLUDE_TASKS, _ONLY_FAILED),
        ),
    )
    r.add("PUT", "/connectors/{connector}/pause", pause_connector, doc=Doc("Pause a connector", {202: None}))
    r.add("PUT", "/connectors/{connector}/resume", resume_connector, doc=Doc("Resume a connector", {202: None}))
    r.add(
        "PUT",
        "/connectors/{connector}/stop",
        stop_connector,
        forwardable=True,
        doc=Doc("Stop a connector and shut its tasks down", {204: None}),
    )
    r.add(
        "GET",
        "/connectors/{connector}/topics",
        active_topics,
        doc=Doc("Topics a connector has used", {200: "ActiveTopics"}),
    )
    r.add(
        "PUT",
        "/connectors/{connector}/topics/reset",
        reset_active_topics,
        doc=Doc("Forget the topics a connector has used", {202: None}),
    )
    r.add(
        "GET",
        "/connectors/{connector}/offsets",
        get_offsets,
        doc=Doc("A connector's committed offsets", {200: "ConnectorOffsets"}),
    )
    r.add(
        "PATCH",
        "/connectors/{connector}/offsets",
        alter_offsets,
        forwardable=True,
        body=True,
        doc=Doc("Alter a stopped connector's offsets", {200: "Message"}, request="AlterOffsetsRequest"),
    )
    r.add(
        "DELETE",
        "/connectors/{connector}/offsets",
        reset_offsets,
        forwardable=True,
        doc=Doc("Reset a stopped connector's offsets", {200: "Message"}),
    )
    r.add(
        "GET",
        "/connector-plugins",
        list_plugins,
        doc=Doc("Installed plugins", {200: "PluginInfoList"}, params=(_CONNECTORS_ONLY,)),
    )
    r.add(
        "GET",
        "/connector-plugins/{plugin}/config",
        plugin_config,
        doc=Doc("A plugin's config definition", {200: "ConfigKeyInfoList"}),
    )
    r.add(
        "PUT",
        "/connector-plugins/{plugin}/config/validate",
        validate_config,
        body=True,
        doc=Doc(
            "Validate a connector config without creating it",
            {200: "ConfigInfos"},
            request="ConnectorConfig",
            errors=_UNKNOWN_CLASS,
        ),
    )
    return r


# ------------------------------------------------------------------------------------ dispatch


class Forwarder(Protocol):
    """Sends a request to another worker (the leader); returns (status, body bytes, headers)."""

    def __call__(
        self, url: str, method: str, body: bytes | None, headers: Mapping[str, str]
    ) -> tuple[int, bytes, Mapping[str, str]]: ...


_SIGNATURE_HEADERS = (SIGNATURE_HEADER.lower(), SIGNATURE_ALGORITHM_HEADER.lower())
NO_LEADER_MESSAGE = (
    "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway."
)
TOO_MANY_HOPS_MESSAGE = "Cannot complete request because of a conflicting operation (e.g. worker rebalance)"


@dataclass
class RestApp:
    """Routing table + herder selection + error table + forwarding: everything but the socket."""

    selector: HerderSelector[Any]
    router: Router = field(default_factory=build_router)
    settings: RestSettings = field(default_factory=RestSettings)
    forwarder: Forwarder | None = None

    @classmethod
    def for_herder(
        cls, herder: Any, settings: RestSettings | None = None, forwarder: Forwarder | None = None
    ) -> RestApp:
        return cls(HerderSelector.single(herder), settings=settings or RestSettings(), forwarder=forwarder)

    def handle(
        self,
        method: str,
        raw_path: str,
        query: dict[str, list[str]] | None = None,
        body: bytes = b"",
        headers: Mapping[str, str] | None = None,
        host_url: str = "",
    ) -> Response:
        """Serve one request; never raises."""
        from connect_core.rest.routes import check_segments, split_path

        query = query or {}
        headers = headers or {}
        try:
            parts = split_path(raw_path)
            check_segments(parts)
            if parts == split_path(OPENAPI_PATH):
                return self._openapi(method)
            herder, key, rest = self.selector.select(parts)
            match = self.router.match(method, rest)
            namespace = HerderSelector.namespace_path(key)
            req = Request(
                method=method.upper(),
                path="/" + "/".join(rest),
                query=query,
                body=body,
                headers=headers,
                herder=herder,
                params=match.params,
                settings=self.settings,
                base_url=host_url.rstrip("/") + namespace,
            )
            try:
                return match.route.handler(req)
            except NotLeaderError as e:
                if not match.route.forwardable:
                    raise
                return self._forward(req, namespace, e, signed=match.route.internal)
        except Exception as exc:  # the error table: every failure becomes Java's ErrorMessage
            status, err = error_response(exc)
            if status >= 500:
                log.debug("REST %s %s failed", method, raw_path, exc_info=exc)
            return Response(status, err, error_headers(exc))

    def _openapi(self, method: str) -> Response:
        """The API's OpenAPI document (outside every namespace, so it needs no herder)."""
        if method.upper() not in ("GET", "HEAD"):
            raise method_not_allowed(("GET", "HEAD"))
        return Response(
            200, build_document(self.router, self.selector.depth, self.selector.keys(), self.settings.version)
        )

    def _forward(self, req: Request, namespace: str, exc: NotLeaderError, signed: bool = False) -> Response:
        forward = req.query_one("forward")
        if forward is not None and forward.strip().lower() != "true":
            raise RestError(409, TOO_MANY_HOPS_MESSAGE)
        if exc.leader_url is None or self.forwarder is None:
            raise RestError(409, NO_LEADER_MESSAGE)
        # First hop carries forward=true; a forwarded request that lands on a non-leader again
        # carries forward=false, so a third hop is refused (Java's two-hop limit).
        params = [(k, v) for k, vs in req.query.items() if k != "forward" for v in vs]
        params.append(("forward", "true" if forward is None else "false"))
        url = f"{exc.leader_url.rstrip('/')}{namespace}{req.path}?{urlencode(params)}"
        log.debug("Forwarding request %s %s", req.method, url)
        # An internal request keeps its signature: it signs the body, under the key every worker shares.
        keep = ("content-type", "authorization", *(_SIGNATURE_HEADERS if signed else ()))
        fwd_headers = {k: v for k, v in req.headers.items() if k.lower() in keep}
        status, body, headers = self.forwarder(url, req.method, req.body or None, fwd_headers)
        out_headers = {k: v for k, v in headers.items() if k.lower() == "location"}
        return Response(status, raw=body, headers=out_headers)
