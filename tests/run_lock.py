"""One lock file per pytest-xdist run, so a test marked ``alone`` runs with no heavy test beside it.

Every heavy test (e2e, Spark, or expected to take 30 s or more: ``tests.schedule.is_heavy``) holds the
lock shared while it runs; an ``alone`` test (tests whose point is CPU or timing) holds it exclusively,
so its worker waits until the others' running heavy tests have ended and they wait for it. Light tests
take no lock: they keep the other workers busy beside an ``alone`` test (the schedule puts them there).
Heavy tests also take one of a few slots (``tests.heavy_slots``): past the first ones, only while the CPU
has room. Without xdist there is nothing to share the machine with, and no lock.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.heavy_slots import HeavySlots, SlotPolicy
from tests.schedule import ALONE, is_heavy, known_durations


def _lock_path(config: pytest.Config) -> Path | None:
    """The run's lock file, named by xdist's run id (the same in every worker of one run)."""
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None:
        return None
    return Path(tempfile.gettempdir()) / f"mm2-pytest-{worker_input['testrunuid']}.lock"


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


@contextmanager
def shared_lock(path: Path) -> Iterator[None]:
    """A heavy test's hold: shared, taken through the gate so that a waiting ``alone`` test goes first
    (flock alone prefers no one: heavy tests overlapping on three workers kept one waiting to the end)."""
    gate, fd = _open(path.with_suffix(".gate")), _open(path)
    try:
        fcntl.flock(gate, fcntl.LOCK_SH)
        fcntl.flock(fd, fcntl.LOCK_SH)
        os.close(gate)
        gate = -1
        yield
    finally:
        if gate >= 0:
            os.close(gate)
        os.close(fd)  # closing a descriptor releases its lock


class ExclusiveHold:
    """An ``alone`` test's hold: the gate (no heavy test starts any more), then the lock (the running ones
    have ended). Kept across consecutive ``alone`` tests of the worker, so they run back to back."""

    def __init__(self, path: Path) -> None:
        self.gate, self.fd = _open(path.with_suffix(".gate")), _open(path)
        try:
            fcntl.flock(self.gate, fcntl.LOCK_EX)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            self.release()
            raise

    def release(self) -> None:
        os.close(self.fd)
        os.close(self.gate)


_held: ExclusiveHold | None = None


def pytest_configure(config: pytest.Config) -> None:
    try:
        SlotPolicy.from_env(os.environ)
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
    config.addinivalue_line(
        "markers",
        f"{ALONE}: the test runs with no heavy test (e2e, Spark, 30 s or more) at the same time (CPU-sensitive "
        "tests); under pytest-xdist its worker waits until the other workers' running heavy tests have finished",
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Each heavy test holds the lock shared while it runs (setup to teardown); an ``alone`` test holds it
    exclusively, until the worker's next test is not an ``alone`` one.

    Outermost (tryfirst) so the wait for the lock is not counted in the test's pytest-timeout budget.
    """
    global _held
    path = _lock_path(item.config)
    exclusive = _is_alone(item)
    if _held is not None and not exclusive:
        _held.release()
        _held = None
    if path is None or not (exclusive or is_heavy(item, known_durations())):
        return (yield)
    if not exclusive:
        with shared_lock(path), HeavySlots(path, SlotPolicy.from_env(os.environ)).held():
            return (yield)
    if _held is None:
        _held = ExclusiveHold(path)
    try:
        return (yield)
    finally:
        if nextitem is None or not _is_alone(nextitem):
            _held.release()
            _held = None


def _is_alone(item: pytest.Item) -> bool:
    return item.get_closest_marker(ALONE) is not None
