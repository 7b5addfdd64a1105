"""Mirror throughput benchmark: one MirrorSourceTask in our Worker vs raw consume and raw produce.

    python -m bench.mirror_throughput                      # 200k x 100 B and 100k x 1 KB, 4 partitions
    python -m bench.mirror_throughput --partitions 64      # same, 64 partitions (the memory check)
    python -m bench.mirror_throughput --records 50000 --size 1024
    python -m bench.mirror_throughput --exactly-once      # also (e): the same mirror, exactly-once

Per case, on embedded brokers started here (and killed at the end): one source broker A, and for
each phase that writes a new, empty target broker B (Tansu's memory store slows down as it fills, so
a shared B would favour whichever phase ran first):

1. fill topic T on A (raw produce, big batches);
2. (a) raw consume of T from A with confluent-kafka's batch ``consume()``;
3. (b) raw produce of the same records to B;
4. (d) a naive Python consume->produce copy A->B (context: the ceiling of any per-record Python loop);
5. (c) mirror A->B with MirrorSourceConnector (tasks.max=1) in our Worker (driven directly, as a
   one-connector standalone herder would), configured the way ``mm2`` configures it
   (``mirror.driver.maker_config.MirrorMakerConfig``), from the task's first poll until the target
   acknowledged the last record; then the target's end offsets are checked against the source's.
   (c') is the same run timed from the first acknowledgement (start-up latency left out).
6. (f) the same mirror on the record path (``batch.copy.enabled = false``: every record decoded and
   produced again), on its own empty target broker; (c) itself runs the batch path
   (``batch.copy.enabled = true``: the source's batches copied as bytes);
7. with ``--exactly-once``: (e) the same mirror (the batch path) with ``B.exactly.once.source.support =
   enabled`` (KIP-618: a transaction per poll batch, the source offsets in it; records count once their
   transaction committed), on its own empty target broker; printed as exactly-once / at-least-once
   (issue "Exactly-once mirroring": target >= 0.8).

``--compression lz4|zstd|...`` writes the source (and the raw-produce yardstick) with that codec.

Printed: the rates, the CPU seconds this process and each broker used in each phase, the mirroring
process's CPU-seconds per GB of record values (batch and record path), mirror / min(a, b), mirror /
naive copy, and this process's peak RSS while mirroring (sampled every 20 ms plus the kernel's VmHWM,
reset before the phase), with the delta over the RSS before it.
Targets (issue "Mirror connectors"): ratio >= 0.7 with 1 KB records; peak RSS < 500 MB on 64 partitions.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from bench import raw_clients
from bench._harness import (
    AckCounter,
    Case,
    CpuMeter,
    Line,
    RssSampler,
    add_case_arguments,
    best,
    broker_rss_line,
    cases_from,
    embedded_clusters,
    fill_source,
    parse_pairs,
    ratio_line,
    raw_yardsticks,
    running_connector,
)
from bench.raw_clients import Rate
from connect_core.api.records import SourceRecord
from connect_core.api.task import Task
from embedded_kafka import EmbeddedKafkaCluster, unique_name
from mirror.connectors.source_connector import MirrorSourceConnector
from mirror.connectors.source_metrics import SourceMetricsBase
from mirror.connectors.source_task import MirrorSourceTask
from mirror.driver.maker_config import SOURCE_CONNECTOR, MirrorMakerConfig, SourceAndTarget

SOURCE, TARGET = "A", "B"
CONNECTOR_CLASS = "bench.mirror_throughput:BenchMirrorSourceConnector"
RATIO_TARGET = 0.7
EXACTLY_ONCE_RATIO_TARGET = 0.8
RSS_TARGET_MB = 500.0


class _AckMetrics(SourceMetricsBase):
    """The task's own per-batch metrics hook (the path ``mm2 run --metrics-port`` uses), feeding the counter.

    Counting through the batch hook instead of overriding ``commit_record`` keeps the benchmark from
    adding a Python call per record to the path it measures.
    """

    def polled(self, topic: str, partition: int, records: int, value_bytes: int, max_age_ms: float) -> None:
        if CountingMirrorSourceTask.first_records_at is None:
            CountingMirrorSourceTask.first_records_at = time.perf_counter()

    def acknowledged(self, topic: str, partition: int, records: int, max_latency_ms: float) -> None:
        acks = CountingMirrorSourceTask.acks
        if acks is not None:
            acks.add(records)

    def throughput(self, limit: float | None, rate: float) -> None:
        return None


class CountingMirrorSourceTask(MirrorSourceTask):
    """The product task with its metrics hook counting acknowledged records per batch."""

    acks: ClassVar[AckCounter | None] = None
    first_poll_at: ClassVar[float | None] = None

    first_records_at: ClassVar[float | None] = None

    def start(self, props: dict[str, str]) -> None:
        self.metrics = _AckMetrics()
        super().start(props)

    def poll(self) -> list[SourceRecord] | None:
        if CountingMirrorSourceTask.first_poll_at is None:
            CountingMirrorSourceTask.first_poll_at = time.perf_counter()
        return super().poll()

    def poll_messages(self) -> list[Any] | None:
        if CountingMirrorSourceTask.first_poll_at is None:
            CountingMirrorSourceTask.first_poll_at = time.perf_counter()
        return super().poll_messages()

    def poll_batches(self, in_flight: bool) -> list[Any] | None:
        if CountingMirrorSourceTask.first_poll_at is None:
            CountingMirrorSourceTask.first_poll_at = time.perf_counter()
        return super().poll_batches(in_flight)


class BenchMirrorSourceConnector(MirrorSourceConnector):
    """MirrorSourceConnector whose tasks are the counting subclass; nothing else differs."""

    def task_class(self) -> type[Task]:
        return CountingMirrorSourceTask


@dataclass
class Result:
    case: Case
    partitions: int
    consume: Rate
    produce: Rate
    mirror: Rate
    mirror_steady: Rate
    copy: Rate
    rss_before_mb: float
    rss_peak_mb: float
    exactly_once: Rate | None = None
    record_path: Rate | None = None
    cpu_per_gb: float = 0.0  # CPU seconds of the mirroring process per GB of record values (batch path)
    record_cpu_per_gb: float = 0.0

    @property
    def slower(self) -> Rate:
        return self.consume if self.consume.records_per_s <= self.produce.records_per_s else self.produce

    @property
    def ratio(self) -> float:
        slower = self.slower.records_per_s
        return self.mirror.records_per_s / slower if slower else 0.0


#: extra mm2.properties lines from ``--mm2 KEY=VALUE`` (e.g. ``A.consumer.fetch.queue.backoff.ms=20``)
EXTRA_MM2: dict[str, str] = {}
#: what ``--exactly-once`` adds for phase (e)
#: what phase (c) adds: the batch path (source batches as bytes; off by default in the product for now)
BATCH_PATH_MM2: dict[str, str] = {"batch.copy.enabled": "true"}
#: what the record-path phase (f) adds: the batch path off, every record decoded and produced again
RECORD_PATH_MM2: dict[str, str] = {"batch.copy.enabled": "false"}
EXACTLY_ONCE_MM2: dict[str, str] = {
    f"{TARGET}.exactly.once.source.support": "enabled",
    "dedicated.mode.enable.internal.rest": "true",
    "offset.storage.replication.factor": "1",
}


def mm2_properties(
    a: EmbeddedKafkaCluster, b: EmbeddedKafkaCluster, topic: str, exactly_once: bool = False, record_path: bool = False
) -> dict[str, str]:
    """An mm2.properties for one flow A->B of one topic, sized for a single-broker test cluster."""
    return {
        "clusters": f"{SOURCE}, {TARGET}",
        f"{SOURCE}.bootstrap.servers": a.bootstrap_servers,
        f"{TARGET}.bootstrap.servers": b.bootstrap_servers,
        f"{SOURCE}->{TARGET}.enabled": "true",
        f"{SOURCE}->{TARGET}.topics": topic,
        "tasks.max": "1",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "sync.topic.acls.enabled": "false",
        "emit.heartbeats.enabled": "false",
        **(EXACTLY_ONCE_MM2 if exactly_once else {}),
        **(RECORD_PATH_MM2 if record_path else BATCH_PATH_MM2),  # exactly-once too copies batches (issue 37)
        **EXTRA_MM2,
    }


def herder_configs(
    a: EmbeddedKafkaCluster,
    b: EmbeddedKafkaCluster,
    topic: str,
    name: str,
    exactly_once: bool = False,
    record_path: bool = False,
) -> tuple[dict[str, str], dict[str, str]]:
    """(worker props, connector config) exactly as mm2 derives them."""
    mm2 = MirrorMakerConfig(mm2_properties(a, b, topic, exactly_once, record_path))
    pair = SourceAndTarget(SOURCE, TARGET)
    worker = mm2.worker_config(pair)
    connector = mm2.connector_base_config(pair, SOURCE_CONNECTOR)
    connector["name"] = name
    connector["connector.class"] = CONNECTOR_CLASS
    return worker, connector


def run_mirror(
    a: EmbeddedKafkaCluster,
    b: EmbeddedKafkaCluster,
    topic: str,
    case: Case,
    source_ends: dict[int, int],
    timeout_s: float,
    exactly_once: bool = False,
    record_path: bool = False,
) -> tuple[Rate, Rate, RssSampler]:
    """Mirror ``topic``; returns (first poll -> last ack, first ack -> last ack, the RSS sampler)."""
    CountingMirrorSourceTask.acks = acks = AckCounter(case.records)
    CountingMirrorSourceTask.first_poll_at = None
    CountingMirrorSourceTask.first_records_at = None
    sampler = RssSampler()
    name = unique_name("bench-mirror")
    worker, connector = herder_configs(a, b, topic, name, exactly_once, record_path)
    sampler.start()
    try:
        with running_connector(worker, connector) as run:
            done = acks.wait(timeout_s, run.check)
    finally:
        sampler.stop()
        CountingMirrorSourceTask.acks = None
    started = CountingMirrorSourceTask.first_poll_at
    assert started is not None
    remote = f"{SOURCE}.{topic}"
    target_ends = b.end_offsets(remote)
    if exactly_once:  # each partition also holds a COMMIT marker per transaction: count the records instead
        from tests.oracle.committed_reader import read_topic_committed

        target_ends = {p: len(log.committed) for p, log in read_topic_committed(b, remote).items()}
    if target_ends != source_ends:
        raise RuntimeError(f"target {remote} end offsets {target_ends} differ from the source's {source_ends}")
    first = acks.first_at if acks.first_at is not None else done
    got = CountingMirrorSourceTask.first_records_at or done
    total = Rate(case.records, case.records * case.size, done - started)
    steady = Rate(case.records, case.records * case.size, done - first)
    print(
        f"    (first records {got - started:.2f} s, first ack {first - started:.2f} s after the first poll)", flush=True
    )
    return total, steady, sampler


def run_case(case: Case, partitions: int, rounds: int, timeout_s: float, exactly_once: bool = False) -> Result:
    print(f"== mirror A->B: {case}, {partitions} partitions, {rounds} round(s), tasks.max=1", flush=True)
    consumes: list[Rate] = []
    produces: list[Rate] = []
    mirrors: list[Rate] = []
    steadies: list[Rate] = []
    copies: list[Rate] = []
    exactly: list[Rate] = []
    records: list[Rate] = []
    cpu_gb: list[float] = []
    record_cpu_gb: list[float] = []
    gigabytes = case.records * case.size / 1e9
    rss_before = rss_peak = 0.0
    with embedded_clusters("A") as (a,):
        for r in range(rounds):
            label = f"  round {r + 1}"
            topic, source_ends = fill_source(a, case, partitions, label)
            consume, produce = raw_yardsticks(a, topic, case, partitions, label)
            consumes.append(consume)
            produces.append(produce)
            with embedded_clusters("B") as (b,), CpuMeter([a, b]) as cpu:
                copy_target = b.create_topic(unique_name("bench-copy"), partitions)
                copies.append(
                    raw_clients.naive_copy(
                        a.bootstrap_servers, b.bootstrap_servers, topic, copy_target, partitions, case.records
                    )
                )
            print(f"{label} (d) copy    : {copies[-1]}\n      {cpu}", flush=True)
            with embedded_clusters("B") as (b,), CpuMeter([a, b]) as cpu:
                rate, steady, sampler = run_mirror(a, b, topic, case, source_ends, timeout_s)
                broker_rss = broker_rss_line([a, b])
            mirrors.append(rate)
            steadies.append(steady)
            cpu_gb.append(cpu.used.get("this process", 0.0) / gigabytes)
            print(
                f"{label} (c) mirror  : {rate}  peak RSS {sampler.peak_mb:.0f} MB "
                f"(+{sampler.delta_mb:.0f} MB over {sampler.baseline_mb:.0f} MB)\n      {cpu} (start-up included)",
                flush=True,
            )
            print(broker_rss, flush=True)
            if sampler.peak_mb >= rss_peak:
                rss_before, rss_peak = sampler.baseline_mb, sampler.peak_mb
            with embedded_clusters("B") as (b,), CpuMeter([a, b]) as cpu:
                rate, _steady, sampler = run_mirror(a, b, topic, case, source_ends, timeout_s, record_path=True)
            records.append(rate)
            record_cpu_gb.append(cpu.used.get("this process", 0.0) / gigabytes)
            print(f"{label} (f) record path: {rate}  peak RSS {sampler.peak_mb:.0f} MB\n      {cpu}", flush=True)
            if exactly_once:
                with embedded_clusters("B") as (b,), CpuMeter([a, b]) as cpu:
                    rate, _steady, sampler = run_mirror(a, b, topic, case, source_ends, timeout_s, True)
                exactly.append(rate)
                print(
                    f"{label} (e) mirror exactly-once: {rate}  peak RSS {sampler.peak_mb:.0f} MB\n      {cpu}",
                    flush=True,
                )
    result = Result(
        case,
        partitions,
        best(consumes),
        best(produces),
        best(mirrors),
        best(steadies),
        best(copies),
        rss_before,
        rss_peak,
        best(exactly) if exactly else None,
        best(records),
        min(cpu_gb),
        min(record_cpu_gb),
    )
    print(Line("(a) raw consume A", result.consume))
    print(Line("(b) raw produce B", result.produce))
    print(Line("(c) mirror A->B", result.mirror))
    print(Line("(c') mirror after first ack", result.mirror_steady))
    print(Line("(d) naive Python copy", result.copy))
    print(ratio_line("ratio mirror/min(a,b)", result.mirror, result.slower))
    print(ratio_line("ratio mirror'/min(a,b)", result.mirror_steady, result.slower))
    print(ratio_line("ratio mirror/naive copy", result.mirror, result.copy))
    assert result.record_path is not None
    print(Line("(f) mirror record path", result.record_path))
    print(ratio_line("ratio record path/min(a,b)", result.record_path, result.slower))
    print(f"{'CPU-s per GB (c) batch path':<28}: {result.cpu_per_gb:.2f}")
    print(f"{'CPU-s per GB (f) record path':<28}: {result.record_cpu_per_gb:.2f}")
    if result.exactly_once is not None:
        print(Line("(e) mirror exactly-once", result.exactly_once))
        print(ratio_line("ratio exactly-once/at-least-once", result.exactly_once, result.mirror))
    print(
        f"{'peak RSS mirroring':<28}: {rss_peak:.0f} MB (+{rss_peak - rss_before:.0f} MB over "
        f"{rss_before:.0f} MB before)",
        flush=True,
    )
    return result


def verdicts(results: list[Result]) -> list[str]:
    """The issue's targets, judged on what this run measured."""
    lines = []
    for r in results:
        if r.case.size >= 1024:
            ok = "met" if r.ratio >= RATIO_TARGET else "MISSED"
            lines.append(f"target ratio >= {RATIO_TARGET} ({r.case}, {r.partitions} p): {r.ratio:.2f} {ok}")
        if r.exactly_once is not None:
            eos = r.exactly_once.records_per_s / r.mirror.records_per_s if r.mirror.records_per_s else 0.0
            ok = "met" if eos >= EXACTLY_ONCE_RATIO_TARGET else "MISSED"
            lines.append(
                f"target exactly-once/at-least-once >= {EXACTLY_ONCE_RATIO_TARGET} ({r.case}, "
                f"{r.partitions} p): {eos:.2f} {ok}"
            )
        if r.partitions >= 64:
            ok = "met" if r.rss_peak_mb < RSS_TARGET_MB else "MISSED"
            lines.append(
                f"target RSS < {RSS_TARGET_MB:.0f} MB ({r.case}, {r.partitions} p): {r.rss_peak_mb:.0f} MB {ok}"
            )
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.mirror_throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_case_arguments(
        p, "partitions of the mirrored topic (64: memory check)", "repeat a/b/c; the best round of each is compared"
    )
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the mirror to finish")
    p.add_argument(
        "--exactly-once",
        action="store_true",
        help="also mirror with B.exactly.once.source.support=enabled and print the ratio to at-least-once",
    )
    p.add_argument(
        "--mm2",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra mm2.properties line (repeatable), e.g. A.consumer.fetch.queue.backoff.ms=20",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    EXTRA_MM2.update(parse_pairs(args.mm2))
    results = [run_case(c, args.partitions, args.rounds, args.timeout, args.exactly_once) for c in cases_from(args)]
    for line in verdicts(results):
        print(line)
    return 0


if __name__ == "__main__":
    # Run the copy imported under its real name: the Worker loads the connector by that name, and
    # its class attributes (the ack counter) must be the ones this run sets.
    from bench import mirror_throughput

    sys.exit(mirror_throughput.main())
