"""Kafka's Connect quickstart, on our runtime: FileStreamSource tails a file into a topic."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from connect_core.herder.standalone import build_standalone_herder
from connect_core.model import State
from embedded_kafka import KafkaCluster, wait_for

STRING = "org.apache.kafka.connect.storage.StringConverter"


def lines_on(cluster: KafkaCluster, topic: str) -> list[str]:
    return [m.value().decode() for msgs in cluster.read_all(topic).values() for m in msgs]


def test_file_source_quickstart_resumes_after_restart(
    kafka_cluster: KafkaCluster, tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("connect-test"))
    source = tmp_path / "test.txt"
    source.write_text("foo\nbar\n")
    worker = {
        "bootstrap.servers": kafka_cluster.bootstrap_servers,
        "key.converter": STRING,
        "value.converter": STRING,
        "offset.storage.file.filename": str(tmp_path / "connect.offsets"),
        "offset.flush.interval.ms": "200",
        "listeners": "http://127.0.0.1:0",
    }
    connector = {
        "connector.class": "FileStreamSource",  # Connect's short alias, as in the quickstart
        "tasks.max": "1",
        "file": str(source),
        "topic": topic,
    }

    herder = build_standalone_herder(worker)
    herder.start()
    try:
        created, _ = herder.put_connector_config("local-file-source", connector, allow_replace=False)
        assert created
        wait_for(lambda: lines_on(kafka_cluster, topic) == ["foo", "bar"], timeout=20, message="initial lines")
        status = herder.connector_status("local-file-source")
        assert status.connector.state is State.RUNNING
        with source.open("a") as f:
            f.write("baz\n")
        wait_for(lambda: lines_on(kafka_cluster, topic) == ["foo", "bar", "baz"], timeout=20, message="appended line")
        wait_for(lambda: herder.connector_offsets("local-file-source") != [], timeout=10, message="offset flush")
    finally:
        herder.stop()

    # A new worker with the same offsets file continues where the first one stopped: no line twice.
    with source.open("a") as f:
        f.write("qux\n")
    herder = build_standalone_herder(worker)
    herder.start()
    try:
        herder.put_connector_config("local-file-source", connector, allow_replace=False)
        wait_for(lambda: "qux" in lines_on(kafka_cluster, topic), timeout=20, message="line written while stopped")
        assert lines_on(kafka_cluster, topic) == ["foo", "bar", "baz", "qux"]
    finally:
        herder.stop()
