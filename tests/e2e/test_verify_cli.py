"""``mm2 verify`` as a command next to a live ``mm2 run``: equal (exit 0, JSON), then a record written
straight into the target (exit 1, table), and mistakes as one line with exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.mm2_helpers import Mm2Process, eventually, mm2_properties, published_through, write_properties
from tests.e2e.mm2_helpers import mm2_command as mm2

pytestmark = pytest.mark.e2e

NameFn = Callable[[str], str]


def published(a: KafkaCluster, topic: str) -> dict[int, int]:
    return published_through(a, "mm2-offset-mappings.B.internal", topic)


def records(start: int, count: int) -> list[dict[str, object]]:
    return [
        {"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % 2, "headers": [("h", f"{i}".encode())]}
        for i in range(start, start + count)
    ]


@pytest.mark.spark
def test_verify_next_to_a_running_mirror(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    a.create_topic(topic, partitions=2)
    a.produce(topic, records(0, 40))
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics=topic))
    proc = Mm2Process(config, log_dir=tmp_path)
    try:
        # verify compares what the target acknowledged (the flow publishes it within about a second), not
        # only what the offset flush (every 60 s by default) committed
        eventually(lambda: published(a, topic) == {0: 20, 1: 20} or None, 90, "the first 40 records mirrored", proc)
        equal = mm2(
            "verify",
            str(config),
            "--source",
            "A",
            "--target",
            "B",
            "--topics",
            topic,
            "--json",
            "--master",
            "local[2]",
            "--chunk-records",
            "8",
        )
        assert equal.returncode == 0, equal.stdout + equal.stderr
        doc = json.loads(equal.stdout)
        assert doc["equal"] is True
        assert [
            (
                p["topic"],
                p["partition"],
                p["compared"],
                p["missing"],
                p["extra"],
                p["mismatched"],
                p["pending"],
                p["first_difference"],
            )
            for p in doc["partitions"]
        ] == [(topic, 0, 20, 0, 0, 0, 0, None), (topic, 1, 20, 0, 0, 0, 0, None)]
        assert "Traceback" not in equal.stderr and "chunks" in equal.stderr  # the progress, on stderr

        b.produce(f"A.{topic}", [{"value": b"intruder", "partition": 1}])
        a.produce(topic, records(40, 10))
        eventually(lambda: published(a, topic) == {0: 25, 1: 25} or None, 60, "10 more records mirrored", proc)
        different = mm2(
            "verify", str(config), "--source", "A", "--target", "B", "--topics", topic, "--master", "local[2]"
        )
        assert different.returncode == 1, different.stdout + different.stderr
        lines = different.stdout.splitlines()
        assert lines[0].split() == [
            "topic",
            "partition",
            "target_topic",
            "compared",
            "missing",
            "extra",
            "mismatched",
            "pending",
            "first_difference",
            "result",
            "known_gap",
        ]
        assert lines[1].split() == [topic, "0", f"A.{topic}", "25", "0", "0", "0", "0", "-", "equal", "-"]
        assert lines[2].split() == [topic, "1", f"A.{topic}", "25", "0", "1", "0", "0", "20", "DIFFERENT", "-"]
        assert lines[3].startswith("DIFFERENT in 1 partition(s): 2 partitions, 50 records compared")
    finally:
        assert proc.terminate() == 0, proc.output()[-3000:]
        proc.close()


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (("--source", "X", "--target", "B"), "--source 'X'"),
        (("--source", "A", "--target", "B", "--topics", "("), "--topics"),
        (("--source", "A", "--target", "B", "--chunk-records", "0"), "--chunk-records"),
        (
            (
                "--target",
                "B",
            ),
            "--source",
        ),
        (("--source", "A", "--target", "C", "--timeout", "2"), "cluster 'C' is unreachable"),
        (
            ("--source", "A", "--target", "B", "--topics", "no-such-topic.*"),
            "--topics 'no-such-topic.*' matches no topic",
        ),
        (("--source", "A", "--target", "B", "--master", "spark://127.0.0.1:{port}"), "Spark master"),
    ],
)
def test_mistakes_are_one_line_and_exit_2(
    args: tuple[str, ...], needle: str, tmp_path: Path, kafka_cluster: KafkaCluster
) -> None:
    props = mm2_properties({"A": kafka_cluster, "B": kafka_cluster}, ["A->B"])
    props["clusters"] = "A, B, C"
    props["C.bootstrap.servers"] = f"127.0.0.1:{free_port()}"  # nobody listens there
    config = write_properties(tmp_path / "mm2.properties", props)
    port = free_port()
    result = mm2("verify", str(config), *(a.format(port=port) for a in args), timeout=90)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in result.stderr
    assert len(lines) == 1 and needle in lines[0], result.stderr


def test_a_run_that_compared_nothing_is_not_equal_and_exits_3(
    kafka_cluster: KafkaCluster, unique_name: NameFn, tmp_path: Path
) -> None:
    topic = unique_name("never-mirrored")
    kafka_cluster.create_topic(topic, partitions=2)
    kafka_cluster.produce(topic, records(0, 6))
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": kafka_cluster, "B": kafka_cluster}, ["A->B"])
    )
    table = mm2("verify", str(config), "--source", "A", "--target", "B", "--topics", topic, timeout=90)
    assert table.returncode == 3, table.stdout + table.stderr
    assert table.stdout.splitlines()[-1].startswith("NOTHING COMPARED"), table.stdout
    assert "0 records compared" in table.stdout and "6 pending" in table.stdout
    doc = json.loads(
        mm2("verify", str(config), "--source", "A", "--target", "B", "--topics", topic, "--json", timeout=90).stdout
    )
    assert doc["equal"] is False and doc["result"] == "nothing_compared"
