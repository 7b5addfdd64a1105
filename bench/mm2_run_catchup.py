"""Catch-up benchmark: the stock ``mm2 run`` command copying a backlog, beside raw consume and raw produce.

    python -m bench.mm2_run_catchup                          # 200k x 100 B and 100k x 1 KB, 4 partitions
    python -m bench.mm2_run_catchup --records 50000 --size 1024 --compression lz4
    python -m bench.mm2_run_catchup --exactly-once --json    # also the exactly-once case; JSON at the end

What a new user sees, not a task in a bare worker: per case, on embedded brokers started here (and
killed at the end), topic T on A is filled, the raw consume and raw produce yardsticks are measured
in the same run (``bench/raw_clients.py``), then ``mm2 run`` is started as a subprocess on an
mm2.properties that says only which clusters, their bootstrap servers, ``A->B.enabled`` and the topic,
against a new, empty target broker B. Nothing is tuned. It is timed from the first record on B to the
last (B's end offsets equal A's), read by one consumer kept open on B every 20 ms, so mm2's start-up
(group join, topic creation) is left out, as it is from the yardsticks. The clock's resolution is one
look (20 ms plus the watcher's 10 ms fetch wait): a window under 0.5 s is flagged (``coarse``); give it
backlogs that take seconds.

Per case: the batch path (the default), the record path beside it (``A->B.batch.copy.enabled =
false``), and with ``--exactly-once`` a run with ``B.exactly.once.source.support = enabled``. For each:
the rate, its ratio to min(raw consume, raw produce), the CPU-seconds per GB the mm2 process (and any
child) used between the first and the last record, its peak RSS (VmHWM), and the copy path its
MirrorSource task reported ("copy path: ..." in its log).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer, TopicPartition

from bench._harness import (
    Case,
    add_case_arguments,
    best,
    broker_rss_line,
    cases_from,
    embedded_clusters,
    fill_source,
    peak_rss_mb,
    raw_yardsticks,
    tree_cpu_seconds,
)
from bench.raw_clients import Rate
from connect_core.kafka.client_logging import RDKAFKA_LOG
from embedded_kafka import EmbeddedKafkaCluster

SOURCE, TARGET = "A", "B"
#: B's end offsets are looked at this often (one cached-watermark read per partition: no request).
POLL_S = 0.02
#: A catch-up window shorter than this is within a few watermark refreshes of the clock: flagged, not trusted.
COARSE_S = 0.5
#: An offset no partition here reaches: the watcher fetches there, so every answer is empty but carries
#: the high watermark (on Apache Kafka an out-of-range reset to the end does the same).
_PAST_END = 1 << 50
#: The MirrorSource task's start line: "... replicating 4 topic-partitions A->B (batch path): [...]".
_TASK_PATH = re.compile(r"replicating \d+ topic-partitions \S+->\S+ \((\w+) path\)")
#: The worker's line for it, naming its copy loop: "Source task MirrorSourceConnector-0 ... (copy path: message)".
_WORKER_PATH = re.compile(
    r"Source task MirrorSourceConnector-\d+ finished initialization and start \(copy path: (\w+)\)"
)

#: What each contender adds to the stock mm2.properties (per flow or per target, as a user writes it).
CONTENDERS: dict[str, dict[str, str]] = {
    "batch path": {},
    "record path": {f"{SOURCE}->{TARGET}.batch.copy.enabled": "false"},
    # mm2 refuses exactly-once without the internal REST API its nodes fence zombie tasks over (KIP-710)
    "exactly-once": {f"{TARGET}.exactly.once.source.support": "enabled", "dedicated.mode.enable.internal.rest": "true"},
}


@dataclass
class Run:
    """One ``mm2 run`` catching up: rate over the first-to-last-record window and what the process used."""

    contender: str
    rate: Rate
    ratio: float
    cpu_s_per_gb: float
    peak_rss_mb: float
    copy_path: str
    startup_s: float  # mm2 started -> first record on B (not in the rate)
    pid: int  # the mm2 process (gone once the run is printed)

    def to_json(self) -> dict[str, Any]:
        return {
            "contender": self.contender,
            "records_per_s": round(self.rate.records_per_s),
            "mb_per_s": round(self.rate.mb_per_s, 1),
            "seconds": round(self.rate.seconds, 3),
            "ratio": round(self.ratio, 3),
            "cpu_s_per_gb": round(self.cpu_s_per_gb, 2),
            "peak_rss_mb": round(self.peak_rss_mb),
            "copy_path": self.copy_path,
            "startup_s": round(self.startup_s, 2),
            "mm2_pid": self.pid,
            "coarse": self.coarse,
        }

    @property
    def coarse(self) -> bool:
        return self.rate.seconds < COARSE_S


@dataclass
class CaseResult:
    case: Case
    partitions: int
    consume: Rate
    produce: Rate
    runs: list[Run] = field(default_factory=list)

    @property
    def slower(self) -> Rate:
        return self.consume if self.consume.records_per_s <= self.produce.records_per_s else self.produce

    def to_json(self) -> dict[str, Any]:
        return {
            "case": str(self.case),
            "records": self.case.records,
            "size": self.case.size,
            "compression": self.case.compression,
            "partitions": self.partitions,
            "raw_consume_records_per_s": round(self.consume.records_per_s),
            "raw_produce_records_per_s": round(self.produce.records_per_s),
            "runs": [r.to_json() for r in self.runs],
        }


def stock_properties(a: EmbeddedKafkaCluster, b: EmbeddedKafkaCluster, topic: str, extra: dict[str, str]) -> str:
    """The mm2.properties a new user writes for one flow of one topic; nothing tuned."""
    props = {
        "clusters": f"{SOURCE}, {TARGET}",
        f"{SOURCE}.bootstrap.servers": a.bootstrap_servers,
        f"{TARGET}.bootstrap.servers": b.bootstrap_servers,
        f"{SOURCE}->{TARGET}.enabled": "true",
        f"{SOURCE}->{TARGET}.topics": topic,
        **extra,
    }
    return "".join(f"{k} = {v}\n" for k, v in props.items())


class EndWatcher:
    """B's end offsets of one topic, read cheaply and often: one consumer, kept open, fetching past the end.

    Its fetches return no records, only each partition's high watermark, which librdkafka caches; reading
    the cache costs no request. Watermarks, not ListOffsets: the test broker answers LATEST wrongly.
    """

    def __init__(self, b: EmbeddedKafkaCluster) -> None:
        self._consumer = Consumer(
            {
                "bootstrap.servers": b.bootstrap_servers,
                "logger": RDKAFKA_LOG,
                "group.id": "bench-end-watcher",
                "enable.auto.commit": False,
                "allow.auto.create.topics": False,
                "auto.offset.reset": "latest",
                "fetch.wait.max.ms": 10,
                "topic.metadata.refresh.interval.ms": 1000,
            }
        )
        self._topic = ""
        self._partitions: list[int] = []

    def attach(self, topic: str, partitions: int) -> bool:
        """Assign once ``topic`` exists with its partitions (a full metadata request: never auto-creates)."""
        meta = self._consumer.list_topics(timeout=5).topics.get(topic)
        if meta is None or meta.error is not None or len(meta.partitions) < partitions:
            return False
        self._topic, self._partitions = topic, sorted(meta.partitions)
        self._consumer.assign([TopicPartition(topic, p, _PAST_END) for p in self._partitions])
        return True

    def ends(self) -> dict[int, int]:
        self._consumer.poll(0)  # serves errors/log events; no records can arrive
        out = {}
        for p in self._partitions:
            _low, high = self._consumer.get_watermark_offsets(TopicPartition(self._topic, p), cached=True)
            out[p] = max(high, 0)
        return out

    def close(self) -> None:
        self._consumer.close()


def _committed_counts(b: EmbeddedKafkaCluster, topic: str) -> dict[int, int]:
    """Records a read_committed reader sees per partition (the suite's own reader, applying the markers)."""
    from tests.oracle.committed_reader import read_topic_committed

    return {p: len(log.committed) for p, log in read_topic_committed(b, topic).items()}


def _copy_path(log: str) -> str:
    """``batch`` or ``record`` as the MirrorSource task said, with the worker's loop where it differs
    (``record (message loop)``: records copied without a SourceRecord each); ``unknown`` if never said."""
    path = ",".join(sorted(set(_TASK_PATH.findall(log)))) or "unknown"
    loops = sorted(set(_WORKER_PATH.findall(log)) - {path})
    return f"{path} ({','.join(loops)} loop)" if loops else path


def catch_up(
    a: EmbeddedKafkaCluster,
    topic: str,
    case: Case,
    source_ends: dict[int, int],
    contender: str,
    slower: Rate,
    timeout_s: float,
    workdir: Path,
) -> Run:
    """Start ``mm2 run`` against a new, empty B and time it from the first record on B to the last."""
    exactly_once = contender == "exactly-once"
    remote = f"{SOURCE}.{topic}"
    with embedded_clusters("B") as (b,):
        config = workdir / f"{contender.replace(' ', '-')}.properties"
        config.write_text(stock_properties(a, b, topic, CONTENDERS[contender]))
        log_path = workdir / f"{contender.replace(' ', '-')}.log"
        watcher = EndWatcher(b)
        with log_path.open("wb") as log:
            launched = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "-m", "mirror", "run", str(config)],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            try:
                first_at, done_at, cpu_first, cpu_done, rss = _watch(
                    proc, watcher, b, remote, source_ends, exactly_once, timeout_s, log_path
                )
            finally:
                watcher.close()
                proc.terminate()
                try:
                    proc.wait(60)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)
        output = log_path.read_text(errors="replace")
        copy_path = _copy_path(output)
        print(broker_rss_line([a, b]), flush=True)
    seconds = done_at - first_at
    rate = Rate(case.records, case.records * case.size, seconds)
    ratio = rate.records_per_s / slower.records_per_s if slower.records_per_s else 0.0
    gigabytes = case.records * case.size / 1e9
    cpu_per_gb = (cpu_done - cpu_first) / gigabytes
    return Run(contender, rate, ratio, cpu_per_gb, rss, copy_path, first_at - launched, proc.pid)


def _watch(
    proc: subprocess.Popen[bytes],
    watcher: EndWatcher,
    b: EmbeddedKafkaCluster,
    remote: str,
    source_ends: dict[int, int],
    exactly_once: bool,
    timeout_s: float,
    log_path: Path,
) -> tuple[float, float, float, float, float]:
    """(first record at, last record at, mm2 CPU-s at each, mm2 peak RSS MB) from B's watermarks.

    At-least-once: done when B's ends equal A's. Exactly-once: B's partitions also hold a commit marker
    per transaction, so done is when the ends stop moving at or past A's and the committed records
    match A's; the last record is the moment that final end was first seen.
    """
    first_at: float | None = None
    empty_at = time.perf_counter()  # the last look that saw B empty
    cpu_first = 0.0
    last_ends: dict[int, int] = {}
    changed_at = 0.0
    checked: dict[int, int] | None = None
    attached = False
    progress_at = time.monotonic()
    while True:
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"mm2 run exited ({proc.returncode}) before the copy completed:\n{tail}")
        now = time.perf_counter()
        if not attached:
            attached = watcher.attach(remote, len(source_ends))
            ends: dict[int, int] = {}
        else:
            ends = watcher.ends()
        if first_at is None and any(ends.values()):
            first_at, cpu_first = now, tree_cpu_seconds(proc.pid)
        elif first_at is None:
            empty_at = now
        if ends != last_ends:
            last_ends, changed_at, progress_at = ends, now, time.monotonic()
        if first_at is not None and not exactly_once and ends == source_ends:
            # a backlog copied between two looks: its window is at most the time since B was seen empty
            start = first_at if now > first_at else empty_at
            return start, now, cpu_first, tree_cpu_seconds(proc.pid), peak_rss_mb(proc.pid)
        if (
            first_at is not None
            and exactly_once
            and ends != checked
            and all(ends.get(p, 0) >= end for p, end in source_ends.items())
            and now - changed_at >= 1.0
        ):
            # CPU and RSS as the ends settled; reading B costs this process, not mm2
            cpu_done, rss = tree_cpu_seconds(proc.pid), peak_rss_mb(proc.pid)
            checked = ends
            if _committed_counts(b, remote) == source_ends:
                return (first_at if changed_at > first_at else empty_at), changed_at, cpu_first, cpu_done, rss
        if any(ends.get(p, 0) > end for p, end in source_ends.items()) and not exactly_once:
            raise RuntimeError(f"B holds more records than A: {ends} against {source_ends}")
        if time.monotonic() - progress_at > timeout_s:
            tail = log_path.read_text(errors="replace")[-3000:]
            raise TimeoutError(f"B's ends {ends} did not move for {timeout_s:.0f} s (A's: {source_ends}):\n{tail}")
        time.sleep(POLL_S)


def run_case(case: Case, partitions: int, rounds: int, timeout_s: float, exactly_once: bool) -> CaseResult:
    print(f"== mm2 run catching up A->B: {case}, {partitions} partitions, {rounds} round(s)", flush=True)
    contenders = ["batch path", "record path"] + (["exactly-once"] if exactly_once else [])
    consumes: list[Rate] = []
    produces: list[Rate] = []
    runs: dict[str, list[Run]] = {c: [] for c in contenders}
    with embedded_clusters("A") as (a,), tempfile.TemporaryDirectory(prefix="bench-mm2-run-") as tmp:
        for r in range(rounds):
            label = f"  round {r + 1}"
            topic, source_ends = fill_source(a, case, partitions, label)
            consume, produce = raw_yardsticks(a, topic, case, partitions, label)
            consumes.append(consume)
            produces.append(produce)
            slower = min(consume, produce, key=lambda rate: rate.records_per_s)
            for contender in contenders:
                run = catch_up(a, topic, case, source_ends, contender, slower, timeout_s, Path(tmp))
                runs[contender].append(run)
                print(
                    f"{label} mm2 run, {contender:<12}: {run.rate}  {run.cpu_s_per_gb:.2f} CPU-s/GB, "
                    f"peak RSS {run.peak_rss_mb:.0f} MB, copy path {run.copy_path}, "
                    f"first record {run.startup_s:.2f} s after the start (mm2 pid {run.pid})"
                    + (
                        f"\n    (window under {COARSE_S} s: too short to time well; use more --records)"
                        if run.coarse
                        else ""
                    ),
                    flush=True,
                )
    result = CaseResult(case, partitions, best(consumes), best(produces))
    for contender in contenders:
        top = max(runs[contender], key=lambda run: run.rate.records_per_s)
        # the ratio against this run's own best yardsticks, like every other bench
        top.ratio = top.rate.records_per_s / result.slower.records_per_s if result.slower.records_per_s else 0.0
        result.runs.append(top)
    return result


def table(results: list[CaseResult]) -> str:
    """One row per case and contender; the ratio is to min(raw consume, raw produce) of the same run."""
    head = ("case", "p", "contender", "rec/s", "MB/s", "ratio", "CPU-s/GB", "peak RSS MB", "copy path")
    rows = [head]
    for res in results:
        case = (str(res.case), str(res.partitions))
        for name, rate in (("raw consume", res.consume), ("raw produce", res.produce)):
            rows.append((*case, name, f"{rate.records_per_s:,.0f}", f"{rate.mb_per_s:.1f}", "", "", "", ""))
        for run in res.runs:
            rows.append(
                (
                    *case,
                    f"mm2 run, {run.contender}",
                    f"{run.rate.records_per_s:,.0f}",
                    f"{run.rate.mb_per_s:.1f}",
                    f"{run.ratio:.2f}" + ("*" if run.coarse else ""),
                    f"{run.cpu_s_per_gb:.2f}",
                    f"{run.peak_rss_mb:.0f}",
                    run.copy_path,
                )
            )
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if any(run.coarse for res in results for run in res.runs):
        lines.append(f"* window under {COARSE_S} s: at the clock's resolution, not a figure (use more --records)")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.mm2_run_catchup",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_case_arguments(
        p, "partitions of the mirrored topic", "repeat every measurement; the best round of each is compared"
    )
    p.add_argument(
        "--timeout", type=float, default=300.0, help="seconds B's end offsets may stand still before failing"
    )
    p.add_argument("--exactly-once", action="store_true", help="also run with B.exactly.once.source.support = enabled")
    p.add_argument("--json", action="store_true", help="also print the results as one JSON document at the end")
    args = p.parse_args(argv)
    for name in ("records", "size", "partitions", "rounds"):
        value = getattr(args, name)
        if value is not None and value < (0 if name == "size" else 1):
            p.error(f"--{name} must be a positive number, got {value}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    results = [run_case(c, args.partitions, args.rounds, args.timeout, args.exactly_once) for c in cases_from(args)]
    print(table(results), flush=True)
    if args.json:
        print(json.dumps({"results": [r.to_json() for r in results]}, indent=2), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
