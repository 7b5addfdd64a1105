"""The Connect REST API against Java Connect's behaviour, over a real socket and broker.

Each test drives ``mm2 connect standalone``'s in-process worker through HTTP only and checks
status codes, bodies and what actually happened (records on the topic, committed offsets, which
connector and task instances were restarted), as Java's ``ConnectorsResource`` / ``StandaloneHerder``
do it: pause/resume/stop, KIP-745 restarts (includeTasks, onlyFailed), KIP-875 offsets
(GET/PATCH/DELETE only while STOPPED), delete, and bad input that must not disturb a running connector.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster
from embedded_kafka.tail import TopicTail
from mirror.cli.connect_cmd import StandaloneWorker
from tests.gated_plugins import GATED, TaskGate

pytestmark = pytest.mark.integration

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
STOPPED_MESSAGE = (
    "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
    "specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
)


class Api:
    """A tiny HTTP client that returns (status, parsed body, headers)."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")

    def call(self, method: str, path: str, body: Any = None, raw: bytes | None = None
             ) -> tuple[int, Any, dict[str, str]]:  # fmt: skip
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})  # fmt: skip
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                payload = resp.read()
                return resp.status, (json.loads(payload) if payload else None), dict(resp.headers)
        except urllib.error.HTTPError as e:
            payload = e.read()
            return e.code, (json.loads(payload) if payload else None), dict(e.headers)

    def __call__(self, method: str, path: str, body: Any = None, raw: bytes | None = None) -> tuple[int, Any]:
        status, parsed, _ = self.call(method, path, body, raw)
        return status, parsed

    def status(self, name: str) -> dict[str, Any]:
        code, body = self("GET", f"/connectors/{name}/status")
        assert code == 200, body
        return dict(body)

    def wait_states(self, name: str, connector: str, tasks: list[str], timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            code, last = self("GET", f"/connectors/{name}/status")
            if (
                code == 200
                and last["connector"]["state"] == connector
                and [t["state"] for t in sorted(last["tasks"], key=lambda t: t["id"])] == tasks
            ):
                return dict(last)
            time.sleep(0.1)
        raise AssertionError(f"{name} did not reach {connector}/{tasks}: {last}")


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def end_of(kafka_cluster: KafkaCluster) -> Iterator[Callable[[str], int]]:
    """Partition 0's end offset of a topic now, through one consumer per topic for the whole test: the waits
    poll it every tenth of a second, and a new admin client and consumer per poll cost more CPU than the
    connector under test."""
    tails: dict[str, TopicTail] = {}

    def end(topic: str) -> int:
        tail = tails.get(topic)
        if tail is None:
            tail = tails[topic] = kafka_cluster.tail(topic, from_end=True)
        return tail.end_offsets()[0]

    yield end
    for tail in tails.values():
        tail.close()


@pytest.fixture
def rest(kafka_cluster: KafkaCluster, tmp_workdir: Path) -> Iterator[tuple[StandaloneWorker, Api]]:
    TaskGate.reset()
    props = {
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "offset.storage.file.filename": str(tmp_workdir / "offsets"),
        "offset.flush.interval.ms": "300",
        "listeners": "http://127.0.0.1:0",
    }
    w = StandaloneWorker(props)
    w.start()
    try:
        yield w, Api(w.rest.advertised_url())
    finally:
        w.stop()
        TaskGate.reset()


def gated(topic: str, **extra: str) -> dict[str, str]:
    """A slow endless stream (about 20 records/s per task) so states can be observed."""
    return {"connector.class": GATED, "topic": topic, "records": "1000000", "batch": "1", "poll.delay": "0.05",
            "tasks.max": "1", "source.partitions": "1", **extra}  # fmt: skip


def keys_on(cluster: KafkaCluster, topic: str) -> Counter[str]:
    return Counter((m.key() or b"").decode() for msgs in cluster.read_all(topic).values() for m in msgs)


def max_n(keys: Counter[str], p: int = 0) -> int:
    return max((int(k.split("-")[1]) for k in keys if k.startswith(f"k{p}-")), default=-1)


# --------------------------------------------------------------------------- shapes


def test_create_status_expand_tasks_and_topics_shapes(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    w, api = rest
    wid = w.rest.worker_id()
    topic = kafka_cluster.create_topic(unique_name("shapes"), partitions=2)
    status, body, headers = api.call(
        "POST", "/connectors", {"name": "g", "config": gated(topic, **{"tasks.max": "2", "source.partitions": "2"})}
    )
    assert status == 201, body
    assert set(body) == {"name", "config", "tasks", "type"} and body["type"] == "source"
    assert body["config"]["name"] == "g" and body["config"]["connector.class"] == GATED
    assert headers.get("Location", "").endswith("/connectors/g")
    api.wait_states("g", "RUNNING", ["RUNNING", "RUNNING"])

    st = api.status("g")
    assert st == {"name": "g", "type": "source",
                  "connector": {"state": "RUNNING", "worker_id": wid},
                  "tasks": [{"id": 0, "state": "RUNNING", "worker_id": wid},
                            {"id": 1, "state": "RUNNING", "worker_id": wid}]}  # fmt: skip
    assert api("GET", "/connectors/g/tasks/1/status") == (200, {"id": 1, "state": "RUNNING", "worker_id": wid})

    code, tasks = api("GET", "/connectors/g/tasks")
    assert code == 200 and [t["id"] for t in tasks] == [{"connector": "g", "task": 0}, {"connector": "g", "task": 1}]
    assert [t["config"]["partitions"] for t in tasks] == ["0", "1"]

    code, info = api("GET", "/connectors/g")
    assert code == 200 and info["tasks"] == [{"connector": "g", "task": 0}, {"connector": "g", "task": 1}]

    code, expanded = api("GET", "/connectors?expand=status")
    assert code == 200 and expanded == {"g": {"status": st}}
    code, expanded = api("GET", "/connectors?expand=info")
    assert code == 200 and expanded == {"g": {"info": info}}
    code, expanded = api("GET", "/connectors?expand=status&expand=info")
    assert code == 200 and expanded == {"g": {"status": st, "info": info}}

    wait_for(lambda: api("GET", "/connectors/g/topics") == (200, {"g": {"topics": [topic]}}), "active topics")
    assert api("PUT", "/connectors/g/stop") == (204, None)
    api.wait_states("g", "STOPPED", [])
    assert api("GET", "/connectors/g/tasks") == (200, [])
    assert api("PUT", "/connectors/g/topics/reset") == (202, None)
    assert api("GET", "/connectors/g/topics") == (200, {"g": {"topics": []}})


# --------------------------------------------------------------------------- pause / resume / stop / offsets


def test_pause_resume_stop_and_offsets_lifecycle(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
    end_of: Callable[[str], int],
) -> None:
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("life"))
    assert api("POST", "/connectors", {"name": "c", "config": gated(topic)})[0] == 201
    api.wait_states("c", "RUNNING", ["RUNNING"])

    # Offsets can be read while running, in Java's shape.
    def committed() -> int | None:
        code, body = api("GET", "/connectors/c/offsets")
        assert code == 200, body
        if not body["offsets"]:
            return None
        [entry] = body["offsets"]
        assert entry["partition"] == {"p": 0} and set(entry["offset"]) == {"n"}
        return int(entry["offset"]["n"])

    wait_for(lambda: (committed() or 0) > 5, "offsets committed while running")

    # ...but changed only while STOPPED: 400 with Java's message, for PATCH and DELETE.
    not_stopped = {"error_code": 400, "message": STOPPED_MESSAGE.format(name="c")}
    assert api("PATCH", "/connectors/c/offsets", {"offsets": [{"partition": {"p": 0}, "offset": {"n": 1}}]}) == (
        400,
        not_stopped,
    )
    assert api("DELETE", "/connectors/c/offsets") == (400, not_stopped)

    # Pause: tasks PAUSED and nothing more is produced; resume: records flow again.
    def end() -> int:
        return end_of(topic)

    # How long the running task needs for 10 records on this machine right now: the paused observation
    # window below is twice that (at least 1 s), so a task that kept running would be caught however
    # slow the machine is.
    before, t0 = end(), time.monotonic()
    wait_for(lambda: end() >= before + 10, "10 records from the running task")
    window = max(1.0, 2 * (time.monotonic() - t0))
    assert api("PUT", "/connectors/c/pause") == (202, None)
    api.wait_states("c", "PAUSED", ["PAUSED"])
    # Records handed over before the pause land and are committed (offsets are flushed while paused): then
    # the end offset is the committed position, whatever the machine's speed.
    wait_for(lambda: (c := committed()) is not None and end() == c + 1, "records sent before the pause committed")
    paused_at = end()
    time.sleep(window)  # the calibrated window of a negative check
    assert end() == paused_at, "records produced while PAUSED"
    assert api("PUT", "/connectors/c/resume") == (202, None)
    api.wait_states("c", "RUNNING", ["RUNNING"])
    wait_for(lambda: end_of(topic) > paused_at + 5, "records after resume")

    # Stop: no tasks, and every record the task produced has its offset committed at stop.
    assert api("PUT", "/connectors/c/stop") == (204, None)
    api.wait_states("c", "STOPPED", [])
    assert api("GET", "/connectors/c/tasks") == (200, [])
    keys = keys_on(kafka_cluster, topic)
    assert committed() == max_n(keys), "offsets not flushed at stop"

    # Bad alter requests: 400 (no offsets; connector rejects the offset), and nothing changes.
    assert api("PATCH", "/connectors/c/offsets", {})[0] == 400
    code, body = api("PATCH", "/connectors/c/offsets", {"offsets": []})
    assert code == 400 and body == {
        "error_code": 400,
        "message": "Partitions / offsets need to be provided for an alter offsets request",
    }
    code, body = api("PATCH", "/connectors/c/offsets", {"offsets": [{"partition": {"p": 0}, "offset": {"x": 1}}]})
    assert code == 400 and body["error_code"] == 400 and "'n'" in body["message"]
    assert committed() == max_n(keys)

    # Alter while stopped: Java's message; GET shows it; resuming re-sends everything after it.
    assert api("PATCH", "/connectors/c/offsets", {"offsets": [{"partition": {"p": 0}, "offset": {"n": 3}}]}) == (
        200,
        {"message": "The offsets for this connector have been altered successfully"},
    )
    assert committed() == 3
    total = end_of(topic)
    assert api("PUT", "/connectors/c/resume") == (202, None)
    api.wait_states("c", "RUNNING", ["RUNNING"])
    wait_for(lambda: end_of(topic) > total + 5, "records after the altered offset")
    assert api("PUT", "/connectors/c/stop") == (204, None)
    api.wait_states("c", "STOPPED", [])
    again = keys_on(kafka_cluster, topic)  # read only once nothing is writing
    assert again["k0-4"] == 2 and again["k0-5"] == 2, "records after the altered offset not re-sent"
    assert again["k0-3"] == 1, "the altered offset itself was re-sent"

    # Reset while stopped: Java's message; offsets are gone.
    assert api("DELETE", "/connectors/c/offsets") == (
        200,
        {"message": "The offsets for this connector have been reset successfully"},
    )
    assert api("GET", "/connectors/c/offsets") == (200, {"offsets": []})

    # Delete: 204, then 404 everywhere with Java's body.
    assert api("DELETE", "/connectors/c") == (204, None)
    assert api("GET", "/connectors/c") == (404, {"error_code": 404, "message": "Connector c not found"})
    for method, path in (("GET", "/connectors/c/status"), ("GET", "/connectors/c/offsets"),
                         ("GET", "/connectors/c/config"), ("PUT", "/connectors/c/pause"),
                         ("DELETE", "/connectors/c")):  # fmt: skip
        code, body = api(method, path)
        assert code == 404 and body["error_code"] == 404 and "c" in body["message"], (method, path, body)
    assert api("GET", "/connectors") == (200, [])


def test_resume_from_stopped_recreates_tasks_that_continue_from_committed_offsets(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
    end_of: Callable[[str], int],
) -> None:
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("resume"))
    assert api("POST", "/connectors", {"name": "r", "config": gated(topic)})[0] == 201
    api.wait_states("r", "RUNNING", ["RUNNING"])
    wait_for(lambda: end_of(topic) > 10, "records")
    assert api("PUT", "/connectors/r/stop") == (204, None)
    api.wait_states("r", "STOPPED", [])
    before = keys_on(kafka_cluster, topic)
    total = sum(before.values())
    assert api("PUT", "/connectors/r/resume") == (202, None)
    api.wait_states("r", "RUNNING", ["RUNNING"])
    wait_for(lambda: end_of(topic) > total + 5, "records after resume")
    assert api("PUT", "/connectors/r/stop") == (204, None)
    api.wait_states("r", "STOPPED", [])
    after = keys_on(kafka_cluster, topic)
    assert max_n(after) > max_n(before) + 5
    assert sorted(int(k.split("-")[1]) for k in after) == list(range(max_n(after) + 1)), "a record was skipped"

    # A null offset in a PATCH removes that partition's offset (KIP-875 tombstone).
    assert api("GET", "/connectors/r/offsets")[1]["offsets"] != []
    assert api("PATCH", "/connectors/r/offsets", {"offsets": [{"partition": {"p": 0}, "offset": None}]}) == (
        200,
        {"message": "The offsets for this connector have been altered successfully"},
    )
    assert api("GET", "/connectors/r/offsets") == (200, {"offsets": []})
    assert [k for k, c in after.items() if c > 1] == [], "a graceful stop/resume replayed records"


# --------------------------------------------------------------------------- restarts (KIP-745)


def test_restart_include_tasks_and_only_failed(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("restart"), partitions=2)
    TaskGate.failing = {1}
    config = gated(topic, **{"tasks.max": "2", "source.partitions": "2"})
    assert api("POST", "/connectors", {"name": "g", "config": config})[0] == 201
    st = api.wait_states("g", "RUNNING", ["RUNNING", "FAILED"])
    failed = sorted(st["tasks"], key=lambda t: t["id"])[1]
    assert "gated failure" in failed["trace"]

    def starts() -> tuple[int, int, int]:
        return (TaskGate.connector_start_count("g"), TaskGate.task_start_count("g", "0"),
                TaskGate.task_start_count("g", "1"))  # fmt: skip

    c0, t0, t1 = starts()
    assert (c0, t0, t1) == (1, 1, 1)

    # onlyFailed without includeTasks: the connector is not failed, so nothing restarts (202, current states).
    code, body = api("POST", "/connectors/g/restart?onlyFailed=true")
    assert code == 202 and body["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in sorted(body["tasks"], key=lambda t: t["id"])] == ["RUNNING", "FAILED"]

    # includeTasks + onlyFailed: only the failed task restarts.
    TaskGate.failing = set()
    code, body = api("POST", "/connectors/g/restart?includeTasks=true&onlyFailed=true")
    assert code == 202 and body["name"] == "g" and body["connector"]["state"] == "RUNNING"
    assert [t["state"] for t in sorted(body["tasks"], key=lambda t: t["id"])] == ["RUNNING", "RESTARTING"]
    api.wait_states("g", "RUNNING", ["RUNNING", "RUNNING"])
    assert starts() == (c0, t0, t1 + 1)

    # includeTasks: connector and every task restart, and say so in the 202 body.
    code, body = api("POST", "/connectors/g/restart?includeTasks=true")
    assert code == 202 and body["connector"]["state"] == "RESTARTING"
    assert [t["state"] for t in body["tasks"]] == ["RESTARTING", "RESTARTING"]
    api.wait_states("g", "RUNNING", ["RUNNING", "RUNNING"])
    wait_for(lambda: starts() == (c0 + 1, t0 + 1, t1 + 2), "connector and both tasks restarted")

    # Plain restart: 204 and the connector only; tasks keep running.
    assert api("POST", "/connectors/g/restart") == (204, None)
    wait_for(lambda: starts()[0] == c0 + 2, "connector restarted")
    api.wait_states("g", "RUNNING", ["RUNNING", "RUNNING"])
    assert starts()[1:] == (t0 + 1, t1 + 2)

    # One task: 204; only that one.
    assert api("POST", "/connectors/g/tasks/0/restart") == (204, None)
    wait_for(lambda: starts()[1] == t0 + 2, "task 0 restarted")
    assert starts()[2] == t1 + 2
    api.wait_states("g", "RUNNING", ["RUNNING", "RUNNING"])

    for method, path in (("POST", "/connectors/g/tasks/7/restart"), ("GET", "/connectors/g/tasks/7/status"),
                         ("POST", "/connectors/ghost/restart"),
                         ("POST", "/connectors/ghost/restart?includeTasks=true")):  # fmt: skip
        code, body = api(method, path)
        assert code == 404 and body["error_code"] == 404 and body["message"], (method, path, body)


# --------------------------------------------------------------------------- bad input


def test_bad_input_codes_and_bodies_leave_running_connector_untouched(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
    end_of: Callable[[str], int],
) -> None:
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("bad"))
    cfg = gated(topic)
    assert api("POST", "/connectors", {"name": "ok", "config": cfg})[0] == 201
    api.wait_states("ok", "RUNNING", ["RUNNING"])
    config_before = api("GET", "/connectors/ok/config")
    starts_before = (TaskGate.connector_start_count("ok"), TaskGate.task_start_count("ok", "0"))

    def error(code: int, body: Any) -> str:
        assert isinstance(body, dict) and set(body) == {"error_code", "message"}, body
        assert body["error_code"] == code
        assert isinstance(body["message"], str) and body["message"]
        return str(body["message"])

    # malformed JSON: Java answers 500 (Jackson's parse failure reaches ConnectExceptionMapper); we
    # answer 400 with the same body shape, the one intended change of status code
    code, body = api("POST", "/connectors", raw=b'{"name": "x", "config": {')
    error(400, body)
    assert code == 400
    code, body = api("PUT", "/connectors/ok/config", raw=b"[1, 2")
    assert code == 400 and error(400, body)
    code, body = api("PATCH", "/connectors/ok/offsets", raw=b"{oops")
    assert code == 400 and error(400, body)

    # unknown connector class: Plugins.newConnector's ConnectException -> 500 naming the class
    code, body = api("POST", "/connectors", {"name": "x", "config": {**cfg, "connector.class": "com.acme.Nope"}})
    assert code == 500 and "com.acme.Nope" in error(500, body)

    # invalid config: 400 with Java's summary naming the key, the value and the validate endpoint
    code, body = api("POST", "/connectors", {"name": "x", "config": {**cfg, "tasks.max": "zero"}})
    message = error(400, body)
    assert code == 400
    assert message.startswith("Connector configuration is invalid and contains the following 1 error(s):\n")
    assert "Invalid value zero" in message  # Java's exact line: see test_invalid_config_message_names_the_key
    assert message.endswith("You can also find the above list of errors at the endpoint "
                            "`/connector-plugins/{connectorType}/config/validate`")  # fmt: skip
    code, body = api("POST", "/connectors", {"name": "x", "config": {k: v for k, v in cfg.items() if k != "topic"}})
    assert code == 400 and "topic" in error(400, body)
    # the same invalid config as a replacement of the running one: refused, old config kept
    code, body = api("PUT", "/connectors/ok/config", {**cfg, "tasks.max": "-1"})
    assert code == 400 and "Invalid value -1" in error(400, body)
    code, body = api("PUT", "/connectors/ok/config", {**cfg, "name": "other"})
    assert code == 400 and error(400, body) == (
        "Connector name configuration (other) doesn't match connector name in the URL (ok)"
    )

    # unknown connector
    assert api("GET", "/connectors/ghost") == (404, {"error_code": 404, "message": "Connector ghost not found"})
    for method, path in (("GET", "/connectors/ghost/status"), ("GET", "/connectors/ghost/config"),
                         ("GET", "/connectors/ghost/tasks"), ("PUT", "/connectors/ghost/pause"),
                         ("PUT", "/connectors/ghost/resume"), ("PUT", "/connectors/ghost/stop"),
                         ("DELETE", "/connectors/ghost"), ("GET", "/connectors/ghost/offsets")):  # fmt: skip
        code, body = api(method, path)
        assert code == 404 and "ghost" in error(404, body), (method, path)

    # duplicate name
    code, body = api("POST", "/connectors", {"name": "ok", "config": cfg})
    assert code == 409 and error(409, body) == "Connector ok already exists"

    # nothing above touched the running connector
    assert [n for n in api("GET", "/connectors")[1]] == ["ok"]
    assert api("GET", "/connectors/ok/config") == config_before
    api.wait_states("ok", "RUNNING", ["RUNNING"])
    assert (TaskGate.connector_start_count("ok"), TaskGate.task_start_count("ok", "0")) == starts_before
    produced = end_of(topic)
    wait_for(lambda: end_of(topic) > produced + 5, "running connector keeps producing")


# --------------------------------------------------------------------------- secrets


def test_password_values_never_appear_in_errors_validation_or_logs(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
    end_of: Callable[[str], int],
    caplog: pytest.LogCaptureFixture,
) -> None:
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("secret"))
    short, good = "tiny-Sekr1t", "correct-horse-battery-Sekr1t"
    with caplog.at_level(logging.DEBUG):
        code, body = api("POST", "/connectors", {"name": "s", "config": gated(topic, secret=short)})
        assert code == 400 and "secret" in body["message"] and short not in json.dumps(body)

        code, body = api("PUT", f"/connector-plugins/{GATED}/config/validate",
                         {**gated(topic, secret=short), "name": "s"})  # fmt: skip
        assert code == 200 and body["error_count"] == 1, body
        [value] = [c["value"] for c in body["configs"] if c["value"]["name"] == "secret"]
        assert value["value"] == "[hidden]" and value["errors"]
        assert short not in json.dumps(body)

        assert api("POST", "/connectors", {"name": "s", "config": gated(topic, secret=good)})[0] == 201
        api.wait_states("s", "RUNNING", ["RUNNING"])
        wait_for(lambda: end_of(topic) > 3, "records")
        assert good not in json.dumps(api.status("s"))
        assert api("PUT", "/connectors/s/stop") == (204, None)
        api.wait_states("s", "STOPPED", [])
    leaked = [r.getMessage() for r in caplog.records if short in r.getMessage() or good in r.getMessage()]
    assert leaked == []


def test_invalid_config_message_names_the_key(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    """Java's ConfigException text is "Invalid value <v> for configuration <key>: <reason>", both in the
    400 body of a create and in the validate endpoint; with several bad keys the user must see which."""
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("badkey"))
    cfg = {**gated(topic), "tasks.max": "zero", "records": "many"}
    code, body = api("POST", "/connectors", {"name": "x", "config": cfg})
    assert code == 400 and body["message"].startswith(
        "Connector configuration is invalid and contains the following 2 error(s):\n"
    )
    assert "Invalid value zero for configuration tasks.max: Not a number of type INT" in body["message"]
    assert "Invalid value many for configuration records: Not a number of type INT" in body["message"]
    code, body = api("PUT", f"/connector-plugins/{GATED}/config/validate", {**cfg, "name": "x"})
    assert code == 200 and body["error_count"] == 2
    errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
    assert errors == {
        "tasks.max": ["Invalid value zero for configuration tasks.max: Not a number of type INT"],
        "records": ["Invalid value many for configuration records: Not a number of type INT"],
    }


def test_secrets_masked_in_rest_answers_and_kept_on_round_trip(
    rest: tuple[StandaloneWorker, Api],
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    """A PASSWORD-typed value never comes back over REST; sending ``[hidden]`` back keeps the stored secret."""
    _, api = rest
    topic = kafka_cluster.create_topic(unique_name("mask"))
    good = "correct-horse-battery-Sekr1t"
    code, body = api("POST", "/connectors", {"name": "m", "config": gated(topic, secret=good)})
    assert code == 201 and body["config"]["secret"] == "[hidden]"
    api.wait_states("m", "RUNNING", ["RUNNING"])
    for path in ("/connectors/m", "/connectors/m/config", "/connectors/m/tasks", "/connectors?expand=info"):
        code, body = api("GET", path)
        assert code == 200 and good not in json.dumps(body), path
    code, config = api("GET", "/connectors/m/config")
    assert config["secret"] == "[hidden]"
    # GET, change one key, PUT back: the secret is not replaced by the placeholder.
    code, _ = api("PUT", "/connectors/m/config", {**config, "tasks.max": "1"})
    assert code == 200
    api.wait_states("m", "RUNNING", ["RUNNING"])
    worker, _ = rest
    assert worker.herder.connector_config("m")["secret"] == good
    # a provider reference is not a secret and stays visible
    code, _ = api("PUT", "/connectors/m/config", {**config, "secret": "${env:SOME_SECRET_VAR}"})
    assert api("GET", "/connectors/m/config")[1]["secret"] == "${env:SOME_SECRET_VAR}"
