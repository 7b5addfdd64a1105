"""Where heavy tests may run, per pytest-xdist run: slots for heavy tests, and ``alone`` tests with few
heavy tests beside them.

Every heavy test (e2e, Spark, or expected to take 30 s or more: ``tests.schedule.is_heavy``) holds one of
the run's slots while it runs (``tests.heavy_slots``: past the first few, only while the CPU has room). An
``alone`` test (the durable-broker crash tests, whose S3-backed brokers starve beside a busy suite) holds
every slot but the first ``beside_alone`` (2), so its worker waits until the heavy tests in them have
ended and no more than those two run beside it. Light tests take no slot: they keep the other workers busy
beside an ``alone`` test (the schedule puts them there). Without xdist there is nothing to share the
machine with, and no lock.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.heavy_slots import HeavySlots, SlotPolicy, open_lock_file
from tests.schedule import ALONE, is_heavy, known_durations


def _lock_path(config: pytest.Config) -> Path | None:
    """The run's lock file, named by xdist's run id (the same in every worker of one run)."""
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None:
        return None
    return Path(tempfile.gettempdir()) / f"mm2-pytest-{worker_input['testrunuid']}.lock"


def _pass_gate(path: Path) -> None:
    """Wait while an ``alone`` test is taking its slots, so it goes before heavy tests that ask after it
    (flock alone prefers no one: heavy tests overlapping on three workers kept one waiting to the end)."""
    gate = open_lock_file(path.with_suffix(".gate"))
    try:
        fcntl.flock(gate, fcntl.LOCK_SH)
    finally:
        os.close(gate)  # closing a descriptor releases its lock


@contextmanager
def heavy_hold(path: Path, policy: SlotPolicy) -> Iterator[None]:
    """A heavy test's hold: through the gate, then one of the run's slots (``tests.heavy_slots``)."""
    _pass_gate(path)
    with HeavySlots(path, policy).held():
        yield


class ExclusiveHold:
    """An ``alone`` test's hold: the gate (no heavy test starts any more), then every slot past the first
    ``policy.beside_alone`` (the heavy tests in them have ended), then the gate again, so that at most that
    many heavy tests run beside it. Kept across consecutive ``alone`` tests of the worker, so they run back
    to back."""

    def __init__(self, path: Path, policy: SlotPolicy) -> None:
        self.fds: list[int] = []
        slots = HeavySlots(path, policy)
        gate = open_lock_file(path.with_suffix(".gate"))
        try:
            fcntl.flock(gate, fcntl.LOCK_EX)
            for slot in range(min(policy.beside_alone, policy.most), policy.most):
                self.fds.append(open_lock_file(slots.slot_path(slot)))
                fcntl.flock(self.fds[-1], fcntl.LOCK_EX)
        except BaseException:
            self.release()
            raise
        finally:
            os.close(gate)

    def release(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()


_held: ExclusiveHold | None = None


_POLICY = pytest.StashKey[SlotPolicy]()


def pytest_configure(config: pytest.Config) -> None:
    try:
        config.stash[_POLICY] = SlotPolicy.from_env(os.environ)  # read once: every heavy test uses it
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
    policy = item.config.stash[_POLICY]
    if not exclusive:
        with heavy_hold(path, policy):
            return (yield)
    if _held is None:
        _held = ExclusiveHold(path, policy)
    try:
        return (yield)
    finally:
        if nextitem is None or not _is_alone(nextitem):
            _held.release()
            _held = None


def _is_alone(item: pytest.Item) -> bool:
    return item.get_closest_marker(ALONE) is not None
