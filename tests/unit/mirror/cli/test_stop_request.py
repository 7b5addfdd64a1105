"""The stop a signal handler asks for: no lock taken in the handler, the waiter woken at once."""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType

from mirror.cli.stop_request import StopRequest


def test_wait_times_out_false_then_a_signal_handler_wakes_it_true() -> None:
    stop = StopRequest()
    try:
        assert stop.wait(0.01) is False and not stop.is_set()

        def handler(_signum: int, _frame: FrameType | None) -> None:
            stop.set()

        previous = signal.signal(signal.SIGUSR1, handler)
        try:
            threading.Timer(0.05, lambda: os.kill(os.getpid(), signal.SIGUSR1)).start()
            assert stop.wait(60) is True  # woken by the handler's byte, not by the timeout
        finally:
            signal.signal(signal.SIGUSR1, previous)
        assert stop.is_set() and stop.wait(0) is True
        stop.set()  # again: still fine
    finally:
        stop.close()
