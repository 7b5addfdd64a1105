"""A throughput cap on a flow holds while the backlog is larger than what it lets through, for ``mm2 run``
(the metric showing the rate; lifted by a reload, the rate rises) and for ``mm2 backfill`` (its report showing
the rate).

Sized from how the cap works: it throttles each fetch, and a broker answers record batches whole, one per
partition at least, so a fetch is the cap's step. The source is written in 8 KiB batches: four partitions'
worth is 32 KiB, a quarter second at a cap of 128 KiB/s (1 MB batches would be 30 s). Over 20 s the cap's burst
(0.25 s) and one step are within 3 %, so the 10 % claim holds with room for a busy machine. Records are 1 KiB
with null keys (the cap's bytes, keys and values, are then the value bytes ``mm2_source_bytes_total`` counts,
plus about 1 % of batch framing). The live flow's backlog of 10 MiB lasts 80 s at the cap: the window opens once
2 s' worth is copied (the tasks' start is behind it) and leaves about 7 MiB, which takes over 45 s at the cap
even after a restart's catch-up, and goes uncapped after the reload. The backfill's 3 MiB is 24 s at the cap.
Rates are from the product's counters, timed by when each scrape returned.
"""

from __future__ import annotations

import json
import signal
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.metrics_harness import Mm2Run, Samples, total
from tests.e2e.mm2_helpers import mm2_command, mm2_properties, write_properties
from tests.oracle.committed_reader import read_topic_committed

CAP = 128 * 1024
RECORD = 1024
PARTITIONS = 4
RECORDS = 10 * 1024  # the live flow's backlog, 10 MiB: 80 s at the cap
BACKFILL_RECORDS = 3 * 1024  # 24 s at the cap
BATCH_BYTES = 8 * 1024
SETTLED = 2 * CAP  # bytes copied before the window opens
WINDOW_S = 20.0
GAUGE_WINDOW_S = 10.0  # the rate metric's own window: readings this far into ours see only the capped copy
TOPIC = "bulk"


def backlog(cluster: KafkaCluster, records: int = RECORDS) -> None:
    cluster.create_topic(TOPIC, PARTITIONS)
    producer = cluster.producer(**{"linger.ms": 20, "batch.size": BATCH_BYTES})
    value = b"x" * RECORD
    for i in range(records):
        producer.produce(TOPIC, value=value, partition=i % PARTITIONS)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(120) == 0


def copied_bytes(samples: Samples) -> float:
    return total(samples, "mm2_source_bytes_total", source="A", target="B")


def flow_gauge(samples: Samples, name: str) -> float:
    return total(samples, name, source="A", target="B")


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
        scrapes: list[tuple[float, Samples]] = []  # each with when it was read

        def window(length: float, wanted: Callable[[Samples], bool]) -> Callable[[Samples], bool]:
            def check(samples: Samples) -> bool:
                scrapes.append((time.monotonic(), samples))
                return wanted(samples) and scrapes[-1][0] - scrapes[0][0] >= length

            return check

        mm2.wait_for(window(0, lambda s: copied_bytes(s) >= SETTLED), 180, f"the first {SETTLED} bytes copied", 0.2)
        opened, first = scrapes.pop()
        scrapes[:] = [(opened, first)]
        mm2.wait_for(window(WINDOW_S, lambda s: True), WINDOW_S + 60, f"{WINDOW_S:.0f} s of copying")
        at, samples = scrapes[-1]
        shown = [
            flow_gauge(s, "mm2_throughput_rate_bytes_per_second") for t, s in scrapes if t - opened >= GAUGE_WINDOW_S
        ]
        rate = (copied_bytes(samples) - copied_bytes(first)) / (at - opened)
        assert copied_bytes(samples) < RECORDS * RECORD, "the backlog ran out inside the window"
        assert abs(rate - CAP) <= 0.1 * CAP, f"{rate:.0f} B/s copied over {at - opened:.1f} s, cap {CAP}"
        assert flow_gauge(samples, "mm2_throughput_limit_bytes_per_second") == CAP
        median = statistics.median(shown)
        assert abs(median - CAP) <= 0.1 * CAP, f"the rate metric shows {sorted(shown)} B/s at a cap of {CAP}"

        # the cap lifted by a reload (SIGHUP): the rest of the backlog goes at the clusters' speed. At the cap
        # it would take left / CAP s (over 45 s), less at most 10 s of catch-up after the tasks' restart.
        write_properties(config, props)
        before, lifted = mm2.scrape(), time.monotonic()
        assert mm2.proc is not None
        mm2.proc.send_signal(signal.SIGHUP)
        done = mm2.wait_for(lambda s: copied_bytes(s) >= RECORDS * RECORD, 120, "the rest, uncapped", 0.2)
        rest_s = time.monotonic() - lifted
        assert flow_gauge(done, "mm2_throughput_limit_bytes_per_second") == 0
        left = RECORDS * RECORD - copied_bytes(before)
        assert left / rest_s > 2 * CAP, f"{left:.0f} bytes in {rest_s:.1f} s after the cap was lifted"


@pytest.mark.timeout(600)
def test_a_capped_backfill_copies_at_its_cap_and_reports_the_rate(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    backlog(a, BACKFILL_RECORDS)
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
        "128K",
        "--json",
        timeout=540,
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = json.loads(run.stdout)
    totals = report["totals"]
    assert totals["records_copied"] == BACKFILL_RECORDS
    assert totals["throughput_limit_bytes_per_second"] == CAP
    assert report["copy_seconds"] >= BACKFILL_RECORDS * RECORD / CAP / 1.1, report["copy_seconds"]  # held back
    # The cap is a ceiling: never more than 10 % over it. The report's rate is over the whole copy phase,
    # its tasks' start and each transaction's commit included (the copier catches up on at most 10 s of
    # pauses), so on a busy machine it falls below the cap by what those cost (0.85x at load 8 in CI run 17, with
    # 1 MB batches and a 96 s copy; 0.99x here with a loop beside).
    # A cap that throttles below itself (half of it, say) still fails.
    assert totals["bytes_per_second"] <= 1.1 * CAP, json.dumps(report)
    assert totals["bytes_per_second"] >= 0.75 * CAP, json.dumps(report)
    committed = read_topic_committed(b, f"A.{TOPIC}", timeout_s=120)  # the backfill writes in transactions
    assert {p: len(log.committed) for p, log in committed.items()} == dict.fromkeys(
        range(PARTITIONS), BACKFILL_RECORDS // PARTITIONS
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
