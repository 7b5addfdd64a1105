"""The CRC-32C of a batch with changed header bytes, patched from its stored CRC
(:mod:`connect_core.kafka.crc_patch`), equals the CRC computed over the whole batch by an independent
implementation; a large batch's rewritten header carries it, a corrupt batch keeps a wrong one."""

from __future__ import annotations

import random
import struct

import pytest
from kafka.record._crc32c import crc as independent_crc32c  # type: ignore[import-untyped]

from connect_core.kafka.crc_patch import PATCH_MIN, carried, patched_crc
from connect_core.kafka.record_batch import HEADER_SIZE, crc_matches, parse_header, producer_header, split_batches


def _bytes(rng: random.Random, n: int) -> bytes:
    return rng.getrandbits(8 * n).to_bytes(n, "big") if n else b""


@pytest.mark.parametrize("rest", [0, 1, 2, 3, 7, 8, 255, 256, 4096, 65_537, 300_001])
def test_a_patched_crc_is_the_crc_of_the_changed_message(rest: int) -> None:
    rng = random.Random(rest)
    tail = _bytes(rng, rest)
    old = _bytes(rng, 40)
    new = bytearray(old)
    new[2:20] = _bytes(rng, 18)
    stored = independent_crc32c(old + tail)
    assert patched_crc(stored, old, bytes(new), rest) == independent_crc32c(bytes(new) + tail)


def test_unchanged_bytes_keep_the_crc_and_lengths_must_agree() -> None:
    assert patched_crc(0x1234_5678, b"same", b"same", 10**6) == 0x1234_5678
    with pytest.raises(ValueError):
        patched_crc(0, b"abc", b"ab", 1)


def test_carrying_a_register_across_zero_bytes_adds_up() -> None:
    """Across a then b zero bytes is across a + b (the tables per power of two compose)."""
    for register, a, b in [(0xDEADBEEF, 1, 1), (0x1, 1000, 24), (0x8000_0000, 65_535, 1), (0xFFFF_FFFF, 3, 5)]:
        assert carried(carried(register, a), b) == carried(register, a + b)
    assert carried(0x1357_9BDF, 0) == 0x1357_9BDF and carried(0, 12_345) == 0


def _large_batch(rng: random.Random, producer: tuple[int, int, int]) -> bytes:
    records = _bytes(rng, PATCH_MIN + 1000)
    body = struct.pack(">hiqqqhii", 0, 9, 1_000, 2_000, *producer, 10) + records
    return struct.pack(">qiibI", 77, len(body) + 9, 4, 2, independent_crc32c(body)) + body


@pytest.mark.parametrize("transactional", [False, True])
def test_a_large_batch_produced_by_another_producer_gets_a_right_crc(transactional: bool) -> None:
    (raw,) = split_batches(_large_batch(random.Random(1), (-1, -1, -1)))
    header = producer_header(raw, 4000, 2, 77, transactional=transactional)
    sent = bytes(header) + bytes(raw.records)
    parsed = parse_header(sent)
    assert (parsed.producer_id, parsed.producer_epoch, parsed.base_sequence) == (4000, 2, 77)
    assert parsed.is_transactional == transactional
    assert parsed.crc == independent_crc32c(sent[21:]) and crc_matches(sent)


def test_a_large_corrupt_batch_keeps_a_wrong_crc() -> None:
    """A batch whose records no longer match its CRC is not given a CRC that would make them look sound."""
    data = bytearray(_large_batch(random.Random(2), (5, 0, 0)))
    data[HEADER_SIZE + 10] ^= 0x01
    (raw,) = split_batches(bytes(data))
    sent = bytes(producer_header(raw, 4000, 0, 0, transactional=False)) + bytes(raw.records)
    assert not crc_matches(sent)
