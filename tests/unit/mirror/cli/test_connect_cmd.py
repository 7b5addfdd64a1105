"""``mm2 connect standalone``: connector-file parsing and the start/create/stop sequence (fake herder)."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from connect_core.model import TargetState
from mirror.cli.connect_cmd import StandaloneWorker, parse_connector_file
from mirror.cli.errors import StartupError, UsageError
from tests.unit.connect_core.rest.fake_herder import FakeHerder


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_flat_json(tmp_path: Path) -> None:
    p = write(tmp_path, "c.json", json.dumps({"name": "a", "connector.class": "X", "tasks.max": 2}))
    req = parse_connector_file(p)
    assert (req.name, req.config, req.initial_state) == (
        "a",
        {"name": "a", "connector.class": "X", "tasks.max": "2"},
        None,
    )


def test_create_request_json(tmp_path: Path) -> None:
    p = write(
        tmp_path,
        "c.json",
        json.dumps({"name": "a", "config": {"connector.class": "X"}, "initial_state": "PAUSED", "ignored": 1}),
    )
    req = parse_connector_file(p)
    assert req.config == {"connector.class": "X", "name": "a"} and req.initial_state is TargetState.PAUSED


def test_create_request_name_mismatch(tmp_path: Path) -> None:
    p = write(tmp_path, "c.json", json.dumps({"name": "a", "config": {"name": "b", "connector.class": "X"}}))
    with pytest.raises(UsageError, match="doesn't match"):
        parse_connector_file(p)


def test_properties_file(tmp_path: Path) -> None:
    p = write(tmp_path, "c.properties", "name=a\nconnector.class=X\n# comment\ntasks.max = 3\n")
    assert parse_connector_file(p).config == {"name": "a", "connector.class": "X", "tasks.max": "3"}


@pytest.mark.parametrize(
    ("name", "text", "needle"),
    [
        ("c.json", json.dumps({"connector.class": "X"}), "missing the mandatory 'name'"),
        ("c.properties", "connector.class=X\n", "missing the mandatory 'name'"),
        ("c.json", json.dumps({"config": {"connector.class": "X"}}), "missing the mandatory 'name'"),
        ("c.json", json.dumps({"name": "a", "config": {"k": "v"}, "initial_state": "NAP"}), "not valid"),
        ("c.json", "[1, 2]", "must be a JSON object"),
    ],
)
def test_bad_connector_files(tmp_path: Path, name: str, text: str, needle: str) -> None:
    p = write(tmp_path, name, text)
    with pytest.raises(UsageError, match=needle):
        parse_connector_file(p)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not found"):
        parse_connector_file(tmp_path / "nope.json")


class StartStopFake(FakeHerder):
    def __init__(self) -> None:
        super().__init__()
        self.events: list[str] = []

    def start(self) -> None:
        self.events.append("start")

    def stop(self) -> None:
        self.events.append("stop")


def test_worker_start_create_stop(tmp_path: Path) -> None:
    built: list[str] = []
    herder = StartStopFake()

    def builder(props: dict[str, str], worker_id: str) -> Any:
        built.append(worker_id)
        return herder

    worker = StandaloneWorker({"listeners": "http://127.0.0.1:0"}, builder)
    worker.start()
    try:
        port = worker.rest.bound_port()
        assert built == [f"127.0.0.1:{port}"]  # Java's standalone worker id: the advertised host:port
        assert worker.rest.advertised_url() == f"http://127.0.0.1:{port}/"
        good = write(tmp_path, "c.properties", "name=a\nconnector.class=FileStreamSource\n")
        worker.create(parse_connector_file(good))
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/connectors/a/status", timeout=10) as resp:
            assert json.loads(resp.read())["connector"]["state"] == "RUNNING"
        with pytest.raises(StartupError, match=r"Failed to create connector for .*bad\.properties"):
            worker.create(parse_connector_file(write(tmp_path, "bad.properties", "name=b\nconnector.class=Nope\n")))
    finally:
        worker.stop()
    assert herder.events == ["start", "stop"]


def test_port_taken_is_startup_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        worker = StandaloneWorker({"listeners": f"http://127.0.0.1:{s.getsockname()[1]}"}, lambda *a: StartStopFake())
        with pytest.raises(StartupError, match="Unable to bind REST listener"):
            worker.start()


def test_herder_start_failure_releases_the_port() -> None:
    class Broken(StartStopFake):
        def start(self) -> None:
            raise RuntimeError("no broker")

    worker = StandaloneWorker({"listeners": "http://127.0.0.1:0"}, lambda *a: Broken())
    with pytest.raises(RuntimeError):
        worker.start()
    assert worker.rest._servers == []


def test_unreachable_cluster_on_start_is_startup_error() -> None:
    from connect_core.api.errors import ConnectError

    class Unreachable(StartStopFake):
        def start(self) -> None:
            raise ConnectError("Failed to connect to and describe Kafka cluster")

    worker = StandaloneWorker({"listeners": "http://127.0.0.1:0"}, lambda *a: Unreachable())
    with pytest.raises(StartupError, match="describe Kafka cluster"):
        worker.start()
    assert worker.rest._servers == []
