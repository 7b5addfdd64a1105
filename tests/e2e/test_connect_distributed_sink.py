"""A sink connector on two ``mm2 connect distributed`` workers: FileStreamSink with 4 tasks over a
4-partition topic, one worker SIGKILLed. The tasks move after the lost-work delay (shortened to 10 s
here) and every record ends up in the file; a record is written twice only if it belongs to a partition
the killed worker held and its offset was not committed yet (counted and printed)."""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, unique_name
from tests.e2e.test_connect_distributed import Cluster, http, wait_for

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

DELAY_MS = 10000
PARTITIONS = 4
PER_PARTITION = 250


def _records(first: int, count: int) -> list[dict[str, object]]:
    return [{"value": f"p{p}-{i}", "partition": p} for i in range(first, first + count) for p in range(PARTITIONS)]


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_sink_tasks_move_after_the_delay_and_every_record_is_written(
    kafka_cluster: KafkaCluster, tmp_workdir: Path
) -> None:
    prefix = unique_name("dsink")
    topics = (f"{prefix}-configs", f"{prefix}-offsets", f"{prefix}-status")
    data = kafka_cluster.create_topic(unique_name("dsink-in"), partitions=PARTITIONS)
    out = tmp_workdir / "out.txt"
    c = Cluster(kafka_cluster, tmp_workdir, topics[2])
    for _ in range(2):
        w = c.add_worker(prefix, topics, DELAY_MS)
        # the test bed's broker joins consumer groups in about session.timeout.ms/2 (broker-notes.md)
        with w.props_file.open("a") as f:
            f.write("consumer.session.timeout.ms=6000\nconsumer.heartbeat.interval.ms=1000\n")
    try:
        for w in c.workers:
            w.start()
        for w in c.workers:
            wait_for(f"worker {w.port} REST", w.ready, 60)
        kafka_cluster.produce(data, _records(0, PER_PARTITION))
        config = {"connector.class": "FileStreamSink", "tasks.max": "4", "topics": data, "file": str(out)}
        code, body = wait_for(
            "create",
            lambda: (lambda r: r if r[0] != 409 else None)(
                http("POST", f"{c.workers[0].base}/connectors", {"name": "files", "config": config}, timeout=60)
            ),
            60,
        )
        assert code == 201, body
        placement = wait_for("4 running tasks on both workers", lambda: (p := c.running_tasks(["files"])) and len(
            {v for k, v in p.items() if k != "files"}) == 2 and p, 90)  # fmt: skip
        wait_for("first records written", lambda: len(_lines(out)) >= PARTITIONS * PER_PARTITION, 90)

        leader = c.leader()
        victim = next(w for w in c.workers if w is not leader)
        survivor = leader
        victim_tasks = sorted(k for k, v in placement.items() if v == victim.worker_id and k != "files")
        assert victim_tasks
        t0 = time.monotonic()
        c.kill(victim, signal.SIGKILL)
        assert victim.proc is not None
        victim.proc.wait(10)
        kafka_cluster.produce(data, _records(PER_PARTITION, PER_PARTITION))

        def moved() -> dict[str, str] | None:
            p = c.running_tasks(["files"])
            return p if p is not None and set(p.values()) == {survivor.worker_id} else None

        wait_for("tasks moved to the survivor", moved, 120, interval=0.5)
        elapsed = time.monotonic() - t0
        assert elapsed >= DELAY_MS / 1000, f"tasks moved after {elapsed:.1f}s, before the {DELAY_MS} ms delay"
        expected = {f"p{p}-{i}" for i in range(2 * PER_PARTITION) for p in range(PARTITIONS)}
        wait_for("every record written", lambda: expected <= set(_lines(out)), 120, interval=0.5)
        code, topics_body = http("GET", f"{survivor.base}/connectors/files/topics")
        assert code == 200 and topics_body == {"files": {"topics": [data]}}
    finally:
        c.stop_all()

    lines = _lines(out)
    counts = Counter(lines)
    assert set(counts) == expected, f"unexpected lines: {sorted(set(counts) - expected)[:5]}"
    duplicates = {line: n for line, n in counts.items() if n > 1}
    first_seen: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}
    seen: set[str] = set()
    for line in lines:
        if line not in seen:
            seen.add(line)
            p, i = line[1:].split("-")
            first_seen[int(p)].append(int(i))
    for p, order in first_seen.items():
        assert order == sorted(order), f"partition {p} written out of order"
    print(
        f"duplicates across the SIGKILL: {sum(n - 1 for n in duplicates.values())} records "
        f"(of {len(expected)}), partitions {sorted({d.split('-')[0] for d in duplicates})}"
    )
    # Only what the killed worker had written before it died can come twice (its uncommitted tail);
    # records produced after the kill are read once, by the survivor, with commits on every rebalance.
    assert all(n == 2 for n in duplicates.values()), duplicates
    assert all(int(d.split("-")[1]) < PER_PARTITION for d in duplicates), sorted(duplicates)[:5]
    c.assert_never_ran_twice()
