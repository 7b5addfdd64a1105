"""Kafka record batches as bytes (pure: no I/O): split a Fetch answer, read the 61-byte v2 header, decide
whether a batch can be copied as it is, and rewrite the fields a producer owns.

Why bytes and not kafka-python's batch objects: copying a batch must cost the same whatever it holds
(codec, record count), so nothing here looks past the header. The layout of a v2 header::

    0 baseOffset i64 | 8 batchLength i32 | 12 partitionLeaderEpoch i32 | 16 magic i8 | 17 crc u32 |
    21 attributes i16 | 23 lastOffsetDelta i32 | 27 baseTimestamp i64 | 35 maxTimestamp i64 |
    43 producerId i64 | 51 producerEpoch i16 | 53 baseSequence i32 | 57 recordCount i32 | 61 records

The CRC-32C covers byte 21 to the end, so baseOffset and partitionLeaderEpoch change for free; the
producer fields and the attributes do not (the CRC is recomputed only when one of them changed).
Old message formats (magic 0/1) share the first 17 bytes' meaning (offset, size, ..., magic at 16).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from crc32c import crc32c

from connect_core.kafka.crc_patch import PATCH_MIN, patched_crc

HEADER_SIZE = 61
#: Bytes before the batch's own length field counts (baseOffset + batchLength).
LOG_OVERHEAD = 12
_MAGIC_AT = 16
_CRC_AT = 17
_ATTRIBUTES_AT = 21
_PRODUCER_AT = 43

_HEADER = struct.Struct(">qiibIhiqqqhii")
_PRODUCER = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence
_OFFSET_EPOCH = struct.Struct(">qii")  # baseOffset, batchLength, partitionLeaderEpoch
_CRC = struct.Struct(">I")
_ATTRIBUTES = struct.Struct(">h")
_LENGTH_MAGIC = struct.Struct(">qi")

CODEC_MASK = 0x07
LOG_APPEND_TIME = 0x08
TRANSACTIONAL = 0x10
CONTROL = 0x20

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """The v2 header fields (see the module docstring)."""

    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def size(self) -> int:
        """Bytes of the whole batch, header included."""
        return self.batch_length + LOG_OVERHEAD

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL)

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & LOG_APPEND_TIME)


@dataclass(frozen=True, slots=True)
class RawBatch:
    """One whole batch of a Fetch answer: its header (None for magic 0/1) and its bytes, header included.

    ``base_offset``/``next_offset`` are known for old formats too (a v0/v1 wrapper message holds the
    offset of its last inner record, so its next offset is that + 1).
    """

    header: BatchHeader | None
    data: memoryview
    base_offset: int
    next_offset: int
    magic: int

    @property
    def records(self) -> memoryview:
        """The part after the 61-byte header (v2 only): what a copy must keep byte for byte."""
        return self.data[HEADER_SIZE:]


def parse_header(data: bytes | memoryview) -> BatchHeader:
    """The header of a v2 batch at the start of ``data`` (at least 61 bytes)."""
    if len(data) < HEADER_SIZE:
        raise ValueError(f"a record batch header needs {HEADER_SIZE} bytes, got {len(data)}")
    return BatchHeader(*_HEADER.unpack_from(data, 0))


def split_batches(data: bytes | memoryview | None) -> list[RawBatch]:
    """The whole batches of a Fetch answer's records, in log order; a partial trailing batch is dropped
    (a broker may cut the last batch at the asked byte limit: it is fetched again from its base)."""
    if not data:
        return []
    view = memoryview(data)
    out: list[RawBatch] = []
    pos = 0
    end = len(view)
    while end - pos >= _MAGIC_AT + 1:
        offset, length = _LENGTH_MAGIC.unpack_from(view, pos)
        size = length + LOG_OVERHEAD
        if length <= 0 or pos + size > end:
            break
        magic = view[pos + _MAGIC_AT]
        chunk = view[pos : pos + size]
        if magic >= 2:
            if size < HEADER_SIZE:
                break
            header = BatchHeader(*_HEADER.unpack_from(view, pos))
            out.append(RawBatch(header, chunk, header.base_offset, header.next_offset, magic))
        else:
            # A v0/v1 entry carries the offset of its (last, when compressed) record.
            out.append(RawBatch(None, chunk, offset, offset + 1, magic))
        pos += size
    return out


#: Why a batch goes through the record path instead (None: it is copied as bytes).
INELIGIBLE_OLD_FORMAT = "old message format"
INELIGIBLE_LOG_APPEND_TIME = "LogAppendTime timestamps"
INELIGIBLE_CONTROL = "control batch"
INELIGIBLE_OFFSET_GAPS = "record count and offset range disagree"
INELIGIBLE_TOO_LARGE = "larger than the target topic's max.message.bytes"


def ineligible_reason(batch: RawBatch, max_message_bytes: int) -> str | None:
    """Why the batch cannot be produced as it is (None: it can).

    A broker refuses a client's LogAppendTime or control batch, and one whose record count and offset
    range disagree (a compacted batch with gaps; its offsets would shift on the target); a batch above
    the target topic's ``max.message.bytes`` is refused as too large; v0/v1 sets are not produced with
    Produce v3+ at all.
    """
    header = batch.header
    if header is None or batch.magic != 2:
        return INELIGIBLE_OLD_FORMAT
    if header.is_control:
        return INELIGIBLE_CONTROL
    if header.log_append_time:
        return INELIGIBLE_LOG_APPEND_TIME
    if header.record_count <= 0 or header.record_count != header.last_offset_delta + 1:
        return INELIGIBLE_OFFSET_GAPS
    if header.size > max_message_bytes:
        return INELIGIBLE_TOO_LARGE
    return None


def producer_header(
    batch: RawBatch, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool
) -> bytearray:
    """The 61-byte header a producer sends with the batch's unchanged records part: base offset 0,
    partition leader epoch -1, the producer's id, epoch and base sequence and the transactional bit.

    The CRC covers the header from its attributes on and then the records, so when a covered field
    changed it is made anew: for a records part from :data:`~connect_core.kafka.crc_patch.PATCH_MIN` on,
    the stored CRC is corrected for the changed header bytes without reading the records
    (:func:`~connect_core.kafka.crc_patch.patched_crc`; a batch stored with a wrong CRC keeps a wrong one,
    which a broker refuses as corrupt); below it, computed over the new header's 40 covered bytes and
    continued over the records part where it lies (one read pass, no copy). A batch from a plain producer
    sent by a plain producer keeps its CRC."""
    header = batch.header
    if header is None:
        raise ValueError("only v2 record batches can be produced as they are")
    attributes = (header.attributes | TRANSACTIONAL) if transactional else (header.attributes & ~TRANSACTIONAL)
    out = bytearray(batch.data[:HEADER_SIZE])
    _OFFSET_EPOCH.pack_into(out, 0, 0, header.batch_length, -1)
    if (
        attributes != header.attributes
        or producer_id != header.producer_id
        or producer_epoch != header.producer_epoch
        or base_sequence != header.base_sequence
    ):
        _ATTRIBUTES.pack_into(out, _ATTRIBUTES_AT, attributes)
        _PRODUCER.pack_into(out, _PRODUCER_AT, producer_id, producer_epoch, base_sequence)
        records = len(batch.data) - HEADER_SIZE
        if records >= PATCH_MIN:
            crc = patched_crc(header.crc, batch.data[_ATTRIBUTES_AT:HEADER_SIZE], out[_ATTRIBUTES_AT:], records)
        else:
            crc = crc32c(batch.data[HEADER_SIZE:], crc32c(memoryview(out)[_ATTRIBUTES_AT:]))
        _CRC.pack_into(out, _CRC_AT, crc)
    return out


def rewrite_for_produce(
    batch: RawBatch, producer_id: int, producer_epoch: int, base_sequence: int, transactional: bool
) -> bytearray:
    """The whole batch as a producer sends it, in one buffer (:func:`producer_header` + the records part);
    the batch producer itself sends the two apart, uncopied."""
    return producer_header(batch, producer_id, producer_epoch, base_sequence, transactional) + batch.data[HEADER_SIZE:]


def crc_matches(data: bytes | memoryview) -> bool:
    """True when a v2 batch's stored CRC is the CRC-32C of its bytes from the attributes on."""
    (stored,) = _CRC.unpack_from(data, _CRC_AT)
    return bool(stored == crc32c(memoryview(data)[_ATTRIBUTES_AT:]))


__all__ = [
    "CONTROL",
    "HEADER_SIZE",
    "INELIGIBLE_CONTROL",
    "INELIGIBLE_LOG_APPEND_TIME",
    "INELIGIBLE_OFFSET_GAPS",
    "INELIGIBLE_OLD_FORMAT",
    "INELIGIBLE_TOO_LARGE",
    "LOG_APPEND_TIME",
    "TRANSACTIONAL",
    "BatchHeader",
    "RawBatch",
    "crc_matches",
    "ineligible_reason",
    "parse_header",
    "producer_header",
    "rewrite_for_produce",
    "split_batches",
]
