"""Sink connectors in ``mm2 connect standalone``: FileStreamSink on an embedded broker, resumed from the
group's committed offsets, and a dead-letter queue with Java's context headers."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster, free_port
from tests.e2e.test_connect_standalone_cli import http, mm2, wait_running

pytestmark = pytest.mark.e2e

WAIT_S = 90.0


def _worker(kafka_cluster: KafkaCluster, workdir: Path, port: int) -> Path:
    path = workdir / "worker.properties"
    path.write_text(
        f"bootstrap.servers={kafka_cluster.bootstrap_servers}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={workdir / 'offsets'}\n"
        # The test bed's broker joins groups in about session.timeout.ms/2 (broker-notes.md).
        "consumer.session.timeout.ms=6000\n"
        "consumer.heartbeat.interval.ms=1000\n"
        f"listeners=http://127.0.0.1:{port}\n"
    )
    return path


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def _wait_lines(path: Path, count: int, proc: subprocess.Popen[str]) -> list[str]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        lines = _lines(path)
        if len(lines) >= count:
            return lines
        if proc.poll() is not None:
            raise AssertionError(f"mm2 exited early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.2)
    raise AssertionError(f"{path} has {len(_lines(path))} lines, expected {count}")


def _stop(proc: subprocess.Popen[str]) -> str:
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return err


def _committed(kafka_cluster: KafkaCluster, group: str, topic: str) -> int:
    consumer = kafka_cluster.consumer(**{"group.id": group})
    try:
        [tp] = consumer.committed([ClientPartition(topic, 0)], timeout=15)
        return int(tp.offset)
    finally:
        consumer.close()


def _read_all(kafka_cluster: KafkaCluster, topic: str, count: int) -> list[Any]:
    consumer = kafka_cluster.consumer()
    out: list[Any] = []
    try:
        consumer.assign([ClientPartition(topic, 0, 0)])
        deadline = time.monotonic() + WAIT_S
        while len(out) < count and time.monotonic() < deadline:
            msg = consumer.poll(0.2)
            if msg is not None and msg.error() is None:
                out.append(msg)
    finally:
        consumer.close()
    return out


def test_file_sink_writes_in_order_resumes_from_group_offsets_and_routes_bad_records_to_dlq(
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    worker = _worker(kafka_cluster, tmp_workdir, port)
    topic, json_topic, dlq = unique_name("sink-in"), unique_name("sink-json"), unique_name("sink-dlq")
    kafka_cluster.create_topic(topic)
    kafka_cluster.create_topic(json_topic)
    kafka_cluster.produce(topic, [f"line-{i}" for i in range(200)])
    kafka_cluster.produce(json_topic, ['{"n":0}', '{"n":1}', "not json {", '{"n":3}', '{"n":4}'])
    out, json_out = tmp_workdir / "out.txt", tmp_workdir / "json-out.txt"
    sink = tmp_workdir / "sink.properties"
    sink.write_text(f"name=file-sink\nconnector.class=FileStreamSink\ntopics={topic}\nfile={out}\ntasks.max=1\n")
    dlq_sink = tmp_workdir / "dlq-sink.json"
    dlq_sink.write_text(
        json.dumps(
            {
                "name": "json-sink",
                "config": {
                    "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector",
                    "topics": json_topic,
                    "file": str(json_out),
                    "value.converter": "org.apache.kafka.connect.json.JsonConverter",
                    "value.converter.schemas.enable": "false",
                    "errors.tolerance": "all",
                    "errors.deadletterqueue.topic.name": dlq,
                    "errors.deadletterqueue.topic.replication.factor": "1",
                    "errors.deadletterqueue.context.headers.enable": "true",
                },
            }
        )
    )

    proc = mm2("connect", "standalone", str(worker), str(sink), str(dlq_sink), cwd=tmp_workdir)
    try:
        status = wait_running(base, "file-sink", proc)
        assert status["type"] == "sink"
        wait_running(base, "json-sink", proc)
        assert _wait_lines(out, 200, proc) == [f"line-{i}" for i in range(200)]
        # the bad record went to the DLQ, the others were written
        assert _wait_lines(json_out, 4, proc) == ["{n=0}", "{n=1}", "{n=3}", "{n=4}"]
        [bad] = _read_all(kafka_cluster, dlq, 1)
        assert bad.value() == b"not json {"
        headers = {k: (v.decode() if v is not None else None) for k, v in bad.headers() or []}
        assert headers["__connect.errors.topic"] == json_topic
        assert headers["__connect.errors.partition"] == "0"
        assert headers["__connect.errors.offset"] == "2"
        assert headers["__connect.errors.connector.name"] == "json-sink"
        assert headers["__connect.errors.task.id"] == "0"
        assert headers["__connect.errors.stage"] == "VALUE_CONVERTER"
        assert headers["__connect.errors.class.name"] == "org.apache.kafka.connect.json.JsonConverter"
        assert headers["__connect.errors.exception.class.name"]
        assert headers["__connect.errors.exception.message"]
        assert "Traceback" in headers["__connect.errors.exception.stacktrace"]
        code, topics = http("GET", f"{base}/connectors/file-sink/topics")
        assert code == 200 and topics == {"file-sink": {"topics": [topic]}}
    finally:
        _stop(proc)
    assert _committed(kafka_cluster, "connect-file-sink", topic) == 200
    assert _committed(kafka_cluster, "connect-json-sink", json_topic) == 5

    # a second run continues from the group's committed offsets: nothing written twice
    kafka_cluster.produce(topic, [f"line-{i}" for i in range(200, 300)])
    proc = mm2("connect", "standalone", str(worker), str(sink), cwd=tmp_workdir)
    try:
        lines = _wait_lines(out, 300, proc)
        wait_running(base, "file-sink", proc)
    finally:
        _stop(proc)
    assert _lines(out) == lines == [f"line-{i}" for i in range(300)]
    assert _committed(kafka_cluster, "connect-file-sink", topic) == 300
