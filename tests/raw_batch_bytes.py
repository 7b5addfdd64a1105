"""Test helper: a partition's record batches as the broker stores them, as bytes, read independently of the
product's batch fetcher (a plain-socket Fetch, our own split, kafka-python's pure-Python CRC-32C).

Tansu stores a batch with a wrong CRC as it came (broker-notes), so tests of the batch copy check every
CRC here themselves.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from kafka.record._crc32c import crc as pure_python_crc32c  # type: ignore[import-untyped]

from tests.oracle.fetch import BrokerConnection

HEADER = 61


@dataclass(frozen=True)
class StoredBatch:
    """One stored batch: header fields a test compares, and the bytes after the header."""

    base_offset: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    record_count: int
    crc_ok: bool
    records: bytes

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & 0x20)


def _split(data: bytes) -> list[StoredBatch]:
    out, pos = [], 0
    while len(data) - pos >= HEADER:
        base, length = struct.unpack_from(">qi", data, pos)
        end = pos + 12 + length
        if end > len(data):
            break
        (crc,) = struct.unpack_from(">I", data, pos + 17)
        attributes, delta, first_ts, max_ts, pid, _epoch, _seq, count = struct.unpack_from(">hiqqqhii", data, pos + 21)
        out.append(
            StoredBatch(
                base,
                attributes,
                delta,
                first_ts,
                max_ts,
                pid,
                count,
                crc == pure_python_crc32c(data[pos + 21 : end]),
                data[pos + HEADER : end],
            )
        )
        pos = end
    return out


def stored_batches(bootstrap: str, topic: str, partition: int, timeout_s: float = 30.0) -> list[StoredBatch]:
    """Every batch of the partition up to its high watermark, control batches included, in log order."""
    address = bootstrap.split(",")[0].strip()
    batches: list[StoredBatch] = []
    offset = 0
    with BrokerConnection(address, timeout_s) as connection:
        while True:
            error, high_watermark, records = connection.fetch(topic, partition, offset, 100)
            if error:
                raise RuntimeError(f"Fetch of {topic}-{partition} at {offset} failed with error code {error}")
            fresh = [b for b in _split(records) if b.base_offset + b.last_offset_delta >= offset]
            for batch in fresh:
                batches.append(batch)
                offset = batch.base_offset + batch.last_offset_delta + 1
            if offset >= high_watermark:
                return batches
            if not fresh:
                raise TimeoutError(f"Fetch of {topic}-{partition} at {offset} returned nothing below {high_watermark}")


def data_batches(bootstrap: str, topic: str, partition: int) -> list[StoredBatch]:
    """The partition's batches without the control batches (transaction markers)."""
    return [b for b in stored_batches(bootstrap, topic, partition) if not b.is_control]
