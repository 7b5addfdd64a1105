"""One wait over several clients wakes for the first I/O of any: here over real sockets and a real selector's
own descriptor (what a kafka-python client's network loop is built on)."""

from __future__ import annotations

import selectors
import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace

import pytest

from connect_core.kafka.io_wait import wait_handle, wait_readable


@pytest.fixture
def pairs() -> Iterator[list[tuple[socket.socket, socket.socket]]]:
    made = [socket.socketpair() for _ in range(2)]
    yield made
    for a, b in made:
        a.close()
        b.close()


def test_nothing_to_read_waits_out_the_timeout(pairs: list[tuple[socket.socket, socket.socket]]) -> None:
    started = time.monotonic()
    assert wait_readable([a.fileno() for a, _ in pairs], 0.05) is False
    assert time.monotonic() - started >= 0.04


def test_the_second_handle_wakes_the_wait_at_once(pairs: list[tuple[socket.socket, socket.socket]]) -> None:
    pairs[1][1].send(b"x")
    started = time.monotonic()
    assert wait_readable([a.fileno() for a, _ in pairs], 5.0) is True
    assert time.monotonic() - started < 1.0


def test_a_selector_is_readable_once_a_socket_registered_with_it_is() -> None:
    """What the batch copy relies on: the producer's and the fetcher's selectors are the handles waited on."""
    a, b = socket.socketpair()
    idle_a, idle_b = socket.socketpair()
    with a, b, idle_a, idle_b, selectors.DefaultSelector() as busy, selectors.DefaultSelector() as idle:
        busy.register(a, selectors.EVENT_READ)
        idle.register(idle_a, selectors.EVENT_READ)
        handles = [idle.fileno(), busy.fileno()]
        assert wait_readable(handles, 0.05) is False
        b.send(b"answer")
        started = time.monotonic()
        assert wait_readable(handles, 5.0) is True
        assert time.monotonic() - started < 1.0
        a.recv(64)  # read: the selector has nothing ready again
        assert wait_readable(handles, 0.05) is False


def test_no_client_or_a_closed_one_has_no_handle() -> None:
    """A task's stop() may close its clients while the task thread asks for their handles."""
    closed = selectors.DefaultSelector()
    closed.close()
    assert wait_handle(None) is None
    assert wait_handle(SimpleNamespace(_net=SimpleNamespace(_selector=closed))) is None
    with selectors.DefaultSelector() as open_selector:
        assert wait_handle(SimpleNamespace(_net=SimpleNamespace(_selector=open_selector))) == open_selector.fileno()
