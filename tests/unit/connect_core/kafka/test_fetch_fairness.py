"""The fairness rules of the batch fetcher (pure): the rotation of a Fetch's partitions and the wait that
grows while a broker leaves partitions below their end unserved, and relaxes once everything is caught up."""

from __future__ import annotations

from connect_core.kafka.fetch_fairness import MAX_FETCH_WAIT_MS, FetchWait, rotated


def test_each_request_starts_one_partition_later_so_none_stays_last() -> None:
    parts = ["p0", "p1", "p2"]
    assert [rotated(parts, start) for start in range(4)] == [
        ["p0", "p1", "p2"],
        ["p1", "p2", "p0"],
        ["p2", "p0", "p1"],
        ["p0", "p1", "p2"],
    ]
    assert rotated([], 5) == []


def test_the_callers_wait_stands_while_the_broker_serves_every_partition() -> None:
    wait = FetchWait()
    assert wait.for_request(500) == 500
    assert not wait.answered(500, starved=False, caught_up=False)
    assert wait.for_request(500) == 500
    assert wait.raised == 0


def test_a_starved_partition_doubles_the_wait_up_to_the_cap() -> None:
    wait = FetchWait()
    asked = 1
    seen = []
    for _ in range(20):
        used = wait.for_request(asked)
        seen.append(used)
        wait.answered(used, starved=True, caught_up=False)
    assert seen[:4] == [1, 50, 100, 200]
    assert seen[-1] == MAX_FETCH_WAIT_MS
    assert wait.raised == 20


def test_the_raised_wait_is_kept_while_serving_and_relaxes_once_caught_up() -> None:
    wait = FetchWait()
    assert wait.answered(500, starved=True, caught_up=False)
    assert wait.for_request(100) == 1000
    wait.answered(1000, starved=False, caught_up=False)  # served, a backlog left: keep what worked
    assert wait.for_request(100) == 1000
    wait.answered(1000, starved=False, caught_up=True)
    assert wait.for_request(100) == 500
    for _ in range(12):
        wait.answered(100, starved=False, caught_up=True)
    assert wait.for_request(100) == 100
