"""Shared pieces of the benchmarks: own embedded brokers, RSS sampling, completion watching, output.

Every benchmark starts its own Tansu brokers (memory storage, so each run starts empty and they are
always killed at the end), measures the raw confluent-kafka yardsticks in the same run, and prints
one ``name: value`` line per figure so scripts (and the smoke test) can read them.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from bench import raw_clients
from bench.raw_clients import Rate
from connect_core.model import ConnectorTaskId, State, TargetState
from embedded_kafka import EmbeddedKafkaCluster, unique_name

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def embedded_clusters(*names: str) -> Iterator[list[EmbeddedKafkaCluster]]:
    """Start one Tansu process per name; all are SIGKILLed on exit, whatever happened."""
    clusters: list[EmbeddedKafkaCluster] = []
    try:
        for name in names:
            clusters.append(EmbeddedKafkaCluster(unique_name(f"bench-{name}")).start())
        yield clusters
    finally:
        gc.collect()  # clients the run dropped go now, while their brokers still answer (no reconnect noise)
        for cluster in clusters:
            with contextlib.suppress(Exception):
                cluster.stop()


class WorkerRun:
    """One connector and its tasks running in our Worker (file offsets, in-memory statuses; with
    ``exactly.once.source.support=enabled`` in the worker props, a distributed worker's config and the
    offsets topic on the target instead, so the tasks are exactly-once tasks).

    The Worker is driven directly, as a one-connector standalone herder would drive it: start the
    connector, ask it for task configs (again whenever it requests a reconfiguration, as
    MirrorSourceConnector does once its first topic scan is done), start each task.
    """

    def __init__(self, worker_props: dict[str, str], connector_props: dict[str, str], offsets_file: Path) -> None:
        from connect_core.runtime.status import StatusRecorder
        from connect_core.runtime.worker import Worker
        from connect_core.runtime.worker_config import StandaloneConfig
        from connect_core.storage.file_offsets import FileOffsetBackingStore
        from connect_core.storage.memory import MemoryStatusBackingStore

        self.name = connector_props["name"]
        self.connector_props = connector_props
        self.status = MemoryStatusBackingStore()
        self.recorder = StatusRecorder(self.status, "bench-worker")
        if worker_props.get("exactly.once.source.support") == "enabled":
            # Exactly-once tasks need what a distributed worker has: its group.id and a Kafka offsets topic.
            from connect_core.runtime.distributed_config import DistributedConfig
            from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore

            self.worker = Worker(
                "bench-worker",
                DistributedConfig(worker_props),
                KafkaOffsetBackingStore.from_worker_config(worker_props),
                status_store=self.status,
            )
        else:
            self.worker = Worker(
                "bench-worker",
                StandaloneConfig(worker_props),
                FileOffsetBackingStore(offsets_file),
                status_store=self.status,
            )
        self.task_ids: list[ConnectorTaskId] = []
        self._reconfigure = threading.Event()

    # HerderHooks
    def request_task_reconfiguration(self, connector: str) -> None:
        self._reconfigure.set()

    def start(self, timeout_s: float = 60.0) -> WorkerRun:
        self.worker.start()
        started: Future[TargetState | None] = Future()

        def on_started(error: BaseException | None, state: TargetState | None) -> None:
            if error is not None:
                started.set_exception(error)
            else:
                started.set_result(state)

        self.worker.start_connector(
            self.name, self.connector_props, self, self.recorder, TargetState.STARTED, on_started
        )
        started.result(timeout_s)
        deadline = time.monotonic() + timeout_s
        configs = self.worker.connector_task_configs(self.name, self.connector_props)
        while not configs:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"connector {self.name} produced no task configs in {timeout_s:.0f} s")
            self._reconfigure.wait(0.1)
            self._reconfigure.clear()
            configs = self.worker.connector_task_configs(self.name, self.connector_props)
        for index, task_props in enumerate(configs):
            task_id = ConnectorTaskId(self.name, index)
            if not self.worker.start_source_task(
                task_id, self.connector_props, task_props, self.recorder, TargetState.STARTED, len(configs)
            ):
                self.check()
                raise RuntimeError(f"task {task_id} did not start")
            self.task_ids.append(task_id)
        return self

    def check(self) -> None:
        """Raise if the connector or a task has FAILED (so a benchmark stops instead of waiting)."""
        for status in [self.status.get_connector(self.name), *self.status.get_all_tasks(self.name)]:
            if status is not None and status.state is State.FAILED:
                raise RuntimeError(f"{status} failed:\n{status.trace}")

    def stop(self) -> None:
        self.worker.stop_and_await_tasks(self.task_ids)
        self.worker.stop_and_await_connector(self.name)
        self.worker.stop()


@contextlib.contextmanager
def running_connector(worker_props: dict[str, str], connector_props: dict[str, str]) -> Iterator[WorkerRun]:
    """A :class:`WorkerRun` started in a scratch directory and stopped on exit."""
    with tempfile.TemporaryDirectory(prefix="bench-worker-") as tmp:
        run = WorkerRun(worker_props, connector_props, Path(tmp) / "offsets")
        try:
            yield run.start()
        finally:
            run.stop()


# ----------------------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One backlog: ``records`` values of ``size`` bytes, written to the source with ``compression``."""

    records: int
    size: int
    compression: str = "none"

    def __str__(self) -> str:
        return f"{self.records} x {self.size} B" + ("" if self.compression == "none" else f" {self.compression}")


def add_case_arguments(p: argparse.ArgumentParser, partitions_help: str, rounds_help: str) -> None:
    """The case options both mirror benches take (what ``cases_from`` reads), declared once."""
    p.add_argument("--records", type=int, help="records per case (default: two cases, 200000x100 and 100000x1024)")
    p.add_argument("--size", type=int, help="record value size in bytes (with --records; default 1024)")
    p.add_argument("--compression", default="none", help="codec the source topic is written with (none, lz4, zstd...)")
    p.add_argument("--partitions", type=int, default=4, help=partitions_help)
    p.add_argument("--rounds", type=int, default=1, help=rounds_help)


def cases_from(args: argparse.Namespace) -> list[Case]:
    """``--records/--size/--compression``: one case; neither: the two defaults (200k x 100 B, 100k x 1 KB)."""
    if args.records is None and args.size is None:
        return [Case(200_000, 100, args.compression), Case(100_000, 1024, args.compression)]
    return [Case(args.records or 100_000, args.size if args.size is not None else 1024, args.compression)]


def fill_source(a: EmbeddedKafkaCluster, case: Case, partitions: int, label: str) -> tuple[str, dict[int, int]]:
    """A new topic on ``a`` holding the case's records (raw produce, big batches): (topic, end offsets)."""
    topic = a.create_topic(unique_name("bench-src"), partitions)
    fill = raw_clients.produce(a.bootstrap_servers, topic, partitions, case.records, case.size, case.compression)
    print(f"{label} fill A      : {fill}", flush=True)
    source_ends = a.end_offsets(topic)
    if sum(source_ends.values()) != case.records:
        raise RuntimeError(f"source holds {sum(source_ends.values())} records, not {case.records}")
    return topic, source_ends


def raw_yardsticks(a: EmbeddedKafkaCluster, topic: str, case: Case, partitions: int, label: str) -> tuple[Rate, Rate]:
    """(a) raw consume of ``topic`` from ``a`` and (b) raw produce of the same records to a new, empty B.

    Every writing phase gets its own empty target broker: Tansu's memory store slows down as it fills,
    which would otherwise penalise whichever phase runs last.
    """
    with CpuMeter([a]) as cpu:
        consume = raw_clients.consume(a.bootstrap_servers, topic, partitions, case.records)
    print(f"{label} (a) consume : {consume}\n      {cpu}", flush=True)
    with embedded_clusters("B") as (b,), CpuMeter([a, b]) as cpu:
        raw_target = b.create_topic(unique_name("bench-raw"), partitions)
        produce = raw_clients.produce(
            b.bootstrap_servers, raw_target, partitions, case.records, case.size, case.compression
        )
    print(f"{label} (b) produce : {produce}\n      {cpu}", flush=True)
    return consume, produce


# ---------------------------------------------------------------------------------------- memory


def _status_kb(field: str, pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def rss_mb(pid: int | str = "self") -> float:
    """Current resident set size of a process in MB (VmRSS)."""
    try:
        return _status_kb("VmRSS:", pid) / 1024
    except OSError:
        return 0.0


def _statm_rss_kb() -> int:
    # /proc/self/statm is one short line: cheaper to parse than status at a high sampling rate.
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * _PAGE_KB


class RssSampler:
    """Peak RSS of this process over a phase: a sampling thread plus the kernel's VmHWM.

    ``VmHWM`` is the lifetime peak; writing ``5`` to ``/proc/self/clear_refs`` resets it to the current
    RSS (Linux >= 4.0), so after ``start()`` it is the peak of the phase even between samples. Where the
    reset is refused, the sampled peak is used alone.
    """

    def __init__(self, interval_s: float = 0.02) -> None:
        self.interval_s = interval_s
        self.baseline_mb = 0.0
        self._peak_kb = 0
        self._hwm_reset = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> RssSampler:
        try:
            with open("/proc/self/clear_refs", "w", encoding="ascii") as f:
                f.write("5")
            self._hwm_reset = True
        except OSError:
            self._hwm_reset = False
        kb = _statm_rss_kb()
        self.baseline_mb = kb / 1024
        self._peak_kb = kb
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            kb = _statm_rss_kb()
            if kb > self._peak_kb:
                self._peak_kb = kb

    def stop(self) -> RssSampler:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        peak = max(self._peak_kb, _statm_rss_kb())
        if self._hwm_reset:
            peak = max(peak, _status_kb("VmHWM:"))
        self._peak_kb = peak
        return self

    @property
    def peak_mb(self) -> float:
        return self._peak_kb / 1024

    @property
    def delta_mb(self) -> float:
        return self.peak_mb - self.baseline_mb


# ------------------------------------------------------------------------------------------- cpu


def cpu_seconds(pid: int | str = "self") -> float:
    """User + system CPU seconds a process has used so far (all its threads); 0.0 once it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS


def _parents() -> dict[int, int]:
    """pid -> parent pid of every process (a thread's children file misses those other threads forked)."""
    out: dict[int, int] = {}
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"/proc/{entry.name}/stat", encoding="ascii") as f:
                    out[int(entry.name)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return out


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants (a child's CPU is in the parent's stat only once reaped)."""
    parents = _parents()
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        total += cpu_seconds(current)
        todo += [child for child, parent in parents.items() if parent == current]
    return total


def peak_rss_mb(pid: int) -> float:
    """A process's lifetime peak resident set (VmHWM) in MB; 0.0 once it is gone."""
    try:
        return _status_kb("VmHWM:", pid) / 1024
    except OSError:
        return 0.0


class CpuMeter:
    """CPU used during one phase by this process and each broker: on 2 shared cores, where time went."""

    def __init__(self, clusters: list[EmbeddedKafkaCluster]) -> None:
        self._pids = {c.name: c.pid for c in clusters if c.pid is not None}
        self._start: dict[str, float] = {}
        self._wall = 0.0
        self.used: dict[str, float] = {}

    def __enter__(self) -> CpuMeter:
        self._start = {"this process": cpu_seconds()} | {n: cpu_seconds(p) for n, p in self._pids.items()}
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self._wall = time.perf_counter() - self._wall
        now = {"this process": cpu_seconds()} | {n: cpu_seconds(p) for n, p in self._pids.items()}
        self.used = {n: now[n] - self._start[n] for n in now}

    def __str__(self) -> str:
        parts = ", ".join(f"{n} {s:.2f} s" for n, s in self.used.items())
        return f"cpu over {self._wall:.2f} s: {parts}"


# ------------------------------------------------------------------------------------ completion


class AckCounter:
    """Counts target acknowledgements (fed from a task's ``commit_record``) and notes when all arrived.

    ``commit_record`` runs once per record after the target broker acknowledged it, so the moment the
    count reaches ``expected`` is the moment the last record was durably written: as precise as the raw
    producer's ``flush()``, and far cheaper than a consumer watching the target.
    """

    def __init__(self, expected: int) -> None:
        self.expected = expected
        self.count = 0
        self.first_at: float | None = None
        self.done_at: float | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()

    def add(self, n: int = 1) -> None:
        with self._lock:
            if self.count == 0:
                self.first_at = time.perf_counter()
            self.count += n
            if self.count >= self.expected and self.done_at is None:
                self.done_at = time.perf_counter()
                self._done.set()

    def wait(self, timeout_s: float, check: Callable[[], None] | None = None) -> float:
        """``perf_counter()`` at the last acknowledgement; TimeoutError if it did not come in time.

        ``check`` runs every half second while waiting and may raise (a failed task ends the wait).
        """
        deadline = time.monotonic() + timeout_s
        while not self._done.wait(0.5):
            if check is not None:
                check()
            if time.monotonic() >= deadline:
                raise TimeoutError(f"only {self.count} of {self.expected} records acknowledged in {timeout_s:.0f} s")
        assert self.done_at is not None
        return self.done_at


# ---------------------------------------------------------------------------------------- output


@dataclass
class Line:
    """One printed figure: ``label: rate`` in a fixed format the smoke test parses."""

    label: str
    rate: Rate

    def __str__(self) -> str:
        return f"{self.label:<28}: {self.rate}"


def ratio_line(label: str, numerator: Rate, denominator: Rate) -> str:
    value = numerator.records_per_s / denominator.records_per_s if denominator.records_per_s else 0.0
    return f"{label:<28}: {value:.2f}"


def best(rates: list[Rate]) -> Rate:
    """The fastest round: on a shared 2-core machine the slowest rounds measure the neighbours."""
    return max(rates, key=lambda r: r.records_per_s)


def broker_rss_line(clusters: list[EmbeddedKafkaCluster]) -> str:
    parts = [f"{c.name}={rss_mb(c.pid):.0f} MB" for c in clusters if c.pid is not None]
    return f"{'broker RSS':<28}: " + ", ".join(parts)


def parse_pairs(items: list[str]) -> dict[str, str]:
    """``["k=v", ...]`` from repeatable CLI options; SystemExit naming a malformed one."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SystemExit(f"expected KEY=VALUE, got {item!r}")
        out[key.strip()] = value.strip()
    return out
