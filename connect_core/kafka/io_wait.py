"""One wait over several kafka-python clients: wake for the first of their I/O, whichever client it is for.

Each kafka-python client runs its own network loop over its own selector, and a call that waits in one
loop leaves the other clients' sockets unread until it returns. The batch copy fetches from the source
with one client and produces to the target with another; while a Fetch was out, the copy waited for the
target's acknowledgements in the producer's loop, 5 ms at a time, so a multi-MB Fetch answer came in one
socket buffer per wait: the copy ran at the pace of its own wait, not of the brokers (measured: a 5 MB
answer took about 54 ms to arrive, where the source serves it in about 20).

A selector (epoll on Linux) has a file descriptor of its own that is readable while any socket registered
with it has an event ready, so :func:`wait_readable` over the clients' selectors wakes as soon as either
client has something to read or write; each client's loop then runs without waiting. The wait stays bounded:
work a client has due without I/O (a timer, a retry back-off) waits at most the given timeout, as before.
"""

from __future__ import annotations

import select
from collections.abc import Iterable

from kafka.net.compat import KafkaNetClient


def wait_handle(client: KafkaNetClient | None) -> int | None:
    """The file descriptor of ``client``'s selector: readable while the client has I/O ready (None: no
    client, or one closed meanwhile by another thread, as a task's ``stop`` closes its clients).

    kafka-python 3.0 keeps its network loop in ``_net`` and that loop's standard-library selector in
    ``_selector`` (the version is pinned in pyproject.toml); this is the one place that reads them."""
    if client is None:
        return None
    try:
        handle = int(client._net._selector.fileno())
    except (OSError, ValueError):  # the selector is closed
        return None
    return handle if handle >= 0 else None


def wait_readable(handles: Iterable[int], timeout_s: float) -> bool:
    """Until one of ``handles`` is readable (True) or ``timeout_s`` has passed (False). ``poll``, not
    ``select``: a process with many connections has descriptors beyond select's 1024."""
    poller = select.poll()
    for handle in handles:
        poller.register(handle, select.POLLIN)
    return bool(poller.poll(max(0, int(timeout_s * 1000))))


__all__ = ["wait_handle", "wait_readable"]
