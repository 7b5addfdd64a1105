"""``mm2 translate-offsets`` as a command: JSON dry run of a mapped group, and mistakes in one line."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster
from mirror.client.formats import OffsetAndMetadata, TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.connectors.mirror_admin import MirrorAdmin
from tests.e2e.mm2_helpers import mm2_command as mm2
from tests.e2e.mm2_helpers import mm2_properties, write_properties

pytestmark = pytest.mark.e2e

NameFn = Callable[[str], str]


@pytest.mark.spark
def test_json_dry_run_writes_nothing(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    topic, group = unique_name("t"), unique_name("g")
    a.create_topic(topic, partitions=2)
    b.create_topic(f"A.{topic}", partitions=2)
    a.create_topic("mm2-offset-mappings.B.internal", config={"cleanup.policy": "compact"})
    # as the source task writes them: t-0 0..99 at 10..109, t-1 0..99 at 0..99
    mappings = [
        OffsetMapping(TopicPartition(topic, 0), 0, 0, 10, 100),
        OffsetMapping(TopicPartition(topic, 1), 0, 0, 0, 100),
    ]
    a.produce(
        "mm2-offset-mappings.B.internal",
        [{"key": m.record_key(), "value": m.record_value(), "partition": 0} for m in mappings],
    )
    MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 15).alter_consumer_group_offsets(
        group, {TopicPartition(topic, 0): OffsetAndMetadata(42), TopicPartition(topic, 1): OffsetAndMetadata(7)}
    )
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"]))

    result = mm2(
        "translate-offsets",
        str(config),
        "--source",
        "A",
        "--target",
        "B",
        "--groups",
        group,
        "--json",
        "--master",
        "local[1]",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert [g["group"] for g in doc["groups"]] == [group]
    rows = [
        (
            p["topic"],
            p["partition"],
            p["source_offset"],
            p["target_topic"],
            p["target_offset"],
            p["reread"],
            p["status"],
        )
        for p in doc["groups"][0]["partitions"]
    ]
    assert rows == [(topic, 0, 42, f"A.{topic}", 52, 0, "ok"), (topic, 1, 7, f"A.{topic}", 7, 0, "ok")]
    target = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 15)
    assert target.list_consumer_group_offsets([group])[group] == {}  # a dry run writes nothing


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--source", "X", "--target", "B"), "--source 'X'"),
        (("--source", "A", "--target", "A"), "different"),
        (("--source", "A", "--target", "B", "--groups", "(", "--master", "local[1]"), "--groups"),
        (("--source", "A", "--target", "B", "--force"), "--force"),
        (
            (
                "--target",
                "B",
            ),
            "--source",
        ),
    ],
)
def test_mistakes_are_one_line(args: tuple[str, ...], needle: str, tmp_path: Path, kafka_cluster: KafkaCluster) -> None:
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": kafka_cluster, "B": kafka_cluster}, ["A->B"])
    )
    result = mm2("translate-offsets", str(config), *args, timeout=60)
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in result.stderr
    assert len(lines) == 1 and needle in lines[0], result.stderr
