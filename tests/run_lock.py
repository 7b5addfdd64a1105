"""One lock file per pytest-xdist run, so a test marked ``alone`` runs with no other test beside it.

Every test holds the lock shared while it runs; an ``alone`` test (benchmarks, tests whose point is
CPU or timing) holds it exclusively, so its worker waits until the others' running tests have ended
and they wait for it. Without xdist there is nothing to share the machine with, and no lock.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ALONE = "alone"


def _lock_path(config: pytest.Config) -> Path | None:
    """The run's lock file, named by xdist's run id (the same in every worker of one run)."""
    worker_input = getattr(config, "workerinput", None)
    if worker_input is None:
        return None
    return Path(tempfile.gettempdir()) / f"mm2-pytest-{worker_input['testrunuid']}.lock"


@contextmanager
def run_lock(config: pytest.Config, exclusive: bool) -> Iterator[None]:
    path = _lock_path(config)
    if path is None:
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
        f"{ALONE}: the test runs with no other test at the same time (benchmarks, CPU-sensitive tests); under "
        "pytest-xdist its worker waits until the other workers' running tests have finished",
    )


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> object:
    """Each test holds the lock while it runs (setup to teardown); an ``alone`` test holds it exclusively.

    Outermost (tryfirst) so the wait for the lock is not counted in the test's pytest-timeout budget.
    """
    with run_lock(item.config, exclusive=item.get_closest_marker(ALONE) is not None):
        return (yield)
