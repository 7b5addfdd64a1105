"""Shared pieces of the benchmarks: own embedded brokers, RSS sampling, completion watching, output.

Every benchmark starts its own Tansu brokers (memory storage, so each run starts empty and they are
always killed at the end), measures the raw confluent-kafka yardsticks in the same run, and prints
one ``name: value`` line per figure so scripts (and the smoke test) can read them.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from bench.raw_clients import Rate
from connect_core.embedded import EmbeddedKafkaCluster, unique_name

_PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024


@contextlib.contextmanager
def embedded_clusters(*names: str) -> Iterator[list[EmbeddedKafkaCluster]]:
    """Start one Tansu process per name; all are SIGKILLed on exit, whatever happened."""
    clusters: list[EmbeddedKafkaCluster] = []
    try:
        for name in names:
            clusters.append(EmbeddedKafkaCluster(unique_name(f"bench-{name}")).start())
        yield clusters
    finally:
        for cluster in clusters:
            with contextlib.suppress(Exception):
                cluster.stop()


@contextlib.contextmanager
def start_herder(worker_props: dict[str, str]) -> Iterator[Any]:
    """A started StandaloneHerder (our Worker inside), stopped on exit.

    Imported lazily: the runtime is built by other hands and a benchmark should fail with a clear
    message, not an ImportError at module import, while it is missing.
    """
    try:
        standalone = importlib.import_module("connect_core.herder.standalone")
        builder = standalone.build_standalone_herder
    except (ImportError, AttributeError) as e:
        raise RuntimeError(f"the standalone herder is not available in this build ({e})") from e
    herder = builder(worker_props)
    herder.start()
    try:
        yield herder
    finally:
        herder.stop()


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
        self.done_at: float | None = None
        self._lock = threading.Lock()
        self._done = threading.Event()

    def add(self, n: int = 1) -> None:
        with self._lock:
            self.count += n
            if self.count >= self.expected and self.done_at is None:
                self.done_at = time.perf_counter()
                self._done.set()

    def wait(self, timeout_s: float) -> float:
        """``perf_counter()`` at the last acknowledgement; TimeoutError if it did not come in time."""
        if not self._done.wait(timeout_s):
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
