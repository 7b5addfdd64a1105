"""How many heavy tests run at once: a few always, more only while the machine's CPU has room.

Most heavy tests (e2e, Spark) wait on brokers, group joins and timers, so four of them at once left a
2-core machine about half idle (measured: 55 % busy on average through a run's heavy phase, with
stretches at 20-30 %); but a few of them (Spark jobs, wide backfills) want a whole core, and six or more
at once, admitted blindly, once pushed such tests past their timeouts. So a heavy test takes one of
``most`` slot locks: one of the first ``always`` whenever it is free, a later one only when the CPU was
less than ``room_below`` busy over the last look (about a second) and no other test took a later slot in
the last ``spacing_s`` seconds (the one before has had time to show its own load). On a slower machine
(or beside other work) the CPU has less room and fewer heavy tests run at once, down to ``always``.

An ``alone`` test (``tests.run_lock``) holds every slot past the first ``beside_alone``, so at most that
many heavy tests run beside it (none at all left the machine 80-90 % idle for two minutes of a run while the
durable-broker tests ran one after another). Each slot is a lock file held while the test runs: a worker
that dies releases its slot with its descriptor, and slots need no bookkeeping that could go stale.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The fields of /proc/stat's "cpu" line that are not work: idle and iowait.
_IDLE_FIELDS = (3, 4)


@dataclass(frozen=True)
class SlotPolicy:
    always: int = 4
    most: int = 7
    room_below: float = 0.6
    spacing_s: float = 8.0
    look_s: float = 1.0
    beside_alone: int = 2

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> SlotPolicy:
        """``MM2_TEST_HEAVY_SLOTS=always:most[:beside_alone]`` (default ``4:7:2``) for another machine."""
        given = env.get("MM2_TEST_HEAVY_SLOTS", "").strip()
        if not given:
            return cls()
        parts = given.split(":")
        try:
            numbers = [int(part) for part in parts]
        except ValueError:
            numbers = []
        if not 2 <= len(numbers) <= 3 or not 1 <= numbers[0] <= numbers[1] or min(numbers) < 0:
            raise ValueError(
                f"MM2_TEST_HEAVY_SLOTS={given!r}: expected always:most[:beside_alone] with 1 <= always <= most, "
                "e.g. 4:7:2"
            )
        beside = numbers[2] if len(numbers) == 3 else cls.beside_alone
        return cls(always=numbers[0], most=numbers[1], beside_alone=beside)

    def admits(self, slot: int, busy: float | None, since_last_extra_s: float) -> bool:
        """Whether a test may run in ``slot`` (0-based), the CPU ``busy`` (0..1, None: not measured yet)."""
        if slot < self.always:
            return True
        if slot >= self.most or busy is None:
            return False
        return busy < self.room_below and since_last_extra_s >= self.spacing_s


def cpu_ticks(stat: str) -> tuple[int, int]:
    """(busy, total) clock ticks of all CPUs from the text of /proc/stat."""
    fields = [int(value) for value in stat.splitlines()[0].split()[1:]]
    idle = sum(fields[i] for i in _IDLE_FIELDS if i < len(fields))
    return sum(fields) - idle, sum(fields)


def busy_between(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    """The busy fraction between two readings; None when no time passed between them."""
    total = after[1] - before[1]
    return None if total <= 0 else (after[0] - before[0]) / total


def open_lock_file(path: Path) -> int:
    """A descriptor to flock (the run's lock files are all opened the same way)."""
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def read_cpu_ticks() -> tuple[int, int] | None:
    """This machine's CPU ticks, or None where there is no /proc (then only the ``always`` slots run)."""
    try:
        return cpu_ticks(Path("/proc/stat").read_text())
    except (OSError, ValueError, IndexError):
        return None


class HeavySlots:
    """The slot lock files of one test run, next to its run lock."""

    def __init__(
        self,
        run_lock: Path,
        policy: SlotPolicy = SlotPolicy(),
        ticks: Callable[[], tuple[int, int] | None] = read_cpu_ticks,
    ) -> None:
        self.run_lock = run_lock
        self.policy = policy
        self.ticks = ticks

    def slot_path(self, slot: int) -> Path:
        return self.run_lock.with_suffix(f".slot{slot}")

    def _extra_stamp(self) -> Path:
        return self.run_lock.with_suffix(".extra")

    @contextmanager
    def held(self) -> Iterator[int]:
        """Wait for a slot, hold it while the block runs; yields the slot's number."""
        slot, fd = self._take()
        try:
            yield slot
        finally:
            os.close(fd)  # closing the descriptor releases the lock

    def _take(self) -> tuple[int, int]:
        before = self.ticks()
        busy: float | None = None
        while True:
            taken = self._try(busy)
            if taken is not None:
                return taken
            time.sleep(self.policy.look_s)
            after = self.ticks()
            busy = busy_between(before, after) if before is not None and after is not None else None
            before = after

    def _try(self, busy: float | None) -> tuple[int, int] | None:
        """The first free slot, if the policy lets this test run in it; (slot, descriptor)."""
        for slot in range(self.policy.most):
            fd = open_lock_file(self.slot_path(slot))
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if slot < self.policy.always or self._extra_admitted(slot, busy):
                return slot, fd
            os.close(fd)
            return None
        return None

    def _extra_admitted(self, slot: int, busy: float | None) -> bool:
        """A slot past ``always``: decided under the stamp's lock, so two workers that look at the same
        moment do not both take one; the stamp holds when the last such slot was taken."""
        fd = open_lock_file(self._extra_stamp())
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            text = os.pread(fd, 64, 0).decode()
            now = time.time()
            since = now - float(text) if text else float("inf")
            if not self.policy.admits(slot, busy, since):
                return False
            os.ftruncate(fd, 0)
            os.pwrite(fd, repr(now).encode(), 0)
            return True
        finally:
            os.close(fd)
