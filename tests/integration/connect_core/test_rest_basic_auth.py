"""Basic auth on a real server, configured as Java's BasicAuthSecurityRestExtension: every public
endpoint answers 401 with Connect's error body without the right credentials; the internal
worker-to-worker endpoints stay reachable (their session-key signature is checked by the herder)."""

from __future__ import annotations

import base64
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from connect_core.rest.auth import BASIC_AUTH_EXTENSION, AuthRequest
from connect_core.rest.internal_endpoints import install_internal_routes
from connect_core.rest.resources import RestApp, build_router
from connect_core.rest.routes import HerderSelector
from connect_core.rest.server import RestServer
from tests.integration.connect_core.rest_tls_helpers import https_request, json_request, make_pki
from tests.unit.connect_core.rest.fake_herder import FakeHerder

UNAUTHORIZED = {"error_code": 401, "message": "User cannot access the resource."}
SOURCE = {"connector.class": "FileStreamSource"}


class InternalFakeHerder(FakeHerder):
    """FakeHerder plus the distributed herder's internal endpoints."""

    def put_task_configs(self, name: str, configs: list[dict[str, str]], signature: Any) -> None:
        self.calls.append(("put_task_configs", name))

    def fence_zombies(self, name: str, signature: Any) -> None:
        self.calls.append(("fence_zombies", name))


def basic(user: str, password: str) -> dict[str, str]:
    return {"Authorization": "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()}


def request(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, dict[str, str]]:
    return json_request(port, method, path, None, body, headers)


def write_jaas(tmp_path: Path, credentials: str) -> Path:
    creds = tmp_path / "credentials.properties"
    creds.write_text(credentials)
    jaas = tmp_path / "connect_jaas.conf"
    jaas.write_text(
        "// the file Java reads through -Djava.security.auth.login.config\n"
        "KafkaConnect {\n"
        "  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required\n"
        f'  file="{creds}";\n'
        "};\n"
    )
    return jaas


def serve(servers: list[RestServer], props: dict[str, str], depth: int = 0) -> tuple[RestServer, FakeHerder]:
    srv = RestServer.from_props({"listeners": "http://127.0.0.1:0", **props})
    srv.start()
    servers.append(srv)
    herder = InternalFakeHerder()
    selector: HerderSelector[Any] = HerderSelector(depth, {("A", "B")[:depth]: herder})
    srv.attach(install_internal_routes(RestApp(selector, forwarder=srv.rest_client().forward)))
    return srv, herder


def concrete(template: str) -> str:
    values = {"connector": "c1", "task:int": "0", "plugin": "FileStreamSource"}
    return re.sub(r"\{([^}]+)\}", lambda m: values[m.group(1)], template)


PUBLIC_ROUTES = [(r.method, r.template) for r in build_router().routes]


def test_every_public_endpoint_needs_the_right_credentials(
    tmp_path: Path, servers: list[RestServer], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    jaas = write_jaas(tmp_path, "alice=wonder-land\nbob=builder\n")
    srv, herder = serve(
        servers, {"rest.extension.classes": BASIC_AUTH_EXTENSION, "java.security.auth.login.config": str(jaas)}
    )
    port = srv.bound_port()
    created = request(port, "POST", "/connectors", {"name": "c1", "config": SOURCE}, basic("alice", "wonder-land"))
    assert created[0] == 201
    assert len(PUBLIC_ROUTES) >= 25
    for method, template in PUBLIC_ROUTES:
        path = concrete(template)
        body = {} if method in ("POST", "PUT", "PATCH") else None
        for headers in (
            {},
            basic("alice", "wrong"),
            basic("mallory", "wonder-land"),
            basic("alice", ""),
            {"Authorization": "Bearer abc"},
            {"Authorization": "Basic !!!"},
        ):
            status, answer, resp_headers = request(port, method, path, body, headers)
            assert (status, answer) == (401, UNAUTHORIZED), (method, path, headers)
            assert resp_headers["Content-Type"] == "application/json"
            assert resp_headers["WWW-Authenticate"].startswith("Basic ")
        status, answer, _ = request(port, method, path, body, basic("bob", "builder"))
        assert status != 401, (method, path, answer)
    # unknown paths too: nothing is told before authentication
    assert request(port, "GET", "/nope")[:2] == (401, UNAUTHORIZED)
    assert request(port, "GET", "/nope", headers=basic("bob", "builder"))[0] == 404
    assert ("put_task_configs", "c1") not in herder.calls
    assert not [r for r in caplog.records if "wonder-land" in r.getMessage() or "builder" in r.getMessage()]


def test_internal_endpoints_skip_basic_auth_as_in_java(tmp_path: Path, servers: list[RestServer]) -> None:
    creds = tmp_path / "users.properties"
    creds.write_text("alice=wonder-land\n")
    srv, herder = serve(servers, {"rest.basic.auth.credentials.file": str(creds)}, depth=2)
    port = srv.bound_port()
    assert request(port, "POST", "/A/B/connectors/c1/tasks", [{"k": "v"}])[0] == 204
    assert request(port, "PUT", "/A/B/connectors/c1/fence")[0] == 204
    assert ("put_task_configs", "c1") in herder.calls and ("fence_zombies", "c1") in herder.calls
    # the public GET on the same path, and everything else, still need credentials
    assert request(port, "GET", "/A/B/connectors/c1/tasks")[:2] == (401, UNAUTHORIZED)
    assert request(port, "GET", "/A/B/connectors")[:2] == (401, UNAUTHORIZED)
    assert request(port, "GET", "/A/B/connectors", headers=basic("alice", "wonder-land"))[:2] == (200, [])


def test_forwarding_to_the_leader_carries_the_authorization(tmp_path: Path, servers: list[RestServer]) -> None:
    jaas = write_jaas(tmp_path, "alice=wonder-land\n")
    auth = {"rest.extension.classes": BASIC_AUTH_EXTENSION, "java.security.auth.login.config": str(jaas)}
    leader, leader_herder = serve(servers, auth)
    follower, follower_herder = serve(servers, auth)
    follower_herder.leader_url = leader.advertised_url()
    status, body, _ = request(
        follower.bound_port(), "POST", "/connectors", {"name": "f", "config": SOURCE}, basic("alice", "wonder-land")
    )
    assert (status, body["name"]) == (201, "f")
    assert "f" in leader_herder.configs and "f" not in follower_herder.configs


def test_https_with_basic_auth(tmp_path: Path, servers: list[RestServer]) -> None:
    pki = make_pki(tmp_path)
    creds = tmp_path / "users.properties"
    creds.write_text("alice=wonder-land\n")
    srv, _ = serve(servers, {**pki.server_props(), "rest.basic.auth.credentials.file": str(creds)})
    port = srv.bound_port()
    assert https_request(port, "GET", "/connectors", pki.client_context())[:2] == (401, UNAUTHORIZED)
    ok = https_request(port, "GET", "/connectors", pki.client_context(), headers=basic("alice", "wonder-land"))
    assert ok[:2] == (200, [])


class OnlyHeaderToken:
    """A plug-in authenticator (rest.authenticator.class): a shared token in a header."""

    def __init__(self, props: dict[str, str]) -> None:
        self.token = props["test.token"]

    def authenticate(self, request: AuthRequest) -> bool:
        return request.header("X-Token") == self.token


def test_pluggable_authenticator(servers: list[RestServer]) -> None:
    srv, _ = serve(servers, {"rest.authenticator.class": f"{__name__}.OnlyHeaderToken", "test.token": "t0k"})
    port = srv.bound_port()
    assert request(port, "GET", "/connectors")[:2] == (401, UNAUTHORIZED)
    assert request(port, "GET", "/connectors", headers={"X-Token": "nope"})[0] == 401
    assert request(port, "GET", "/connectors", headers={"X-Token": "t0k"})[:2] == (200, [])


def test_empty_credentials_file_lets_everyone_in_as_java(
    tmp_path: Path, servers: list[RestServer], caplog: pytest.LogCaptureFixture
) -> None:
    creds = tmp_path / "empty.properties"
    creds.write_text("# nobody\n")
    srv, _ = serve(servers, {"rest.basic.auth.credentials.file": str(creds)})
    assert request(srv.bound_port(), "GET", "/connectors")[:2] == (200, [])
    assert any("is empty" in r.getMessage() for r in caplog.records)
