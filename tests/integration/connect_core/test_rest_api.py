"""The REST API over a real StandaloneHerder on a real broker: lifecycle, shapes, and bad input
that must not disturb a running connector."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster
from mirror.cli.connect_cmd import StandaloneWorker

pytestmark = pytest.mark.integration

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


class Client:
    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def __call__(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                payload = resp.read()
                return resp.status, (json.loads(payload) if payload else None)
        except urllib.error.HTTPError as e:
            payload = e.read()
            return e.code, (json.loads(payload) if payload else None)

    def wait_state(self, name: str, state: str, tasks: int = 1, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            status, last = self("GET", f"/connectors/{name}/status")
            if (
                status == 200
                and last["connector"]["state"] == state
                and len(last["tasks"]) == tasks
                and all(t["state"] == state for t in last["tasks"])
            ):
                return dict(last)
            time.sleep(0.2)
        raise AssertionError(f"{name} did not reach {state}: {last}")


@pytest.fixture
def worker(kafka_cluster: KafkaCluster, tmp_workdir: Path) -> Iterator[tuple[StandaloneWorker, Client]]:
    props = {
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_workdir / "offsets"),
        "offset.flush.interval.ms": "500",
        "listeners": "http://127.0.0.1:0",
    }
    w = StandaloneWorker(props)
    w.start()
    try:
        yield w, Client(w.rest.advertised_url())
    finally:
        w.stop()


def source_config(path: Path, topic: str) -> dict[str, str]:
    return {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(path), "topic": topic}


def test_lifecycle_over_rest(
    worker: tuple[StandaloneWorker, Client],
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    w, api = worker
    topic = unique_name("rest-lines")
    kafka_cluster.create_topic(topic)
    data = tmp_workdir / "in.txt"
    data.write_text("one\ntwo\nthree\n")

    status, root = api("GET", "/")
    assert status == 200 and set(root) == {"version", "commit", "kafka_cluster_id"}

    status, body = api("POST", "/connectors", {"name": "src", "config": source_config(data, topic)})
    assert status == 201, body
    assert body["name"] == "src" and body["type"] == "source" and body["config"]["name"] == "src"
    st = api.wait_state("src", "RUNNING")
    assert st["connector"]["worker_id"] == w.rest.worker_id()
    assert api("GET", "/connectors") == (200, ["src"])
    assert api("GET", "/connectors/src/tasks")[1][0]["id"] == {"connector": "src", "task": 0}

    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        got = [m.value() for msgs in kafka_cluster.read_all(topic).values() for m in msgs]
        if len(got) >= 3:
            break
        time.sleep(0.3)
    assert got == [b"one", b"two", b"three"]

    assert api("PUT", "/connectors/src/pause") == (202, None)
    api.wait_state("src", "PAUSED")
    assert api("PUT", "/connectors/src/resume") == (202, None)
    api.wait_state("src", "RUNNING")
    assert api("POST", "/connectors/src/restart")[0] == 204
    status, body = api("POST", "/connectors/src/restart?includeTasks=true")
    assert status == 202 and body["name"] == "src"
    api.wait_state("src", "RUNNING")

    assert api("PUT", "/connectors/src/stop") == (204, None)
    api.wait_state("src", "STOPPED", tasks=0)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        status, offsets = api("GET", "/connectors/src/offsets")
        if offsets["offsets"]:
            break
        time.sleep(0.3)
    assert offsets == {"offsets": [{"partition": {"filename": str(data)}, "offset": {"position": 14}}]}
    status, body = api("DELETE", "/connectors/src/offsets")
    assert status == 200 and "reset" in body["message"]

    assert api("DELETE", "/connectors/src") == (204, None)
    assert api("GET", "/connectors/src")[0] == 404


def test_bad_input_leaves_running_connector_alone(
    worker: tuple[StandaloneWorker, Client],
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    _, api = worker
    topic = unique_name("rest-bad")
    kafka_cluster.create_topic(topic)
    data = tmp_workdir / "in.txt"
    data.write_text("a\n")
    cfg = source_config(data, topic)
    assert api("POST", "/connectors", {"name": "ok", "config": cfg})[0] == 201
    api.wait_state("ok", "RUNNING")

    status, body = api("POST", "/connectors", raw=b"{not json")
    assert status == 400 and body["error_code"] == 400 and body["message"]  # Java: 500
    status, body = api("POST", "/connectors", {"name": "x", "config": {**cfg, "connector.class": "NoSuchConnector"}})
    assert status == 500 and "NoSuchConnector" in body["message"]
    status, body = api("POST", "/connectors", {"name": "x", "config": {**cfg, "tasks.max": "zero"}})
    assert status == 400 and body["error_code"] == 400 and "Invalid value zero" in body["message"]
    status, body = api("PUT", "/connectors/ok/config", {**cfg, "name": "other"})
    assert status == 400 and body["error_code"] == 400
    status, body = api("POST", "/connectors", {"name": "ok", "config": cfg})
    assert status == 409
    assert api("GET", "/connectors/ghost/status")[0] == 404
    assert api("GET", "/no/such/path")[0] == 404
    status, body = api("PUT", "/connector-plugins/FileStreamSource/config/validate", {**cfg, "topic": ""})
    assert status == 200 and body["error_count"] >= 1

    st = api.wait_state("ok", "RUNNING")
    assert st["tasks"][0]["state"] == "RUNNING"
    assert api("GET", "/connectors") == (200, ["ok"])
    assert api("GET", "/connectors/ok/config")[1]["tasks.max"] == "1"
