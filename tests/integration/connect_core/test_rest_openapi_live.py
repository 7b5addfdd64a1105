"""The OpenAPI document a live standalone worker serves, checked against that worker's real answers
(plain HTTP, so it holds whatever HTTP server is behind)."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster
from mirror.cli.connect_cmd import StandaloneWorker
from tests.integration.connect_core import test_rest_api as rest_api
from tests.unit.connect_core.rest.openapi_check import check_response

pytestmark = pytest.mark.integration

worker = rest_api.worker  # the live standalone worker on an embedded broker, reused
Client = rest_api.Client


def fetch_document(api: Client) -> dict[str, Any]:
    with urllib.request.urlopen(api.base + "/openapi.json", timeout=30) as resp:
        assert resp.status == 200 and resp.headers["Content-Type"].startswith("application/json")
        return dict(json.loads(resp.read()))


def test_served_document_matches_real_answers(
    worker: tuple[StandaloneWorker, Client],
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    _, api = worker
    doc = fetch_document(api)
    assert doc["openapi"].startswith("3.1") and "/connectors/{connector}/status" in doc["paths"]
    topic = unique_name("openapi")
    kafka_cluster.create_topic(topic)
    data = tmp_workdir / "in.txt"
    data.write_text("x\n")
    cfg = rest_api.source_config(data, topic)

    def check(method: str, documented: str, path: str, body: Any = None) -> Any:
        status, got = api(method, path, body)
        check_response(doc, method, documented, status, got)
        return got

    check("POST", "/connectors", "/connectors", {"name": "src", "config": cfg})
    api.wait_state("src", "RUNNING")
    check("GET", "/", "/")
    check("GET", "/health", "/health")
    check("GET", "/connectors", "/connectors")
    check("GET", "/connectors", "/connectors?expand=status&expand=info")
    check("GET", "/connectors/{connector}", "/connectors/src")
    check("GET", "/connectors/{connector}/config", "/connectors/src/config")
    check("GET", "/connectors/{connector}/status", "/connectors/src/status")
    check("GET", "/connectors/{connector}/tasks", "/connectors/src/tasks")
    check("GET", "/connectors/{connector}/tasks-config", "/connectors/src/tasks-config")
    check("GET", "/connectors/{connector}/tasks/{task}/status", "/connectors/src/tasks/0/status")
    check("GET", "/connectors/{connector}/topics", "/connectors/src/topics")
    check("PATCH", "/connectors/{connector}/config", "/connectors/src/config", {"batch.size": "100"})
    check("POST", "/connectors/{connector}/restart", "/connectors/src/restart?includeTasks=true")
    api.wait_state("src", "RUNNING")
    check("PUT", "/connectors/{connector}/stop", "/connectors/src/stop")
    api.wait_state("src", "STOPPED", tasks=0)
    check("GET", "/connectors/{connector}/offsets", "/connectors/src/offsets")
    check(
        "PATCH",
        "/connectors/{connector}/offsets",
        "/connectors/src/offsets",
        {"offsets": [{"partition": {"filename": str(data)}, "offset": {"position": 1}}]},
    )
    check("DELETE", "/connectors/{connector}/offsets", "/connectors/src/offsets")
    check("GET", "/connector-plugins", "/connector-plugins?connectorsOnly=false")
    check("GET", "/connector-plugins/{plugin}/config", "/connector-plugins/FileStreamSource/config")
    check(
        "PUT",
        "/connector-plugins/{plugin}/config/validate",
        "/connector-plugins/FileStreamSource/config/validate",
        {**cfg, "topic": ""},
    )
    # error answers are Connect's error body, as documented
    check("GET", "/connectors/{connector}/status", "/connectors/ghost/status")
    check("POST", "/connectors", "/connectors", {"name": "bad", "config": {**cfg, "tasks.max": "zero"}})
    check("DELETE", "/connectors/{connector}", "/connectors/src")
