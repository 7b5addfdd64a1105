"""Per-flow transforms in ``mm2 run``, configured as Java MirrorMaker users write them: ``A->B.transforms``
with Java class names and a predicate. Cast$Value turns the mirrored topic's binary values into
base64 text (MirrorMaker hands values over as optional BYTES), every other field of each record and
the order per partition stay as they were, and the predicate keeps heartbeats untouched."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest

from embedded_kafka import KafkaCluster
from mirror.client.formats import Heartbeat
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, now_ms, partitions_view, write_properties

pytestmark = pytest.mark.e2e

STARTUP_S = 120.0
XF = "org.apache.kafka.connect.transforms."


def _expected(source: KafkaCluster) -> dict[int, list[tuple[Any, ...]]] | None:
    """The source records as the flow must deliver them: values base64 text, the rest identical."""
    try:
        rows_by_partition = partitions_view(source, "orders")
    except TimeoutError:
        return None
    return {
        p: [(key, base64.b64encode(value).decode().encode(), headers, ts) for key, value, headers, ts in rows]
        for p, rows in rows_by_partition.items()
    }


def _heartbeat_flows(cluster: KafkaCluster) -> set[tuple[str, str]]:
    if "heartbeats" not in cluster.topic_names():
        return set()
    return {
        (hb.source_cluster_alias, hb.target_cluster_alias)
        for msgs in cluster.read_all("heartbeats").values()
        for hb in (Heartbeat.decode(m.key(), m.value()) for m in msgs)
    }


def test_flow_transform_by_java_class_name_rewrites_only_the_matching_topic(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
    tmp_path: Path,
) -> None:
    a, b = two_clusters
    a.create_topic("orders", 2)
    base = now_ms() - 60_000
    a.produce("orders", [
        {"key": f"k{i % 3}".encode(), "value": bytes([i, 255 - i, 0]) * (i % 4 + 1),
         "headers": [("h", str(i).encode())], "timestamp": base + i, "partition": i % 2}
        for i in range(20)
    ])  # fmt: skip
    config = write_properties(tmp_path / "mm2.properties", mm2_properties(
        {"A": a, "B": b}, ["A->B"], topics="orders", **{
            "A->B.transforms": "text",
            "A->B.transforms.text.type": f"{XF}Cast$Value",
            "A->B.transforms.text.spec": "string",
            "A->B.transforms.text.predicate": "mirroredData",
            "A->B.predicates": "mirroredData",
            "A->B.predicates.mirroredData.type": f"{XF}predicates.TopicNameMatches",
            "A->B.predicates.mirroredData.pattern": "A\\.orders",
            "A->B.value.converter": "org.apache.kafka.connect.storage.StringConverter",
        }))  # fmt: skip
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        expected = eventually(lambda: _expected(a), 60, "the source records read back", mm2)
        assert expected is not None and sum(len(rows) for rows in expected.values()) == 20

        def delivered() -> bool:
            try:  # a read that outlasts its own deadline on a busy machine is just "not yet"
                return "A.orders" in b.topic_names() and partitions_view(b, "A.orders") == expected
            except TimeoutError:
                return False

        eventually(delivered, STARTUP_S, "A.orders on B with base64 values", mm2, interval=1.0)
        eventually(lambda: ("A", "B") in _heartbeat_flows(b), 60, "A->B heartbeats on B, still decodable", mm2)
    finally:
        code = mm2.terminate()
    assert code == 0, mm2.output()[-4000:]
