"""Port allocation and the "port taken" check that runs before a broker is spawned."""

from __future__ import annotations

import socket

from embedded_kafka.ports import accepts_connections, free_port, port_is_free


def test_free_port_is_bindable_and_varies() -> None:
    ports = {free_port() for _ in range(5)}
    assert all(1024 <= p <= 65535 for p in ports)
    assert len(ports) > 1
    port = ports.pop()
    assert port_is_free(port)


def test_a_listening_port_is_not_free_and_accepts() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        assert not port_is_free(port)
        assert accepts_connections(port)


def test_a_bound_but_not_listening_port_is_not_free() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
        assert not port_is_free(port)
        assert not accepts_connections(port)


def test_released_port_is_free_again() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        port = holder.getsockname()[1]
    assert port_is_free(port)
    assert not accepts_connections(port)
