"""A Produce request built as pieces: the records of each batch are referenced, never copied.

kafka-python's encoder writes every field, records included, into one buffer and copies that out again:
two passes over every produced byte. :class:`PiecesProduceRequest` is a kafka-python ProduceRequest (its
header, version choice, response decoding and in-flight bookkeeping are kafka-python's) whose encoding
is a :class:`~connect_core.kafka.wire_writes.WirePieces`: the framing and fields as small buffers, each
partition's records as the caller's own buffers (a rewritten batch header and a view of the fetched
records part). The wire format is Kafka's Produce v3-v12 (flexible from v9), the same bytes kafka-python
would write.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from kafka.protocol.producer import ProduceRequest

from connect_core.kafka.wire_writes import WirePieces

#: The first Produce version that names topics by id (not built here).
_TOPIC_ID_VERSION = 13
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_ACKS_TIMEOUT = struct.Struct(">hi")
_NO_TAGS = b"\x00"

#: One partition of a request: (topic, partition, the batch's pieces in order).
ProducePart = tuple[str, int, Sequence[bytes | bytearray | memoryview]]


def _uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _string(text: str | None, flexible: bool) -> bytes:
    if text is None:
        return _uvarint(0) if flexible else _I16.pack(-1)
    data = text.encode()
    return (_uvarint(len(data) + 1) if flexible else _I16.pack(len(data))) + data


def _count(n: int, flexible: bool) -> bytes:
    return _uvarint(n + 1) if flexible else _I32.pack(n)


class PiecesProduceRequest:
    """A ProduceRequest (kafka-python's, for everything but the encoding) of pre-built batches."""

    __slots__ = ("_parts", "_request")

    def __init__(
        self, transactional_id: str | None, acks: int, timeout_ms: int, parts: Sequence[ProducePart], max_version: int
    ) -> None:
        if max_version >= _TOPIC_ID_VERSION:
            raise ValueError(f"Produce by topic id (v{_TOPIC_ID_VERSION}+) is not built here")
        request = ProduceRequest(
            transactional_id=transactional_id, acks=acks, timeout_ms=timeout_ms, topic_data=[], max_version=max_version
        )
        object.__setattr__(self, "_request", request)
        object.__setattr__(self, "_parts", list(parts))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._request, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._request, name, value)  # API_VERSION, chosen by the connection

    def __repr__(self) -> str:
        partitions = ", ".join(f"{t}-{p}" for t, p, _ in self._parts)
        return f"PiecesProduceRequest(acks={self._request.acks}, partitions=[{partitions}])"

    def encode(self, version: int | None = None, header: bool = False, framed: bool = False) -> WirePieces:
        """The request's bytes as pieces (what kafka-python's ``encode`` returns as one buffer)."""
        request = self._request
        if version is not None:
            request.API_VERSION = version
        version = request.API_VERSION
        if version is None:
            raise ValueError("Version required to encode data")
        if not 3 <= version < _TOPIC_ID_VERSION:
            raise ValueError(f"Produce v{version} is not built here")
        flexible = bool(request.flexible_version_q(version))
        head = bytearray(request.encode_header(flexible=flexible)) if header else bytearray()
        head += _string(request.transactional_id, flexible)
        head += _ACKS_TIMEOUT.pack(request.acks, request.timeout_ms)
        by_topic: dict[str, list[ProducePart]] = {}
        for part in self._parts:
            by_topic.setdefault(part[0], []).append(part)
        head += _count(len(by_topic), flexible)
        pieces = WirePieces()
        pending = head  # small fields gather here until the next records piece
        for topic, parts in by_topic.items():
            pending += _string(topic, flexible)
            pending += _count(len(parts), flexible)
            for _topic, partition, batch in parts:
                size = sum(len(piece) for piece in batch)
                pending += _I32.pack(partition)
                pending += _uvarint(size + 1) if flexible else _I32.pack(size)
                pieces.append(pending)
                pieces.extend(batch)
                pending = bytearray()
                if flexible:
                    pending += _NO_TAGS  # the partition's tagged fields
            if flexible:
                pending += _NO_TAGS  # the topic's
        if flexible:
            pending += _NO_TAGS  # the request's
        pieces.append(pending)
        if framed:
            pieces[0] = _I32.pack(pieces.size) + pieces[0]
        return pieces


__all__ = ["PiecesProduceRequest", "ProducePart"]
