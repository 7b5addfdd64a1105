"""Two DistributedHerders in this process (each with its own REST server) on one broker.

Covers what the subprocess tests do not look at closely: the signed internal task-config endpoint
(missing/invalid/valid signature), task configs of a connector running on a follower reaching the
config topic through the leader, and follower REST writes (create, update, pause, delete) being
applied by the leader.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_core.herder.distributed.session_key import SIGNATURE_ALGORITHM_HEADER, SIGNATURE_HEADER
from embedded_kafka import KafkaCluster, free_port, unique_name
from mirror.cli.distributed_cmd import DistributedWorker

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

CONNECTOR = "tests.distributed_plugins:IdleSourceConnector"


def http(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> tuple[int, Any]:  # fmt: skip
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Content-Type": "application/json", **(headers or {})})  # fmt: skip
    try:
        with urllib.request.urlopen(req, timeout=60) as resp:
            payload = resp.read()
            return resp.status, (json.loads(payload) if payload else None)
    except urllib.error.HTTPError as e:
        payload = e.read()
        return e.code, (json.loads(payload) if payload else None)


def wait_for(what: str, predicate: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what} (last: {last!r})")


def distributed_props(cluster: KafkaCluster, prefix: str, port: int, **extra: str) -> dict[str, str]:
    """A distributed worker of group ``prefix`` on the test bed (short session, small internal topics)."""
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": prefix,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "config.storage.topic": f"{prefix}-configs",
        "offset.storage.topic": f"{prefix}-offsets",
        "status.storage.topic": f"{prefix}-status",
        "config.storage.replication.factor": "-1",
        "offset.storage.replication.factor": "-1",
        "status.storage.replication.factor": "-1",
        "offset.storage.partitions": "2",
        "status.storage.partitions": "2",
        "session.timeout.ms": "6000",
        "heartbeat.interval.ms": "1000",
        "scheduled.rebalance.max.delay.ms": "10000",
        "listeners": f"http://127.0.0.1:{port}",
        **extra,
    }


@pytest.fixture
def workers(kafka_cluster: KafkaCluster) -> Iterator[list[tuple[DistributedWorker, str]]]:
    prefix = unique_name("dh")
    out: list[tuple[DistributedWorker, str]] = []
    try:
        for _ in range(2):
            port = free_port()
            props = distributed_props(kafka_cluster, prefix, port)
            w = DistributedWorker(props)
            w.start()
            out.append((w, f"http://127.0.0.1:{port}"))
        wait_for("both workers joined", lambda: all(w.herder.is_ready() for w, _ in out), 60)
        yield out
    finally:
        for w, _ in out:
            w.stop()


def leader_and_follower(workers: list[tuple[DistributedWorker, str]]) -> tuple[Any, str, Any, str]:
    def roles() -> tuple[Any, str, Any, str] | None:
        leaders = [(w, b) for w, b in workers if w.herder.is_leader()]
        followers = [(w, b) for w, b in workers if not w.herder.is_leader()]
        if len(leaders) == 1 and len(followers) == 1:
            return leaders[0][0].herder, leaders[0][1], followers[0][0].herder, followers[0][1]
        return None

    result: tuple[Any, str, Any, str] = wait_for("one leader, one follower", roles)
    return result


def test_follower_writes_are_applied_by_the_leader(workers: list[tuple[DistributedWorker, str]]) -> None:
    leader, leader_url, follower, follower_url = leader_and_follower(workers)
    # Two connectors: the assignor puts one on each worker, so one generates its tasks on the follower
    # and must send them to the leader through the signed internal endpoint.
    for name in ("a", "b"):
        code, body = http("POST", f"{follower_url}/connectors",
                          {"name": name, "config": {"connector.class": CONNECTOR, "tasks.max": "2"}})  # fmt: skip
        assert code == 201, body

    def all_running() -> dict[str, str] | None:
        placement: dict[str, str] = {}
        for name in ("a", "b"):
            code, st = http("GET", f"{leader_url}/connectors/{name}/status")
            if code != 200 or st["connector"]["state"] != "RUNNING" or len(st["tasks"]) != 2:
                return None
            if any(t["state"] != "RUNNING" for t in st["tasks"]):
                return None
            placement[name] = st["connector"]["worker_id"]
        return placement

    placement = wait_for("connectors a, b and their 4 tasks RUNNING", all_running, 60)
    assert set(placement.values()) == {leader.worker_id(), follower.worker_id()}

    # Update through the follower: the leader writes it, the tasks get the new config.
    code, _ = http("PUT", f"{follower_url}/connectors/a/config",
                   {"connector.class": CONNECTOR, "tasks.max": "2", "marker": "v2"})  # fmt: skip
    assert code == 200

    def marker_applied() -> bool:
        code, tasks = http("GET", f"{leader_url}/connectors/a/tasks")
        return code == 200 and len(tasks) == 2 and all(t["config"].get("marker") == "v2" for t in tasks)

    wait_for("task configs regenerated with the new connector config", marker_applied, 60)

    # Pause and delete through the follower.
    assert http("PUT", f"{follower_url}/connectors/b/pause")[0] == 202
    wait_for("b paused", lambda: http("GET", f"{leader_url}/connectors/b/status")[1]["connector"]["state"] == "PAUSED")
    assert http("DELETE", f"{follower_url}/connectors/b")[0] == 204
    wait_for("b deleted", lambda: (r := http("GET", f"{leader_url}/connectors"))[0] == 200 and r[1] == ["a"])


def test_internal_task_endpoint_requires_a_valid_signature(workers: list[tuple[DistributedWorker, str]]) -> None:
    leader, leader_url, follower, follower_url = leader_and_follower(workers)
    code, body = http("POST", f"{leader_url}/connectors",
                      {"name": "s", "config": {"connector.class": CONNECTOR, "tasks.max": "1"}})  # fmt: skip
    assert code == 201, body
    wait_for("session key distributed", lambda: leader._session_key is not None and follower._session_key is not None)
    # The connector's own task configs first, so they cannot overwrite ours afterwards.
    wait_for("initial task configs", lambda: (r := http("GET", f"{leader_url}/connectors/s/tasks"))[0] == 200
             and len(r[1]) == 1)  # fmt: skip
    payload = json.dumps([{"task.index": "0", "marker": "forged"}]).encode()
    url = f"{leader_url}/connectors/s/tasks"

    code, body = http("POST", url, raw=payload)
    assert code == 400 and "missing required signature" in body["message"]
    bad = {SIGNATURE_HEADER: "AAAA", SIGNATURE_ALGORITHM_HEADER: "HmacSHA256"}
    code, body = http("POST", url, raw=payload, headers=bad)
    assert code == 403 and "invalid signature" in body["message"]
    code, body = http("POST", url, raw=payload, headers={**bad, SIGNATURE_ALGORITHM_HEADER: "HmacMD5"})
    assert code == 400

    # Signed with the session key (as a follower signs): accepted and written by the leader.
    from connect_core.herder.distributed.session_key import signature_headers

    headers = signature_headers(follower._session_key, "HmacSHA256", payload)
    code, body = http("POST", url, raw=payload, headers=headers)
    assert code == 204, body

    def written() -> bool:
        code, tasks = http("GET", f"{leader_url}/connectors/s/tasks")
        return code == 200 and [t["config"].get("marker") for t in tasks] == ["forged"]

    wait_for("signed task configs written", written)
    # A follower does not write task configs itself: it names the leader (409), the sender retries there.
    code, body = http("POST", f"{follower_url}/connectors/s/tasks", raw=payload,
                      headers=signature_headers(follower._session_key, "HmacSHA256", payload))  # fmt: skip
    assert code == 409, body
