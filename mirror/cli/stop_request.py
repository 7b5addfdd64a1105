"""A stop that a signal handler can ask for without taking a lock.

A Python signal handler runs in the main thread between two bytecodes. ``threading.Event.set`` takes the
event's internal lock, which the main thread itself holds for a moment each time a timed ``wait`` returns:
a SIGTERM landing in that moment deadlocked ``mm2 run`` after it logged "Received SIGTERM" (seen once
in a CI run: the process never reached its herders' stop). Here the handler only sets a flag and writes
a byte to a pipe, and the waiting side selects on the pipe.
"""

from __future__ import annotations

import os
import select


class StopRequest:
    """``set()`` from a signal handler; ``wait(timeout)``/``is_set()`` from any thread."""

    def __init__(self) -> None:
        self._requested = False
        self._read, self._write = os.pipe()
        os.set_blocking(self._write, False)

    def set(self) -> None:
        self._requested = True
        try:
            os.write(self._write, b"\0")
        except (BlockingIOError, OSError):
            pass  # the pipe already holds a wake-up byte, or was closed: the flag is what counts

    def is_set(self) -> bool:
        return self._requested

    def wait(self, timeout: float | None = None) -> bool:
        """True once a stop was asked for; waits at most ``timeout`` seconds (None: until then)."""
        if not self._requested:
            select.select([self._read], [], [], timeout)
        return self._requested

    def close(self) -> None:
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
