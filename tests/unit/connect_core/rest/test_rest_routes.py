"""The routing table: matching, 404/405, extension endpoints and herder namespaces."""

from __future__ import annotations

import json

import pytest

from connect_core.rest.errors import RestError, status_for
from connect_core.rest.resources import Request, Response, RestApp, build_router
from connect_core.rest.routes import HerderSelector, Router, split_path
from tests.unit.connect_core.rest.fake_herder import FakeHerder


def _ok(req: Request) -> Response:
    return Response(200, {"params": req.params, "path": req.path})


def test_split_path() -> None:
    assert split_path("/") == []
    assert split_path("/connectors/") == ["connectors"]
    assert split_path("/connectors/a%2Fb/status?x=1") == ["connectors", "a%2Fb", "status"]


def test_params_are_decoded_and_int_params_checked() -> None:
    r = Router().add("GET", "/c/{name}/t/{task:int}", _ok)
    m = r.match("GET", split_path("/c/a%20b/t/3"))
    assert m.params == {"name": "a b", "task": 3}
    with pytest.raises(RestError) as e:
        r.match("GET", split_path("/c/a/t/three"))
    assert e.value.status == 404
    with pytest.raises(RestError) as e:
        r.match("POST", split_path("/c/a/t/3"))
    assert e.value.status == 405


@pytest.mark.parametrize(
    "path", ["/connectors/%FF/status", "/connectors/a%C3", "/%ED%A0%80", "/connectors/x/tasks/%FE/status"]
)
def test_path_escapes_that_are_not_utf8_are_400(path: str) -> None:
    app = RestApp.for_herder(FakeHerder())
    resp = app.handle("GET", path, {}, b"", {}, "http://h:1")
    assert (resp.status, json.loads(resp.encoded())) == (
        400,
        {"error_code": 400, "message": "Invalid UTF-8 in request path"},
    )
    # the same in a namespace segment (MirrorMaker's /{source}/{target}/)
    two = RestApp(HerderSelector(2, {("A", "B"): FakeHerder()}))
    assert two.handle("GET", "/A%FF/B/connectors", {}, b"", {}, "http://h:1").status == 400
    # valid multi-byte escapes still name things
    assert app.handle("GET", "/connectors/%C3%A9t%C3%A9/status", {}, b"", {}, "http://h:1").status == 404


def test_literal_segment_beats_parameter() -> None:
    r = Router().add("GET", "/c/{name}", _ok).add("GET", "/c/special", lambda req: Response(200, "literal"))
    assert r.match("GET", ["c", "special"]).route.template == "/c/special"
    assert r.match("GET", ["c", "other"]).route.template == "/c/{name}"


def test_duplicate_route_refused() -> None:
    r = Router().add("GET", "/x/{a}", _ok)
    with pytest.raises(ValueError):
        r.add("GET", "/x/{b}", _ok)


def test_internal_endpoints_can_be_added_to_the_public_table() -> None:
    herder = FakeHerder()
    app = RestApp.for_herder(herder)
    seen: list[bytes] = []

    def put_task_configs(req: Request) -> Response:
        seen.append(req.body)
        return Response(204)

    app.router.add(
        "POST", "/connectors/{connector}/tasks", put_task_configs, internal=True, forwardable=True, body=True
    )
    resp = app.handle("POST", "/connectors/c1/tasks", {}, b"[]", {}, "http://h:1")
    assert resp.status == 204 and seen == [b"[]"]
    # GET on the same path still reaches the public handler
    assert app.handle("GET", "/connectors/c1/tasks", {}, b"", {}, "").status == 404  # unknown connector


def test_namespaced_herders_for_dedicated_mode() -> None:
    a_to_b, b_to_a = FakeHerder("ab:1"), FakeHerder("ba:1")
    selector: HerderSelector[FakeHerder] = HerderSelector(2, {("A", "B"): a_to_b})
    selector.put(("B", "A"), b_to_a)
    app = RestApp(selector, build_router())
    body = json.dumps({"name": "m", "config": {"connector.class": "FileStreamSource"}}).encode()
    resp = app.handle("POST", "/A/B/connectors", {}, body, {}, "http://h:1")
    assert resp.status == 201 and resp.headers["Location"] == "http://h:1/A/B/connectors/m"
    assert a_to_b.connectors() == ["m"] and b_to_a.connectors() == []
    assert json.loads(app.handle("GET", "/B/A/connectors", {}, b"", {}, "").encoded()) == []
    assert app.handle("GET", "/C/A/connectors", {}, b"", {}, "").status == 404
    assert app.handle("GET", "/A", {}, b"", {}, "").status == 404
    # namespaces are URL-encoded segments (MirrorMaker encodes spaces as %20)
    selector.put(("us east", "B"), a_to_b)
    assert app.handle("GET", "/us%20east/B/connectors/m/status", {}, b"", {}, "").status == 200
    assert HerderSelector.namespace_path(("us east", "B")) == "/us%20east/B"
    selector.remove(("B", "A"))
    assert app.handle("GET", "/B/A/connectors", {}, b"", {}, "").status == 404


def test_error_table() -> None:
    from connect_core.api.errors import (
        AlreadyExistsError,
        BadRequestError,
        ConfigError,
        ConflictError,
        ConnectError,
        NotFoundError,
        NotLeaderError,
    )
    from connect_core.plugins import PluginNotFoundError

    assert status_for(NotFoundError("x")) == 404
    assert status_for(AlreadyExistsError("x")) == 409
    assert status_for(ConflictError("x")) == 409
    assert status_for(NotLeaderError("x", None)) == 409
    assert status_for(ConfigError("x")) == 400
    assert status_for(BadRequestError("x")) == 400
    assert status_for(PluginNotFoundError("no such class")) == 500
    assert status_for(ConnectError("x")) == 500
    assert status_for(ValueError("x")) == 500
    assert status_for(RestError(403, "no")) == 403


def test_unexpected_exception_is_500_with_message() -> None:
    def boom(req: Request) -> Response:
        raise RuntimeError("kaput")

    app = RestApp.for_herder(FakeHerder())
    app.router.add("GET", "/boom", boom)
    resp = app.handle("GET", "/boom")
    assert resp.status == 500 and json.loads(resp.encoded()) == {"error_code": 500, "message": "kaput"}
