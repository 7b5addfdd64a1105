"""Heavy tests take slots: the first few always, later ones only while the CPU has room, spaced out."""

from __future__ import annotations

import threading
import time
from collections.abc import Sized
from pathlib import Path

import pytest

from tests.heavy_slots import HeavySlots, SlotPolicy, busy_between, cpu_ticks

STAT = "cpu  100 5 50 800 45 0 0 0 0 0\ncpu0 50 2 25 400 23 0 0 0 0 0\n"


def test_proc_stat_counts_idle_and_iowait_as_not_busy() -> None:
    assert cpu_ticks(STAT) == (155, 1000)
    assert busy_between((155, 1000), (455, 1500)) == pytest.approx(0.6)
    assert busy_between((155, 1000), (155, 1000)) is None


def test_policy_first_slots_always_later_ones_with_room_and_spacing() -> None:
    policy = SlotPolicy(always=2, most=4, room_below=0.6, spacing_s=8.0)
    assert policy.admits(0, None, 0.0) and policy.admits(1, 0.99, 0.0)
    assert not policy.admits(2, None, 100.0)  # not measured yet
    assert not policy.admits(2, 0.7, 100.0)  # no room
    assert not policy.admits(2, 0.3, 3.0)  # another extra slot was taken 3 s ago
    assert policy.admits(3, 0.3, 8.0)
    assert not policy.admits(4, 0.0, 100.0)  # past the most


def test_the_environment_sets_the_slots_and_a_mistake_is_named() -> None:
    assert SlotPolicy.from_env({}) == SlotPolicy()
    policy = SlotPolicy.from_env({"MM2_TEST_HEAVY_SLOTS": "2:5"})
    assert (policy.always, policy.most, policy.beside_alone) == (2, 5, 2)
    assert SlotPolicy.from_env({"MM2_TEST_HEAVY_SLOTS": "2:5:0"}).beside_alone == 0
    for wrong in ("x", "3:2", "0:4", "4", "2:4:-1", "1:2:3:4"):
        with pytest.raises(ValueError, match="MM2_TEST_HEAVY_SLOTS"):
            SlotPolicy.from_env({"MM2_TEST_HEAVY_SLOTS": wrong})


class Ticks:
    """A CPU that is ``busy`` busy: each reading adds 100 ticks."""

    def __init__(self, busy: float) -> None:
        self.busy, self.total = busy, 0

    def __call__(self) -> tuple[int, int]:
        self.total += 100
        return int(self.total * self.busy), self.total


def _hold(slots: HeavySlots, taken: list[tuple[int, float]], release: threading.Event) -> threading.Thread:
    def run() -> None:
        with slots.held() as slot:
            taken.append((slot, time.monotonic()))
            release.wait(10)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _wait_len(items: Sized, n: int, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while len(items) < n:
        assert time.monotonic() < deadline, f"{len(items)} of {n}"
        time.sleep(0.01)


def test_a_busy_cpu_holds_tests_past_the_first_slots_until_one_is_free(tmp_path: Path) -> None:
    slots = HeavySlots(tmp_path / "run.lock", SlotPolicy(always=2, most=4, look_s=0.05), Ticks(0.9))
    taken: list[tuple[int, float]] = []
    first, rest = threading.Event(), threading.Event()
    holders = [_hold(slots, taken, first), _hold(slots, taken, rest)]
    _wait_len(taken, 2)
    waiting = _hold(slots, taken, rest)
    time.sleep(0.5)
    assert len(taken) == 2  # 90 % busy: no third test
    first.set()
    _wait_len(taken, 3)
    assert taken[2][0] in (0, 1)  # it ran in the slot the first one freed
    rest.set()
    for thread in [*holders, waiting]:
        thread.join(5)


def test_a_cpu_with_room_admits_later_slots_one_at_a_time(tmp_path: Path) -> None:
    policy = SlotPolicy(always=1, most=3, look_s=0.05, spacing_s=0.6)
    slots = HeavySlots(tmp_path / "run.lock", policy, Ticks(0.2))
    taken: list[tuple[int, float]] = []
    release = threading.Event()
    threads = [_hold(slots, taken, release) for _ in range(4)]
    _wait_len(taken, 3)
    time.sleep(0.3)
    assert len(taken) == 3  # most = 3: the fourth waits
    assert sorted(slot for slot, _ in taken) == [0, 1, 2]
    extra = sorted(at for slot, at in taken if slot > 0)
    assert extra[1] - extra[0] >= 0.55  # the second extra slot only after the spacing
    release.set()
    for thread in threads:
        thread.join(5)
    assert len(taken) == 4
