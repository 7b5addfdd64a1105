from __future__ import annotations

import json

from mirror.driver.status_report import (
    ConnectorState,
    FlowStatus,
    GroupCheckpoint,
    PartitionLag,
    TaskState,
    render_json,
    render_table,
)


def flow() -> FlowStatus:
    return FlowStatus(
        source="A",
        target="B",
        enabled=True,
        connectors=[ConnectorState("MirrorSourceConnector", "RUNNING", "w1", [TaskState(0, "RUNNING", "w1")])],
        partitions=[PartitionLag("orders", 1, "A.orders", 10, 4), PartitionLag("orders", 0, "A.orders", 5, 5)],
        checkpoints=[GroupCheckpoint("g1", "A.orders", 0, 5, 5)],
    )


def test_lag_is_end_minus_mirrored_never_negative() -> None:
    assert PartitionLag("t", 0, "A.t", 10, 4).lag == 6
    assert PartitionLag("t", 0, "A.t", 3, 4).lag == 0
    assert flow().total_lag == 6


def test_table_shows_states_lag_and_checkpoints() -> None:
    text = render_table([flow()])
    assert "A->B: total lag 6 records" in text
    assert "MirrorSourceConnector" in text and "RUNNING" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["orders", "1", "A.orders", "10", "4", "6"] in lines
    assert ["g1", "A.orders", "0", "5", "5"] in lines
    # partitions are listed in order
    assert lines.index(["orders", "0", "A.orders", "5", "5", "0"]) < lines.index(
        ["orders", "1", "A.orders", "10", "4", "6"]
    )


def test_json_is_serialisable_and_complete() -> None:
    data = json.loads(json.dumps(render_json([flow()])))
    f = data["flows"][0]
    assert f["flow"] == "A->B" and f["total_lag"] == 6
    assert {p["partition"]: p["lag"] for p in f["partitions"]} == {0: 0, 1: 6}
    assert f["connectors"][0]["tasks"][0]["state"] == "RUNNING"
    assert f["checkpoints"][0]["group"] == "g1"
