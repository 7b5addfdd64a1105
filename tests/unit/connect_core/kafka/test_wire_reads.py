"""kafka-python's receive path as :mod:`connect_core.kafka.wire_reads` leaves it: the same bytes reach the
protocol parser (over a real socket pair), frames of any size decode the same, an end of stream is the
same connection error, and a field read copies (or, for a large rest of a frame, views) what kafka-python's
own read returned."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import pytest
from kafka import errors as kafka_errors
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.protocol.frame import KafkaBytes  # type: ignore[import-untyped]
from kafka.protocol.parser import KafkaProtocol  # type: ignore[import-untyped]

from connect_core.kafka import wire_reads


class _Transport:
    """What the replaced read touches on a transport: its socket (the instance keeps the read buffer)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock


@pytest.fixture
def pair() -> Iterator[tuple[socket.socket, socket.socket]]:
    a, b = socket.socketpair()
    b.setblocking(False)
    yield a, b
    a.close()
    b.close()


def test_install_replaces_the_reads_once() -> None:
    wire_reads.install()
    wire_reads.install()
    assert KafkaTCPTransport._sock_recv is wire_reads._tcp_sock_recv
    assert KafkaSSLTransport._sock_recv is wire_reads._ssl_sock_recv
    assert KafkaBytes.read is wire_reads._frame_read


def test_tcp_read_hands_on_what_the_socket_holds_and_nothing_when_it_is_empty(
    pair: tuple[socket.socket, socket.socket],
) -> None:
    writer, reader = pair
    transport = _Transport(reader)
    assert wire_reads._tcp_sock_recv(transport) == (b"", None)
    writer.sendall(b"first")
    data, err = wire_reads._tcp_sock_recv(transport)
    assert (bytes(data), err) == (b"first", None)
    writer.sendall(b"second")
    data, err = wire_reads._tcp_sock_recv(transport)
    assert (bytes(data), err) == (b"second", None)  # the same buffer again, the new bytes only


def test_tcp_read_of_a_closed_peer_is_a_connection_error(pair: tuple[socket.socket, socket.socket]) -> None:
    writer, reader = pair
    writer.close()
    data, err = wire_reads._tcp_sock_recv(_Transport(reader))
    assert data == b""
    assert isinstance(err, kafka_errors.KafkaConnectionError)


def test_a_stream_larger_than_a_read_arrives_whole_and_in_order(pair: tuple[socket.socket, socket.socket]) -> None:
    """2.5 reads' worth, written in pieces while read: each view copied before the next read (as the
    parser does) gives back the stream byte for byte."""
    writer, reader = pair
    writer.setblocking(False)
    stream = bytes(i % 253 for i in range(wire_reads.RECV_CHUNK * 5 // 2))
    transport = _Transport(reader)
    got = bytearray()
    sent = 0
    while len(got) < len(stream):
        if sent < len(stream):
            with contextlib.suppress(BlockingIOError):
                sent += writer.send(stream[sent : sent + 300_000])
        data, err = wire_reads._tcp_sock_recv(transport)
        assert err is None and len(data) <= wire_reads.RECV_CHUNK
        got += data
    assert got == stream


def test_parser_decodes_a_view_as_it_decodes_bytes() -> None:
    """KafkaProtocol.receive_bytes is given views of the read buffer now: a length prefix cut anywhere works."""
    parser = KafkaProtocol(client_id="t")
    frame = (8).to_bytes(4, "big") + b"\x00" * 8
    for data in (memoryview(frame)[:3], memoryview(frame)[3:6]):
        assert parser.receive_bytes(data) == []
    assert parser._receiving and parser._rbuffer.tell() == 2


@pytest.mark.parametrize("size", [10, wire_reads.VIEW_MIN - 1, wire_reads.VIEW_MIN, 3 * wire_reads.VIEW_MIN])
def test_frame_reads_return_what_kafka_python_returned(size: int) -> None:
    content = bytes(i % 251 for i in range(size))
    frame = KafkaBytes(size)
    frame.write(content)
    frame.seek(0)
    first = frame.read(4)
    assert isinstance(first, bytes) and first == content[:4]
    assert frame.read(0) == b"" and frame.tell() == 4
    rest = frame.read()
    assert bytes(rest) == content[4:] and frame.tell() == size
    if size - 4 >= wire_reads.VIEW_MIN:
        assert isinstance(rest, memoryview) and rest.readonly
    else:
        assert isinstance(rest, bytes)
    frame.seek(size - 2)
    assert frame.read(10) == content[-2:] and frame.tell() == size  # a read past the end stops at it
