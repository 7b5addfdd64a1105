"""The HTTP shell: listener parsing, binding, advertised URL, real requests over a socket."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.rest.resources import RestApp
from connect_core.rest.server import Listener, RestServer, RestServerConfig
from tests.unit.connect_core.rest.fake_herder import FakeHerder


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("http://:8083", Listener("http", "", 8083)),
        ("HTTP://localhost:0", Listener("http", "localhost", 0)),
        ("http://[::1]:9000", Listener("http", "::1", 9000)),
        ("http://10.0.0.1:80", Listener("http", "10.0.0.1", 80)),
        ("https://:8443", Listener("https", "", 8443)),
    ],
)
def test_listener_parse(text: str, expected: Listener) -> None:
    assert Listener.parse(text) == expected


@pytest.mark.parametrize("text", ["localhost:8083", "http://host", "ftp://:21", "http://:99999"])
def test_listener_parse_rejects(text: str) -> None:
    with pytest.raises(ConfigError) as e:
        Listener.parse(text)
    assert e.value.issues[0].key == "listeners"


def test_config_defaults_and_advertised_keys() -> None:
    cfg = RestServerConfig.from_props({})
    assert cfg.listeners == (Listener("http", "", 8083),)
    cfg = RestServerConfig.from_props(
        {
            "listeners": "http://127.0.0.1:0, http://127.0.0.1:0",
            "rest.advertised.host.name": "me",
            "rest.advertised.port": "1234",
        }
    )
    assert len(cfg.listeners) == 2 and (cfg.advertised_host, cfg.advertised_port) == ("me", 1234)
    with pytest.raises(ConfigError):
        RestServerConfig.from_props({"rest.advertised.port": "x"})


@pytest.fixture
def server() -> Iterator[RestServer]:
    srv = RestServer.from_props({"listeners": "http://127.0.0.1:0"})
    srv.start()
    try:
        yield srv
    finally:
        srv.stop()


def request(
    port: int, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
) -> tuple[int, Any, dict[str, str]]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
        conn.request(method, path, body=data, headers=headers or {"Content-Type": "application/json"})
        resp = conn.getresponse()
        raw = resp.read()
        return resp.status, (json.loads(raw) if raw else None), dict(resp.getheaders())
    finally:
        conn.close()


def test_ephemeral_port_and_advertised_url(server: RestServer) -> None:
    port = server.bound_port()
    assert port > 0
    assert server.advertised_url() == f"http://127.0.0.1:{port}/"
    assert server.worker_id() == f"127.0.0.1:{port}"


def test_advertised_overrides() -> None:
    srv = RestServer.from_props(
        {
            "listeners": "http://127.0.0.1:0",
            "rest.advertised.host.name": "public.example",
            "rest.advertised.port": "443",
        }
    )
    srv.start()
    try:
        assert srv.advertised_url() == "http://public.example:443/"
    finally:
        srv.stop()


def test_503_until_attached_then_serves(server: RestServer) -> None:
    port = server.bound_port()
    status, body, _ = request(port, "GET", "/connectors")
    assert (status, body) == (503, {"error_code": 503, "message": "Worker is still starting up."})
    server.attach(RestApp.for_herder(FakeHerder()))
    assert request(port, "GET", "/connectors")[:2] == (200, [])


def test_full_round_trip_over_http(server: RestServer) -> None:
    herder = FakeHerder()
    server.attach(RestApp.for_herder(herder))
    port = server.bound_port()
    status, body, headers = request(
        port, "POST", "/connectors", {"name": "c1", "config": {"connector.class": "FileStreamSource"}}
    )
    assert status == 201 and body["name"] == "c1"
    assert headers["Location"] == f"http://127.0.0.1:{port}/connectors/c1"
    assert headers["Content-Type"] == "application/json"
    status, body, headers = request(port, "PUT", "/connectors/c1/pause")
    assert (status, body, headers["Content-Length"]) == (202, None, "0")
    status, body, _ = request(port, "DELETE", "/connectors/c1")
    assert (status, body) == (204, None)
    status, body, _ = request(port, "POST", "/connectors", b"{garbage")
    assert status == 400 and body["error_code"] == 400 and "Malformed JSON" in body["message"]  # Java: 500
    assert request(port, "GET", "/bogus")[:2] == (404, {"error_code": 404, "message": "HTTP 404 Not Found"})
    assert request(port, "OPTIONS", "/connectors")[0] == 405
    # keep-alive: two requests on one connection
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        for _ in range(2):
            conn.request("GET", "/")
            resp = conn.getresponse()
            assert resp.status == 200 and json.loads(resp.read())["kafka_cluster_id"] == "cluster-xyz"
    finally:
        conn.close()


def test_port_in_use_is_one_clear_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        srv = RestServer.from_props({"listeners": f"http://127.0.0.1:{port}"})
        with pytest.raises(ConnectError) as e:
            srv.start()
        assert f"http://127.0.0.1:{port}" in str(e.value)


def test_chunked_request_body(server: RestServer) -> None:
    server.attach(RestApp.for_herder(FakeHerder()))
    port = server.bound_port()
    body = json.dumps({"name": "c", "config": {"connector.class": "FileStreamSource"}}).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request(
            "POST",
            "/connectors",
            body=iter([body[:10], body[10:]]),
            headers={"Content-Type": "application/json"},
            encode_chunked=True,
        )
        resp = conn.getresponse()
        assert resp.status == 201 and json.loads(resp.read())["name"] == "c"
        conn.request("GET", "/connectors")  # the connection is still in sync
        resp = conn.getresponse()
        assert json.loads(resp.read()) == ["c"]
    finally:
        conn.close()


class SlowStatusHerder(FakeHerder):
    """connector_status blocks until released: a herder call stuck behind a rebalance."""

    def __init__(self) -> None:
        super().__init__()
        self.entered = threading.Event()
        self.release = threading.Event()

    def connector_status(self, name: str) -> Any:
        if name == "slow":
            self.entered.set()
            self.release.wait(30)
        return super().connector_status(name)


def test_a_slow_herder_call_does_not_hold_up_other_requests(server: RestServer) -> None:
    herder = SlowStatusHerder()
    server.attach(RestApp.for_herder(herder))
    port = server.bound_port()
    results: list[int] = []
    slow = threading.Thread(target=lambda: results.append(request(port, "GET", "/connectors/slow/status")[0]))
    slow.start()
    try:
        assert herder.entered.wait(10)
        for _ in range(5):  # served while the slow call still blocks its thread
            assert request(port, "GET", "/connectors")[:2] == (200, [])
        assert not results
    finally:
        herder.release.set()
        slow.join(10)
    assert results == [404]


def test_stop_leaves_no_thread_or_socket_and_frees_the_port(monkeypatch: pytest.MonkeyPatch) -> None:
    # A graceful shutdown of 60 s: a stop() that waited for the idle connection to go away would take
    # that long, one that closes it takes well under a second (30 s is generous for a loaded machine).
    monkeypatch.setattr("connect_core.rest.server.STOP_TIMEOUT_S", 120.0)
    before = set(threading.enumerate())
    for _ in range(3):
        srv = RestServer.from_props({"listeners": "http://127.0.0.1:0,http://127.0.0.1:0"})
        srv.start()
        srv.attach(RestApp.for_herder(FakeHerder()))
        ports = [srv.bound_port(0), srv.bound_port(1)]
        conn = http.client.HTTPConnection("127.0.0.1", ports[0], timeout=10)
        conn.request("GET", "/connectors")  # an idle keep-alive connection stays open across stop()
        assert conn.getresponse().read() == b"[]"
        started = time.monotonic()
        srv.stop()
        assert time.monotonic() - started < 30
        conn.close()
        for port in ports:  # the exact port can be bound again right away
            with socket.socket() as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(("127.0.0.1", port))
    deadline = time.monotonic() + 10
    while set(threading.enumerate()) - before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not set(threading.enumerate()) - before


def test_start_stop_twice_and_stop_before_start() -> None:
    srv = RestServer.from_props({"listeners": "http://127.0.0.1:0"})
    srv.stop()  # never started: nothing to do
    srv.start()
    srv.stop()
    srv.start()
    srv.attach(RestApp.for_herder(FakeHerder()))
    try:
        assert request(srv.bound_port(), "GET", "/connectors")[:2] == (200, [])
    finally:
        srv.stop()
    with pytest.raises(ConnectError):
        srv.advertised_url()
