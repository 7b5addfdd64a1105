"""Kafka record batches (v2, magic 2) parsed from their bytes, each one's CRC-32C checked.

The suite's own parser: no product code and no Kafka client library decides what a batch holds.
Codecs: none, gzip (the standard library's), snappy (raw, or in the xerial frames Java producers write), lz4
(frame) and zstd, the last three through cramjam, a library neither the product nor its Kafka clients use;
an unknown codec raises :class:`UnsupportedCodec` by name instead of being misread.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import NamedTuple

from tests.oracle.crc32c import crc32c

#: baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes, lastOffsetDelta,
#: baseTimestamp, maxTimestamp, producerId, producerEpoch, baseSequence, recordCount
_HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = _HEADER.size  # 61
_CRC_FROM = 21  # the checksum covers the batch from its attributes to its end
_CODECS = {0: "none", 1: "gzip", 2: "snappy", 3: "lz4", 4: "zstd"}
_LOG_APPEND_TIME, _TRANSACTIONAL, _CONTROL = 0x08, 0x10, 0x20
ABORT, COMMIT = 0, 1  # control record types


class CorruptBatch(ValueError):
    """A batch whose bytes contradict themselves (CRC, magic, lengths, record count)."""


class UnsupportedCodec(ValueError):
    """A batch compressed with a codec this reader does not decompress."""


class Record(NamedTuple):
    """One record of a batch; ``offset`` and ``timestamp`` already absolute (a tuple: millions are read)."""

    offset: int
    key: bytes | None
    value: bytes | None
    headers: tuple[tuple[str, bytes | None], ...]
    timestamp: int


@dataclass(frozen=True)
class Batch:
    """One v2 record batch as stored in the log."""

    base_offset: int
    last_offset_delta: int
    attributes: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records: tuple[Record, ...]

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & _TRANSACTIONAL)

    @property
    def is_control_batch(self) -> bool:
        return bool(self.attributes & _CONTROL)

    @property
    def codec(self) -> str:
        return _CODECS.get(self.attributes & 0x07, f"unknown ({self.attributes & 0x07})")

    def control_types(self) -> list[tuple[int, int]]:
        """(offset, type) of each control record: ABORT 0, COMMIT 1 (a control batch's keys)."""
        found = []
        for record in self.records:
            if record.key is None or len(record.key) < 4:
                raise CorruptBatch(f"control record at {record.offset} has no version/type key")
            _version, kind = struct.unpack_from(">hh", record.key)
            found.append((record.offset, kind))
        return found

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)


def parse_batches(data: bytes) -> list[Batch]:
    """Every whole batch in ``data``, in order; a trailing partial batch (a cut fetch answer) is left out."""
    view = memoryview(data)
    batches, pos = [], 0
    while len(view) - pos >= 12:
        length = struct.unpack_from(">i", view, pos + 8)[0]
        end = pos + 12 + length
        if end > len(view):
            break
        batches.append(parse_batch(view[pos:end]))
        pos = end
    return batches


def parse_batch(raw: bytes | memoryview) -> Batch:
    """One whole batch; raises :class:`CorruptBatch` unless its magic, CRC and record count hold."""
    view = memoryview(raw)
    if len(view) < HEADER_SIZE:
        raise CorruptBatch(f"a batch of {len(view)} bytes is shorter than the v2 header")
    (
        base_offset,
        _length,
        _leader_epoch,
        magic,
        crc,
        attributes,
        last_delta,
        base_ts,
        max_ts,
        producer_id,
        producer_epoch,
        base_sequence,
        count,
    ) = _HEADER.unpack_from(view)
    if magic != 2:
        raise CorruptBatch(f"batch at {base_offset} has magic {magic}; only v2 batches are read")
    actual = crc32c(view[_CRC_FROM:])
    if actual != crc:
        raise CorruptBatch(f"batch at {base_offset}: CRC-32C {actual:#010x} computed, {crc:#010x} stored")
    body = _decompress(base_offset, attributes, view[HEADER_SIZE:])
    append_time = max_ts if attributes & _LOG_APPEND_TIME else None  # the broker's time stands for every record
    records, pos = [], 0
    short = CorruptBatch(f"batch at {base_offset}: its records end before its record count ({count})")
    try:
        for _ in range(count):
            if pos >= len(body):
                raise short
            record, pos = _record(body, pos, base_offset, base_ts, append_time)
            records.append(record)
    except IndexError:
        raise short from None
    if pos != len(body):
        raise CorruptBatch(f"batch at {base_offset}: {len(body) - pos} bytes after its {count} records")
    return Batch(base_offset, last_delta, attributes, producer_id, producer_epoch, base_sequence, tuple(records))


def _decompress(base_offset: int, attributes: int, body: memoryview) -> bytes:
    codec = attributes & 0x07
    if codec == 0:
        return bytes(body)
    if codec == 1:
        return gzip.decompress(body)
    if codec in (2, 3, 4):
        import cramjam

        if codec == 2:
            return _snappy(bytes(body))
        if codec == 3:
            return bytes(cramjam.lz4.decompress(bytes(body)))
        return bytes(cramjam.zstd.decompress(bytes(body)))
    raise UnsupportedCodec(
        f"batch at {base_offset} is compressed with {_CODECS.get(codec, codec)}, which the "
        "test reader does not decompress"
    )


_XERIAL = b"\x82SNAPPY\x00"


def _snappy(data: bytes) -> bytes:
    """Raw snappy (librdkafka), or xerial's framing (the Java client): a 16-byte header, then blocks of a
    4-byte length and raw snappy each."""
    import cramjam

    if not data.startswith(_XERIAL):
        return bytes(cramjam.snappy.decompress_raw(data))
    out, pos = [], 16
    while pos < len(data):
        (size,) = struct.unpack_from(">i", data, pos)
        out.append(bytes(cramjam.snappy.decompress_raw(data[pos + 4 : pos + 4 + size])))
        pos += 4 + size
    return b"".join(out)


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """A zigzag varint (Kafka's signed varint/varlong) at ``pos``: (value, next position)."""
    if pos < len(data) and data[pos] < 0x80:  # one byte: most lengths and deltas of small records
        raw = data[pos]
        return (raw >> 1) ^ -(raw & 1), pos + 1
    shift = raw = 0
    while True:
        if pos >= len(data):
            raise CorruptBatch("a record ends inside a varint")
        byte = data[pos]
        pos += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), pos
        shift += 7
        if shift > 63:
            raise CorruptBatch("a varint longer than ten bytes")


def _bytes(data: bytes, pos: int) -> tuple[bytes | None, int]:
    size, pos = _varint(data, pos)
    if size < 0:
        return None, pos
    if pos + size > len(data):
        raise CorruptBatch("a record's field runs past its batch")
    return data[pos : pos + size], pos + size


#: zigzag varints of one byte (most lengths, deltas and counts of a record), decoded ahead
_ONE_BYTE = tuple((b >> 1) ^ -(b & 1) for b in range(0x80))


def _record(data: bytes, pos: int, base_offset: int, base_ts: int, append_time: int | None) -> tuple[Record, int]:
    """One record at ``pos``: (record, position after it). One-byte varints are decoded inline (a
    function call each would double the cost of a log of small records)."""
    length, pos = _varint(data, pos)
    end = pos + length
    if length < 0 or end > len(data):
        raise CorruptBatch(f"a record of {length} bytes runs past its batch")
    pos += 1  # the record's attributes: unused by v2
    fields: list[int] = []
    for _ in range(2):  # timestamp delta, offset delta
        byte = data[pos]
        if byte < 0x80:
            fields.append(_ONE_BYTE[byte])
            pos += 1
        else:
            value, pos = _varint(data, pos)
            fields.append(value)
    ts_delta, offset_delta = fields
    key_value: list[bytes | None] = []
    for _ in range(2):  # key, value
        byte = data[pos]
        if byte < 0x80:
            size = _ONE_BYTE[byte]
            pos += 1
        else:
            size, pos = _varint(data, pos)
        if size < 0:
            key_value.append(None)
        else:
            key_value.append(data[pos : pos + size])
            pos += size
    header_count, pos = _varint(data, pos)
    headers = []
    for _ in range(header_count):
        name, pos = _bytes(data, pos)
        header_value, pos = _bytes(data, pos)
        headers.append(((name or b"").decode(), header_value))
    if pos != end:
        raise CorruptBatch(f"record at {base_offset + offset_delta}: its fields end {pos - end} bytes off its length")
    timestamp = base_ts + ts_delta if append_time is None else append_time
    return Record(base_offset + offset_delta, key_value[0], key_value[1], tuple(headers), timestamp), end
