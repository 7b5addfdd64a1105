"""The pure batch-header logic: hand-built v2 batches (and v0/v1 entries) split, read, judged and rewritten;
CRCs checked with an independent CRC-32C (kafka-python's pure-Python one, not the C library under test)."""

from __future__ import annotations

import struct

import pytest
from kafka.record import MemoryRecords  # type: ignore[import-untyped]
from kafka.record._crc32c import crc as independent_crc32c  # type: ignore[import-untyped]
from kafka.record.default_records import DefaultRecordBatchBuilder  # type: ignore[import-untyped]

from connect_core.kafka.record_batch import (
    HEADER_SIZE,
    INELIGIBLE_CONTROL,
    INELIGIBLE_LOG_APPEND_TIME,
    INELIGIBLE_OFFSET_GAPS,
    INELIGIBLE_OLD_FORMAT,
    INELIGIBLE_TOO_LARGE,
    crc_matches,
    ineligible_reason,
    parse_header,
    producer_header,
    rewrite_for_produce,
    split_batches,
)

_BIG = 1 << 30


def batch(
    base_offset: int = 0,
    records: bytes = b"\x01records",
    attributes: int = 0,
    last_offset_delta: int = 2,
    count: int = 3,
    producer: tuple[int, int, int] = (-1, -1, -1),
    epoch: int = 7,
) -> bytes:
    """A v2 batch by hand: the header fields, opaque record bytes, a correct CRC."""
    pid, pepoch, seq = producer
    tail = struct.pack(">hiqqqhii", attributes, last_offset_delta, 1000, 2000, pid, pepoch, seq, count) + records
    crc = independent_crc32c(tail)
    return struct.pack(">qiibI", base_offset, 4 + 1 + 4 + len(tail), epoch, 2, crc) + tail


def legacy_entry(offset: int, magic: int, value: bytes) -> bytes:
    """A v0/v1 message-set entry (offset, size, crc, magic, attributes, [timestamp], key, value)."""
    body = struct.pack(">bb", magic, 0) + (struct.pack(">q", 5) if magic == 1 else b"")
    body += struct.pack(">i", -1) + struct.pack(">i", len(value)) + value
    return struct.pack(">qiI", offset, 4 + len(body), 0) + body


def test_header_fields_are_read_as_written() -> None:
    data = batch(base_offset=42, attributes=0x13, last_offset_delta=4, count=5, producer=(9, 2, 17))
    header = parse_header(data)
    assert (header.base_offset, header.partition_leader_epoch, header.magic) == (42, 7, 2)
    assert (header.attributes, header.last_offset_delta, header.record_count) == (0x13, 4, 5)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (9, 2, 17)
    assert (header.base_timestamp, header.max_timestamp) == (1000, 2000)
    assert header.size == len(data) and header.next_offset == 47 and header.last_offset == 46
    assert header.is_transactional and not header.is_control and not header.log_append_time


def test_a_batch_built_by_a_client_library_reads_the_same() -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(3):
        builder.append(i, timestamp=1_000 + i, key=None, value=b"v%d" % i, headers=[("h", None)])
    data = bytes(builder.build())
    (raw,) = split_batches(data)
    assert raw.header is not None and raw.header.record_count == 3 and raw.next_offset == 3
    assert crc_matches(raw.data)
    assert bytes(raw.records) == data[HEADER_SIZE:]


def test_split_keeps_whole_batches_in_order_and_drops_a_partial_tail() -> None:
    first, second, third = batch(0), batch(3, records=b"x" * 50), batch(6)
    answer = first + second + third[:-5]
    split = split_batches(answer)
    assert [b.base_offset for b in split] == [0, 3]
    assert bytes(split[1].data) == second
    assert split_batches(first[:10]) == []
    assert split_batches(b"") == [] and split_batches(None) == []


def test_old_format_entries_are_split_and_judged_ineligible() -> None:
    answer = legacy_entry(10, 0, b"a") + legacy_entry(11, 1, b"bb") + batch(12)
    split = split_batches(answer)
    assert [(b.magic, b.base_offset, b.next_offset) for b in split] == [(0, 10, 11), (1, 11, 12), (2, 12, 15)]
    assert ineligible_reason(split[0], _BIG) == INELIGIBLE_OLD_FORMAT
    assert ineligible_reason(split[1], _BIG) == INELIGIBLE_OLD_FORMAT
    assert ineligible_reason(split[2], _BIG) is None


@pytest.mark.parametrize(
    ("kwargs", "reason"),
    [
        ({}, None),
        ({"attributes": 0x04}, None),  # zstd: copied compressed
        ({"attributes": 0x10}, None),  # a transactional batch (its fate is decided before it gets here)
        ({"attributes": 0x08}, INELIGIBLE_LOG_APPEND_TIME),
        ({"attributes": 0x30}, INELIGIBLE_CONTROL),
        ({"last_offset_delta": 5, "count": 3}, INELIGIBLE_OFFSET_GAPS),
        ({"last_offset_delta": -1, "count": 0}, INELIGIBLE_OFFSET_GAPS),
    ],
)
def test_eligibility(kwargs: dict[str, int], reason: str | None) -> None:
    (raw,) = split_batches(batch(**kwargs))
    assert ineligible_reason(raw, _BIG) == reason


def test_a_batch_above_the_target_limit_is_ineligible_and_one_at_it_is_not() -> None:
    data = batch(records=b"r" * 100)
    (raw,) = split_batches(data)
    assert ineligible_reason(raw, len(data)) is None
    assert ineligible_reason(raw, len(data) - 1) == INELIGIBLE_TOO_LARGE


def test_a_plain_producers_batch_keeps_its_crc_and_record_bytes() -> None:
    data = batch(base_offset=500, epoch=3)
    (raw,) = split_batches(data)
    out = bytes(rewrite_for_produce(raw, -1, -1, -1, transactional=False))
    header = parse_header(out)
    assert header.base_offset == 0 and header.partition_leader_epoch == -1
    assert out[17:] == data[17:]  # CRC and everything it covers untouched
    assert struct.unpack_from(">I", out, 17)[0] == independent_crc32c(out[21:])


def test_producer_fields_rewritten_with_a_recomputed_crc() -> None:
    data = batch(base_offset=500, producer=(77, 1, 300), records=b"\x00compressed\xff" * 10)
    (raw,) = split_batches(data)
    out = bytes(rewrite_for_produce(raw, 4000, 0, 12, transactional=True))
    header = parse_header(out)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (4000, 0, 12)
    assert header.is_transactional and header.attributes & ~0x10 == 0
    assert (header.base_offset, header.partition_leader_epoch) == (0, -1)
    assert out[HEADER_SIZE:] == data[HEADER_SIZE:]
    assert header.crc == independent_crc32c(out[21:]) != parse_header(data).crc
    assert crc_matches(out)
    assert not crc_matches(data[:-1] + bytes([data[-1] ^ 0xFF]))  # one flipped record byte


def test_the_transactional_bit_is_cleared_for_a_non_transactional_target() -> None:
    (raw,) = split_batches(batch(attributes=0x13, producer=(5, 0, 0)))
    out = bytes(rewrite_for_produce(raw, 8, 0, 0, transactional=False))
    assert parse_header(out).attributes == 0x03 and crc_matches(out)


def test_records_of_a_rewritten_batch_decode_as_before() -> None:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=1,
        is_transactional=0,
        producer_id=3,
        producer_epoch=0,
        base_sequence=9,
        batch_size=1 << 20,
    )
    for i in range(5):
        builder.append(
            i, timestamp=7, key=b"k" if i % 2 else None, value=b"value-%d" % i, headers=[("a", b"1"), ("a", None)]
        )
    (raw,) = split_batches(bytes(builder.build()))
    out = bytes(rewrite_for_produce(raw, 11, 2, 40, transactional=False))
    decoded = MemoryRecords(out).next_batch()
    assert decoded.validate_crc()
    assert [(r.key, r.value, r.headers) for r in decoded] == [
        (b"k" if i % 2 else None, b"value-%d" % i, [("a", b"1"), ("a", None)]) for i in range(5)
    ]


@pytest.mark.parametrize("producer", [(77, 1, 300), (4000, 0, 12)])
def test_the_producer_header_alone_is_what_the_records_part_is_sent_behind(producer: tuple[int, int, int]) -> None:
    """The batch producer sends this header and a view of the fetched records part (no rewritten copy):
    its CRC, continued over the records where they lie, is the whole batch's."""
    data = batch(base_offset=900, producer=(77, 1, 300), records=b"\x01record bytes\xfe" * 50)
    (raw,) = split_batches(data)
    header = producer_header(raw, *producer, transactional=False)
    assert len(header) == HEADER_SIZE
    sent = bytes(header) + bytes(raw.records)
    assert sent == bytes(rewrite_for_produce(raw, *producer, transactional=False))
    assert crc_matches(sent)
    assert parse_header(sent).crc == independent_crc32c(sent[21:])


def test_only_v2_batches_can_be_rewritten() -> None:
    (raw,) = split_batches(legacy_entry(0, 1, b"x"))
    with pytest.raises(ValueError):
        rewrite_for_produce(raw, 1, 0, 0, transactional=False)
