"""The third-party client kafka-connect-py drives a live standalone worker over HTTPS with basic auth."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from kafka_connect import KafkaConnect

from embedded_kafka import KafkaCluster
from mirror.cli.connect_cmd import StandaloneWorker
from tests.integration.connect_core.rest_tls_helpers import make_pki

FILE_SOURCE = "org.apache.kafka.connect.file.FileStreamSourceConnector"


@pytest.fixture
def secured_worker(kafka_cluster: KafkaCluster, tmp_workdir: Path) -> Iterator[tuple[StandaloneWorker, Path]]:
    pki = make_pki(tmp_workdir)
    creds = tmp_workdir / "credentials.properties"
    creds.write_text("operator=op-pass\n")
    jaas = tmp_workdir / "jaas.conf"
    jaas.write_text(
        "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
        f'required\n  file="{creds}";\n}};\n'
    )
    props = {
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "offset.storage.file.filename": str(tmp_workdir / "offsets"),
        "offset.flush.interval.ms": "500",
        **pki.server_props(),
        "rest.advertised.host.name": "localhost",  # the name in the certificate, as a client would use
        "rest.extension.classes": "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension",
        "java.security.auth.login.config": str(jaas),
    }
    w = StandaloneWorker(props)
    w.start()
    try:
        yield w, pki.ca_pem
    finally:
        w.stop()


def wait_for(check: Callable[[], Any], timeout: float = 30.0) -> Any:
    deadline = time.monotonic() + timeout
    last: Any = None
    while time.monotonic() < deadline:
        last = check()
        if last:
            return last
        time.sleep(0.2)
    raise AssertionError(f"condition not met in {timeout}s (last: {last})")


def test_kafka_connect_py_over_https_with_basic_auth(
    secured_worker: tuple[StandaloneWorker, Path],
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    worker, ca_pem = secured_worker
    url = worker.rest.advertised_url().rstrip("/")
    assert url.startswith("https://localhost:")
    client = KafkaConnect(url=url, auth="operator:op-pass", ssl_verify=str(ca_pem))
    topic = unique_name("kcpy")
    kafka_cluster.create_topic(topic)
    data = tmp_workdir / "in.txt"
    data.write_text("x\n")
    config = {"connector.class": FILE_SOURCE, "tasks.max": "1", "file": str(data), "topic": topic}

    assert set(client.get_cluster_info()) == {"version", "commit", "kafka_cluster_id"}
    created = client.create_connector({"name": "kc", "config": config})
    assert created["name"] == "kc"

    def running() -> bool:
        status = client.get_connector_status("kc")
        return bool(
            status["connector"]["state"] == "RUNNING" and status["tasks"] and status["tasks"][0]["state"] == "RUNNING"
        )

    wait_for(running)
    assert client.list_connectors() == ["kc"]
    assert client.get_connector_config("kc")["topic"] == topic
    updated = client.update_connector("kc", {**config, "tasks.max": "1", "batch.size": "10"})
    assert updated["config"]["batch.size"] == "10"
    client.pause_connector("kc")
    wait_for(lambda: client.get_connector_status("kc")["connector"]["state"] == "PAUSED")
    client.resume_connector("kc")
    wait_for(running)
    assert client.list_connector_tasks("kc")[0]["id"] == {"connector": "kc", "task": 0}
    assert any(p["class"] == FILE_SOURCE for p in client.list_connector_plugins())
    client.delete_connector("kc")
    wait_for(lambda: client.list_connectors() == [])

    wrong = KafkaConnect(url=url, auth="operator:nope", ssl_verify=str(ca_pem))
    with pytest.raises(requests.HTTPError) as e:
        wrong.list_connectors()
    assert e.value.response.status_code == 401
    assert e.value.response.json() == {"error_code": 401, "message": "User cannot access the resource."}
    untrusting = KafkaConnect(url=url, auth="operator:op-pass")  # system CAs only
    with pytest.raises(requests.exceptions.SSLError):
        untrusting.list_connectors()
