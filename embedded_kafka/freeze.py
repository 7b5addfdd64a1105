"""Freezing a broker process (SIGSTOP) and thawing it (SIGCONT), returning once the kernel has done it.

``kill()`` only queues the signal: every thread of the target stops when it next passes the kernel's
signal check, so a request sent right after ``kill()`` may still be answered. A test that asserts "the
frozen broker answers nothing" then fails now and then on a busy machine (run 45: a SIGSTOPped broker
answered a metadata request). The wait reads each thread's state from ``/proc``.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterable
from pathlib import Path

#: ``/proc/<pid>/task/<tid>/stat`` states of a thread stopped by a signal (``T``) or under a tracer (``t``).
STOPPED_STATES = frozenset("Tt")
_POLL_S = 0.002
#: How long :func:`signal_and_wait` waits for every thread to show the signal's effect.
SIGNAL_TIMEOUT_S = 10.0


def thread_states(stat_lines: Iterable[str]) -> list[str]:
    """The state letter of each ``stat`` line (the field after the parenthesised command name)."""
    return [line[line.rfind(")") + 2] for line in stat_lines if ")" in line]


def all_stopped(states: list[str]) -> bool:
    return bool(states) and all(state in STOPPED_STATES for state in states)


def none_stopped(states: list[str]) -> bool:
    return not any(state in STOPPED_STATES for state in states)


def _read_states(pid: int) -> list[str]:
    lines = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            lines.append(task.joinpath("stat").read_text())
        except OSError:  # the thread ended meanwhile
            continue
    return thread_states(lines)


def signal_and_wait(pid: int, sig: signal.Signals, timeout_s: float = SIGNAL_TIMEOUT_S) -> bool:
    """Send ``sig`` (SIGSTOP or SIGCONT) and wait until every thread of ``pid`` shows its effect.

    False when it did not within ``timeout_s``; also returns (True) where ``/proc`` cannot be read."""
    os.kill(pid, sig)
    done = all_stopped if sig == signal.SIGSTOP else none_stopped
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            states = _read_states(pid)
        except OSError:
            return True
        if done(states):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
