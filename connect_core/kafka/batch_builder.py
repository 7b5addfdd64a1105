"""Ordinary records made into one v2 record batch (pure: no I/O), for the batch producers.

A transaction of copied batches sometimes holds records of its own (a progress record, a batch the copy
could not pass and decoded): those must go through the same producer id as the copied batches, so they
are built into a batch here - with kafka-python's record builder, not an encoder of our own - and sent
like any other. The producer fields stay unset (-1): the producer writes its own when it sends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from kafka.record.default_records import DefaultRecordBatchBuilder  # type: ignore[import-untyped]

from connect_core.kafka.record_batch import CODEC_MASK, RawBatch, split_batches

_NO_LIMIT = (1 << 31) - 1
_BATCH_HEADER = 61
_RECORD_OVERHEAD = 21  # a record's length, attributes, timestamp and offset deltas, key/value lengths at most

Item = TypeVar("Item")


class PlainRecord(NamedTuple):
    """One record to build into a batch; ``timestamp`` in ms (None: now)."""

    key: bytes | None
    value: bytes | None
    headers: Sequence[tuple[str, bytes | None]] = ()
    timestamp: int | None = None


def build_batch(records: Sequence[PlainRecord], compression: int = 0) -> RawBatch:
    """One v2 batch holding ``records`` in order (offset deltas 0..n-1), compressed with codec id
    ``compression`` (0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd) when that makes it smaller."""
    if not records:
        raise ValueError("a record batch needs at least one record")
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=compression & CODEC_MASK,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=_NO_LIMIT,
    )
    for delta, record in enumerate(records):
        builder.append(delta, record.timestamp, record.key, record.value, list(record.headers))
    (batch,) = split_batches(bytes(builder.build()))
    return batch


def record_bytes(key: bytes | None, value: bytes | None, headers: Sequence[tuple[str, bytes | None]] | None) -> int:
    """At most how many bytes one record takes in an uncompressed v2 batch."""
    framing = sum(len(k) + len(v or b"") + 4 for k, v in headers or ())
    return len(key or b"") + len(value or b"") + framing + _RECORD_OVERHEAD


def batches_within(items: Sequence[Item], size_of: Callable[[Item], int], limit: int) -> list[list[Item]]:
    """``items`` in consecutive groups whose built batch stays below ``limit`` bytes (the target topic's
    ``max.message.bytes``); an item too large for any batch goes alone (the broker then says so)."""
    groups: list[list[Item]] = []
    size = limit
    for item in items:
        need = size_of(item)
        if size + need > limit - _BATCH_HEADER:
            groups.append([])
            size = 0
        groups[-1].append(item)
        size += need
    return groups


__all__ = ["PlainRecord", "batches_within", "build_batch", "record_bytes"]
