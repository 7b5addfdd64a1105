"""What a sink-task loop reports (Kafka's ``WorkerSinkTask`` SinkTaskMetricsGroup), as a hook protocol,
and the pure pieces behind Java's windowed statistics. No Prometheus here: the exporter is
:mod:`connect_core.runtime.sink_metrics_prometheus`.

The loop calls each hook at most once per poll, put, commit or rebalance, never per record.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Mapping
from typing import Protocol, TypeVar

#: Kafka's ``metrics.sample.window.ms`` and ``metrics.num.samples`` defaults: Java's Max/Avg look at
#: the samples of (up to) the last two 30-second windows.
SAMPLE_WINDOW_S = 30.0
NUM_SAMPLES = 2


class SinkTaskMetrics(Protocol):
    """Per-batch observations of one sink task; implementations must be cheap and must not raise."""

    def records_read(self, count: int) -> None:
        """A poll returned ``count`` records (before conversion and transformations): sink-record-read."""

    def batch_put(self, count: int, duration_s: float) -> None:
        """``put`` accepted a batch of ``count`` records (after transformations) in ``duration_s``:
        sink-record-send and put-batch-time. Called for every put, an empty one included, as Java does."""

    def partition_count(self, count: int) -> None:
        """The consumer's assignment changed to ``count`` partitions."""

    def commit_seq_no(self, seq_no: int) -> None:
        """An offset commit was started with this sequence number (offset-commit-seq-no)."""

    def commit_completed(self) -> None:
        """The latest offset commit completed successfully (offset-commit-completion)."""

    def commit_skipped(self) -> None:
        """A commit completion arrived after a newer commit had started and was ignored (offset-commit-skip)."""

    def active_records(self, count: int) -> None:
        """Records read but not yet committed, summed over the partitions (sink-record-active-count)."""

    def close(self) -> None:
        """The task instance stopped: it holds no partitions and no active records any more."""


class NoSinkTaskMetrics:
    """The hooks of a task run without an exporter (tests, benchmarks)."""

    def records_read(self, count: int) -> None:
        pass

    def batch_put(self, count: int, duration_s: float) -> None:
        pass

    def partition_count(self, count: int) -> None:
        pass

    def commit_seq_no(self, seq_no: int) -> None:
        pass

    def commit_completed(self) -> None:
        pass

    def commit_skipped(self) -> None:
        pass

    def active_records(self, count: int) -> None:
        pass

    def close(self) -> None:
        pass


K = TypeVar("K")


def active_record_count(consumed: Mapping[K, int], committed: Mapping[K, int]) -> int:
    """Java's computeSinkRecordLag: per partition with a committed offset, the consumed offset minus it
    (never negative: a task may hand back older offsets), summed."""
    total = 0
    for tp, done in committed.items():
        read = consumed.get(tp)
        if read is not None and read > done:
            total += read - done
    return total


class WindowedStat:
    """Max and average of the values recorded in the last ``samples`` windows of ``window_s`` (Java's
    SampledStat with its Max and Avg): old values age out, and with none left both are NaN, as in Java.

    Written by the task thread, read by the exporter's thread: a lock keeps the windows consistent.
    """

    def __init__(
        self, window_s: float = SAMPLE_WINDOW_S, samples: int = NUM_SAMPLES, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._window_s = window_s
        self._samples = max(1, samples)
        self._clock = clock
        # per window: [start, count, sum, max]
        self._windows: list[list[float]] = []
        self._lock = threading.Lock()

    def record(self, value: float) -> None:
        now = self._clock()
        with self._lock:
            windows = self._windows
            if not windows or now - windows[-1][0] >= self._window_s:
                windows.append([now, 0.0, 0.0, -math.inf])
                del windows[: -self._samples]
            current = windows[-1]
            current[1] += 1
            current[2] += value
            if value > current[3]:
                current[3] = value

    def _live(self) -> list[list[float]]:
        oldest = self._clock() - self._window_s * self._samples
        return [w for w in self._windows if w[0] >= oldest]

    def max(self) -> float:
        with self._lock:
            live = self._live()
        return max((w[3] for w in live), default=math.nan)

    def avg(self) -> float:
        with self._lock:
            live = self._live()
        count = sum(w[1] for w in live)
        return sum(w[2] for w in live) / count if count else math.nan


__all__ = [
    "NUM_SAMPLES",
    "SAMPLE_WINDOW_S",
    "NoSinkTaskMetrics",
    "SinkTaskMetrics",
    "WindowedStat",
    "active_record_count",
]
