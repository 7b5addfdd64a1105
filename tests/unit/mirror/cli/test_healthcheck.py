"""The image's HEALTHCHECK: which port a running mm2 command serves, and what counts as an answer."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_kafka import free_port
from mirror.cli.healthcheck import check, find_url, mm2_argv, probe_url

TINI_RUN = ["/usr/bin/tini", "--", "mm2", "run", "/etc/mm2/mm2.properties", "--metrics-port", "9464"]


def test_mm2_arguments_are_found_behind_tini_and_python() -> None:
    assert mm2_argv(TINI_RUN) == ["run", "/etc/mm2/mm2.properties", "--metrics-port", "9464"]
    assert mm2_argv(["/opt/mm2/venv/bin/python", "/opt/mm2/venv/bin/mm2", "demo"]) == ["demo"]
    assert mm2_argv(["python", "-m", "mirror.cli.healthcheck"]) is None


def test_run_with_metrics_port_probes_metrics() -> None:
    assert probe_url(["run", "x.properties", "--metrics-port", "9464"]) == "http://127.0.0.1:9464/metrics"
    assert probe_url(["--log-level", "DEBUG", "run", "--metrics-port=9500", "x"]) == "http://127.0.0.1:9500/metrics"


def test_run_with_internal_rest_probes_the_first_listener(tmp_path: Path) -> None:
    props = tmp_path / "mm2.properties"
    props.write_text("clusters = A, B\ndedicated.mode.enable.internal.rest = true\n")
    assert probe_url(["run", str(props)]) == "http://127.0.0.1:8083/"
    props.write_text("dedicated.mode.enable.internal.rest=true\nlisteners=https://0.0.0.0:8443, http://:8083\n")
    assert probe_url(["run", str(props), "--clusters", "B"]) == "https://127.0.0.1:8443/"


def test_run_that_serves_nothing_and_one_off_commands_are_not_probed(tmp_path: Path) -> None:
    props = tmp_path / "mm2.properties"
    props.write_text("clusters = A, B\n")
    assert probe_url(["run", str(props)]) is None
    assert probe_url(["demo", "--duration", "20"]) is None
    assert probe_url(["backfill", str(props), "--source", "A", "--target", "B"]) is None
    assert probe_url([]) is None


def test_connect_probes_the_worker_listener(tmp_path: Path) -> None:
    worker = tmp_path / "worker.properties"
    worker.write_text("bootstrap.servers = b:9092\nlisteners = http://127.0.0.1:18083\n")
    assert probe_url(["connect", "distributed", str(worker)]) == "http://127.0.0.1:18083/"


def test_the_first_serving_mm2_process_is_probed(tmp_path: Path) -> None:
    cmdlines = [["/sbin/init"], ["mm2", "demo"], TINI_RUN]
    assert find_url(cmdlines) == "http://127.0.0.1:9464/metrics"
    assert find_url([["/usr/bin/tini", "--", "mm2", "demo"]]) is None


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response({"/ok": 200, "/auth": 401}.get(self.path, 503))
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_any_answer_below_500_is_healthy(server: str) -> None:
    assert check(f"{server}/ok") is None
    assert check(f"{server}/auth") is None  # an authenticated REST API still serves


def test_server_errors_and_closed_ports_are_unhealthy(server: str) -> None:
    assert check(f"{server}/broken") == f"{server}/broken: HTTP 503"
    closed = f"http://127.0.0.1:{free_port()}/metrics"
    problem = check(closed, timeout=5.0)
    assert problem is not None and problem.startswith(closed)
