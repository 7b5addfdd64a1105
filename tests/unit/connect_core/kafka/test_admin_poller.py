"""The admin log poller must never keep an abandoned admin client alive (it would keep reconnecting)."""

from __future__ import annotations

import gc
import threading
import time
import weakref

from connect_core.kafka.client_logging import _AdminPoller


class FakeAdmin:
    def __init__(self) -> None:
        self.polled = threading.Event()

    def poll(self, _timeout: float) -> None:
        self.polled.set()


def test_a_dropped_client_is_freed_while_the_poller_sleeps() -> None:
    poller = _AdminPoller(interval_s=0.05)
    client = FakeAdmin()
    poller.add(client)
    assert client.polled.wait(5)
    time.sleep(0.02)  # let the round end (the thread is asleep until the next one)
    gone = weakref.ref(client)
    del client
    deadline = time.monotonic() + 30
    while gone() is not None and time.monotonic() < deadline:
        gc.collect()
        time.sleep(0.01)
    assert gone() is None, "the poller thread still holds the client"
