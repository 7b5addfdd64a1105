"""Ordinary records built into a v2 batch for the batch producers: read back by the suite's own parser
(CRC checked there), every field as given, and produced as any copied batch is."""

from __future__ import annotations

from connect_core.kafka.batch_builder import PlainRecord, batches_within, build_batch, record_bytes
from connect_core.kafka.record_batch import crc_matches, rewrite_for_produce, split_batches
from tests.oracle.batches import parse_batch

RECORDS = [
    PlainRecord(b"k", b"v", [("h", b"1"), ("h", None)], 1_000),
    PlainRecord(None, None, (), 2_000),
    PlainRecord(b"", b"", [("x", b"")], 1_500),
]


def test_records_come_back_as_given() -> None:
    batch = build_batch(RECORDS)
    assert batch.header is not None
    assert (batch.header.record_count, batch.header.last_offset_delta) == (3, 2)
    assert (batch.header.producer_id, batch.header.producer_epoch, batch.header.base_sequence) == (-1, -1, -1)
    assert (batch.header.base_timestamp, batch.header.max_timestamp) == (1_000, 2_000)
    parsed = parse_batch(bytes(batch.data))
    assert [(r.offset, r.key, r.value, r.headers, r.timestamp) for r in parsed.records] == [
        (0, b"k", b"v", (("h", b"1"), ("h", None)), 1_000),
        (1, None, None, (), 2_000),
        (2, b"", b"", (("x", b""),), 1_500),
    ]


def test_compressed_when_smaller_and_produced_like_a_copied_batch() -> None:
    records = [PlainRecord(b"key", b"value " * 50, (), 7)] * 20
    batch = build_batch(records, compression=1)  # gzip: in the standard library
    assert batch.header is not None and batch.header.attributes & 0x07 == 1
    assert len(batch.data) < sum(len(r.value or b"") for r in records)
    sent = rewrite_for_produce(batch, 42, 3, 17, True)
    assert crc_matches(sent)
    (again,) = split_batches(bytes(sent))
    assert again.header is not None
    assert (again.header.producer_id, again.header.producer_epoch, again.header.base_sequence) == (42, 3, 17)
    assert again.header.is_transactional and bytes(again.records) == bytes(batch.records)
    assert [r.value for r in parse_batch(bytes(sent)).records] == [r.value for r in records]


def test_no_records_is_refused() -> None:
    import pytest

    with pytest.raises(ValueError, match="at least one record"):
        build_batch([])


def test_records_are_grouped_into_batches_below_the_limit_in_order() -> None:
    records = [PlainRecord(None, bytes(300), [("h", b"v")]) for _ in range(10)] + [PlainRecord(b"k", bytes(5000))]
    groups = batches_within(records, lambda r: record_bytes(r.key, r.value, r.headers), 1024)
    assert [r for group in groups for r in group] == records  # nothing lost, order kept
    assert [len(g) for g in groups] == [2, 2, 2, 2, 2, 1]  # three 300 B records never fit with the header
    for group in groups[:-1]:
        assert len(build_batch(group).data) <= 1024  # the estimate is an upper bound of the built batch
    assert groups[-1] == [records[-1]]  # larger than any batch: alone
