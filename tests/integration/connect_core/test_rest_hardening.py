"""Malformed input never crashes or hangs the REST server and never earns a 5xx: schemathesis fuzzes the
API from its own OpenAPI document, then oversized bodies, stalled clients and invalid UTF-8.

Everything here is plain HTTP against a live standalone worker on an embedded broker, so it holds for
whatever HTTP server is behind the REST API.
"""

from __future__ import annotations

import http.client
import json
import os
import select
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from embedded_kafka import KafkaCluster
from mirror.cli.connect_cmd import StandaloneWorker
from tests.integration.connect_core import test_rest_api as rest_api

pytestmark = pytest.mark.integration

worker = rest_api.worker  # the live standalone worker on an embedded broker, reused
Client = rest_api.Client

ROOT = Path(__file__).resolve().parents[3]
# Per operation and phase, and a fixed seed, for a bounded reproducible CI run; set the variables to explore.
FUZZ_EXAMPLES = int(os.environ.get("MM2_REST_FUZZ_EXAMPLES", "25"))
FUZZ_SEED = os.environ.get("MM2_REST_FUZZ_SEED", "20261124")
PLUGINS = [
    "FileStreamSource",
    "org.apache.kafka.connect.file.FileStreamSourceConnector",
    "StringConverter",
    "RegexRouter",
]
FUZZ_CHECKS = ",".join(
    [
        "no_server_error",  # ours (schemathesis_hooks.py): any 5xx but Java's documented unknown-class 500
        "response_schema_conformance",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "unsupported_method",
    ]
)


def address(api: Client) -> tuple[str, int]:
    split = urlsplit(api.base)
    assert split.hostname and split.port
    return split.hostname, split.port


def answers(api: Client, timeout: float = 10.0) -> int:
    """Status of GET / on a fresh connection, bounded by ``timeout``."""
    host, port = address(api)
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/")
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def raw_request(api: Client, data: bytes, timeout: float = 10.0) -> tuple[int, bytes]:
    """Send ``data`` as is (request line, headers, body) and read the one answer."""
    with socket.create_connection(address(api), timeout=timeout) as sock:
        sock.sendall(data)
        resp = http.client.HTTPResponse(sock)
        resp.begin()
        return resp.status, resp.read()


def error_body(status: int, payload: bytes) -> str:
    body = json.loads(payload)
    assert isinstance(body, dict) and set(body) == {"error_code", "message"} and body["error_code"] == status, body
    return str(body["message"])


# --------------------------------------------------------------------------------------------- fuzzing


@pytest.fixture
def connectors(
    worker: tuple[StandaloneWorker, Client],
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> list[str]:
    """Two connectors for the fuzzer to hit beside random names: one running, one stopped."""
    _, api = worker
    topic = kafka_cluster.create_topic(unique_name("fuzz"))
    data = tmp_workdir / "fuzz.txt"
    data.write_text("line\n")
    cfg = rest_api.source_config(data, topic)
    assert api("POST", "/connectors", {"name": "fz-running", "config": cfg})[0] == 201
    assert api("POST", "/connectors", {"name": "fz-stopped", "config": cfg, "initial_state": "STOPPED"})[0] == 201
    api.wait_state("fz-running", "RUNNING")
    return ["fz-running", "fz-stopped"]


def test_schemathesis_finds_no_server_error(
    worker: tuple[StandaloneWorker, Client],
    connectors: list[str],
    tmp_path: Path,
) -> None:
    _, api = worker
    config = tmp_path / "schemathesis.toml"
    config.write_text(
        f"[dictionaries.connectors]\nvalues = {json.dumps(connectors)}\n\n"
        f"[dictionaries.plugins]\nvalues = {json.dumps(PLUGINS)}\n\n"
        "[parameters]\n"
        '"path.connector" = { dictionary = "connectors", probability = 0.5 }\n'
        '"path.plugin" = { dictionary = "plugins", probability = 0.5 }\n'
    )
    report = tmp_path / "report.json"
    env = {
        **os.environ,
        "SCHEMATHESIS_HOOKS": "tests.integration.connect_core.schemathesis_hooks",
        "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p),
    }
    cmd = [
        sys.executable,
        "-c",
        "from schemathesis.cli import schemathesis; schemathesis()",
        "--no-color",
        "--config-file",
        str(config),
        "run",
        f"{api.base}/openapi.json",
        "--phases",
        "examples,coverage,fuzzing",
        "--max-examples",
        str(FUZZ_EXAMPLES),
        "--seed",
        FUZZ_SEED,
        "--workers",
        "1",
        "--request-timeout",
        "10",
        "--checks",
        FUZZ_CHECKS,
        "--report",
        "json",
        "--report-json-path",
        str(report),
    ]
    started = time.monotonic()
    run = subprocess.run(
        cmd, env=env, cwd=str(tmp_path), capture_output=True, text=True, timeout=max(120, FUZZ_EXAMPLES * 5)
    )
    elapsed = time.monotonic() - started
    assert report.exists(), run.stdout[-4000:] + run.stderr[-4000:]
    result = json.loads(report.read_text())
    cases = result["test_cases"]
    print(
        f"schemathesis: {cases['generated']} test cases over {result['operations']['tested']} operations "
        f"in {elapsed:.1f} s (seed {FUZZ_SEED})"
    )
    assert run.returncode == 0 and not result["failures"], run.stdout[-6000:]
    assert result["operations"]["tested"] == result["operations"]["total"] >= 26
    assert cases["generated"] >= 100 and cases["errored"] == 0
    assert answers(api) == 200  # still serving after the storm
    status, body = api("GET", "/connectors/fz-running/status")
    assert status in (200, 404) and (status == 404 or body["name"] == "fz-running")


# --------------------------------------------------------------------------------------------- oversized

_HUGE = 4 * 1024**3  # declared body length: beyond any sane limit
_FEED_CAP = 512 * 1024**2  # a server that swallows this much without answering has no limit


def answer_to_oversized(api: Client, head: bytes, chunk: bytes, deadline_s: float = 60.0) -> tuple[int, bytes]:
    """Send ``head`` then feed ``chunk``s until the server answers; its answer.

    A server that checks the declared length answers before any body byte (no feeding at all); one
    that counts while reading answers once past its limit. Feeding stops at the first answer byte.
    """
    sock = socket.create_connection(address(api), timeout=10)
    try:
        sock.sendall(head)
        sock.setblocking(False)
        fed = 0
        deadline = time.monotonic() + deadline_s
        while True:
            assert time.monotonic() < deadline, f"no answer {deadline_s} s after the headers ({fed} bytes fed)"
            assert fed <= _FEED_CAP, f"the server read {fed} bytes of an oversized body without answering"
            readable, writable, _ = select.select([sock], [sock], [], 1.0 if fed == 0 else 0.5)
            if readable:
                break
            if fed == 0 and not writable:
                continue
            if writable:
                try:
                    fed += sock.send(chunk)
                except BlockingIOError:
                    continue
                except (BrokenPipeError, ConnectionResetError):
                    break  # it hung up on us: what it answered is already in our buffer, or nothing is
        sock.settimeout(10)
        resp = http.client.HTTPResponse(sock)
        resp.begin()
        return resp.status, resp.read()
    finally:
        sock.close()


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_oversized_body_is_refused_promptly_not_read(worker: tuple[StandaloneWorker, Client], framing: str) -> None:
    _, api = worker
    if framing == "content-length":
        head = (
            b"POST /connectors HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % _HUGE
        )
        chunk = b"0" * (1024 * 1024)
    else:
        head = (
            b"POST /connectors HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n%x\r\n" % _HUGE
        )
        chunk = b"0" * (1024 * 1024)
    status, payload = answer_to_oversized(api, head, chunk)
    assert status in (400, 413), (status, payload[:300])
    error_body(status, payload)
    assert answers(api) == 200


# --------------------------------------------------------------------------------------------- slow clients


@pytest.fixture
def stalled(worker: tuple[StandaloneWorker, Client]) -> Iterator[list[socket.socket]]:
    """Connections that stop mid-request and stay open: silent, mid-headers, mid-body."""
    _, api = worker
    socks: list[socket.socket] = []
    try:
        for i in range(24):
            s = socket.create_connection(address(api), timeout=10)
            socks.append(s)
            if i % 3 == 1:
                s.sendall(b"GET /connectors HTTP/1.1\r\nHost: t\r\nX-Slow: ")
            elif i % 3 == 2:
                s.sendall(
                    b"POST /connectors HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                    b'Content-Length: 1000\r\n\r\n{"name": '
                )
        yield socks
    finally:
        for s in socks:
            s.close()


def test_stalled_clients_do_not_block_others(
    worker: tuple[StandaloneWorker, Client], stalled: list[socket.socket]
) -> None:
    _, api = worker
    # A server that the stalled connections blocked would answer only once they are dropped (the 30 s idle
    # timeout at the earliest): each answer within 20 s, generous for a loaded machine, says they did not.
    slowest = 0.0
    for _ in range(10):
        started = time.monotonic()
        assert answers(api, timeout=20) == 200
        slowest = max(slowest, time.monotonic() - started)
    status, _ = api(
        "PUT",
        "/connector-plugins/FileStreamSource/config/validate",
        {"connector.class": "FileStreamSource", "topic": "t"},
    )
    assert status == 200
    assert slowest < 20.0, f"a request took {slowest:.1f} s beside {len(stalled)} stalled connections"
    for s in stalled:  # they hang up; the server is none the worse
        s.close()
    assert answers(api) == 200


# --------------------------------------------------------------------------------------------- invalid UTF-8


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/connectors", b'{"name": "\xff", "config": {"connector.class": "FileStreamSource"}}'),
        ("PUT", "/connectors/x/config", b'{"connector.class": "\xc3\x28"}'),
        ("PATCH", "/connectors/x/config", b"\xfe\xff"),
        ("PUT", "/connector-plugins/FileStreamSource/config/validate", b'{"topic": "\xed\xa0\x80"}'),
        ("GET", "/connectors/%FF/status", b""),
        ("DELETE", "/connectors/%C3%28", b""),
        ("GET", "/connectors/x/tasks/%FE/status", b""),
    ],
)
def test_invalid_utf8_body_or_path_is_400(
    worker: tuple[StandaloneWorker, Client], method: str, path: str, body: bytes
) -> None:
    _, api = worker
    head = f"{method} {path} HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
    status, payload = raw_request(api, head.encode() + b"Content-Length: %d\r\n\r\n" % len(body) + body)
    assert status == 400, payload[:300]
    assert "UTF-8" in error_body(400, payload)


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GET /connectors/\xff\xfe/status HTTP/1.1\r\nHost: t\r\n\r\n",  # raw bytes in the request target
        b"GET /connectors?expand=%FF HTTP/1.1\r\nHost: t\r\n\r\n",
        b"GET / HTTP/1.1\r\nHost: t\r\nX-Odd: \xff\xfe\r\n\r\n",
    ],
)
def test_invalid_bytes_elsewhere_are_never_a_server_error(
    worker: tuple[StandaloneWorker, Client], request_bytes: bytes
) -> None:
    _, api = worker
    status, _ = raw_request(api, request_bytes)
    assert status < 500
    assert answers(api) == 200
