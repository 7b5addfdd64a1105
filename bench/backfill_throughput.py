"""Backfill throughput: ``mm2 backfill`` on Spark (local[1], local[2]) vs one live mirror task, same backlog.

    python -m bench.backfill_throughput                              # 300k x 1 KB over 8 partitions
    python -m bench.backfill_throughput --records 50000 --size 1024

Each contender runs ``--rounds`` times (default 5), the contenders taking turns, and its best round
counts: on a shared 2-core machine the slow rounds measure the neighbours. The median of each round's
own local[2]/live ratio (contenders of one round run seconds apart) is printed beside it. On embedded
brokers started here: one source broker A holding the backlog, and a new, empty target broker B for
every contender (Tansu's memory store slows down as it fills). Per contender: records/s, MB/s, the CPU
seconds of the copying processes per GB copied (this process for the live task; this process, Spark's
JVM and its Python workers for backfill), and Spark's start-up time separately (the session is built
before the clock starts; the first session launches the JVM, later ones reuse it).
Raw consume of A and raw produce to B, measured in the same run, are the yardstick.

The two are timed alike: the live task from its first poll to its last acknowledged record, backfill
from its first Spark task's first fetch (its clients up and its producer's id held, as the live task's
are before its first poll) to its last task's last commit (``copy_seconds`` of the job's report). The
whole job (planning, topic creation, Spark scheduling, copy) is printed beside it. Target: backfill on
local[2] (start-up excluded) >= 1.0x the live task.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from bench import raw_clients
from bench._harness import Case, Line, embedded_clusters, ratio_line
from bench.mirror_throughput import run_mirror
from bench.raw_clients import Rate
from embedded_kafka import EmbeddedKafkaCluster, unique_name
from mirror.driver.driver import make_config
from mirror.jobs.backfill.job import run_job
from mirror.jobs.spark import spark_context

RATIO_TARGET = 1.0
_GB = 1e9


def _children() -> dict[int, list[int]]:
    out: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        out.setdefault(int(fields[1]), []).append(int(name))
    return out


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system) of ``root`` and every live descendant."""
    children, total, stack = _children(), 0.0, [root]
    tick = os.sysconf("SC_CLK_TCK")
    while stack:
        pid = stack.pop()
        stack.extend(children.get(pid, []))
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / tick
        except OSError:
            continue
    return total


@dataclass
class Measured:
    rate: Rate
    cpu_s: float
    startup_s: float = 0.0
    job: Rate | None = None  # backfill: the whole job, planning and Spark scheduling included

    @property
    def cpu_per_gb(self) -> float:
        return self.cpu_s / (self.rate.bytes / _GB) if self.rate.bytes else 0.0


def mm2_config(a: EmbeddedKafkaCluster, b: EmbeddedKafkaCluster, topic: str) -> dict[str, str]:
    return {
        "clusters": "A, B",
        "A.bootstrap.servers": a.bootstrap_servers,
        "B.bootstrap.servers": b.bootstrap_servers,
        "A->B.enabled": "true",
        "A->B.topics": topic,
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "emit.heartbeats.enabled": "false",
    }


def _import_copier(items: Iterable[int]) -> Iterator[int]:
    import mirror.jobs.backfill.copy  # noqa: F401

    return iter(items)


def run_backfill(a: EmbeddedKafkaCluster, topic: str, case: Case, master: str) -> Measured:
    with embedded_clusters("B") as (b,):
        config = make_config(mm2_config(a, b, topic))
        t0 = time.perf_counter()
        with spark_context(f"bench backfill {master}", master) as spark:
            startup = time.perf_counter() - t0
            # executors' Python workers up, with the copier's modules imported, before the clock (a live
            # task's code is imported before its first poll too)
            spark.parallelize(range(4), 4).mapPartitions(_import_copier).count()
            cpu0 = tree_cpu_seconds(os.getpid())
            t1 = time.perf_counter()
            report = run_job(config, "A", "B", topic, spark=spark)
            elapsed = time.perf_counter() - t1
            cpu = tree_cpu_seconds(os.getpid()) - cpu0
        if report.records_copied != case.records:
            raise RuntimeError(f"backfill copied {report.records_copied} records, not {case.records}")
        target_ends = b.end_offsets(f"A.{topic}")
        if sum(target_ends.values()) < case.records:
            raise RuntimeError(f"target holds {sum(target_ends.values())} offsets, fewer than {case.records}")
    size = case.records * case.size
    return Measured(Rate(case.records, size, report.copy_seconds), cpu, startup, Rate(case.records, size, elapsed))


def run_live(a: EmbeddedKafkaCluster, topic: str, case: Case, source_ends: dict[int, int]) -> Measured:
    with embedded_clusters("B") as (b,):
        cpu0 = tree_cpu_seconds(os.getpid())
        rate, _steady, _sampler = run_mirror(a, b, topic, case, source_ends, timeout_s=600)
        cpu = tree_cpu_seconds(os.getpid()) - cpu0
    return Measured(rate, cpu)


def describe(label: str, m: Measured) -> str:
    extra = f", Spark start-up {m.startup_s:.1f} s (not counted)" if m.startup_s else ""
    job = f", whole job {m.job.seconds:.2f} s = {m.job.records_per_s:,.0f} rec/s" if m.job else ""
    return f"{Line(label, m.rate)}  cpu {m.cpu_s:.1f} s = {m.cpu_per_gb:.1f} cpu-s/GB{extra}{job}"


def round_ratios_line(label: str, backfills: Sequence[Measured], lives: Sequence[Measured]) -> str:
    ratios = [
        b.rate.records_per_s / m.rate.records_per_s if m.rate.records_per_s else 0.0
        for b, m in zip(backfills, lives, strict=True)
    ]
    listed = ", ".join(f"{r:.2f}" for r in ratios)
    return f"{label:<28}: median {statistics.median(ratios):.2f} ({listed})"


def startup_line(backfills: Sequence[Measured]) -> str:
    """The first session launches Spark's JVM (as every ``mm2 backfill`` does); later ones reuse it."""
    first, later = backfills[0].startup_s, [m.startup_s for m in backfills[1:]]
    rest = f", later sessions {min(later):.1f}-{max(later):.1f} s (JVM up)" if later else ""
    return f"{'Spark start-up':<28}: first session {first:.1f} s (JVM launched){rest}, not counted"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--partitions", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=5, help="repeat each contender; the best round counts")
    args = parser.parse_args(argv)
    case = Case(args.records, args.size)
    print(f"== backfill A->B: {case}, {args.partitions} partitions", flush=True)
    with embedded_clusters("A") as (a,):
        topic = a.create_topic(unique_name("bench-backlog"), args.partitions)
        fill = raw_clients.produce(a.bootstrap_servers, topic, args.partitions, case.records, case.size)
        print(f"  fill A            : {fill}", flush=True)
        source_ends = a.end_offsets(topic)
        consume = raw_clients.consume(a.bootstrap_servers, topic, args.partitions, case.records)
        with embedded_clusters("B") as (b,):
            raw_target = b.create_topic(unique_name("bench-raw"), args.partitions)
            produce = raw_clients.produce(b.bootstrap_servers, raw_target, args.partitions, case.records, case.size)
        lives, ones, twos = [], [], []
        for r in range(args.rounds):
            lives.append(run_live(a, topic, case, source_ends))
            print(describe(f"  round {r + 1} live", lives[-1]), flush=True)
            ones.append(run_backfill(a, topic, case, "local[1]"))
            print(describe(f"  round {r + 1} local[1]", ones[-1]), flush=True)
            twos.append(run_backfill(a, topic, case, "local[2]"))
            print(describe(f"  round {r + 1} local[2]", twos[-1]), flush=True)
        live, one, two = (max(ms, key=lambda m: m.rate.records_per_s) for ms in (lives, ones, twos))
    print(Line("(a) raw consume A", consume))
    print(Line("(b) raw produce B", produce))
    print(describe("(live) mirror task", live))
    print(describe("(bf1) backfill local[1]", one))
    print(describe("(bf2) backfill local[2]", two))
    print(startup_line(ones + twos))
    slower = consume if consume.records_per_s <= produce.records_per_s else produce
    print(ratio_line("ratio backfill[1]/live", one.rate, live.rate))
    print(ratio_line("ratio backfill[2]/live", two.rate, live.rate))
    print(round_ratios_line("ratio backfill[2]/live per round", twos, lives))
    print(ratio_line("ratio backfill[2]/min(a,b)", two.rate, slower))
    print(ratio_line("ratio live/min(a,b)", live.rate, slower))
    ratio = two.rate.records_per_s / live.rate.records_per_s if live.rate.records_per_s else 0.0
    verdict = "meets" if ratio >= RATIO_TARGET else "misses"
    print(
        f"verdict: backfill on local[2] {verdict} the target ({ratio:.2f}x the live task, target {RATIO_TARGET:.1f}x)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
