from __future__ import annotations

import json

from mirror.driver.status_report import (
    EVIDENCE_FLUSHED,
    EVIDENCE_TARGET,
    ConnectorState,
    FlowStatus,
    GroupCheckpoint,
    PartitionLag,
    TaskState,
    age_text,
    render_json,
    render_table,
)


def flow() -> FlowStatus:
    return FlowStatus(
        source="A",
        target="B",
        enabled=True,
        connectors=[ConnectorState("MirrorSourceConnector", "RUNNING", "w1", [TaskState(0, "RUNNING", "w1")])],
        partitions=[
            PartitionLag(
                "orders",
                1,
                "A.orders",
                10,
                4,
                evidence=EVIDENCE_FLUSHED,
                age_s=75.0,
                flushed_offset=4,
                flushed_age_s=75.0,
            ),
            PartitionLag(
                "orders", 0, "A.orders", 5, 5, evidence=EVIDENCE_TARGET, age_s=0.0, flushed_offset=2, flushed_age_s=75.0
            ),
        ],
        checkpoints=[GroupCheckpoint("g1", "A.orders", 0, 5, 5, age_s=3.2)],
        read_at="2026-01-01T00:00:00Z",
    )


def test_lag_is_end_minus_mirrored_never_negative() -> None:
    assert PartitionLag("t", 0, "A.t", 10, 4).lag == 6
    assert PartitionLag("t", 0, "A.t", 3, 4).lag == 0
    assert flow().total_lag == 6


def test_table_shows_states_lag_checkpoints_and_how_old_each_figure_is() -> None:
    text = render_table([flow()])
    assert "A->B: total lag 6 records (read 2026-01-01T00:00:00Z)" in text
    assert "MirrorSourceConnector" in text and "RUNNING" in text
    lines = [line.split() for line in text.splitlines()]
    assert ["orders", "1", "A.orders", "10", "4", "6", "flushed", "1m", "ago"] in lines
    assert ["orders", "0", "A.orders", "5", "5", "0", "now", "(target", "end)"] in lines
    assert ["g1", "A.orders", "0", "5", "5", "3s", "ago"] in lines
    # partitions are listed in order
    assert lines.index(["orders", "0", "A.orders", "5", "5", "0", "now", "(target", "end)"]) < lines.index(
        ["orders", "1", "A.orders", "10", "4", "6", "flushed", "1m", "ago"]
    )


def test_json_is_serialisable_and_complete() -> None:
    data = json.loads(json.dumps(render_json([flow()])))
    f = data["flows"][0]
    assert f["flow"] == "A->B" and f["total_lag"] == 6 and f["read_at"] == "2026-01-01T00:00:00Z"
    assert {p["partition"]: p["lag"] for p in f["partitions"]} == {0: 0, 1: 6}
    by_partition = {p["partition"]: p for p in f["partitions"]}
    assert by_partition[0]["evidence"] == "target" and by_partition[0]["age_s"] == 0.0
    assert by_partition[0]["flushed_offset"] == 2 and by_partition[0]["flushed_age_s"] == 75.0
    assert by_partition[1]["evidence"] == "flushed" and by_partition[1]["age_s"] == 75.0
    assert f["connectors"][0]["tasks"][0]["state"] == "RUNNING"
    assert f["checkpoints"][0]["group"] == "g1" and f["checkpoints"][0]["age_s"] == 3.2


def test_age_text() -> None:
    assert [age_text(s) for s in (None, 0, 59.9, 60, 3599, 7200, 90000)] == ["?", "0s", "59s", "1m", "59m", "2h", "1d"]


def test_the_delivery_mode_is_shown_in_the_table_and_the_json() -> None:
    f = flow()
    assert "  delivery: at-least-once" in render_table([f])
    f.delivery = "exactly-once"
    assert "  delivery: exactly-once\n" in render_table([f])
    assert render_json([f])["flows"][0]["delivery"] == "exactly-once"


def test_the_copy_path_is_shown_in_the_table_and_the_json() -> None:
    f = flow()
    assert "  copy path: record\n" in render_table([f])
    f.copy_path = "batch"
    assert "  copy path: batch\n" in render_table([f])
    assert render_json([f])["flows"][0]["copy_path"] == "batch"
