"""The record of a backfill's task ids: what the next run fences."""

from __future__ import annotations

from connect_core.storage.offset_storage import deserialize_offset_key
from mirror.jobs.backfill.plan import WorkUnit
from mirror.jobs.backfill.task_ids import RECORD_CONNECTOR, decode_ids, encode_ids, record_key


def test_ids_round_trip_sorted_and_once() -> None:
    ids = ["mm2-backfill-A-B-t-2", "mm2-backfill-A-B-t-0", "mm2-backfill-A-B-t-2"]
    assert decode_ids(encode_ids(ids)) == ["mm2-backfill-A-B-t-0", "mm2-backfill-A-B-t-2"]
    assert decode_ids(encode_ids([])) == []
    assert decode_ids(None) == []  # a tombstone: nothing to fence


def test_the_key_is_a_connect_offset_key_of_no_connector_per_flow() -> None:
    assert deserialize_offset_key(record_key("A", "B")) == (RECORD_CONNECTOR, {"source": "A", "target": "B"})
    assert record_key("A", "B") != record_key("A", "C")


def test_a_task_is_known_by_its_first_units_id() -> None:
    from mirror.jobs.backfill.task_ids import task_ids

    class Clients:  # only the flow's aliases are read
        source, target = "A", "B"

    units = [WorkUnit("t", n, "A.t", 0, 10) for n in range(3)]
    assert task_ids(Clients(), [[units[2], units[0]], [units[1]], []]) == [  # type: ignore[arg-type]
        "mm2-backfill-A-B-t-2",
        "mm2-backfill-A-B-t-1",
    ]
