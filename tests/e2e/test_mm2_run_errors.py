"""``mm2 run`` misconfigurations: one line on stderr, a non-zero exit, nothing written to any cluster."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port

RUN_TIMEOUT_S = 60


def write_props(path: Path, props: dict[str, str]) -> Path:
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


def mm2(*args: str, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MM2_REACHABILITY_TIMEOUT_S": "2"}
    return subprocess.run(
        [sys.executable, "-m", "mirror", *args], capture_output=True, text=True, timeout=timeout, env=env
    )


def cluster_state(cluster: KafkaCluster) -> tuple[set[str], set[str]]:
    admin = cluster.admin()  # keep the client alive until the future completes
    groups = admin.list_consumer_groups(request_timeout=10).result()
    return cluster.topic_names(), {g.group_id for g in groups.valid}


CASES = {
    "unknown alias in a flow key": ({"A->C.enabled": "true"}, [], "unknown cluster alias 'C'"),
    "unknown alias in --clusters": ({}, ["--clusters", "Z"], "unknown cluster alias 'Z'"),
    "cluster without bootstrap servers": ({"B.bootstrap.servers": ""}, [], "cluster 'B' has no bootstrap servers"),
    "identity policy both directions": (
        {
            "B->A.enabled": "true",
            "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
        },
        [],
        "IdentityReplicationPolicy",
    ),
    "bad connector setting": ({"A->B.tasks.max": "lots"}, [], "tasks.max"),
    "bad transform setting": (
        {
            "A->B.transforms": "c",
            "A->B.transforms.c.type": "org.apache.kafka.connect.transforms.Cast$Value",
            "A->B.transforms.c.spec": "x:uuid",
        },
        [],
        "A->B.transforms.c.spec: Invalid type found in casting spec: uuid (flow A->B)",
    ),
    "unreachable cluster": ({"B.bootstrap.servers": "UNREACHABLE"}, [], "cluster 'B' (127.0.0.1:"),
    "https listener with a missing keystore": (
        {
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": "https://127.0.0.1:0",
            "listeners.https.ssl.keystore.location": "/nonexistent/rest.pem",
        },
        [],
        "listeners.https.ssl.keystore.location: file /nonexistent/rest.pem does not exist",
    ),
    "no flows at all": (
        {"A->B.enabled": "false", "emit.heartbeats.enabled": "false"},
        [],
        "no source->target replication flows",
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_misconfiguration_is_one_line_and_touches_nothing(
    case: str, two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("orders", 2)
    a.produce("orders", [{"value": b"x", "partition": 0}])
    extra, args, needle = CASES[case]
    props = {
        "clusters": "A, B",
        "A.bootstrap.servers": a.bootstrap_servers,
        "B.bootstrap.servers": b.bootstrap_servers,
        "A->B.enabled": "true",
        "replication.factor": "1",
    }
    props.update(extra)
    if props.get("B.bootstrap.servers") == "UNREACHABLE":
        props["B.bootstrap.servers"] = f"127.0.0.1:{free_port()}"
    before = cluster_state(a), cluster_state(b)
    result = mm2("run", str(write_props(tmp_path / "mm2.properties", props)), *args)
    assert result.returncode != 0, result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("mm2: error: ") and needle in lines[0], lines[0]
    assert "Traceback" not in result.stdout + result.stderr
    assert (cluster_state(a), cluster_state(b)) == before


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    result = mm2("run", str(tmp_path / "nope.properties"))
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "not found" in result.stderr
