"""Child processes the test bed spawns (brokers, the local S3 server) die with their parent.

A test run that crashes or is killed must not leave brokers holding ports and memory on a shared machine.
The durable broker and its S3 server may also be scheduled ahead of the rest of the machine (see
:func:`child_preexec`).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
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


#: Nice levels the durable broker and its S3 server run ahead of the test run (see :func:`child_preexec`).
DURABLE_STORAGE_BOOST = 5


def _raise_priority(boost: int) -> None:
    """In the child before exec, so every thread it starts inherits it: a lower nice value, where allowed."""
    with contextlib.suppress(OSError):
        os.nice(-boost)


def child_preexec(boost: int = 0) -> Callable[[], None] | None:
    """The ``preexec_fn`` for a test-bed child: dies with its parent (main thread only, see
    :func:`die_with_parent`) and, with ``boost``, runs that many nice levels ahead of its parent.

    Why the boost: a broker on durable storage answers a fetch through a chain of HTTP round trips to a
    Python S3 server; on a busy test machine each waits for a core, and a read that takes a second alone
    took a minute beside the rest of the suite. Brokers in production have their own machines; ahead of the
    queue they model that. Without the privilege (not root, no CAP_SYS_NICE) the child runs as it is.
    """
    die = die_with_parent()
    if boost <= 0:
        return die

    def preexec() -> None:
        if die is not None:
            die()
        _raise_priority(boost)

    return preexec
