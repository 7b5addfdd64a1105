"""Raw Fetch requests (v4, read_uncommitted) over a socket, encoded here: every batch of a partition.

read_uncommitted so that the broker filters nothing: what is visible is decided by :mod:`tests.oracle.rule`
from the control batches, the same way on Tansu (which never lists aborted transactions) and on Kafka.
"""

from __future__ import annotations

import socket
import ssl
import struct
from dataclasses import dataclass

from tests.oracle.batches import Batch, parse_batches

_FETCH, _VERSION = 1, 4
_READ_UNCOMMITTED = 0
_MAX_BYTES = 16 * 1024 * 1024
_MAX_WAIT_MS = 500  # Tansu answers a short wait late or not at all on partitions of many batches


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


def _request(topic: str, partition: int, offset: int, correlation_id: int) -> bytes:
    header = struct.pack(">hhi", _FETCH, _VERSION, correlation_id) + _string("mm2-test-oracle")
    body = struct.pack(">iiiib", -1, _MAX_WAIT_MS, 1, _MAX_BYTES, _READ_UNCOMMITTED)
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
        name = data[pos + 2:pos + 2 + name_size].decode()
        pos += 2 + name_size
        (partitions,) = struct.unpack_from(">i", data, pos)
        pos += 4
        for _ in range(partitions):
            number, error, high_watermark, _lso, aborted = struct.unpack_from(">ihqqi", data, pos)
            pos += 26 + 16 * max(aborted, 0)  # the aborted list is ignored: the markers decide
            (size,) = struct.unpack_from(">i", data, pos)
            pos += 4
            records = data[pos:pos + max(size, 0)]
            pos += max(size, 0)
            if (name, number) == (topic, partition):
                return error, high_watermark, records
    raise FetchError(f"the Fetch answer holds no {topic}-{partition}")


def fetch_all(address: str, topic: str, partition: int, timeout_s: float,
              tls: ssl.SSLContext | None = None) -> PartitionBatches:
    """Every batch of the partition from offset 0 to the high watermark, in log order, CRCs checked."""
    host, port = address.rsplit(":", 1)
    batches: list[Batch] = []
    offset = high_watermark = correlation = 0
    with socket.create_connection((host, int(port)), timeout_s) as plain:
        sock = tls.wrap_socket(plain, server_hostname=host) if tls is not None else plain
        sock.settimeout(timeout_s)
        while True:
            correlation += 1
            sock.sendall(_request(topic, partition, offset, correlation))
            (size,) = struct.unpack(">i", _exactly(sock, 4))
            error, high_watermark, records = _response(_exactly(sock, size), correlation, topic, partition)
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
                raise FetchError(f"Fetch of {topic}-{partition} at {offset} returned nothing below the high "
                                 f"watermark {high_watermark}")
