"""kafka-python's selector registration as :mod:`connect_core.kafka.selector_keys` leaves it: the same
registrations and errors as kafka-python's own, without ever formatting the socket's repr."""

from __future__ import annotations

import selectors
import socket
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.net.selector import NetworkSelector

from connect_core.kafka import selector_keys


class _NoReprSocket(socket.socket):
    """A socket whose repr must never be built (it costs system calls on every wait)."""

    def __repr__(self) -> str:
        raise AssertionError("the socket's repr was formatted")


@pytest.fixture
def net() -> Iterator[NetworkSelector]:
    selector_keys.install()
    net = NetworkSelector()
    yield net
    net.close()


@pytest.fixture
def sock() -> Iterator[socket.socket]:
    a, b = socket.socketpair()
    s = _NoReprSocket(fileno=a.detach())
    yield s
    s.close()
    b.close()


def _task() -> Any:
    def step() -> None:
        return None

    return step


def _state(net: NetworkSelector, sock: socket.socket) -> tuple[int, bool, bool]:
    key = net._selector.get_map()[sock.fileno()]
    reader, writer = key.data
    return key.events, reader is not None, writer is not None


def test_install_is_idempotent() -> None:
    selector_keys.install()
    selector_keys.install()
    assert NetworkSelector.register_event is selector_keys._register_event


def test_read_then_write_then_unregister_each(net: NetworkSelector, sock: socket.socket) -> None:
    net.register_event(sock, selectors.EVENT_READ, _task())
    assert _state(net, sock) == (selectors.EVENT_READ, True, False)
    net.register_event(sock, selectors.EVENT_WRITE, _task())
    assert _state(net, sock) == (selectors.EVENT_READ | selectors.EVENT_WRITE, True, True)
    net.unregister_event(sock, selectors.EVENT_READ)
    assert _state(net, sock) == (selectors.EVENT_WRITE, False, True)
    net.unregister_event(sock, selectors.EVENT_WRITE)
    assert sock.fileno() not in net._selector.get_map()
    net.register_event(sock, selectors.EVENT_WRITE, _task())  # registered afresh after a full unregister
    assert _state(net, sock) == (selectors.EVENT_WRITE, False, True)


@pytest.mark.parametrize(("event", "name"), [(selectors.EVENT_READ, "READ"), (selectors.EVENT_WRITE, "WRITE")])
def test_a_second_wait_for_the_same_event_is_refused(
    net: NetworkSelector, sock: socket.socket, event: int, name: str
) -> None:
    plain = socket.socket(fileno=socket.dup(sock.fileno()))  # the message names the socket: any repr but ours
    try:
        net.register_event(plain, event, _task())
        with pytest.raises(RuntimeError, match=f"EVENT_{name} already registered"):
            net.register_event(plain, event, _task())
    finally:
        net.unregister_event(plain, event)
        plain.close()


def test_a_closed_socket_is_refused_as_before(net: NetworkSelector) -> None:
    a, b = socket.socketpair()
    a.close()
    b.close()
    with pytest.raises(ValueError):
        net.register_event(a, selectors.EVENT_READ, _task())


def test_trace_lines_cost_nothing_unless_enabled() -> None:
    from kafka.net import selector as kafka_selector

    selector_keys.install()
    assert kafka_selector.log_trace is selector_keys._no_trace
    assert kafka_selector.log_trace("poll: enter") is None
