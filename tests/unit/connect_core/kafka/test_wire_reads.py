"""kafka-python's receive path as :mod:`connect_core.kafka.wire_reads` leaves it: the same bytes reach the
protocol parser (over a real socket pair), frames of any size decode the same, an end of stream is the
same connection error, and a field read copies (or, for a large rest of a frame, views) what kafka-python's
own read returned."""

from __future__ import annotations

import contextlib
import socket
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import errors as kafka_errors
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.protocol.consumer import FetchResponse
from kafka.protocol.frame import KafkaBytes  # type: ignore[import-untyped]
from kafka.protocol.parser import KafkaProtocol  # type: ignore[import-untyped]

from connect_core.kafka import wire_reads


class _Transport:
    """What the replaced read touches on a transport: its socket and protocol (the connection, whose parser
    fills frames; the instance keeps the read buffer)."""

    def __init__(self, sock: socket.socket, protocol: Any = None) -> None:
        self._sock = sock
        self._protocol = protocol


class _FrameParser(KafkaProtocol):  # type: ignore[misc]
    """kafka-python's parser, each completed frame handed back as its bytes instead of decoded."""

    def _process_response(self, read_buffer: Any) -> tuple[int, bytes]:
        return 0, bytes(read_buffer.read())


class _Connection:
    def __init__(self, parser: KafkaProtocol) -> None:
        self.parser = parser


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


def test_large_frames_are_read_straight_into_the_parsers_frame(pair: tuple[socket.socket, socket.socket]) -> None:
    """Frames small and large, written while read: the parser completes every frame with the bytes sent,
    and the rest of a large frame went from the socket into its frame buffer, not through the read buffer."""
    writer, reader = pair
    writer.setblocking(False)
    bodies = [b"s" * 10, bytes(i % 251 for i in range(3 * wire_reads.VIEW_MIN)), b"m" * 100]
    bodies.append(bytes(range(241)) * (40 * wire_reads.VIEW_MIN // 241))
    stream = b"".join(len(body).to_bytes(4, "big") + body for body in bodies)
    parser = _FrameParser(client_id="t")
    transport = _Transport(reader, _Connection(parser))
    frames: list[bytes] = []
    handed = sent = 0
    while len(frames) < len(bodies):
        if sent < len(stream):
            with contextlib.suppress(BlockingIOError):
                sent += writer.send(stream[sent : sent + 300_000])
        data, err = wire_reads._tcp_sock_recv(transport)
        assert err is None
        handed += len(data)
        frames.extend(frame for _, frame in parser.receive_bytes(data))
    assert frames == bodies
    assert handed < len(stream) // 4  # the large frames' bytes bypassed the read buffer


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


@pytest.mark.parametrize("version", [4, 11, 12, 13])
def test_a_fetch_answers_large_records_are_a_view_of_its_frame(version: int) -> None:
    """The Fetch decoder hands a records field of :data:`~wire_reads.VIEW_MIN` or more on as a read-only view
    of the frame (no copy) and smaller ones as bytes, with the same contents kafka-python decoded before."""
    wire_reads.install()
    large = bytes(i % 253 for i in range(2 * wire_reads.VIEW_MIN))
    small = b"small records"
    partition = FetchResponse.FetchableTopicResponse.PartitionData
    topic_fields = {"topic": "t"} if version < 13 else {"topic_id": uuid.UUID(int=7)}
    answer = FetchResponse(
        throttle_time_ms=0,
        error_code=0,
        session_id=0,
        responses=[
            FetchResponse.FetchableTopicResponse(
                **topic_fields,
                partitions=[
                    partition(partition_index=0, error_code=0, high_watermark=9, records=large),
                    partition(partition_index=1, error_code=0, high_watermark=9, records=small),
                ],
            )
        ],
    )
    encoded = bytes(answer.encode(version=version))
    frame = KafkaBytes(len(encoded))
    frame.write(encoded)
    frame.seek(0)
    decoded = FetchResponse.decode(frame, version=version)
    first, second = decoded.responses[0].partitions
    assert isinstance(first.records, memoryview) and first.records.readonly and bytes(first.records) == large
    assert isinstance(second.records, bytes) and second.records == small
