"""kafka-python's send path as :mod:`connect_core.kafka.wire_writes` leaves it: over a real socket pair,
requests given as pieces and as plain bytes arrive whole and in order, a full socket keeps the unsent
rest queued for the next writable wake-up, and the protocol's pending requests are handed on uncopied."""

from __future__ import annotations

import socket
from collections import deque
from collections.abc import Iterator
from typing import Any

import pytest
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.protocol.parser import KafkaProtocol  # type: ignore[import-untyped]

from connect_core.kafka import wire_writes
from connect_core.kafka.wire_writes import WirePieces


class _Transport:
    """What the replaced send touches on a transport: its socket and its queue of chunks to write."""

    def __init__(self, sock: socket.socket | None) -> None:
        self._sock = sock
        self._write_buffer: deque[Any] = deque()


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    a.setblocking(False)
    b.setblocking(False)
    yield a, b
    a.close()
    b.close()


def _drain(sock: socket.socket) -> bytes:
    out = bytearray()
    while True:
        try:
            data = sock.recv(1 << 20)
        except BlockingIOError:
            return bytes(out)
        out += data


def test_install_replaces_the_sends_once() -> None:
    wire_writes.install()
    wire_writes.install()
    assert KafkaTCPTransport._sock_send is wire_writes._tcp_sock_send
    assert KafkaSSLTransport._sock_send is wire_writes._ssl_sock_send
    assert KafkaProtocol.send_bytes is wire_writes._send_bytes


def test_pieces_and_bytes_arrive_in_order_through_a_full_socket(pair: tuple[socket.socket, socket.socket]) -> None:
    writer, reader = pair
    big = bytes(range(256)) * 40_000  # ~10 MB: more than the socket buffers hold
    record_view = memoryview(big)[5:]
    chunks: list[Any] = [
        WirePieces([b"head", b"", record_view, bytearray(b"tail")]),
        b"plain-request",
        WirePieces([b"z"]),
    ]
    expected = b"".join(b"".join(c) if isinstance(c, WirePieces) else c for c in chunks)
    transport = _Transport(writer)
    transport._write_buffer.extend(chunks)
    received = bytearray()
    rounds = 0
    while transport._write_buffer:
        _sent, err = wire_writes._tcp_sock_send(transport)
        assert err is None
        rounds += 1
        received += _drain(reader)
    received += _drain(reader)
    assert rounds > 1  # the socket filled up at least once and the rest waited in the queue
    assert bytes(received) == expected


def test_a_closed_socket_is_a_connection_error(pair: tuple[socket.socket, socket.socket]) -> None:
    writer, reader = pair
    reader.close()
    transport = _Transport(writer)
    transport._write_buffer.append(WirePieces([b"x" * 10, b"y"]))
    errors = []
    for _ in range(3):  # the first send may still land in the kernel's buffer
        _sent, err = wire_writes._tcp_sock_send(transport)
        errors.append(err)
        if err is not None:
            break
        transport._write_buffer.append(b"more")
    assert errors[-1] is not None
    assert type(errors[-1]).__name__ == "KafkaConnectionError"
    assert wire_writes._tcp_sock_send(_Transport(None))[1] is not None


def test_pending_requests_are_handed_on_without_a_join() -> None:
    protocol = KafkaProtocol.__new__(KafkaProtocol)
    protocol.bytes_to_send = []
    assert wire_writes._send_bytes(protocol) == b""
    pieces = WirePieces([b"a", memoryview(b"bc")])
    protocol.bytes_to_send = [pieces]
    assert wire_writes._send_bytes(protocol) is pieces
    protocol.bytes_to_send = [b"x", pieces, b"y"]
    mixed = wire_writes._send_bytes(protocol)
    assert isinstance(mixed, WirePieces)
    assert b"".join(mixed) == b"xabcy"
    protocol.bytes_to_send = [b"x", b"y"]
    assert wire_writes._send_bytes(protocol) == b"xy"
    assert protocol.bytes_to_send == []


def test_tls_sends_joined_pieces() -> None:
    sent: list[bytes] = []

    class _Sock:
        def send(self, data: Any) -> int:
            sent.append(bytes(data))
            return len(data)

    transport = _Transport(_Sock())  # type: ignore[arg-type]
    transport._write_buffer.extend([WirePieces([b"ab", memoryview(b"cd")]), b"ef"])
    total, err = wire_writes._ssl_sock_send(transport)
    assert err is None
    assert total == 6
    assert sent == [b"abcd", b"ef"]
