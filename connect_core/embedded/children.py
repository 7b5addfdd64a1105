"""Child processes the test bed spawns (brokers, the local S3 server) die with their parent.

A test run that crashes or is killed must not leave brokers holding ports and memory on a shared machine.
"""

from __future__ import annotations

import contextlib
import ctypes
import signal
import threading
from collections.abc import Callable


def _kill_with_parent() -> None:
    """In the child before exec: die with SIGKILL when the parent dies (Linux PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def die_with_parent() -> Callable[[], None] | None:
    """The ``preexec_fn`` for Popen, or None off the main thread: PDEATHSIG fires when the spawning
    THREAD exits, which would kill a broker started from a short-lived helper thread."""
    return _kill_with_parent if threading.current_thread() is threading.main_thread() else None
