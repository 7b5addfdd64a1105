"""Test-bed children: the durable broker's priority boost reaches the child and every thread it starts."""

from __future__ import annotations

import os
import subprocess
import sys

from embedded_kafka.children import child_preexec

# the child reports its own nice value and that of a thread it starts after exec
_REPORT = (
    "import os, threading\n"
    "seen = []\n"
    "t = threading.Thread(target=lambda: seen.append(os.getpriority(os.PRIO_PROCESS, 0)))\n"
    "t.start(); t.join()\n"
    "print(os.nice(0), seen[0])\n"
)


def _child_nice(boost: int) -> tuple[int, int]:
    out = subprocess.run(
        [sys.executable, "-c", _REPORT], preexec_fn=child_preexec(boost), capture_output=True, text=True, check=True
    ).stdout.split()
    return int(out[0]), int(out[1])


def _may_raise_priority() -> bool:
    """Whether this process may lower a nice value (root or CAP_SYS_NICE), asked of a throwaway child."""
    return subprocess.run([sys.executable, "-c", "import os; os.nice(-1)"], capture_output=True).returncode == 0


def test_no_boost_runs_the_child_at_the_parents_priority() -> None:
    own = os.nice(0)
    assert _child_nice(0) == (own, own)


def test_a_boost_lowers_the_nice_value_of_the_child_and_its_threads_where_allowed() -> None:
    own = os.nice(0)
    expected = max(-20, own - 5) if _may_raise_priority() else own
    assert _child_nice(5) == (expected, expected)
