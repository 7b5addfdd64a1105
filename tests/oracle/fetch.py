"""Raw Fetch requests (v4, read_uncommitted) over a socket, encoded here: every batch of a partition.

read_uncommitted so that the broker filters nothing: what is visible is decided by :mod:`tests.oracle.rule`
from the control batches, the same way on Tansu (which never lists aborted transactions) and on Kafka.
"""

from __future__ import annotations

import socket
import ssl
import struct
import time
from dataclasses import dataclass

from tests.oracle.batches import Batch, parse_batches

_FETCH, _VERSION = 1, 4
_READ_UNCOMMITTED = 0
_MAX_BYTES = 16 * 1024 * 1024
#: The broker's wait for new data. Tansu answers a short wait late or not at all on partitions of many
#: batches (broker-notes.md): an answer with nothing below the high watermark doubles it, up to the longest.
_FIRST_WAIT_MS, _LONGEST_WAIT_MS = 500, 8000


class FetchError(RuntimeError):
    """The broker answered a Fetch with an error code, or with nothing new below its high watermark."""


@dataclass
class PartitionBatches:
    """A partition's batches from offset 0 up to the high watermark seen by the last Fetch."""

    batches: list[Batch]
    high_watermark: int


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _request(topic: str, partition: int, offset: int, correlation_id: int, wait_ms: int) -> bytes:
    header = struct.pack(">hhi", _FETCH, _VERSION, correlation_id) + _string("mm2-test-oracle")
    body = struct.pack(">iiiib", -1, wait_ms, 1, _MAX_BYTES, _READ_UNCOMMITTED)
    body += struct.pack(">i", 1) + _string(topic) + struct.pack(">i", 1)
    body += struct.pack(">iqi", partition, offset, _MAX_BYTES)
    return struct.pack(">i", len(header) + len(body)) + header + body


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the broker closed the connection during a Fetch")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _response(data: bytes, correlation_id: int, topic: str, partition: int) -> tuple[int, int, bytes]:
    """(error code, high watermark, record bytes) of ``topic``-``partition`` in a Fetch v4 answer."""
    answered, _throttle = struct.unpack_from(">ii", data, 0)
    if answered != correlation_id:
        raise FetchError(f"Fetch answer for request {answered}, expected {correlation_id}")
    pos = 8
    (topics,) = struct.unpack_from(">i", data, pos)
    pos += 4
    for _ in range(topics):
        (name_size,) = struct.unpack_from(">h", data, pos)
        name = data[pos + 2 : pos + 2 + name_size].decode()
        pos += 2 + name_size
        (partitions,) = struct.unpack_from(">i", data, pos)
        pos += 4
        for _ in range(partitions):
            number, error, high_watermark, _lso, aborted = struct.unpack_from(">ihqqi", data, pos)
            pos += 26 + 16 * max(aborted, 0)  # the aborted list is ignored: the markers decide
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4
            records = data[pos : pos + max(size, 0)]
            pos += max(size, 0)
            if (name, number) == (topic, partition):
                return error, high_watermark, records
    raise FetchError(f"the Fetch answer holds no {topic}-{partition}")


class BrokerConnection:
    """One socket to one broker, reused for the Fetch requests of many partitions."""

    def __init__(self, address: str, timeout_s: float, tls: ssl.SSLContext | None = None) -> None:
        host, port = address.rsplit(":", 1)
        self.address = address
        plain = socket.create_connection((host, int(port)), timeout_s)
        self._sock = tls.wrap_socket(plain, server_hostname=host) if tls is not None else plain
        self._sock.settimeout(timeout_s + _LONGEST_WAIT_MS / 1000)
        self._correlation = 0

    def __enter__(self) -> BrokerConnection:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._sock.close()

    def fetch(self, topic: str, partition: int, offset: int, wait_ms: int) -> tuple[int, int, bytes]:
        """One Fetch: (error code, high watermark, record bytes)."""
        self._correlation += 1
        self._sock.sendall(_request(topic, partition, offset, self._correlation, wait_ms))
        (size,) = struct.unpack(">i", _exactly(self._sock, 4))
        return _response(_exactly(self._sock, size), self._correlation, topic, partition)

    def fetch_all(self, topic: str, partition: int, timeout_s: float) -> PartitionBatches:
        """Every batch of the partition from offset 0 to the high watermark, in log order, CRCs checked.

        Raises :class:`FetchError` when the broker answers with an error, or with nothing below its high
        watermark until ``timeout_s`` has passed.
        """
        batches: list[Batch] = []
        offset = 0
        wait_ms = _FIRST_WAIT_MS
        deadline = time.monotonic() + timeout_s
        while True:
            error, high_watermark, records = self.fetch(topic, partition, offset, wait_ms)
            if error:
                raise FetchError(f"Fetch of {topic}-{partition} at {offset} failed with error code {error}")
            before = offset
            for batch in parse_batches(records):
                if batch.next_offset <= offset:
                    continue  # the broker repeats a batch that began before the fetch offset
                batches.append(batch)
                offset = batch.next_offset
            if offset >= high_watermark:
                return PartitionBatches(batches, high_watermark)
            if offset == before:
                if time.monotonic() >= deadline:
                    raise FetchError(
                        f"Fetch of {topic}-{partition} at {offset} returned nothing below the high "
                        f"watermark {high_watermark} for {timeout_s:.0f} s"
                    )
                wait_ms = min(2 * wait_ms, _LONGEST_WAIT_MS)


def fetch_all(
    address: str, topic: str, partition: int, timeout_s: float, tls: ssl.SSLContext | None = None
) -> PartitionBatches:
    """:meth:`BrokerConnection.fetch_all` over a connection of its own."""
    with BrokerConnection(address, timeout_s, tls) as connection:
        return connection.fetch_all(topic, partition, timeout_s)
