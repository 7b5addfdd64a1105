"""The throughput cap: what a flow (or a backfill task) takes over any window stays within its limit plus a
quarter-second burst and what a paused copier may catch up, a copier paused by its own work (commits) still
averages its limit, a capped batch fetch asks for a quarter-second's worth, a changed limit applies from the
next fetch, the measured rate reads the cap whatever the size and phase of the fetches and falls to nothing when
the copying stops, and the limit's text forms parse."""

from __future__ import annotations

import pytest

from mirror.connectors.throughput_cap import (
    BURST_S,
    CATCH_UP_S,
    FETCH_SLICE_S,
    MIN_FETCH_BYTES,
    RATE_WINDOW_S,
    ThroughputCap,
    flow_cap,
    parse_bytes_per_second,
    parse_limit,
)


class FakeTime:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept += seconds
        self.now += seconds


def copy(cap: ThroughputCap, t: FakeTime, seconds: float, fetch: int, fetch_cost_s: float = 0.001) -> int:
    """A copier that fetches ``fetch`` bytes at a time, as fast as the cap lets it, for ``seconds``."""
    end, taken = t.now + seconds, 0
    while t.now < end:
        cap.take(fetch)
        taken += fetch
        t.now += fetch_cost_s
    return taken


@pytest.mark.parametrize("fetch", [1000, 64 * 1024, 500_000])
def test_a_minute_of_copying_stays_within_the_limit_and_its_burst(fetch: int) -> None:
    t = FakeTime()
    cap = ThroughputCap(1_000_000, clock=t.clock, sleep=t.sleep)
    taken = copy(cap, t, 60.0, fetch)
    assert 60 * 1_000_000 * 0.98 <= taken <= 1_000_000 * (60 + BURST_S + CATCH_UP_S) + fetch


def test_a_copier_that_pauses_for_its_commits_still_averages_its_limit() -> None:
    t = FakeTime()
    cap = ThroughputCap(256 * 1024, clock=t.clock, sleep=t.sleep)
    taken, start = 0, t.now
    for _ in range(20):  # 20 transactions: 5 s of copying each, then a commit that takes 1 s
        taken += copy(cap, t, 5.0, 64 * 1024)
        t.now += 1.0
    rate = taken / (t.now - start)
    assert 0.95 * 256 * 1024 <= rate <= 256 * 1024 * (1 + (BURST_S + CATCH_UP_S) / (t.now - start)) + 64 * 1024


def test_a_long_pause_is_not_made_up_for_beyond_its_catch_up() -> None:
    t = FakeTime()
    cap = ThroughputCap(1_000_000, clock=t.clock, sleep=t.sleep)
    copy(cap, t, 5.0, 10_000)
    t.now += 60.0  # idle (nothing to copy) for a minute
    slept_before = t.slept
    taken = copy(cap, t, CATCH_UP_S + 2.0, 10_000)
    assert taken <= 1_000_000 * (2.0 + BURST_S + 2 * CATCH_UP_S) + 10_000
    assert t.slept > slept_before  # it waits again once the catch-up is spent


def test_a_capped_batch_fetch_asks_for_a_slice_of_the_limit() -> None:
    assert ThroughputCap(None).fetch_bytes(16 << 20) == 16 << 20
    assert ThroughputCap(512 * 1024).fetch_bytes(16 << 20) == int(512 * 1024 * FETCH_SLICE_S)
    assert ThroughputCap(1024).fetch_bytes(16 << 20) == MIN_FETCH_BYTES
    assert ThroughputCap(1 << 30).fetch_bytes(1 << 20) == 1 << 20  # never more than configured


def test_threads_of_one_flow_share_the_limit() -> None:
    t = FakeTime()
    cap = ThroughputCap(2_000_000, clock=t.clock, sleep=t.sleep)
    taken = 0
    end = t.now + 30
    while t.now < end:  # two copiers taking turns: together within the one limit
        cap.take(100_000)
        cap.take(100_000)
        taken += 200_000
    assert taken <= 2_000_000 * (30 + BURST_S + CATCH_UP_S) + 200_000


def test_no_limit_never_waits_but_still_measures_the_rate() -> None:
    t = FakeTime()
    cap = ThroughputCap(None, clock=t.clock, sleep=t.sleep)
    for _ in range(100):
        cap.take(10_000)
        t.now += 0.1
    assert t.slept == 0.0
    assert cap.rate() == pytest.approx(100_000, rel=0.02)  # 10 s window: 100 fetches of 10 kB in 10 s


@pytest.mark.parametrize("fetch_cost_s", [0.001, 0.1])
@pytest.mark.parametrize("fetch", [64 * 1024, 1_000_000, 4_000_000])
def test_a_capped_copier_of_large_batches_reads_its_cap_whatever_their_phase(fetch: int, fetch_cost_s: float) -> None:
    """A broker answers a record batch whole, whatever the fetch asked for: 1 MB batches are 2 s of a 512 KiB/s
    cap, one from each of four partitions 8 s. The rate read after every wait (as the source task reports it)
    stays at the cap however long each fetch takes (a busy machine stretches them); counted as points in a
    10 s window, 4 MB fetches read 0.76x of it."""
    t = FakeTime()
    cap = ThroughputCap(512 * 1024, clock=t.clock, sleep=t.sleep)
    readings = []
    while t.now < 1000.0 + 120:
        cap.take(fetch)
        readings.append(cap.rate())
        t.now += fetch_cost_s
    settled = readings[len(readings) // 2 :]
    assert min(settled) >= 0.95 * 512 * 1024 and max(settled) <= 1.05 * 512 * 1024, (min(settled), max(settled))


def test_empty_fetches_between_capped_ones_leave_no_hole_in_the_rate() -> None:
    """A reader that does not block while its fetch is in flight asks again and gets nothing, and the rate is
    read after every fetch (as the source task reports it): 2 s of budget a fetch, then empty ones."""
    t = FakeTime()
    cap = ThroughputCap(128 * 1024, clock=t.clock, sleep=t.sleep)
    readings = []
    while t.now < 1000.0 + 60:
        cap.take(256 * 1024)
        readings.append(cap.rate())
        for _ in range(3):
            t.now += 0.02
            cap.take(0)
            readings.append(cap.rate())
    settled = readings[len(readings) // 2 :]
    assert 0.97 * 128 * 1024 <= min(settled) <= max(settled) <= 1.03 * 128 * 1024, (min(settled), max(settled))


def test_the_rate_falls_to_nothing_once_the_copying_stops() -> None:
    t = FakeTime()
    cap = ThroughputCap(512 * 1024, clock=t.clock, sleep=t.sleep)
    for _ in range(10):
        cap.take(1_000_000)
    busy = cap.rate()
    t.now += RATE_WINDOW_S / 2  # idle (nothing left to copy), past the last wait
    assert 0 < cap.rate() < busy
    t.now += RATE_WINDOW_S + 2.0  # a window and the last fetch's wait later
    assert cap.rate() == 0.0


def test_a_lifted_or_changed_limit_applies_from_the_next_fetch() -> None:
    t = FakeTime()
    cap = ThroughputCap(100_000, clock=t.clock, sleep=t.sleep)
    copy(cap, t, 10.0, 50_000)
    cap.set_limit(None)
    before = t.slept
    copy(cap, t, 1.0, 50_000)
    assert t.slept == before  # lifted: no more waiting, and no debt carried over
    cap.set_limit(1_000_000)
    taken = copy(cap, t, 20.0, 50_000)
    assert taken <= 1_000_000 * (20 + BURST_S) + 50_000 and taken >= 0.95 * 20 * 1_000_000


def test_the_tasks_of_one_flow_in_a_process_share_one_cap() -> None:
    first = flow_cap("X->Y-test", 1000)
    second = flow_cap("X->Y-test", 5000)
    assert first is second and first.limit == 5000
    assert flow_cap("X->Z-test", None).limit is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2000000", 2_000_000),
        ("10MB", 10 * 1024**2),
        ("512K", 512 * 1024),
        ("1.5MiB", 1.5 * 1024**2),
        ("1G", 1024**3),
        ("4mb/s", 4 * 1024**2),
    ],
)
def test_limits_parse(text: str, expected: float) -> None:
    assert parse_bytes_per_second(text) == expected


@pytest.mark.parametrize("text", ["", "fast", "10XB", "-5", "0", "MB"])
def test_a_limit_that_is_not_a_positive_size_is_one_clear_error(text: str) -> None:
    with pytest.raises(ValueError, match="bytes per second"):
        parse_bytes_per_second(text)


def test_the_connector_key_treats_absent_and_non_positive_as_no_limit() -> None:
    assert parse_limit(None) is None and parse_limit("") is None and parse_limit("-1") is None
    assert parse_limit("0") is None and parse_limit("1048576") == 1048576.0
