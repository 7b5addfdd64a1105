"""Mapping state that stays small: segment records (every run since the last publication in one record),
still readable version-0 records, and tombstones for records below the source partition's log start."""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

import pytest

from connect_core.kafka.types import KafkaError
from mirror.client.errors import RecordFormatError
from mirror.client.offset_mappings import (
    MAX_RUNS_PER_RECORD,
    OffsetMapping,
    decode_mappings,
    encode_segment,
    mapping_key,
)
from mirror.connectors.log_start_lookup import LogStartLookup
from mirror.connectors.offset_mapping_index import OffsetMappingIndex
from mirror.connectors.offset_mapping_retention import MappingKeys
from mirror.connectors.offset_sync_producer import OffsetSyncProducer
from tests.unit.mirror.connectors.test_source_task_runs import TP, Run, TopicSink, task_with_mappings


def transactions(first_txn: int, count: int, per_txn: int = 4) -> list[OffsetMapping]:
    """Runs of a transactional partition: ``per_txn`` records then a commit marker, target offsets + 7."""
    step = per_txn + 1
    return [
        OffsetMapping(TP, step * k - 1 if k else 0, step * k, per_txn * k + 7, per_txn)
        for k in range(first_txn, first_txn + count)
    ]


def test_a_segment_decodes_to_the_same_runs_and_translates_the_same() -> None:
    runs = transactions(0, 50)
    key, value = encode_segment(runs)
    assert key == runs[0].record_key() and value[:2] == b"\x00\x01"  # keyed by its first run, version 1
    assert decode_mappings(key, value) == runs
    with pytest.raises(RecordFormatError):  # what an mm2 reading only version 0 does with it: rejects it
        OffsetMapping.decode(key, value)
    one_each, segment = OffsetMappingIndex(), OffsetMappingIndex()
    for m in runs:
        one_each.on_record(m.record_key(), m.record_value())  # version 0: still readable
    segment.on_record(key, value)
    for offset in range(0, 5 * 50):  # on a record, on a marker, at the end (the last marker)
        assert segment.translate(TP, offset) == one_each.translate(TP, offset) is not None
    assert segment.translate(TP, 5) == 4 + 7 and segment.translate(TP, 4) == 4 + 7  # marker -> next record


GUARD = b"\xff" * 8


@pytest.mark.parametrize(
    "value",
    [
        b"\x00\x01",
        b"\x00\x01" + GUARD + b"\x00\x00\x00\x00",  # no runs
        b"\x00\x01" + GUARD + b"\x00\x00\x00\x02" + b"\x00" * 32,  # 2 runs said, 1 there
        b"\x00\x01" + GUARD + b"\x00\x00\x00\x01" + b"\xff" * 32,  # negative offsets
        # a valid run without the guard
        b"\x00\x01" + b"\x00" * 8 + b"\x00\x00\x00\x01" + b"\x00" * 31 + b"\x01",
    ],
)
def test_malformed_segments_are_rejected(value: bytes) -> None:
    with pytest.raises(RecordFormatError):
        decode_mappings(mapping_key(TP, 0), value)
    index = OffsetMappingIndex()
    assert index.on_record(mapping_key(TP, 0), value) is None and index.ignored_records == 1


def test_a_trailing_marker_is_claimed_once_everything_before_it_is_acknowledged() -> None:
    task, sink = task_with_mappings()
    route = task.route("orders", 0)
    task._run_acknowledged(route, Run(route, 4, 0, 3, 7, 10))  # type: ignore[arg-type]
    task.commit()

    class Eof:
        def offset(self) -> int:
            return 5  # records 0..3, then the transaction's commit marker at 4

        def topic(self) -> str:
            return "orders"

        def partition(self) -> int:
            return 0

    task._unacknowledged = 1  # a record polled, not yet acknowledged: nothing is claimed past the copies
    task._on_consume_error(KafkaError(KafkaError._PARTITION_EOF), Eof())
    task.commit()
    assert sink.mappings == [OffsetMapping(TP, 0, 0, 7, 4)]
    task._unacknowledged = 0
    task.commit()
    assert sink.mappings[1:] == [OffsetMapping(TP, 4, 5, 11, 0)]  # a group at 4 or 5 resumes at 11
    task.commit()
    assert len(sink.mappings) == 2  # once per end
    index = OffsetMappingIndex()
    for key, value in zip(sink.mapping_keys, sink.mapping_records, strict=True):
        index.on_record(key, value)
    assert [index.translate(TP, o) for o in range(6)] == [7, 8, 9, 10, 11, 11]
    assert index.copied_through(TP) == 5
    # the next transaction's records: their run covers the marker too
    task._run_acknowledged(route, Run(route, 2, 5, 6, 11, 12))  # type: ignore[arg-type]
    task.commit()
    for key, value in zip(sink.mapping_keys[2:], sink.mapping_records[2:], strict=True):
        index.on_record(key, value)
    assert [index.translate(TP, o) for o in range(8)] == [7, 8, 9, 10, 11, 11, 12, 13]


def test_a_tombstone_is_no_mapping_and_no_error() -> None:
    index = OffsetMappingIndex()
    assert decode_mappings(mapping_key(TP, 40), None) == []
    assert index.on_record(mapping_key(TP, 40), None) is None and index.ignored_records == 0


def test_segments_hold_at_most_max_runs() -> None:
    with pytest.raises(RecordFormatError):
        encode_segment(transactions(0, MAX_RUNS_PER_RECORD + 1))
    sink = TopicSink({"mm2-offset-mappings.B.internal"})
    producer = OffsetSyncProducer(
        {},
        "s",
        100,
        producer=sink,  # type: ignore[arg-type]
        mappings_topic="mm2-offset-mappings.B.internal",
    )
    runs = transactions(0, MAX_RUNS_PER_RECORD + 10)
    for m in runs:
        producer.send_mapping(m)
    assert len(sink.mapping_records) == 1  # a full segment is written at once
    producer.publish_mappings()
    assert len(sink.mapping_records) == 2 and sink.mappings == runs


def test_keys_below_the_log_start_expire_oldest_first() -> None:
    keys = MappingKeys()
    keys.written(TP, 0, 50)
    keys.written(TP, 0, 60)  # the same record grown (an open run re-published)
    keys.written(TP, 61, 100)
    keys.written(TP, 101, 150)
    assert keys.expired({TP: 60}) == {}  # a record ending at the log start still translates a group there
    assert keys.expired({TP: 120}) == {TP: [0, 61]}
    assert keys.expired({TP: 120}) == {} and len(keys) == 1


def test_a_mapping_below_the_log_start_is_tombstoned_by_the_source_task() -> None:
    task, sink = task_with_mappings()
    route = task.route("orders", 0)
    for k in range(30):  # 30 transactions of 4 records, copied in 3 publications
        task._run_acknowledged(
            route,
            Run(
                route,
                4,
                5 * k,
                5 * k + 3,
                4 * k,
                4 * k + 3,  # type: ignore[arg-type]
                upstream_offsets=[5 * k + i for i in range(4)],
            ),
        )
        if k % 10 == 9:
            task.commit()
    assert len(sink.mapping_records) == 3 and all(v is not None for v in sink.mapping_records)

    class Lookup:
        """Answers as the source would after retention deleted the first 12 transactions."""

        def poll(self, partitions: Any) -> dict[Any, int]:
            assert list(partitions()) == [TP]
            return {TP: 60}

    task._log_starts = Lookup()  # type: ignore[assignment]
    task.commit()
    assert sink.mapping_records[3:] == [None]  # one tombstone: the first record ends at 50, below 60
    index = OffsetMappingIndex()
    for value, key in zip(sink.mapping_records, sink.mapping_keys, strict=True):
        index.on_record(key, value)
    assert index.translate(TP, 60) == 48 and index.translate(TP, 148) == 119 and index.translate(TP, 149) == 120


def test_the_log_start_lookup_never_waits_for_its_answer() -> None:
    now = [0.0]
    requests: list[dict[Any, Any]] = []
    answer: Future[Any] = Future()

    class Admin:
        def list_offsets(self, wanted: dict[Any, Any], request_timeout: float) -> dict[Any, Future[Any]]:
            requests.append(wanted)
            return dict.fromkeys(wanted, answer)

    lookup = LogStartLookup({}, interval_s=300, admin=Admin(), clock=lambda: now[0])  # type: ignore[arg-type]
    assert lookup.poll(lambda: [TP]) == {} and requests == []  # not due yet
    now[0] = 301
    assert lookup.poll(lambda: [TP]) == {} and len(requests) == 1  # asked, not answered
    assert lookup.poll(lambda: [TP]) == {}

    class Offset:
        offset = 42

    answer.set_result(Offset())
    assert lookup.poll(lambda: [TP]) == {TP: 42}
    assert lookup.poll(lambda: [TP]) == {} and len(requests) == 1  # next one in 300 s
