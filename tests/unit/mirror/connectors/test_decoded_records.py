"""The batch path's fallback decodes a batch it cannot pass as is (LogAppendTime, too large for the target,
a resume inside it) into records: whatever codec the source producer used, as the record path's consumer
would. A compressed batch must not fail the task (kafka-python decodes snappy, lz4 and zstd only with the
codec libraries installed beside it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from kafka.record.default_records import DefaultRecordBatchBuilder  # type: ignore[import-untyped]

from connect_core.kafka.record_batch import split_batches
from mirror.connectors.source_batches import decoded_records

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}


@dataclass
class _Route:
    topic: str = "t"
    partition: int = 0
    source_partition: dict[str, Any] = field(default_factory=lambda: {"topic": "t", "partition": 0})


def _batch(codec: int, base: int, count: int) -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=codec,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(count):
        value = None if i == 1 else (b"value-%d " % i) * 40
        builder.append(i, timestamp=1_000 + i, key=b"k%d" % i if i % 2 else None, value=value, headers=[("h", b"x")])
    data = bytearray(builder.build())
    data[0:8] = base.to_bytes(8, "big")  # the log's base offset, as a Fetch answer carries it
    return bytes(data)


@pytest.mark.parametrize("codec", sorted(CODECS))
def test_a_batch_of_any_codec_is_decoded_from_the_resume_position(codec: str) -> None:
    (raw,) = split_batches(_batch(CODECS[codec], base=100, count=6))
    records = decoded_records(_Route(), raw, from_offset=102)
    assert [r.source_offset["offset"] for r in records] == [102, 103, 104, 105]
    assert [r.value for r in records] == [(b"value-%d " % i) * 40 for i in range(2, 6)]
    assert [r.key for r in records] == [None, b"k3", None, b"k5"]
    assert [r.timestamp for r in records] == [1_002, 1_003, 1_004, 1_005]
    assert all(list(r.headers) == [("h", b"x")] for r in records)
