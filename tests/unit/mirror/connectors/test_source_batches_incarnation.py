"""The batch path's reader when a task switches a partition to a new incarnation of its topic: nothing of an
answer asked before the switch is copied, and reading starts again where the task says."""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka.record.default_records import DefaultRecordBatchBuilder

from connect_core.api.batch_copy import CopyBatch
from connect_core.kafka.batch_fetcher import PartitionAnswer
from connect_core.kafka.record_batch import split_batches
from mirror.connectors.source_batches import SourceBatches

TP = ("events", 0)


def answer(base: int, count: int, end: int) -> PartitionAnswer:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=False,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 20,
    )
    for i in range(count):
        builder.append(i, timestamp=1000 + i, key=None, value=b"v%d" % (base + i), headers=[])
    data = bytearray(builder.build())
    struct.pack_into(">q", data, 0, base)  # the batch's base offset
    return PartitionAnswer(split_batches(bytes(data)), end, end, 0, [], base)


class Fetcher:
    """A fetcher whose answers arrive when the test says (``ready``)."""

    def __init__(self) -> None:
        self.pending = False
        self.max_bytes = self.partition_max_bytes = 1 << 20
        self.asked: list[dict[tuple[str, int], int]] = []
        self.answers: dict[tuple[str, int], PartitionAnswer] = {}
        self.ready = False

    def send(self, positions: Mapping[tuple[str, int], int], max_wait_ms: int) -> None:
        self.pending = True
        self.asked.append(dict(positions))

    def receive(self, timeout_ms: int) -> dict[tuple[str, int], PartitionAnswer] | None:
        if not self.ready:
            return None
        self.pending = self.ready = False
        return self.answers


@dataclass
class Route:
    topic: str = "A.events"
    partition: int = 0


def copied(items: list[Any]) -> list[int]:
    return [item.batch.base_offset for item in items if isinstance(item, CopyBatch)]


def test_an_answer_asked_before_the_switch_is_dropped_and_reading_starts_at_the_new_position() -> None:
    fetcher = Fetcher()
    batches = SourceBatches(fetcher, lambda topic: 1 << 20)  # type: ignore[arg-type]
    batches.assign(*TP, Route(), 20)
    assert batches.read(0) == ([], [])  # asked at 20, not answered yet
    assert fetcher.asked == [{TP: 20}]

    batches.hold(*TP)  # the task found a new topic id while that Fetch was in flight
    fetcher.answers, fetcher.ready = {TP: answer(20, 10, 30)}, True  # the new topic's records 20..29
    assert batches.read(0) == ([], [])  # dropped: not copied as the old incarnation's
    assert batches.read(0) == ([], [])  # held: nothing asked
    assert fetcher.asked == [{TP: 20}]

    batches.reposition(*TP, 0)
    assert batches.read(0) == ([], [])
    assert fetcher.asked[-1] == {TP: 0}
    fetcher.answers, fetcher.ready = {TP: answer(0, 30, 30)}, True
    items, _seen = batches.read(0)
    assert copied(items) == [0]


def test_a_reposition_while_a_fetch_is_in_flight_drops_that_answer_too() -> None:
    fetcher = Fetcher()
    batches = SourceBatches(fetcher, lambda topic: 1 << 20)  # type: ignore[arg-type]
    batches.assign(*TP, Route(), 20)
    batches.read(0)
    batches.reposition(*TP, 0)  # without a hold first (the record of a start decision)
    fetcher.answers, fetcher.ready = {TP: answer(20, 10, 30)}, True
    assert batches.read(0) == ([], [])
    assert fetcher.asked[-1] == {TP: 20}  # the next Fetch is not sent before that answer was taken
    batches.read(0)
    assert fetcher.asked[-1] == {TP: 0}
