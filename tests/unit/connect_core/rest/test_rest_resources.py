"""The REST API's paths, status codes and JSON shapes, against an in-memory herder (no socket)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from connect_core.model import TargetState
from connect_core.rest.resources import NO_LEADER_MESSAGE, TOO_MANY_HOPS_MESSAGE, Response, RestApp, RestSettings
from tests.unit.connect_core.rest.fake_herder import FakeHerder

BASE = "http://w1:8083"


def call(
    app: RestApp,
    method: str,
    path: str,
    body: Any = None,
    query: dict[str, list[str]] | None = None,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, Any, Response]:
    data = raw if raw is not None else (b"" if body is None else json.dumps(body).encode())
    resp = app.handle(method, path, query or {}, data, headers or {"Content-Type": "application/json"}, BASE)
    payload = resp.encoded()
    return resp.status, (json.loads(payload) if payload else None), resp


@pytest.fixture
def herder() -> FakeHerder:
    return FakeHerder()


@pytest.fixture
def app(herder: FakeHerder) -> RestApp:
    return RestApp.for_herder(herder, RestSettings(version="9.9", commit="abc"))


def create(app: RestApp, name: str = "c1", **extra: str) -> Any:
    cfg = {"connector.class": "FileStreamSource", "tasks.max": "2", **extra}
    status, body, _ = call(app, "POST", "/connectors", {"name": name, "config": cfg})
    assert status == 201, body
    return body


def test_root_reports_version_commit_and_cluster(app: RestApp) -> None:
    assert call(app, "GET", "/")[:2] == (200, {"version": "9.9", "commit": "abc", "kafka_cluster_id": "cluster-xyz"})


def test_health(app: RestApp, herder: FakeHerder) -> None:
    assert call(app, "GET", "/health")[1]["status"] == "healthy"
    herder.ready = False
    assert call(app, "GET", "/health")[0] == 503


def test_create_returns_201_with_location_and_info(app: RestApp, herder: FakeHerder) -> None:
    status, body, resp = call(
        app, "POST", "/connectors", {"name": " c1 ", "config": {"connector.class": "FileStreamSource", "tasks.max": 2}}
    )
    assert status == 201
    assert resp.headers["Location"] == f"{BASE}/connectors/c1"
    assert body == {
        "name": "c1",
        "config": {"connector.class": "FileStreamSource", "tasks.max": "2", "name": "c1"},
        "tasks": [{"connector": "c1", "task": 0}, {"connector": "c1", "task": 1}],
        "type": "source",
    }
    # name trimmed, scalar coerced to string, name put into config
    assert herder.calls[0] == ("put", ("c1", body["config"], False, None))


def test_create_initial_state(app: RestApp, herder: FakeHerder) -> None:
    call(
        app,
        "POST",
        "/connectors",
        {"name": "c1", "config": {"connector.class": "FileStreamSource"}, "initial_state": "stopped"},
    )
    assert herder.targets["c1"] is TargetState.STOPPED
    status, body, _ = call(
        app,
        "POST",
        "/connectors",
        {"name": "c2", "config": {"connector.class": "FileStreamSource"}, "initial_state": "SLEEPING"},
    )
    assert status == 400 and "SLEEPING" in body["message"] and body["error_code"] == 400


def test_create_errors(app: RestApp) -> None:
    create(app)
    dup = {"name": "c1", "config": {"connector.class": "FileStreamSource"}}
    status, body, _ = call(app, "POST", "/connectors", dup)
    assert (status, body["error_code"]) == (409, 409)
    assert body["message"] == "Connector c1 already exists"
    # name in body config differs from request name
    status, body, _ = call(app, "POST", "/connectors", {"name": "a", "config": {"name": "b", "connector.class": "X"}})
    assert status == 400
    assert body == {
        "error_code": 400,
        "message": "Connector name configuration (b) doesn't match connector name in the URL (a)",
    }
    # unknown connector class: Java's ConnectException -> 500
    status, body, _ = call(app, "POST", "/connectors", {"name": "x", "config": {"connector.class": "Nope"}})
    assert status == 500 and "Nope" in body["message"]
    # invalid config -> 400
    status, body, _ = call(
        app, "POST", "/connectors", {"name": "x", "config": {"connector.class": "FileStreamSource", "tasks.max": "0"}}
    )
    assert status == 400 and "tasks.max" in body["message"]
    # no connector class -> 400
    status, body, _ = call(app, "POST", "/connectors", {"name": "x", "config": {}})
    assert status == 400 and "contains no connector type" in body["message"]
    # null value -> 400
    status, body, _ = call(app, "POST", "/connectors", {"name": "x", "config": {"connector.class": None}})
    assert status == 400 and "Null value" in body["message"]


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (b"{not json", "Malformed JSON"),
        (b"", "required"),
        (b"[]", "Cannot deserialize"),
        (b'{"name": "x", "config": {}, "bogus": 1}', 'Unrecognized field "bogus"'),
        (b'{"name": "x", "config": {"a": {"b": 1}}}', "Cannot deserialize value of type `java.lang.String`"),
        (b'{"name": "x"}', "config"),
        (b"\xff\xfe", "UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
        (b'{"name": "x", "config": {"a": NaN}}', "Non-standard token 'NaN'"),
        (b'{"name": "x", "config": {"a": ' + b"1" * 5000 + b"}}", "Malformed JSON"),
        (b'{"name": "\\ud800", "config": {}}', "unpaired surrogate"),
    ],
)
def test_create_malformed_bodies_are_400_with_jacksons_words(app: RestApp, raw: bytes, needle: str) -> None:
    """Java answers these 500 (Jackson's exceptions reach its catch-all mapper); we answer 400, the
    one intended change of status code (the client's own mistake), with the same body shape."""
    status, body, _ = call(app, "POST", "/connectors", raw=raw)
    assert status == 400
    assert body == {"error_code": 400, "message": body["message"]}
    assert needle in body["message"]


def test_non_json_content_type_is_415(app: RestApp) -> None:
    status, body, _ = call(
        app, "POST", "/connectors", raw=b"name=x", headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert (status, body) == (415, {"error_code": 415, "message": "HTTP 415 Unsupported Media Type"})
    status, _, _ = call(
        app,
        "POST",
        "/connectors",
        {"name": "c", "config": {"connector.class": "FileStreamSource"}},
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert status == 201


def test_list_and_expand(app: RestApp) -> None:
    assert call(app, "GET", "/connectors")[:2] == (200, [])
    create(app, "a")
    create(app, "b")
    assert call(app, "GET", "/connectors")[1] == ["a", "b"]
    status, body, _ = call(app, "GET", "/connectors", query={"expand": ["status", "info", "bogus"]})
    assert status == 200
    assert set(body) == {"a", "b"}
    assert set(body["a"]) == {"status", "info"}
    assert body["a"]["status"]["connector"] == {"state": "RUNNING", "worker_id": "w1:8083"}
    assert body["a"]["info"]["name"] == "a"
    assert call(app, "GET", "/connectors", query={"expand": ["info"]})[1]["b"].keys() == {"info"}


def test_get_config_put_patch_delete(app: RestApp, herder: FakeHerder) -> None:
    create(app)
    status, body, _ = call(app, "GET", "/connectors/c1")
    assert status == 200 and body["name"] == "c1"
    assert call(app, "GET", "/connectors/c1/config")[1]["tasks.max"] == "2"
    # replace existing -> 200
    status, body, resp = call(app, "PUT", "/connectors/c1/config", {"connector.class": "FileStreamSource"})
    assert status == 200 and "Location" not in resp.headers and body["config"]["name"] == "c1"
    # create via PUT -> 201 with Location
    status, body, resp = call(app, "PUT", "/connectors/new%20one/config", {"connector.class": "FileStreamSource"})
    assert status == 201 and resp.headers["Location"] == f"{BASE}/connectors/new%20one"
    assert body["name"] == "new one"
    # PUT name mismatch
    status, body, _ = call(app, "PUT", "/connectors/c1/config", {"name": "zz", "connector.class": "FileStreamSource"})
    assert status == 400 and "(zz)" in body["message"] and "(c1)" in body["message"]
    # PATCH: null removes
    status, body, _ = call(app, "PATCH", "/connectors/c1/config", {"tasks.max": 3, "extra": "x"})
    assert status == 200 and body["config"]["tasks.max"] == "3" and len(body["tasks"]) == 3
    status, body, _ = call(app, "PATCH", "/connectors/c1/config", {"extra": None})
    assert "extra" not in body["config"]
    # DELETE -> 204 no body
    status, body, resp = call(app, "DELETE", "/connectors/c1")
    assert (status, body, resp.encoded()) == (204, None, b"")
    assert call(app, "GET", "/connectors/c1")[:2] == (404, {"error_code": 404, "message": "Connector c1 not found"})


def test_status_tasks_and_task_status(app: RestApp) -> None:
    create(app, "c1", **{"fail.task": "1"})
    status, body, _ = call(app, "GET", "/connectors/c1/status")
    assert status == 200
    assert body == {
        "name": "c1",
        "connector": {"state": "RUNNING", "worker_id": "w1:8083"},
        "tasks": [
            {"id": 0, "state": "FAILED", "trace": "boom\n at x", "worker_id": "w1:8083"},
            {"id": 1, "state": "RUNNING", "worker_id": "w1:8083"},
        ],
        "type": "source",
    }
    assert call(app, "GET", "/connectors/c1/tasks/1/status")[1] == {"id": 1, "state": "RUNNING", "worker_id": "w1:8083"}
    assert call(app, "GET", "/connectors/c1/tasks/7/status")[0] == 404
    # a non-integer task id matches no resource (Jersey's Integer path param)
    assert call(app, "GET", "/connectors/c1/tasks/x/status")[:2] == (
        404,
        {"error_code": 404, "message": "HTTP 404 Not Found"},
    )
    status, body, _ = call(app, "GET", "/connectors/c1/tasks")
    assert body[0] == {"id": {"connector": "c1", "task": 0}, "config": {"task.class": "X", "id": "0"}}
    assert call(app, "GET", "/connectors/c1/tasks-config")[1]["c1-1"]["id"] == "1"
    assert call(app, "GET", "/connectors/nope/status")[:2] == (
        404,
        {"error_code": 404, "message": "No status found for connector nope"},
    )


def test_restart_variants(app: RestApp, herder: FakeHerder) -> None:
    create(app)
    status, body, _ = call(app, "POST", "/connectors/c1/restart")
    assert (status, body) == (204, None)
    status, body, _ = call(app, "POST", "/connectors/c1/restart", query={"includeTasks": ["true"]})
    assert status == 202 and body["connector"]["state"] == "RESTARTING"
    status, body, _ = call(
        app, "POST", "/connectors/c1/restart", query={"onlyFailed": ["TRUE"], "includeTasks": ["false"]}
    )
    assert status == 202
    restarts = [c[1] for c in herder.calls if c[0] == "restart"]
    assert [(r.include_tasks, r.only_failed) for r in restarts] == [(False, False), (True, False), (False, True)]
    assert call(app, "POST", "/connectors/c1/tasks/1/restart")[:2] == (204, None)
    assert call(app, "POST", "/connectors/c1/tasks/9/restart")[0] == 404
    assert call(app, "POST", "/connectors/zz/restart")[0] == 404


def test_pause_resume_stop(app: RestApp, herder: FakeHerder) -> None:
    create(app)
    assert call(app, "PUT", "/connectors/c1/pause")[:2] == (202, None)
    assert herder.targets["c1"] is TargetState.PAUSED
    assert call(app, "PUT", "/connectors/c1/resume")[:2] == (202, None)
    assert call(app, "PUT", "/connectors/c1/stop")[:2] == (204, None)
    assert herder.targets["c1"] is TargetState.STOPPED
    assert call(app, "PUT", "/connectors/zz/pause")[0] == 404


def test_topics(herder: FakeHerder) -> None:
    app = RestApp.for_herder(herder)
    create(app)
    assert call(app, "GET", "/connectors/c1/topics")[:2] == (200, {"c1": {"topics": ["t1", "t2"]}})
    assert call(app, "PUT", "/connectors/c1/topics/reset")[:2] == (202, None)
    off = RestApp.for_herder(herder, RestSettings(topic_tracking_enabled=False))
    assert call(off, "GET", "/connectors/c1/topics")[:2] == (
        403,
        {"error_code": 403, "message": "Topic tracking is disabled."},
    )
    no_reset = RestApp.for_herder(herder, RestSettings.from_props({"topic.tracking.allow.reset": "false"}))
    assert call(no_reset, "PUT", "/connectors/c1/topics/reset")[1]["message"] == "Topic tracking reset is disabled."


def test_offsets(app: RestApp, herder: FakeHerder) -> None:
    create(app)
    assert call(app, "GET", "/connectors/c1/offsets")[:2] == (200, {"offsets": []})
    req = {"offsets": [{"partition": {"topic": "t", "partition": 0}, "offset": {"offset": 5}}]}
    status, body, _ = call(app, "PATCH", "/connectors/c1/offsets", req)
    assert status == 409 and "STOPPED" in body["message"]
    call(app, "PUT", "/connectors/c1/stop")
    status, body, _ = call(app, "PATCH", "/connectors/c1/offsets", req)
    assert (status, body) == (200, {"message": "The offsets for this connector have been altered successfully"})
    assert call(app, "GET", "/connectors/c1/offsets")[1] == req
    status, body, _ = call(app, "DELETE", "/connectors/c1/offsets")
    assert (status, body) == (200, {"message": "The offsets for this connector have been reset successfully"})


@pytest.mark.parametrize(
    ("raw", "status", "needle"),
    [
        ("[]", 400, "Cannot deserialize value"),
        ("{}", 400, "Partitions / offsets need to be provided for an alter offsets request"),
        ('{"key": []}', 400, "Unrecognized field"),
        ('{"offsets": []}', 400, "Partitions / offsets need to be provided for an alter offsets request"),
        ('{"offsets": {}}', 400, "Cannot deserialize value"),
        ('{"offsets": [123]}', 400, "Cannot construct instance"),
        ('{"offsets": [{"key": "val"}]}', 400, "Unrecognized field"),
        ('{"offsets": [{"partition": []}]}', 400, "Cannot deserialize value"),
        ('{"offsets": [{"offset": null}]}', 400, "Partition objects cannot be null"),  # found by fuzzing
    ],
)
def test_alter_offsets_invalid_bodies_match_java(app: RestApp, raw: str, status: int, needle: str) -> None:
    # The same cases as Kafka's OffsetsApiIntegrationTest.testAlterSourceConnectorOffsetsInvalidRequestBody,
    # whose 500s (Jackson failures) are 400 here on purpose (see connect_core.rest.errors).
    create(app)
    call(app, "PUT", "/connectors/c1/stop")
    got, body, _ = call(app, "PATCH", "/connectors/c1/offsets", raw=raw.encode())
    assert got == status and body["error_code"] == status
    assert needle in body["message"]


def test_plugins(app: RestApp) -> None:
    status, body, _ = call(app, "GET", "/connector-plugins")
    assert status == 200
    assert body == [
        {"class": "org.example.GoodSource", "type": "source", "version": "1.0"},
        {"class": "org.example.NoVersion", "type": "sink"},
    ]
    body = call(app, "GET", "/connector-plugins", query={"connectorsOnly": ["false"]})[1]
    assert body[-1]["type"] == "transformation"


def test_plugin_config_definition(app: RestApp) -> None:
    status, body, _ = call(app, "GET", "/connector-plugins/RegexRouter/config")
    assert status == 200
    names = {k["name"] for k in body}
    assert {"regex", "replacement"} <= names
    regex = next(k for k in body if k["name"] == "regex")
    assert set(regex) == {
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
    }
    source = call(app, "GET", "/connector-plugins/FileStreamSource/config")[1]
    names = [k["name"] for k in source]
    assert names[:3] == ["file", "topic", "batch.size"]  # the plugin's own keys first
    assert {"connector.class", "tasks.max", "transforms"} <= set(names)
    assert call(app, "GET", "/connector-plugins/NoSuchPlugin/config")[:2] == (
        404,
        {"error_code": 404, "message": "Unknown plugin NoSuchPlugin."},
    )


class ConstructedIsAnError:
    """Not a plugin; constructing it would be a side effect the plugin-config endpoint must not have."""

    def __init__(self) -> None:
        raise AssertionError("constructed")


def test_plugin_config_of_a_class_that_is_no_plugin_is_400_without_constructing_it(app: RestApp) -> None:
    status, body, _ = call(app, "GET", f"/connector-plugins/{__name__}:ConstructedIsAnError/config")
    assert status == 400 and body["message"].startswith("Invalid plugin class")


def test_validate(app: RestApp) -> None:
    status, body, _ = call(
        app,
        "PUT",
        "/connector-plugins/GoodSource/config/validate",
        {"connector.class": "org.example.GoodSource", "tasks.max": "0"},
    )
    assert status == 200
    assert body["name"] == "org.example.GoodSource" and body["error_count"] == 1 and body["groups"] == ["Common"]
    cfg = body["configs"][0]
    assert cfg["definition"]["order"] == 3 and cfg["definition"]["default_value"] == "1"
    assert cfg["value"] == {
        "name": "tasks.max",
        "value": "0",
        "recommended_values": [],
        "errors": ["Value must be at least 1"],
        "visible": True,
    }
    status, body, _ = call(
        app, "PUT", "/connector-plugins/OtherConnector/config/validate", {"connector.class": "org.example.GoodSource"}
    )
    assert (status, body["message"]) == (
        400,
        "Included connector type org.example.GoodSource does not match request type OtherConnector",
    )
    assert call(app, "PUT", "/connector-plugins/GoodSource/config/validate", {})[0] == 400


def test_unknown_paths_and_methods(app: RestApp) -> None:
    assert call(app, "GET", "/nope")[:2] == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    assert call(app, "GET", "/connectors/a/b/c/d/e")[0] == 404
    not_allowed = {"error_code": 405, "message": "HTTP 405 Method Not Allowed"}
    assert call(app, "DELETE", "/connectors")[:2] == (405, not_allowed)
    assert call(app, "GET", "/connectors/")[:2] == (200, [])  # trailing slash tolerated


def test_bad_requests_do_not_disturb_running_connectors(app: RestApp, herder: FakeHerder) -> None:
    create(app)
    before = call(app, "GET", "/connectors/c1/status")[1]
    for method, path, raw in [
        ("POST", "/connectors", b"{oops"),
        ("POST", "/connectors", b'{"name": "c1", "config": {"connector.class": "Nope"}}'),
        ("PUT", "/connectors/c1/config", b'{"connector.class": "Nope"}'),
        ("PUT", "/connectors/c1/config", b'{"name": "c2", "connector.class": "FileStreamSource"}'),
        ("PATCH", "/connectors/c1/config", b'{"tasks.max": "0"}'),
        ("PATCH", "/connectors/c1/offsets", b"[]"),
        ("GET", "/connectors/ghost", b""),
    ]:
        assert call(app, method, path, raw=raw)[0] >= 400
    assert call(app, "GET", "/connectors/c1/status")[1] == before
    assert herder.configs["c1"]["connector.class"] == "FileStreamSource"


def test_not_leader_forwards_to_leader(herder: FakeHerder) -> None:
    sent: list[tuple[str, str, bytes | None, dict[str, str]]] = []

    def forwarder(url: str, method: str, body: bytes | None, headers: Any) -> tuple[int, bytes, dict[str, str]]:
        sent.append((url, method, body, dict(headers)))
        return 201, b'{"name":"c1"}', {"Location": "http://leader:8083/connectors/c1", "X-Other": "1"}

    app = RestApp.for_herder(herder, forwarder=forwarder)
    herder.leader_url = "http://leader:8083/"
    status, body, resp = call(app, "POST", "/connectors", {"name": "c1", "config": {"connector.class": "X"}})
    assert (status, body) == (201, {"name": "c1"})
    assert resp.headers == {"Location": "http://leader:8083/connectors/c1"}
    url, method, fbody, fheaders = sent[0]
    assert (url, method) == ("http://leader:8083/connectors?forward=true", "POST")
    assert json.loads(fbody or b"")["name"] == "c1" and fheaders == {"Content-Type": "application/json"}
    # restart keeps its query parameters; a second hop carries forward=false
    call(app, "POST", "/connectors/c1/restart", query={"includeTasks": ["true"], "forward": ["true"]})
    assert sent[1][0] == "http://leader:8083/connectors/c1/restart?includeTasks=true&forward=false"
    # a third hop is refused
    status, body, _ = call(app, "POST", "/connectors/c1/restart", query={"forward": ["false"]})
    assert (status, body["message"]) == (409, TOO_MANY_HOPS_MESSAGE)
    herder.leader_url = None


def test_not_leader_without_known_leader_is_409(herder: FakeHerder) -> None:
    app = RestApp.for_herder(herder)  # no forwarder configured
    herder.leader_url = "http://leader:8083"
    status, body, _ = call(app, "DELETE", "/connectors/c1")
    assert (status, body) == (409, {"error_code": 409, "message": NO_LEADER_MESSAGE})


def test_fencing_request_is_forwarded_to_the_leader_with_its_signature(herder: FakeHerder) -> None:
    """Java forwards ``PUT /connectors/{name}/fence`` (completeOrForwardRequest); the signature travels along,
    since it signs the body under the key all workers share. Task configs are still not forwarded."""
    from connect_core.api.errors import NotLeaderError
    from connect_core.herder.distributed.session_key import SIGNATURE_ALGORITHM_HEADER, SIGNATURE_HEADER
    from connect_core.rest.internal_endpoints import install_internal_routes

    seen: list[Any] = []

    def not_leader(*args: Any) -> None:
        seen.append(args)
        raise NotLeaderError("Only the leader may perform zombie fencing.", "http://leader:8083/")

    herder.fence_zombies = not_leader  # type: ignore[attr-defined]
    herder.put_task_configs = not_leader  # type: ignore[attr-defined]
    sent: list[tuple[str, str, bytes | None, dict[str, str]]] = []

    def forwarder(url: str, method: str, body: bytes | None, headers: Any) -> tuple[int, bytes, dict[str, str]]:
        sent.append((url, method, body, dict(headers)))
        return 204, b"", {}

    app = install_internal_routes(RestApp.for_herder(herder, forwarder=forwarder))
    signed = {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: "c2ln",
        SIGNATURE_ALGORITHM_HEADER: "HmacSHA256",
        "X-Other": "dropped",
    }
    status, _, _ = call(app, "PUT", "/connectors/c1/fence", raw=b"", headers=signed)
    assert status == 204 and seen[0][0] == "c1"
    url, method, body, headers = sent[0]
    assert (url, method, body) == ("http://leader:8083/connectors/c1/fence?forward=true", "PUT", None)
    assert headers == {k: v for k, v in signed.items() if k != "X-Other"}
    status, _, _ = call(app, "POST", "/connectors/c1/tasks", raw=b"[]", headers=signed)
    assert status == 409 and len(sent) == 1
