"""the source-task loop applies transformations, predicates (with negate) and converters on the
wire exactly as Java Connect does, and commits the offsets of records a transformation dropped."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_core.herder.standalone import StandaloneHerder, build_standalone_herder
from embedded_kafka import KafkaCluster
from tests.gated_plugins import VARIED, TaskGate

pytestmark = pytest.mark.integration

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
RECORDS = 31  # n = 0..30 per source partition; n = 30 is a tombstone, so the last record is dropped


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def herder(kafka_cluster: KafkaCluster, tmp_path: Path) -> Iterator[StandaloneHerder]:
    TaskGate.reset()
    h = build_standalone_herder(
        {
            "bootstrap.servers": kafka_cluster.bootstrap_servers,
            "key.converter": BYTES,
            "value.converter": BYTES,
            "offset.flush.interval.ms": "200",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "listeners": "http://127.0.0.1:0",
        }
    )
    h.start()
    yield h
    h.stop()


def committed(h: StandaloneHerder, name: str) -> dict[int, int]:
    return {p["p"]: o["n"] for p, o in h.connector_offsets(name)}


def test_transformations_predicates_and_json_converter_on_the_wire(
    herder: StandaloneHerder,
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    topic = unique_name("src")
    routed = kafka_cluster.create_topic(f"routed-{topic}", partitions=1)
    config = {
        "connector.class": VARIED, "topic": topic, "records": str(RECORDS), "batch": "8", "tasks.max": "1",
        "source.partitions": "1",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "header.converter": "org.apache.kafka.connect.storage.SimpleHeaderConverter",
        "transforms": "route,dropTombstones,dropMarked,tag,strip",
        "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.route.regex": "(.*)",
        "transforms.route.replacement": "routed-$1",
        "transforms.route.predicate": "internal",
        "transforms.route.negate": "true",
        "transforms.dropTombstones.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.dropTombstones.predicate": "tomb",
        "transforms.dropMarked.type": "org.apache.kafka.connect.transforms.Filter",
        "transforms.dropMarked.predicate": "marked",
        "transforms.tag.type": "org.apache.kafka.connect.transforms.InsertHeader",
        "transforms.tag.header": "via",
        "transforms.tag.value.literal": "mm2",
        "transforms.strip.type": "org.apache.kafka.connect.transforms.DropHeaders",
        "transforms.strip.headers": "h",
        "predicates": "internal,tomb,marked",
        "predicates.internal.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
        "predicates.internal.pattern": "__.*",
        "predicates.tomb.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
        "predicates.marked.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
        "predicates.marked.name": "drop",
    }  # fmt: skip
    herder.put_connector_config("pipe", config, False)
    # The last record (n = 30) was dropped by a Filter: its offset is committed all the same.
    wait_for(lambda: committed(herder, "pipe") == {0: RECORDS - 1}, "offsets of dropped records committed")

    assert topic not in kafka_cluster.topic_names(), "a record reached the un-routed topic"
    msgs = kafka_cluster.read_all(routed)[0]
    kept = [n for n in range(RECORDS) if n % 3 and n % 5]
    assert [m.key() for m in msgs] == [f"k0-{n}".encode() for n in kept]
    assert [json.loads(m.value() or b"null") for m in msgs] == [{"p": 0, "n": n} for n in kept]
    # InsertHeader added "via", DropHeaders removed "h" (the value's encoding: see the next test)
    assert [[k for k, _ in list(m.headers() or [])] for m in msgs] == [["via"]] * len(kept)
    assert [m.timestamp()[1] for m in msgs] == [1_700_000_000_000 + n for n in kept]


def test_json_envelope_and_timestamp_router(
    herder: StandaloneHerder,
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    topic = unique_name("ts")
    bucket = kafka_cluster.create_topic(f"{topic}_2023-11-14", partitions=1)  # 1_700_000_000_000 ms, UTC
    config = {
        "connector.class": VARIED, "topic": topic, "records": "7", "batch": "7", "tasks.max": "1",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "true",
        "transforms": "bucket",
        "transforms.bucket.type": "org.apache.kafka.connect.transforms.TimestampRouter",
        "transforms.bucket.topic.format": "${topic}_${timestamp}",
        "transforms.bucket.timestamp.format": "yyyy-MM-dd",
    }  # fmt: skip
    herder.put_connector_config("env", config, False)
    wait_for(lambda: committed(herder, "env") == {0: 6}, "all committed")
    msgs = kafka_cluster.read_all(bucket)[0]
    assert len(msgs) == 7
    for n, m in enumerate(msgs):
        if n % 3 == 0:
            # Java's JsonConverter writes a null value with a null schema as a Kafka null (a tombstone stays one)
            assert m.value() is None
        else:
            assert json.loads(m.value() or b"null") == {"schema": None, "payload": {"p": 0, "n": n}}


def test_insert_header_literal_under_the_default_header_converter(
    herder: StandaloneHerder,
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
) -> None:
    """Java's InsertHeader adds ``Values.parseString(value.literal)`` (a STRING "mm2"); the default
    header converter, SimpleHeaderConverter, writes a string as its UTF-8 text: b"mm2" on the wire."""
    topic = kafka_cluster.create_topic(unique_name("hdr"), partitions=1)
    config = {
        "connector.class": VARIED, "topic": topic, "records": "3", "batch": "3", "tasks.max": "1",
        "value.converter": "org.apache.kafka.connect.json.JsonConverter",
        "value.converter.schemas.enable": "false",
        "transforms": "tag",
        "transforms.tag.type": "org.apache.kafka.connect.transforms.InsertHeader",
        "transforms.tag.header": "via",
        "transforms.tag.value.literal": "mm2",
    }  # fmt: skip
    herder.put_connector_config("hdr", config, False)  # no header.converter: the worker default
    wait_for(lambda: committed(herder, "hdr") == {0: 2}, "all committed")
    msgs = kafka_cluster.read_all(topic)[0]
    assert [[v for k, v in list(m.headers() or []) if k == "via"] for m in msgs] == [[b"mm2"]] * 3
