"""The oracle's batch parser: CRC-32C checked on every batch (Tansu stores corrupt ones), codecs, edges."""

from __future__ import annotations

import struct
from collections.abc import Callable

import pytest

from tests.oracle.batches import CorruptBatch, UnsupportedCodec, parse_batch, parse_batches
from tests.oracle.crc32c import crc32c, pure_crc32c
from tests.unit.oracle.hand_built import BASE_TIMESTAMP, GZIP, LOG_APPEND_TIME, HandLog, batch

ENTRIES = [(b"k", b"value-0", (("h", b"1"),)), (None, b"value-1", ())]


@pytest.mark.parametrize("crc", [crc32c, pure_crc32c])
def test_crc32c_matches_the_standard_check_values(crc: Callable[[bytes], int]) -> None:
    assert crc(b"123456789") == 0xE3069283  # the CRC-32C check value
    assert crc(bytes(32)) == 0x8A9136AA  # RFC 3720 B.4: 32 bytes of zeroes
    assert crc(b"\xff" * 32) == 0x62A8AB43  # ... and of ones
    assert crc(b"") == 0
    data = bytes(range(256)) * 41 + b"tail"
    assert crc32c(data) == pure_crc32c(data)


def test_a_batch_with_a_flipped_record_byte_is_refused_naming_both_checksums() -> None:
    raw = bytearray(batch(0, ENTRIES))
    assert [r.value for r in parse_batch(bytes(raw))] == [b"value-0", b"value-1"]
    raw[raw.index(b"value-1")] ^= 0x01  # a bit flipped in a value: lengths still consistent
    with pytest.raises(CorruptBatch, match=r"batch at 0: CRC-32C 0x[0-9a-f]{8} computed, 0x[0-9a-f]{8} stored"):
        parse_batch(bytes(raw))


def test_a_corrupt_batch_in_the_middle_of_a_log_is_refused() -> None:
    log = HandLog().plain("a").plain("b").plain("c")
    middle = bytearray(log.parts[1])
    middle[-1] ^= 0x40
    with pytest.raises(CorruptBatch, match="batch at 1: CRC-32C"):
        parse_batches(log.parts[0] + bytes(middle) + log.parts[2])


def test_a_wrong_stored_crc_is_refused_even_when_the_records_are_intact() -> None:
    raw = bytearray(batch(5, ENTRIES))
    struct.pack_into(">I", raw, 17, (struct.unpack_from(">I", raw, 17)[0] + 1) & 0xFFFFFFFF)
    with pytest.raises(CorruptBatch, match="batch at 5"):
        parse_batch(bytes(raw))


def test_base_offset_and_leader_epoch_lie_outside_the_checksum_as_in_kafka() -> None:
    raw = bytearray(batch(0, ENTRIES))
    struct.pack_into(">q", raw, 0, 1000)  # a broker assigns the base offset after the producer's CRC
    struct.pack_into(">i", raw, 12, 42)
    assert [r.offset for r in parse_batch(bytes(raw))] == [1000, 1001]


@pytest.mark.parametrize(("code", "name"), [(GZIP, "gzip"), (2, "snappy"), (3, "lz4"), (4, "zstd")])
def test_compressed_batches_are_read(code: int, name: str) -> None:
    parsed = parse_batch(batch(3, ENTRIES, attributes=code))
    assert parsed.codec == name
    assert [(r.offset, r.key, r.value, r.headers) for r in parsed] == [
        (3, b"k", b"value-0", (("h", b"1"),)),
        (4, None, b"value-1", ()),
    ]


def test_snappy_in_the_java_clients_xerial_frames_is_read() -> None:
    import cramjam

    from tests.oracle.batches import _snappy

    data = b"record bytes " * 50
    halves = [bytes(cramjam.snappy.compress_raw(part)) for part in (data[:300], data[300:])]
    framed = b"\x82SNAPPY\x00" + struct.pack(">ii", 1, 1) + b"".join(struct.pack(">i", len(h)) + h for h in halves)
    assert _snappy(framed) == data


def test_an_unknown_codec_is_named_not_misread() -> None:
    with pytest.raises(UnsupportedCodec, match="compressed with 5"):
        parse_batch(batch(0, ENTRIES, attributes=5))


def test_log_append_time_gives_every_record_the_batch_max_timestamp() -> None:
    assert [r.timestamp for r in parse_batch(batch(0, ENTRIES))] == [BASE_TIMESTAMP, BASE_TIMESTAMP + 1]
    assert [r.timestamp for r in parse_batch(batch(0, ENTRIES, attributes=LOG_APPEND_TIME))] == [BASE_TIMESTAMP + 1] * 2


def test_a_trailing_partial_batch_is_left_for_the_next_fetch() -> None:
    log = HandLog().plain("a").plain("b", "c")
    whole = log.raw()
    assert [b.base_offset for b in parse_batches(whole[:-3])] == [0]
    assert [b.next_offset for b in parse_batches(whole)] == [1, 3]


def test_a_record_count_the_records_do_not_fill_is_refused() -> None:
    raw = bytearray(batch(0, ENTRIES))
    struct.pack_into(">i", raw, 57, 1)  # claims one record, holds two; fix the CRC so only the count lies
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    with pytest.raises(CorruptBatch, match="bytes after its 1 records"):
        parse_batch(bytes(raw))


def test_only_v2_batches_are_read() -> None:
    raw = bytearray(batch(0, ENTRIES))
    raw[16] = 1
    with pytest.raises(CorruptBatch, match="magic 1"):
        parse_batch(bytes(raw))


def test_a_record_count_beyond_the_records_is_refused() -> None:
    raw = bytearray(batch(0, ENTRIES))
    struct.pack_into(">i", raw, 57, 3)
    struct.pack_into(">I", raw, 17, crc32c(bytes(raw[21:])))
    with pytest.raises(CorruptBatch, match=r"records end before its record count \(3\)"):
        parse_batch(bytes(raw))


def test_long_fields_and_deltas_take_multi_byte_varints() -> None:
    entries = [(b"k" * 70, bytes([i]) * 300, (("h" * 65, b"v" * 200),)) for i in range(150)]
    parsed = parse_batch(batch(7, entries))
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in parsed] == [
        (7 + i, b"k" * 70, bytes([i]) * 300, (("h" * 65, b"v" * 200),), BASE_TIMESTAMP + i) for i in range(150)
    ]
