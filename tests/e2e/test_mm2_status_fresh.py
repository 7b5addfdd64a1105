"""``mm2 status`` tells the truth at a glance: a backlog fully on the target reads lag 0 at once.

The flow's offset flush is set far beyond the test (10 minutes), so the committed offsets cannot be
what status reads: the test checks that no flushed offset covers the backlog, then that both the
table and ``--json`` report lag 0 from the target's evidence, with nothing on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path

from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import (
    Mm2Process,
    eventually,
    mirrored_identically,
    mm2_properties,
    mm2_status,
    write_properties,
)

BACKLOG = 300  # per partition
PARTITIONS = 3


def test_status_reports_lag_0_right_after_the_backlog_is_on_the_target(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("orders", PARTITIONS)
    a.produce(
        "orders",
        [
            {"key": f"k{i}".encode(), "value": f"order {i}".encode(), "partition": i % PARTITIONS}
            for i in range(BACKLOG * PARTITIONS)
        ],
    )
    props = mm2_properties({"A": a, "B": b}, ["A->B"], topics="orders")
    props["B.offset.flush.interval.ms"] = "600000"  # no flush while the test runs
    config = write_properties(tmp_path / "mm2.properties", props)
    mm2 = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(lambda: mirrored_identically(a, "orders", b, "A.orders"), 120, "the backlog on B", mm2)

        run = mm2_status(config, "--json")
        assert run.returncode == 0, run.stdout + run.stderr
        assert run.stderr == "", run.stderr  # no log lines
        [flow] = json.loads(run.stdout)["flows"]
        rows = {p["partition"]: p for p in flow["partitions"] if p["topic"] == "orders"}
        assert sorted(rows) == list(range(PARTITIONS))
        # what a flush-only status would have said: the flushed offsets do not cover the backlog
        assert all(r["flushed_offset"] is None or r["flushed_offset"] < BACKLOG for r in rows.values()), rows
        assert {
            p: (r["source_end_offset"], r["mirrored_offset"], r["lag"], r["evidence"], r["age_s"])
            for p, r in rows.items()
        } == {p: (BACKLOG, BACKLOG, 0, "target", 0.0) for p in rows}

        table = mm2_status(config)
        assert table.returncode == 0, table.stdout + table.stderr
        assert table.stderr == "", table.stderr
        lines = [line.split() for line in table.stdout.splitlines()]
        for p in range(PARTITIONS):
            assert ["orders", str(p), "A.orders", str(BACKLOG), str(BACKLOG), "0", "now", "(target", "end)"] in lines, (
                table.stdout
            )
        assert not any(word in table.stdout for word in (" INFO ", " WARNING ", " ERROR ")), table.stdout

        assert mm2.terminate(60) == 0, mm2.output()[-3000:]
    finally:
        mm2.close()
