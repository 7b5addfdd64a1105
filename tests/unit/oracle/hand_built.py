"""Kafka v2 record batches written byte by byte from the format's definition, for the oracle's tests.

The CRC-32C comes from kafka-python's implementation, not the oracle's, so a batch built here also checks
the oracle's checksum against an independent one.
"""

from __future__ import annotations

import gzip
import struct
from dataclasses import dataclass, field

from kafka.record.util import calc_crc32c  # type: ignore[import-untyped]

TRANSACTIONAL, CONTROL, LOG_APPEND_TIME, GZIP = 0x10, 0x20, 0x08, 0x01
BASE_TIMESTAMP = 1_700_000_000_000

Header = tuple[str, bytes | None]
Entry = tuple[bytes | None, bytes | None, tuple[Header, ...]]  # key, value, headers


def varint(value: int) -> bytes:
    """A zigzag varint, as Kafka's records encode lengths and deltas."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw >= 0x80:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def field_bytes(data: bytes | None) -> bytes:
    return varint(-1) if data is None else varint(len(data)) + data


def record(index: int, key: bytes | None, value: bytes | None, headers: tuple[Header, ...]) -> bytes:
    body = b"\x00" + varint(index) + varint(index) + field_bytes(key) + field_bytes(value) + varint(len(headers))
    for name, header_value in headers:
        body += field_bytes(name.encode()) + field_bytes(header_value)
    return varint(len(body)) + body


def batch(
    base_offset: int, entries: list[Entry], *, attributes: int = 0, producer_id: int = -1, producer_epoch: int = -1
) -> bytes:
    """One batch; record i has timestamp BASE_TIMESTAMP + i (max timestamp: the last one's)."""
    records = b"".join(record(i, k, v, h) for i, (k, v, h) in enumerate(entries))
    if attributes & 0x07 == GZIP:
        records = gzip.compress(records)
    elif attributes & 0x07 in (2, 3, 4):
        import cramjam

        codec = attributes & 0x07
        records = bytes(
            cramjam.snappy.compress_raw(records)
            if codec == 2
            else cramjam.lz4.compress(records)
            if codec == 3
            else cramjam.zstd.compress(records)
        )
    last = len(entries) - 1
    covered = (
        struct.pack(
            ">hiqqqhii",
            attributes,
            last,
            BASE_TIMESTAMP,
            BASE_TIMESTAMP + last,
            producer_id,
            producer_epoch,
            -1 if producer_id < 0 else 0,
            len(entries),
        )
        + records
    )
    crc = calc_crc32c(covered)
    return struct.pack(">qiibI", base_offset, 4 + 1 + 4 + len(covered), -1, 2, crc) + covered


@dataclass
class HandLog:
    """A partition's log appended batch by batch, offsets assigned as a broker would."""

    parts: list[bytes] = field(default_factory=list)
    next_offset: int = 0
    markers: list[tuple[int, int, bool]] = field(default_factory=list)  # (offset, producer id, commit?) written

    def _append(self, entries: list[Entry], **kwargs: int) -> HandLog:
        self.parts.append(batch(self.next_offset, entries, **kwargs))
        self.next_offset += len(entries)
        return self

    def plain(self, *values: str) -> HandLog:
        """A batch of a non-transactional producer."""
        return self._append([(None, v.encode(), ()) for v in values])

    def txn(self, pid: int, *values: str, epoch: int = 0) -> HandLog:
        """A transactional batch of producer ``pid``."""
        return self._append(
            [(None, v.encode(), ()) for v in values], attributes=TRANSACTIONAL, producer_id=pid, producer_epoch=epoch
        )

    def marker(self, pid: int, commit: bool, epoch: int = 0) -> HandLog:
        """The control batch that ends ``pid``'s transaction: key version 0 and type (0 ABORT, 1 COMMIT)."""
        key = struct.pack(">hh", 0, 1 if commit else 0)
        value = struct.pack(">hi", 0, 0)  # version, coordinator epoch
        self.markers.append((self.next_offset, pid, commit))
        return self._append(
            [(key, value, ())], attributes=TRANSACTIONAL | CONTROL, producer_id=pid, producer_epoch=epoch
        )

    def commit(self, pid: int, epoch: int = 0) -> HandLog:
        return self.marker(pid, True, epoch)

    def abort(self, pid: int, epoch: int = 0) -> HandLog:
        return self.marker(pid, False, epoch)

    def raw(self) -> bytes:
        return b"".join(self.parts)
