"""One lock file per pytest-xdist run, so a test marked ``alone`` runs with no heavy test beside it.

Every heavy test (e2e, Spark, or expected to take 30 s or more: ``tests.schedule.is_heavy``) holds the
lock shared while it runs; an ``alone`` test (tests whose point is CPU or timing) holds it exclusively,
so its worker waits until the others' running heavy tests have ended and they wait for it. Light tests
take no lock: they keep the other workers busy beside an ``alone`` test (the schedule puts them there).
Without xdist there is nothing to share the machine with, and no lock.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.schedule import ALONE, is_heavy, known_durations


def _lock_path(config: pytest.Config) -> Path | None:
    """The run's lock file, named by xdist's run id (the same in every worker of one run)."""
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None:
        return None
    return Path(tempfile.gettempdir()) / f"mm2-pytest-{worker_input['testrunuid']}.lock"


_known: dict[str, float] | None = None


def _durations() -> dict[str, float]:
    global _known
    if _known is None:
        _known = known_durations()
    return _known


@contextmanager
def run_lock(config: pytest.Config, exclusive: bool, light: bool = False) -> Iterator[None]:
    path = _lock_path(config)
    if path is None or (light and not exclusive):
        yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{ALONE}: the test runs with no heavy test (e2e, Spark, 30 s or more) at the same time (CPU-sensitive "
        "tests); under pytest-xdist its worker waits until the other workers' running heavy tests have finished",
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Each heavy test holds the lock while it runs (setup to teardown); an ``alone`` test holds it exclusively.

    Outermost (tryfirst) so the wait for the lock is not counted in the test's pytest-timeout budget.
    """
    exclusive = item.get_closest_marker(ALONE) is not None
    with run_lock(item.config, exclusive, light=not is_heavy(item, _durations())):
        return (yield)
