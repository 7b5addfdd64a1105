"""A connector config with ``${provider:...}`` references on a real broker: the tasks get the values,
the stored connector and task configs keep the references (Kafka's WorkerConfigTransformer)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from connect_core.herder.standalone import build_standalone_herder
from embedded_kafka import KafkaCluster, free_port
from tests.worker_plugins import BYTES, CONNECTOR, Registry


def _wait(cond: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def test_tasks_get_the_values_and_storage_keeps_the_references(
    kafka_cluster: KafkaCluster, tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("refs"), partitions=1)
    secrets = tmp_path / "connector-secrets.properties"
    secrets.write_text(f"topic = {topic}\nrecords = 7\n")
    Registry.reset()
    herder = build_standalone_herder(
        {
            "bootstrap.servers": kafka_cluster.bootstrap_servers,
            "key.converter": BYTES,
            "value.converter": BYTES,
            "header.converter": BYTES,
            "offset.flush.interval.ms": "200",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "listeners": f"http://127.0.0.1:{free_port()}",
            "config.providers": "secrets",
            "config.providers.secrets.class": "org.apache.kafka.common.config.provider.FileConfigProvider",
        }
    )
    herder.start()
    try:
        config = {
            "connector.class": CONNECTOR,
            "topic": f"${{secrets:{secrets}:topic}}",
            "records": f"${{secrets:{secrets}:records}}",
            "tasks.max": "1",
        }
        herder.put_connector_config("refs", config, False)

        def written() -> int:
            return sum(len(msgs) for msgs in kafka_cluster.read_all(topic).values())

        _wait(lambda: written() == 7, 30, "the 7 records in the topic the reference names")
        assert herder.connector_config("refs") == {**config, "name": "refs"}
        tasks = herder.task_configs("refs")
        assert [t.config["topic"] for t in tasks] == [config["topic"]]
        assert [t.config["records"] for t in tasks] == [config["records"]]
        assert herder.connector_info("refs").config["topic"] == config["topic"]
        # validation checks what a reference stands for ("records" must be an INT) and answers with the reference
        infos = herder.validate_connector_config({**config, "name": "refs"})
        assert infos.error_count == 0, [(v.name, v.errors) for _, v in infos.configs if v.errors]
        assert {v.name: v.value for _, v in infos.configs}["records"] == config["records"]
    finally:
        herder.stop()
