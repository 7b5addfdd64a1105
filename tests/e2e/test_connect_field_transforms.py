"""Java's field transforms in ``mm2 connect standalone``, configured by Java class names: a
FileStreamSource hoists, extends and renames each line into a Struct; a FileStreamSink casts, masks,
moves a field to a header and adds the record offset; the file holds exactly the transformed records."""

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

WAIT_S = 120.0
XF = "org.apache.kafka.connect.transforms."
JSON = "org.apache.kafka.connect.json.JsonConverter"
AMOUNTS = ["10", "-3", "1000", "7", "0", "2147483647", "42", "5", "-128", "99"]


def _wait_lines(path: Path, count: int, proc: subprocess.Popen[str]) -> list[str]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        lines = path.read_text().splitlines() if path.exists() else []
        if len(lines) >= count:
            return lines
        if proc.poll() is not None:
            raise AssertionError(f"mm2 exited early ({proc.returncode}): {proc.stderr.read() if proc.stderr else ''}")
        time.sleep(0.2)
    raise AssertionError(f"{path} has fewer than {count} lines")


def _first_record(kafka_cluster: KafkaCluster, topic: str) -> Any:
    consumer = kafka_cluster.consumer()
    try:
        consumer.assign([ClientPartition(topic, 0, 0)])
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None and msg.value() is not None:
                return json.loads(msg.value() or b"")
    finally:
        consumer.close()
    raise AssertionError(f"nothing on {topic}")


def test_chain_of_java_field_transforms_from_source_file_to_sink_file(
    kafka_cluster: KafkaCluster,
    tmp_workdir: Path,
    unique_name: Callable[[str], str],
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    topic = unique_name("xf-lines")
    kafka_cluster.create_topic(topic)
    worker = tmp_workdir / "worker.properties"
    worker.write_text(
        f"bootstrap.servers={kafka_cluster.bootstrap_servers}\n"
        "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
        "value.converter=org.apache.kafka.connect.storage.StringConverter\n"
        f"offset.storage.file.filename={tmp_workdir / 'offsets'}\n"
        "consumer.session.timeout.ms=6000\n"  # the test bed's broker joins groups in about half of it
        "consumer.heartbeat.interval.ms=1000\n"
        f"listeners=http://127.0.0.1:{port}\n"
    )
    source_in, sink_out = tmp_workdir / "amounts.txt", tmp_workdir / "out.txt"
    source_in.write_text("".join(f"{a}\n" for a in AMOUNTS))
    source = tmp_workdir / "source.properties"
    source.write_text(
        "name=amounts-in\nconnector.class=org.apache.kafka.connect.file.FileStreamSourceConnector\n"
        f"file={source_in}\ntopic={topic}\nvalue.converter={JSON}\n"
        "transforms=hoist,insert,rename\n"
        f"transforms.hoist.type={XF}HoistField$Value\ntransforms.hoist.field=line\n"
        f"transforms.insert.type={XF}InsertField$Value\ntransforms.insert.topic.field=src_topic!\n"
        "transforms.insert.static.field=origin\ntransforms.insert.static.value=file\n"
        f"transforms.rename.type={XF}ReplaceField$Value\ntransforms.rename.renames=line:amount\n"
    )
    sink_config = {
        "connector.class": "org.apache.kafka.connect.file.FileStreamSinkConnector", "topics": topic,
        "file": str(sink_out), "value.converter": JSON, "transforms": "cast,mask,move,offset",
        "transforms.cast.type": f"{XF}Cast$Value", "transforms.cast.spec": "amount:int32",
        "transforms.mask.type": f"{XF}MaskField$Value", "transforms.mask.fields": "origin",
        "transforms.mask.replacement": "***",
        "transforms.move.type": f"{XF}HeaderFrom$Value", "transforms.move.fields": "src_topic",
        "transforms.move.headers": "from", "transforms.move.operation": "move",
        "transforms.offset.type": f"{XF}InsertField$Value", "transforms.offset.offset.field": "offset!",
    }  # fmt: skip
    sink = tmp_workdir / "sink.json"
    sink.write_text(json.dumps({"name": "amounts-out", "config": sink_config}))

    proc = mm2("connect", "standalone", str(worker), str(source), str(sink), cwd=tmp_workdir)
    try:
        wait_running(base, "amounts-in", proc, timeout=WAIT_S)
        wait_running(base, "amounts-out", proc, timeout=WAIT_S)
        expected = [f"Struct{{amount={a},origin=***,offset={i}}}" for i, a in enumerate(AMOUNTS)]
        assert _wait_lines(sink_out, len(AMOUNTS), proc) == expected
        # what the source-side chain put on the topic: a Struct in JsonConverter's envelope
        first = _first_record(kafka_cluster, topic)
        assert first["payload"] == {"amount": "10", "src_topic": topic, "origin": "file"}
        assert [(f["field"], f["type"], f["optional"]) for f in first["schema"]["fields"]] == [
            ("amount", "string", False), ("src_topic", "string", False), ("origin", "string", True)]  # fmt: skip
        # a mistake in a transform's config is a 400 naming the full key, not a failed task
        bad = {**sink_config, "transforms.cast.spec": "amount:uuid"}
        status, body = http("POST", f"{base}/connectors", {"name": "bad-cast", "config": bad})
        assert status == 400 and body["error_code"] == 400, body
        assert "Invalid type found in casting spec: uuid" in body["message"]
        status, body = http("PUT", f"{base}/connector-plugins/FileStreamSink/config/validate",
                            {**bad, "name": "bad-cast"})  # fmt: skip
        errors = {c["value"]["name"]: c["value"]["errors"] for c in body["configs"] if c["value"]["errors"]}
        assert status == 200 and errors == {"transforms.cast.spec": ["Invalid type found in casting spec: uuid"]}, body
        assert http("GET", f"{base}/connectors")[1] == ["amounts-in", "amounts-out"]
        assert sink_out.read_text().splitlines() == expected
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Traceback" not in err
