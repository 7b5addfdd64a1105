"""``mm2 status`` against internal topics written the way Connect/MirrorMaker write them.

Independent of a running herder: the records are encoded with the shared format helpers, so this
checks the reading side (topics, decoding, lag arithmetic, renderings) on a real broker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from connect_core.model import ConnectorTaskId, State
from connect_core.storage import formats
from connect_core.storage.api import ConnectorStatus, TaskStatus
from connect_core.storage.offset_storage import serialize_offset_key, serialize_offset_value
from embedded_kafka import KafkaCluster
from mirror.client.formats import Checkpoint, OffsetSync, TopicPartition


def _props(a: KafkaCluster, b: KafkaCluster) -> dict[str, str]:
    return {
        "clusters": "A, B",
        "A.bootstrap.servers": a.bootstrap_servers,
        "B.bootstrap.servers": b.bootstrap_servers,
        "A->B.enabled": "true",
        "emit.heartbeats.enabled": "false",
        "topics": "orders",
    }


def test_status_reads_states_lag_and_checkpoints(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("orders", 2)
    a.create_topic("ignored", 1)
    a.produce("orders", [{"value": f"v{i}".encode(), "partition": i % 2} for i in range(10)])  # 5 per partition
    a.produce("ignored", [{"value": b"x"}])

    for topic in ("mm2-status.A.internal", "mm2-offsets.A.internal", "A.checkpoints.internal"):
        b.create_topic(topic, 1, {"cleanup.policy": "compact"})
    src = "MirrorSourceConnector"
    b.produce(
        "mm2-status.A.internal",
        [
            {
                "key": formats.connector_status_key(src).encode(),
                "value": formats.encode_connector_status(ConnectorStatus(src, State.RUNNING, "A->B")),
            },
            {
                "key": formats.task_status_key(ConnectorTaskId(src, 0)).encode(),
                "value": formats.encode_task_status(TaskStatus(ConnectorTaskId(src, 0), State.RUNNING, "A->B")),
            },
            {
                "key": formats.connector_status_key("MirrorCheckpointConnector").encode(),
                "value": formats.encode_connector_status(
                    ConnectorStatus("MirrorCheckpointConnector", State.FAILED, "A->B", "boom")
                ),
            },
        ],
    )
    b.produce(
        "mm2-offsets.A.internal",
        [
            {
                "key": serialize_offset_key(src, {"cluster": "A", "partition": 0, "topic": "orders"}),
                "value": serialize_offset_value({"offset": 4}),
            },  # partition 0 fully mirrored
            {
                "key": serialize_offset_key(src, {"cluster": "A", "partition": 1, "topic": "orders"}),
                "value": serialize_offset_value({"offset": 1}),
            },  # partition 1: 2 of 5
        ],
    )
    cp = Checkpoint("app", TopicPartition("A.orders", 0), 3, 3)
    b.produce("A.checkpoints.internal", [{"key": cp.record_key(), "value": cp.record_value()}])
    # partition 1 is further on the target than the flush says: 4 records there, the first one synced
    b.create_topic("A.orders", 2)
    b.produce("A.orders", [{"value": f"v{i}".encode(), "partition": 1} for i in range(4)])
    a.create_topic("mm2-offset-syncs.B.internal", 1)
    sync = OffsetSync(TopicPartition("orders", 1), 0, 0)
    a.produce("mm2-offset-syncs.B.internal", [{"key": sync.record_key(), "value": sync.record_value()}])

    path = tmp_path / "mm2.properties"
    path.write_text("".join(f"{k}={v}\n" for k, v in _props(a, b).items()))
    run = subprocess.run(
        [sys.executable, "-m", "mirror", "status", str(path), "--json"], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""  # the report only, no log lines
    [flow] = json.loads(run.stdout)["flows"]
    assert flow["flow"] == "A->B" and flow["error"] is None
    conns = {c["name"]: c for c in flow["connectors"]}
    assert conns[src]["state"] == "RUNNING" and conns[src]["tasks"][0]["state"] == "RUNNING"
    assert conns["MirrorCheckpointConnector"]["state"] == "FAILED"
    lags = {
        (p["topic"], p["partition"]): (
            p["source_end_offset"],
            p["mirrored_offset"],
            p["lag"],
            p["evidence"],
            p["flushed_offset"],
        )
        for p in flow["partitions"]
    }
    assert lags == {("orders", 0): (5, 5, 0, "flushed", 5), ("orders", 1): (5, 4, 1, "target", 2)}
    assert all(p["flushed_age_s"] is not None and 0 <= p["flushed_age_s"] < 120 for p in flow["partitions"])
    assert flow["total_lag"] == 1
    [checkpoint] = flow["checkpoints"]
    assert {k: v for k, v in checkpoint.items() if k != "age_s"} == {
        "group": "app",
        "topic": "A.orders",
        "partition": 0,
        "upstream_offset": 3,
        "downstream_offset": 3,
    }
    assert 0 <= checkpoint["age_s"] < 120

    table = subprocess.run(
        [sys.executable, "-m", "mirror", "status", str(path)], capture_output=True, text=True, timeout=60
    )
    assert table.returncode == 0, table.stderr
    assert table.stderr == ""
    assert "== A->B: total lag 1 records" in table.stdout
    assert "now (target end)" in table.stdout and "flushed " in table.stdout
    assert "A.orders" in table.stdout and "FAILED" in table.stdout and "app" in table.stdout


def test_status_of_an_unreachable_target_is_an_error_row_and_one_line_exit_2(
    kafka_cluster: KafkaCluster, tmp_path: Path
) -> None:
    from embedded_kafka import free_port

    path = tmp_path / "mm2.properties"
    props = {
        "clusters": "A, B",
        "A.bootstrap.servers": kafka_cluster.bootstrap_servers,
        "B.bootstrap.servers": f"127.0.0.1:{free_port()}",
        "A->B.enabled": "true",
        "emit.heartbeats.enabled": "false",
    }
    path.write_text("".join(f"{k}={v}\n" for k, v in props.items()))
    run = subprocess.run(
        [sys.executable, "-m", "mirror", "status", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "MM2_STATUS_TIMEOUT_S": "3"},
    )
    assert run.returncode == 2, run.stdout + run.stderr
    assert "target cluster 'B' is unreachable" in run.stdout  # the flow's row in the report
    lines = run.stderr.splitlines()  # and one line naming it, no log lines
    assert len(lines) == 1 and lines[0].startswith("mm2: error: target cluster 'B' is unreachable"), run.stderr
