"""A read_committed reader that applies Kafka's rule itself, from the transaction markers in the log.

Tansu writes real COMMIT/ABORT control batches but never lists aborted transactions in its fetch
answers, so its read_committed consumers see aborted records (broker-notes.md). A test that claims
"no duplicate" therefore reads raw batches (Fetch v4, read_uncommitted) and decides visibility the way
a Kafka broker and client do together:

* a non-transactional record is visible;
* a transactional record is visible once a COMMIT marker of its producer id follows it, and dropped
  when an ABORT marker follows;
* nothing at or after the first record of a still-open transaction is readable (the last stable offset).

The same answer holds on Apache Kafka, so tests that use it need no capability gate. Batches are parsed
by kafka-python's record classes (compression included); the rule is the product's
(:mod:`connect_core.kafka.transaction_markers`, which the exactly-once offset store applies too); only the
Fetch exchange over a plain socket is the test reader's own.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from kafka.record import MemoryRecords  # type: ignore[import-untyped]

from connect_core.kafka.transaction_markers import CommittedRecord, PartitionLog, apply_read_committed

if TYPE_CHECKING:
    from embedded_kafka.cluster import KafkaCluster

__all__ = ["CommittedRecord", "FetchError", "PartitionLog", "apply_read_committed", "committed_values", "leaders",
           "read_committed", "read_topic_committed"]

_FETCH_KEY, _FETCH_VERSION = 1, 4
_READ_UNCOMMITTED = 0
_MAX_BYTES = 16 * 1024 * 1024
_MAX_WAIT_MS = 500  # Tansu answers a short wait late or not at all on partitions of many batches


class FetchError(RuntimeError):
    """The broker answered the Fetch with an error code."""


def _string(text: str) -> bytes:
    raw = text.encode()
    return struct.pack(">h", len(raw)) + raw


def _fetch_request(topic: str, partition: int, offset: int, correlation_id: int) -> bytes:
    header = struct.pack(">hhi", _FETCH_KEY, _FETCH_VERSION, correlation_id) + _string("mm2-committed-reader")
    body = struct.pack(">iiiib", -1, _MAX_WAIT_MS, 1, _MAX_BYTES, _READ_UNCOMMITTED)
    body += struct.pack(">i", 1) + _string(topic) + struct.pack(">i", 1) + struct.pack(">iqi", partition, offset,
                                                                                         _MAX_BYTES)
    message = header + body
    return struct.pack(">i", len(message)) + message


def _receive(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", _exactly(sock, 4))[0]
    return _exactly(sock, size)


def _exactly(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(min(left, 1 << 20))
        if not chunk:
            raise ConnectionError("the broker closed the connection during a Fetch")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _parse_fetch_response(data: bytes) -> tuple[int, int, bytes]:
    """(error code, high watermark, record bytes) of the single partition a request asked for."""
    pos = 4 + 4  # correlation id, throttle time
    pos += 4  # one topic
    pos += 2 + struct.unpack_from(">h", data, pos)[0]  # its name
    pos += 4  # one partition
    _partition, error, high_watermark, _lso = struct.unpack_from(">ihqq", data, pos)
    pos += 4 + 2 + 8 + 8
    aborted = struct.unpack_from(">i", data, pos)[0]
    pos += 4 + 16 * max(aborted, 0)
    size = struct.unpack_from(">i", data, pos)[0]
    pos += 4
    return error, high_watermark, data[pos:pos + max(size, 0)]


def _raw_batches(bootstrap: str, topic: str, partition: int, timeout_s: float) -> tuple[list[Any], int]:
    """Every batch of the partition from offset 0 to the high watermark, in log order."""
    host, port = bootstrap.split(",")[0].strip().rsplit(":", 1)
    batches: list[Any] = []
    offset, high_watermark, correlation = 0, 0, 0
    with socket.create_connection((host, int(port)), timeout_s) as sock:
        sock.settimeout(timeout_s)
        while True:
            correlation += 1
            sock.sendall(_fetch_request(topic, partition, offset, correlation))
            error, high_watermark, records = _parse_fetch_response(_receive(sock))
            if error:
                raise FetchError(f"Fetch of {topic}-{partition} at {offset} failed with error code {error}")
            memory = MemoryRecords(records)
            advanced = False
            while (batch := memory.next_batch()) is not None:
                if batch.next_offset <= offset:
                    continue  # a batch the broker repeats from before the fetch offset
                batches.append(batch)
                offset = batch.next_offset
                advanced = True
            if offset >= high_watermark:
                return batches, high_watermark
            if not advanced:
                raise TimeoutError(f"Fetch of {topic}-{partition} at {offset} returned nothing below the high "
                                   f"watermark {high_watermark}")


def read_committed(bootstrap: str, topic: str, partition: int, timeout_s: float = 30.0) -> PartitionLog:
    """The partition as a read_committed consumer sees it, whatever the broker lists as aborted."""
    batches, high_watermark = _raw_batches(bootstrap, topic, partition, timeout_s)
    log = apply_read_committed(batches)
    log.high_watermark = high_watermark
    return log


def leaders(cluster: KafkaCluster, topic: str, timeout_s: float = 10.0) -> dict[int, str]:
    """Partition -> "host:port" of its leader (a Fetch must go to the leader on a multi-broker cluster).

    A full metadata request: asking for one named topic auto-creates it on Tansu.
    """
    metadata = cluster.admin().list_topics(timeout=timeout_s)
    if topic not in metadata.topics:
        raise FetchError(f"topic {topic!r} does not exist on cluster {cluster.name}")
    brokers = {b.id: f"{b.host}:{b.port}" for b in metadata.brokers.values()}
    return {p.id: brokers.get(p.leader, cluster.bootstrap_servers) for p in metadata.topics[topic].partitions.values()}


def read_topic_committed(cluster: KafkaCluster, topic: str, partitions: Sequence[int] | None = None,
                         timeout_s: float = 30.0) -> dict[int, PartitionLog]:
    """Partition -> what a read_committed consumer sees of it (every partition unless some are named)."""
    found = leaders(cluster, topic)
    wanted = sorted(found) if partitions is None else list(partitions)
    return {p: read_committed(found[p], topic, p, timeout_s) for p in wanted}


def committed_values(cluster: KafkaCluster, topic: str, partitions: Sequence[int] | None = None,
                     timeout_s: float = 30.0) -> dict[int, list[bytes | None]]:
    """Partition -> the values a read_committed consumer sees, in order (the usual "no duplicate" check)."""
    logs = read_topic_committed(cluster, topic, partitions, timeout_s)
    return {p: [r.value for r in log.committed] for p, log in logs.items()}
