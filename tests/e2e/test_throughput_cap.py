"""A throughput cap on a flow holds while the backlog is larger than what it lets through, for ``mm2 run``
(the metric showing the rate; lifted by a reload, the rate rises) and for ``mm2 backfill`` (its report showing
the rate).

The cap is 512 KiB/s and the backlog 48 MiB of 1 KiB records with null keys (so the cap's bytes, keys and
values, are the value bytes ``mm2_source_bytes_total`` counts): about 96 s of copying at the cap, so a window
of a minute ends with a backlog left. Within 10 % over that minute is the claim; the window starts once the
copy runs (the first scrape that shows bytes), so the herder's start is not in it.
"""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.metrics_harness import Mm2Run, Samples, total
from tests.e2e.mm2_helpers import mm2_command, mm2_properties, write_properties
from tests.oracle.committed_reader import read_topic_committed

CAP = 512 * 1024
RECORD = 1024
PARTITIONS = 4
RECORDS = 48 * 1024  # 48 MiB
WINDOW_S = 60.0
TOPIC = "bulk"


def backlog(cluster: KafkaCluster) -> None:
    cluster.create_topic(TOPIC, PARTITIONS)
    producer = cluster.producer(**{"linger.ms": 20, "batch.size": 1_000_000})
    value = b"x" * RECORD
    for i in range(RECORDS):
        producer.produce(TOPIC, value=value, partition=i % PARTITIONS)
        if i % 5000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def copied_bytes(samples: Samples) -> float:
    return total(samples, "mm2_source_bytes_total", source="A", target="B")


@pytest.mark.timeout(600)
def test_a_capped_flow_copies_at_its_cap_and_the_metric_shows_it(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    backlog(a)
    port = free_port()
    props = mm2_properties({"A": a, "B": b}, ["A->B"], **{"A->B.topics": TOPIC})
    capped = {**props, "A->B.throughput.limit.bytes.per.second": str(CAP)}
    config = write_properties(tmp_path / "mm2.properties", capped)
    with Mm2Run(config, port, tmp_path / "mm2.log") as mm2:
        first = mm2.wait_for(lambda s: copied_bytes(s) > 0, 180, "the first bytes copied")
        started, at_start = time.monotonic(), copied_bytes(first)
        samples = mm2.wait_for(lambda s: time.monotonic() - started >= WINDOW_S, WINDOW_S + 30, "a minute", 5.0)
        elapsed = time.monotonic() - started
        rate = (copied_bytes(samples) - at_start) / elapsed
        assert copied_bytes(samples) < RECORDS * RECORD, "the backlog ran out inside the window"
        assert abs(rate - CAP) <= 0.1 * CAP, f"{rate:.0f} B/s copied over {elapsed:.0f} s, cap {CAP}"
        assert total(samples, "mm2_throughput_limit_bytes_per_second", source="A", target="B") == CAP
        shown = total(samples, "mm2_throughput_rate_bytes_per_second", source="A", target="B")
        assert abs(shown - CAP) <= 0.15 * CAP, f"the rate metric shows {shown:.0f} B/s at a cap of {CAP}"

        # the cap lifted by a reload (SIGHUP): the rest of the backlog goes at the clusters' speed
        write_properties(config, props)
        assert mm2.proc is not None
        mm2.proc.send_signal(signal.SIGHUP)
        done = mm2.wait_for(lambda s: copied_bytes(s) >= RECORDS * RECORD, 120, "the rest of the backlog, uncapped")
        assert total(done, "mm2_throughput_limit_bytes_per_second", source="A", target="B") == 0
        rest_s = time.monotonic() - started - elapsed
        left = RECORDS * RECORD - copied_bytes(samples)
        assert left / rest_s > 2 * CAP, f"{left} bytes in {rest_s:.0f} s after the cap was lifted"


@pytest.mark.timeout(600)
def test_a_capped_backfill_copies_at_its_cap_and_reports_the_rate(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    backlog(a)
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], **{"A->B.topics": TOPIC})
    )
    run = mm2_command(
        "backfill",
        str(config),
        "--source",
        "A",
        "--target",
        "B",
        "--master",
        "local[2]",
        "--throughput-limit",
        "512K",
        "--json",
        timeout=540,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(run.stdout)
    totals = report["totals"]
    assert totals["records_copied"] == RECORDS
    assert totals["throughput_limit_bytes_per_second"] == CAP
    assert report["copy_seconds"] >= WINDOW_S, report["copy_seconds"]  # the cap held it for over a minute
    # The cap is a ceiling: never more than 10 % over it. The report's rate is over the whole copy phase,
    # its tasks' start and each transaction's commit included (the copier catches up on at most 10 s of
    # pauses), so on a busy machine it falls below the cap by what those cost: 0.85x at load 8 (CI run 17).
    # A cap that throttles below itself (half of it, say) still fails.
    assert totals["bytes_per_second"] <= 1.1 * CAP, json.dumps(report)
    assert totals["bytes_per_second"] >= 0.75 * CAP, json.dumps(report)
    committed = read_topic_committed(b, f"A.{TOPIC}", timeout_s=120)  # the backfill writes in transactions
    assert {p: len(log.committed) for p, log in committed.items()} == dict.fromkeys(
        range(PARTITIONS), RECORDS // PARTITIONS
    )


def test_a_throughput_limit_that_is_not_a_size_is_one_line(tmp_path: Path) -> None:
    config = write_properties(
        tmp_path / "mm2.properties",
        {"clusters": "A, B", "A.bootstrap.servers": "127.0.0.1:1", "B.bootstrap.servers": "127.0.0.1:2"},
    )
    run = mm2_command("backfill", str(config), "--source", "A", "--target", "B", "--throughput-limit", "fast")
    assert run.returncode != 0
    assert run.stderr.strip().count("\n") == 0 and "--throughput-limit" in run.stderr and "fast" in run.stderr, (
        run.stderr
    )
