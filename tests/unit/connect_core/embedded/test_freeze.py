"""Freezing a test-bed process returns only once every one of its threads is stopped, and thawing once none is."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from embedded_kafka.freeze import all_stopped, none_stopped, signal_and_wait, thread_states

# a child whose threads never block: each is on a core or runnable whenever it is not stopped
_BUSY = (
    "import threading\n"
    "def spin():\n"
    "    while True: pass\n"
    "for _ in range(3): threading.Thread(target=spin, daemon=True).start()\n"
    "spin()\n"
)


def _states(pid: int) -> list[str]:
    """Each thread's state letter, read here without the module under test."""
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = task.joinpath("stat").read_text()
        out.append(text.split(") ", 1)[1][0])
    return out


@pytest.fixture
def busy_child() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen([sys.executable, "-c", _BUSY])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait(10)


def test_the_state_letter_follows_the_command_name_even_one_with_spaces_and_parentheses() -> None:
    lines = ["123 (tansu) S 1 2 3", "124 (tokio (worker) 1) T 1 2 3", "garbage"]
    assert thread_states(lines) == ["S", "T"]


def test_stopped_means_every_thread_and_at_least_one() -> None:
    assert all_stopped(["T", "t", "T"])
    assert not all_stopped(["T", "R"])
    assert not all_stopped([])
    assert none_stopped(["S", "R", "D"])
    assert not none_stopped(["S", "T"])


def test_sigstop_returns_with_every_thread_stopped_and_sigcont_with_none(busy_child: subprocess.Popen[bytes]) -> None:
    pid = busy_child.pid
    for _ in range(20):  # threads up to the child's 4 (the interpreter may still be starting them)
        if len(_states(pid)) >= 4:
            break
        time.sleep(0.05)
    for _ in range(5):
        assert signal_and_wait(pid, signal.SIGSTOP)
        assert set(_states(pid)) <= {"T", "t"}  # read at once: no thread still running
        assert signal_and_wait(pid, signal.SIGCONT)
        assert not set(_states(pid)) & {"T", "t"}
