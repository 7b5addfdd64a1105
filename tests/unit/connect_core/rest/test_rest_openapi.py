"""The OpenAPI document is generated from the routing table and stays true to it: every route is
documented, every documented operation is routable, and answers have the documented shapes."""

from __future__ import annotations

import json
import re
from typing import Any

import jsonschema_rs
import pytest
import schemathesis

from connect_core.rest.internal_endpoints import install_internal_routes
from connect_core.rest.openapi import OPENAPI_PATH, SCHEMAS, build_document, openapi_path
from connect_core.rest.resources import RestApp, build_router
from connect_core.rest.routes import Doc, HerderSelector, Router, split_path
from tests.unit.connect_core.rest.fake_herder import FakeHerder
from tests.unit.connect_core.rest.openapi_check import check_response

BASE = "http://w1:8083"
_PARAM = re.compile(r"\{([a-z_]+)\}")


def fetch_doc(app: RestApp) -> dict[str, Any]:
    resp = app.handle("GET", OPENAPI_PATH, {}, b"", {}, BASE)
    assert resp.status == 200
    return dict(json.loads(resp.encoded()))


def operations(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(method.upper(), path) for path, ops in doc["paths"].items() for method in ops]


def concrete(path: str, values: dict[str, str] | None = None) -> str:
    """A request path for a documented path: each parameter replaced by a sample value."""
    samples = {"task": "0", "source": "A", "target": "B", **(values or {})}
    return _PARAM.sub(lambda m: samples.get(m.group(1), "x"), path)


@pytest.fixture(params=["standalone", "distributed", "dedicated"])
def app(request: pytest.FixtureRequest) -> RestApp:
    if request.param == "standalone":
        return RestApp.for_herder(FakeHerder())
    if request.param == "distributed":
        return install_internal_routes(RestApp.for_herder(FakeHerder()))
    selector: HerderSelector[Any] = HerderSelector(2, {("A", "B"): FakeHerder(), ("B", "A"): FakeHerder()})
    return install_internal_routes(RestApp(selector))


def test_every_route_is_documented_and_every_operation_routable(app: RestApp) -> None:
    doc = fetch_doc(app)
    documented = set(operations(doc))
    depth = app.selector.depth
    for route in app.router.routes:
        path, _ = openapi_path(route.template, depth)
        assert (route.method, path) in documented, f"{route.method} {route.template} is not documented"
    assert ("GET", OPENAPI_PATH) in documented
    assert len(documented) == len(app.router.routes) + 1  # nothing documented that is not served
    for method, path in documented:
        if path == OPENAPI_PATH:
            continue
        parts = split_path(concrete(path))
        _, _, rest = app.selector.select(parts)
        match = app.router.match(method, rest)  # raises 404/405 if the document promised a missing route
        assert openapi_path(match.route.template, depth)[0] == path
    ids = [op["operationId"] for ops in doc["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))


def test_document_is_valid_openapi_that_schemathesis_loads(app: RestApp) -> None:
    doc = fetch_doc(app)
    assert doc["openapi"].startswith("3.1")
    loaded = list(schemathesis.openapi.from_dict(doc).get_all_operations())
    assert len(loaded) == len(operations(doc))
    assert all(result.ok() is not None for result in loaded)
    for name, schema in doc["components"]["schemas"].items():
        assert jsonschema_rs.meta.is_valid(schema), name


def test_dedicated_mode_prefixes_paths_with_the_flows_served() -> None:
    selector: HerderSelector[Any] = HerderSelector(2, {("A", "B"): FakeHerder()})
    app = RestApp(selector)
    doc = fetch_doc(app)
    assert "/{source}/{target}/connectors/{connector}/status" in doc["paths"]
    assert "/{source}/{target}" in doc["paths"]  # the flow's root: GET /A/B is GET / of that herder
    params = doc["paths"]["/{source}/{target}/connectors"]["get"]["parameters"]
    assert [(p["name"], p["schema"].get("enum")) for p in params[:2]] == [("source", ["A"]), ("target", ["B"])]
    selector.put(("B", "C"), FakeHerder())  # a flow that starts later shows up in the next document
    params = fetch_doc(app)["paths"]["/{source}/{target}/connectors"]["get"]["parameters"]
    assert [p["schema"]["enum"] for p in params[:2]] == [["A", "B"], ["B", "C"]]
    # the document's path is outside every namespace, whichever flows exist
    assert app.handle("GET", "/A/B/openapi.json", {}, b"", {}, BASE).status == 404


def test_openapi_path_answers_only_get() -> None:
    app = RestApp.for_herder(FakeHerder())
    resp = app.handle("POST", OPENAPI_PATH, {}, b"{}", {}, BASE)
    assert resp.status == 405
    assert json.loads(resp.encoded()) == {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
    assert resp.headers["Allow"] == "GET, HEAD"
    assert app.handle("HEAD", OPENAPI_PATH, {}, b"", {}, BASE).status == 200


def test_405_names_the_allowed_methods() -> None:
    app = RestApp.for_herder(FakeHerder())
    resp = app.handle("TRACE", "/connectors/x/config", {}, b"", {}, BASE)
    assert resp.status == 405 and resp.headers["Allow"] == "GET, PATCH, PUT"


def test_a_route_without_documentation_or_with_an_unknown_schema_is_refused() -> None:
    router = Router().add("GET", "/x", lambda req: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError, match="GET /x has no documentation"):
        build_document(router)
    router = Router().add("GET", "/x", lambda req: None, doc=Doc("x", {200: "Nope"}))  # type: ignore[arg-type,return-value]
    with pytest.raises(KeyError, match="Nope"):
        build_document(router)


def test_public_table_documents_every_route() -> None:
    assert all(r.doc is not None for r in build_router().routes)
    assert {"ErrorMessage", "ConnectorInfo", "ConnectorStateInfo"} <= set(SCHEMAS)


def _call(
    app: RestApp,
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, list[str]] | None = None,
) -> tuple[int, Any]:
    data = b"" if body is None else json.dumps(body).encode()
    resp = app.handle(method, path, query or {}, data, {"Content-Type": "application/json"}, BASE)
    payload = resp.encoded()
    return resp.status, (json.loads(payload) if payload else None)


def test_answers_have_the_documented_shapes() -> None:
    """Every public operation's answer, rendered from the in-memory herder (the live test does a
    sample against a real worker)."""
    app = RestApp.for_herder(FakeHerder())
    doc = fetch_doc(app)
    cfg = {"connector.class": "FileStreamSource", "tasks.max": "2"}
    calls: list[tuple[str, str, str, Any, dict[str, list[str]] | None]] = [
        ("GET", "/", "/", None, None),
        ("GET", "/health", "/health", None, None),
        ("POST", "/connectors", "/connectors", {"name": "c1", "config": cfg}, None),
        ("GET", "/connectors", "/connectors", None, None),
        ("GET", "/connectors", "/connectors", None, {"expand": ["status", "info"]}),
        ("GET", "/connectors/{connector}", "/connectors/c1", None, None),
        ("GET", "/connectors/{connector}/config", "/connectors/c1/config", None, None),
        ("PUT", "/connectors/{connector}/config", "/connectors/c1/config", cfg, None),
        ("PUT", "/connectors/{connector}/config", "/connectors/c2/config", cfg, None),
        ("PATCH", "/connectors/{connector}/config", "/connectors/c1/config", {"tasks.max": "1"}, None),
        ("GET", "/connectors/{connector}/status", "/connectors/c1/status", None, None),
        ("GET", "/connectors/{connector}/tasks", "/connectors/c1/tasks", None, None),
        ("GET", "/connectors/{connector}/tasks-config", "/connectors/c1/tasks-config", None, None),
        ("GET", "/connectors/{connector}/tasks/{task}/status", "/connectors/c1/tasks/0/status", None, None),
        ("POST", "/connectors/{connector}/tasks/{task}/restart", "/connectors/c1/tasks/0/restart", None, None),
        ("POST", "/connectors/{connector}/restart", "/connectors/c1/restart", None, None),
        ("POST", "/connectors/{connector}/restart", "/connectors/c1/restart", None, {"includeTasks": ["true"]}),
        ("PUT", "/connectors/{connector}/pause", "/connectors/c1/pause", None, None),
        ("PUT", "/connectors/{connector}/resume", "/connectors/c1/resume", None, None),
        ("GET", "/connectors/{connector}/topics", "/connectors/c1/topics", None, None),
        ("PUT", "/connectors/{connector}/topics/reset", "/connectors/c1/topics/reset", None, None),
        ("PUT", "/connectors/{connector}/stop", "/connectors/c1/stop", None, None),
        (
            "PATCH",
            "/connectors/{connector}/offsets",
            "/connectors/c1/offsets",
            {"offsets": [{"partition": {"p": 0}, "offset": {"o": 1}}]},
            None,
        ),
        ("GET", "/connectors/{connector}/offsets", "/connectors/c1/offsets", None, None),
        ("DELETE", "/connectors/{connector}/offsets", "/connectors/c1/offsets", None, None),
        ("GET", "/connector-plugins", "/connector-plugins", None, None),
        ("GET", "/connector-plugins", "/connector-plugins", None, {"connectorsOnly": ["false"]}),
        ("GET", "/connector-plugins/{plugin}/config", "/connector-plugins/RegexRouter/config", None, None),
        (
            "PUT",
            "/connector-plugins/{plugin}/config/validate",
            "/connector-plugins/GoodSource/config/validate",
            {"connector.class": "org.example.GoodSource"},
            None,
        ),
        ("DELETE", "/connectors/{connector}", "/connectors/c1", None, None),
        # error answers: Connect's error body under "default"
        ("GET", "/connectors/{connector}/status", "/connectors/ghost/status", None, None),
        ("POST", "/connectors", "/connectors", {"name": "x", "config": {"connector.class": "Nope"}}, None),
        ("PATCH", "/connectors/{connector}/offsets", "/connectors/c2/offsets", {"offsets": [{"offset": None}]}, None),
    ]
    seen: set[tuple[str, str]] = set()
    for method, documented, path, body, query in calls:
        status, got = _call(app, method, path, body, query)
        check_response(doc, method, documented, status, got)
        if status < 400:
            seen.add((method, documented))
    public = {op for op in operations(doc) if op[1] != OPENAPI_PATH}
    assert public - seen == set(), "operations never answered successfully in this test"
    check_response(doc, "GET", OPENAPI_PATH, 200, fetch_doc(app))


def test_shape_check_catches_drift() -> None:
    """The schemas are closed: a field we start sending, or a changed type, fails the shape tests."""
    doc = fetch_doc(RestApp.for_herder(FakeHerder()))
    good = {"version": "1", "commit": "c", "kafka_cluster_id": None}
    check_response(doc, "GET", "/", 200, good)
    for bad in ({**good, "extra": 1}, {**good, "version": 1}, {"version": "1", "commit": "c"}):
        with pytest.raises(AssertionError):
            check_response(doc, "GET", "/", 200, bad)
    with pytest.raises(AssertionError, match="not documented"):
        check_response(doc, "GET", "/", 201, good)
    with pytest.raises(AssertionError):
        check_response(doc, "GET", "/connectors/{connector}/status", 404, {"error_code": "404", "message": "x"})
