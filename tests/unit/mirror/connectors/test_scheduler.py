"""The connector scheduler on APScheduler keeps Kafka MirrorMaker's Scheduler semantics: one job at a time,
no overlap and no catch-up burst after an overrun, close lets the running job finish and skips the rest,
and nothing is left running after close."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from mirror.connectors.scheduler import Scheduler
from tests.unit.mirror.connectors.twin_ticks import twin_ticks


def wait_until(condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_one_connectors_jobs_run_one_at_a_time_on_one_thread() -> None:
    s = Scheduler("test", timeout_s=5)
    lock = threading.Lock()
    active = [0]
    peak = [0]
    threads: set[int] = set()
    runs = [0]

    def job() -> None:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
            threads.add(threading.get_ident())
        time.sleep(0.01)
        with lock:
            active[0] -= 1
            runs[0] += 1

    try:
        s.schedule_repeating(job, 0.02, "a")
        s.schedule_repeating(job, 0.03, "b")
        for _ in range(5):
            s.execute_async(job, "c")
        s.execute(job, "d")
        assert wait_until(lambda: runs[0] >= 20)
    finally:
        s.close()
    assert peak[0] == 1
    assert len(threads) == 1


def test_an_overrun_brings_no_burst_of_catch_up_runs() -> None:
    s = Scheduler("test", timeout_s=5)
    starts: list[float] = []
    ends: list[float] = []
    release = threading.Event()

    def job() -> None:
        starts.append(time.monotonic())
        if len(starts) == 2:
            release.wait(10)  # overruns about ten periods
        ends.append(time.monotonic())

    try:
        s.schedule_repeating(job, 0.05, "overrunning")
        assert wait_until(lambda: len(starts) == 2)
        time.sleep(0.5)
        release.set()
        assert wait_until(lambda: len(starts) >= 5)
    finally:
        s.close()
    overrun_end = ends[1]
    # A scheduler that catches up would start ~10 runs at once; fixed rate with coalescing starts one run
    # for all the ticks it missed, then the ticks still to come (50 ms apart, so at most one of them lies
    # in the 40 ms after the overrun). Two at most however late a loaded machine runs them: load delays
    # runs, it never adds ticks.
    right_after = [t for t in starts[2:] if t - overrun_end < 0.04]
    assert len(right_after) <= 2, starts
    assert all(b > a for a, b in zip(starts[1:], ends[1:], strict=False))  # never overlapping: start after end


def test_close_lets_the_running_job_finish_and_skips_the_queued_ones() -> None:
    s = Scheduler("test", timeout_s=5)
    running = threading.Event()
    release = threading.Event()
    log: list[str] = []

    def slow() -> None:
        running.set()
        release.wait(10)
        log.append("slow done")

    s.execute_async(slow, "slow")
    s.execute_async(lambda: log.append("queued ran"), "queued")
    assert running.wait(5)
    closer = threading.Thread(target=s.close)
    closer.start()
    assert wait_until(lambda: s.closed)
    assert closer.is_alive()  # waits for the running job
    release.set()
    closer.join(5)
    assert not closer.is_alive()
    assert log == ["slow done"]
    s.execute(lambda: log.append("after close"), "late")  # skipped, returns at once
    s.schedule_repeating(lambda: log.append("after close"), 0.01, "late repeating")
    assert twin_ticks(0.01, 5)  # the late repeating job was due five times over ...
    assert log == ["slow done"]  # ... and never ran


def test_close_from_inside_a_job_returns_and_leaves_no_thread_behind() -> None:
    before = set(threading.enumerate())
    s = Scheduler("test", timeout_s=5)
    done = threading.Event()

    def closing_job() -> None:
        s.close()
        done.set()

    s.execute_async(closing_job, "closing itself")
    assert done.wait(5)
    assert s.closed
    assert wait_until(lambda: set(threading.enumerate()) <= before), set(threading.enumerate()) - before


def test_many_schedulers_closed_leave_no_threads() -> None:
    before = set(threading.enumerate())
    schedulers = [Scheduler(f"s{i}", timeout_s=2) for i in range(5)]
    for s in schedulers:
        s.schedule_repeating(lambda: None, 0.01, "tick")
        s.execute(lambda: None, "once")
    for s in schedulers:
        s.close()
    assert wait_until(lambda: set(threading.enumerate()) <= before), set(threading.enumerate()) - before
