"""``python -m mirror connect standalone`` as a subprocess on an embedded broker."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster, free_port

pytestmark = pytest.mark.e2e

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"
REPO = Path(__file__).resolve().parents[2]
CONVERTERS = (
    "bootstrap.servers=127.0.0.1:1\n"
    "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
    "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
)


def mm2(*args: str, cwd: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "mirror", *args],
        cwd=cwd,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def run_to_end(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    proc = mm2(*args, cwd=cwd)
    out, err = proc.communicate(timeout=timeout)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def http(method: str, url: str, body: Any = None) -> tuple[int, Any]:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            payload = resp.read()
            return resp.status, (json.loads(payload) if payload else None)
    except urllib.error.HTTPError as e:
        payload = e.read()
        return e.code, (json.loads(payload) if payload else None)


def wait_running(base: str, name: str, proc: subprocess.Popen[str], timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"mm2 exited early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        try:
            status, last = http("GET", f"{base}/connectors/{name}/status")
        except OSError:
            status = 0
        if (
            status == 200
            and last["connector"]["state"] == "RUNNING"
            and last["tasks"]
            and all(t["state"] == "RUNNING" for t in last["tasks"])
        ):
            return dict(last)
        time.sleep(0.3)
    raise AssertionError(f"{name} not RUNNING in time: {last}")


@pytest.fixture
def worker_file(kafka_cluster: KafkaCluster, tmp_workdir: Path) -> Iterator[tuple[Path, int]]:
    port = free_port()
    path = tmp_workdir / "worker.properties"
    path.write_text(
        f"bootstrap.servers={kafka_cluster.bootstrap_servers}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={tmp_workdir / 'offsets'}\n"
        "offset.flush.interval.ms=1000\n"
        f"listeners=http://127.0.0.1:{port}\n"
    )
    yield path, port


def test_standalone_runs_connectors_from_files_and_rest_then_stops_on_sigterm(
    worker_file: tuple[Path, int],
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    worker, port = worker_file
    topic_a, topic_b = unique_name("cli-a"), unique_name("cli-b")
    kafka_cluster.create_topic(topic_a)
    kafka_cluster.create_topic(topic_b)
    (tmp_workdir / "a.txt").write_text("x\ny\n")
    (tmp_workdir / "b.txt").write_text("z\n")
    props_file = tmp_workdir / "a.properties"
    props_file.write_text(
        f"name=from-file\nconnector.class={FILE_SOURCE}\nfile={tmp_workdir / 'a.txt'}\ntopic={topic_a}\n"
    )
    proc = mm2("connect", "standalone", str(worker), str(props_file), cwd=tmp_workdir)
    try:
        base = f"http://127.0.0.1:{port}"
        wait_running(base, "from-file", proc)
        status, body = http(
            "POST",
            f"{base}/connectors",
            {
                "name": "from-rest",
                "config": {"connector.class": "FileStreamSource", "file": str(tmp_workdir / "b.txt"), "topic": topic_b},
            },
        )
        assert status == 201, body
        wait_running(base, "from-rest", proc)
        assert http("GET", f"{base}/connectors")[1] == ["from-file", "from-rest"]
        status, body = http("POST", f"{base}/connectors", {"name": "bad", "config": {"connector.class": "Nope"}})
        assert status >= 400 and body["error_code"] == status
        wait_running(base, "from-file", proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    with socket.socket() as s:  # the listener is gone (TIME_WAIT of client connections aside)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        s.listen()


@pytest.mark.parametrize(
    ("setup", "needle", "code"),
    [
        (lambda d: d / "missing.properties", "worker config file not found", 2),
        (lambda d: (d / "w.properties", d / "nope.json"), "connector config file not found", 2),
        (lambda d: (d / "w.properties", d / "noname.properties"), "missing the mandatory 'name'", 2),
        (lambda d: (d / "w.properties", d / "mismatch.json"), "doesn't match", 2),
        (lambda d: d / "badlisteners.properties", "listener", 2),
        (lambda d: d / "noconverters.properties", "key.converter", 2),
    ],
)
def test_user_mistakes_are_one_line_and_nonzero(
    tmp_workdir: Path,
    setup: Callable[[Path], Any],
    needle: str,
    code: int,
) -> None:
    (tmp_workdir / "w.properties").write_text(f"{CONVERTERS}listeners=http://127.0.0.1:0\n")
    (tmp_workdir / "noname.properties").write_text(f"connector.class={FILE_SOURCE}\n")
    (tmp_workdir / "mismatch.json").write_text(json.dumps({"name": "a", "config": {"name": "b"}}))
    (tmp_workdir / "badlisteners.properties").write_text(f"{CONVERTERS}listeners=localhost:8083\n")
    (tmp_workdir / "noconverters.properties").write_text("bootstrap.servers=127.0.0.1:1\n")
    target = setup(tmp_workdir)
    args = [str(p) for p in (target if isinstance(target, tuple) else (target,))]
    result = run_to_end("connect", "standalone", *args, cwd=tmp_workdir)
    assert result.returncode == code, result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.startswith("mm2:")]
    assert len(lines) == 1 and needle.lower() in lines[0].lower(), result.stderr
    assert "Traceback" not in result.stderr


def test_port_in_use_exits_3(tmp_workdir: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        worker = tmp_workdir / "w.properties"
        worker.write_text(f"{CONVERTERS}listeners=http://127.0.0.1:{s.getsockname()[1]}\n")
        result = run_to_end("connect", "standalone", str(worker), cwd=tmp_workdir)
    assert result.returncode == 3, result.stderr
    assert "Unable to bind REST listener" in result.stderr and "Traceback" not in result.stderr
