"""A bytes-per-second cap shared by the threads that copy for one flow (live tasks) or one job (a backfill task).

An initial sync or a backfill otherwise takes all the bandwidth the clusters and the link give it. The cap
throttles the reading side: a copier asks for the bytes it has just fetched and sleeps while the flow is over
its budget, so fetching slows down and nothing is dropped, reordered or committed differently (ordering,
exactness and exactly-once are untouched: the cap only delays).

The rule is a virtual schedule (GCRA): every byte taken moves the flow's theoretical arrival time on by
``1/limit`` seconds; a caller ahead of it by more than :data:`BURST_S` waits the difference. A caller behind it
(its copier paused by its own work: a transaction's commit, a wait for the target) may catch up on at most
:data:`CATCH_UP_S` of it, so short pauses do not lower the rate below the limit. Over any window ``T`` the flow
takes at most ``limit * (T + BURST_S + CATCH_UP_S)`` bytes, plus one fetch; a changed limit applies from the
next call. Pure apart from the clock and the sleep, which are injected for tests.

The measured rate is over the last :data:`RATE_WINDOW_S`, each fetch's bytes spread over the time since the
fetch before it, so that a capped copier taking a few large fetches (a broker answers batches whole: one 1 MB
batch from each of four partitions is 8 s of a 512 KiB/s cap) reads its cap whatever the phase of its fetches
against the window; counted as points, such a flow read 0.76x of its cap. While a copier waits out what it
took, the window ends at its last fetch, since the wait is the budget of the bytes already counted.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable

#: How far ahead of its schedule a flow may run (a burst of this many seconds' worth of bytes).
BURST_S = 0.25
#: How much of its schedule a paused flow may make up for (seconds' worth of bytes, taken at once): the cap is
#: an average over about this long, as the rate it reports (:data:`RATE_WINDOW_S`) and Kafka's own quotas are.
CATCH_UP_S = 10.0
#: The measured rate is over this many seconds.
RATE_WINDOW_S = 10.0
#: A capped reader that fetches record batches asks for about this many seconds' worth of bytes per fetch
#: (never less than :data:`MIN_FETCH_BYTES`): a fetch of megabytes at a cap of kilobytes per second would
#: arrive, then wait many seconds, and the copy would advance in steps too coarse for the cap to hold.
FETCH_SLICE_S = 0.25
MIN_FETCH_BYTES = 16 * 1024

#: The connector key (per flow in mm2.properties: ``A->B.throughput.limit.bytes.per.second``).
THROUGHPUT_LIMIT = "throughput.limit.bytes.per.second"
THROUGHPUT_LIMIT_DOC = (
    "The most bytes per second (record keys, values and headers as fetched from the source) this flow's "
    "MirrorSource tasks copy together on one node; -1: no limit. A node running several of the flow's tasks "
    "shares the limit between them; N nodes take up to N times it. Applied by throttling the fetches, so "
    "order, exactness and exactly-once are unchanged; changeable by reloading mm2.properties."
)


def parse_limit(value: object) -> float | None:
    """None for no limit (absent, empty, or not positive); else bytes per second."""
    if value is None or str(value).strip() == "":
        return None
    limit = float(str(value).strip())
    return limit if limit > 0 else None


_UNITS = {
    "": 1,
    "K": 1024,
    "KB": 1024,
    "KIB": 1024,
    "M": 1024**2,
    "MB": 1024**2,
    "MIB": 1024**2,
    "G": 1024**3,
    "GB": 1024**3,
    "GIB": 1024**3,
}


def parse_bytes_per_second(text: str) -> float:
    """``10MB``, ``512K``, ``2000000``: bytes per second (K, M, G are powers of 1024); ValueError if not."""
    value = text.strip().upper().removesuffix("/S")
    number = value.rstrip("KMGIB")
    unit = value[len(number) :]
    try:
        amount = float(number)
    except ValueError:
        raise ValueError(f"{text!r} is not a number of bytes per second (for example 10MB, 512K or 2000000)") from None
    if unit not in _UNITS or amount <= 0:
        raise ValueError(f"{text!r} is not a positive number of bytes per second (for example 10MB, 512K or 2000000)")
    return amount * _UNITS[unit]


class ThroughputCap:
    """Thread-safe; ``take`` blocks the caller while the flow is ahead of its budget."""

    def __init__(self, limit: float | None, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:  # fmt: skip
        self._clock = clock
        self._sleep = sleep
        self._lock = threading.Lock()
        self._limit = limit
        self._tat: float | None = None  # the theoretical arrival time of the next byte (None: from now)
        self._window: deque[tuple[float, float, int]] = deque()  # (from, at, bytes) of each fetch, in time order
        self._window_bytes = 0
        self._last_at: float | None = None  # when the latest fetch was taken
        self._last_wait = 0.0  # and how long the cap made its copier wait

    @property
    def limit(self) -> float | None:
        return self._limit

    def fetch_bytes(self, configured: int) -> int:
        """The most bytes one fetch should ask for under the cap (``configured`` when there is none)."""
        limit = self._limit
        if limit is None:
            return configured
        return min(configured, max(MIN_FETCH_BYTES, int(limit * FETCH_SLICE_S)))

    def set_limit(self, limit: float | None) -> None:
        with self._lock:
            if limit != self._limit:
                self._limit = limit
                self._tat = None  # the new limit counts from now, not from the old schedule

    def take(self, nbytes: int) -> float:
        """Account ``nbytes`` just fetched; wait while over the limit. Returns the seconds waited.

        An empty fetch is no fetch: the next one's bytes count as earned since the last that brought any (an
        empty answer between them would otherwise leave a hole in the rate)."""
        if nbytes <= 0:
            return 0.0
        with self._lock:
            now = self._clock()
            self._note(now, nbytes)
            limit = self._limit
            wait = 0.0
            if limit is not None:
                start = now if self._tat is None else max(self._tat, now - CATCH_UP_S)
                self._tat = start + nbytes / limit
                wait = max(0.0, self._tat - now - BURST_S)
            self._last_wait = wait
        if wait > 0:
            self._sleep(wait)
        return wait

    def _note(self, now: float, nbytes: int) -> None:
        """Keep the fetch for the rate: its bytes count as earned since the fetch before it (at most a window)."""
        since = now - RATE_WINDOW_S if self._last_at is None else max(self._last_at, now - RATE_WINDOW_S)
        self._last_at = now
        self._window.append((since, now, nbytes))
        self._window_bytes += nbytes
        self._expire(now - RATE_WINDOW_S)

    def _expire(self, start: float) -> None:
        while self._window and self._window[0][1] < start:
            self._window_bytes -= self._window.popleft()[2]

    def rate(self) -> float:
        """Bytes per second taken over the last :data:`RATE_WINDOW_S` seconds, up to the latest fetch while its
        copier waits for the cap (then from there on as time passes)."""
        with self._lock:
            now = self._clock()
            if self._last_at is None:
                return 0.0
            end = max(self._last_at, now - self._last_wait)
            start = end - RATE_WINDOW_S
            self._expire(start)
            if not self._window:
                return 0.0
            taken = float(self._window_bytes)
            since, at, nbytes = self._window[0]
            if since < start:  # the oldest fetch straddles the window's start: only its share inside counts
                taken -= nbytes * (start - since) / (at - since)
            return taken / RATE_WINDOW_S


_caps: dict[str, ThroughputCap] = {}
_caps_lock = threading.Lock()


def flow_cap(flow: str, limit: float | None) -> ThroughputCap:
    """The one cap of ``flow`` in this process (its tasks share it), set to ``limit``."""
    with _caps_lock:
        cap = _caps.get(flow)
        if cap is None:
            cap = _caps[flow] = ThroughputCap(limit)
        else:
            cap.set_limit(limit)
        return cap


__all__ = [
    "BURST_S",
    "CATCH_UP_S",
    "FETCH_SLICE_S",
    "MIN_FETCH_BYTES",
    "THROUGHPUT_LIMIT",
    "ThroughputCap",
    "flow_cap",
    "parse_bytes_per_second",
    "parse_limit",
]
