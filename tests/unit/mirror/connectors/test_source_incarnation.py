"""Where a source task resumes a partition given the stored offset value and the topic's id now (no broker)."""

from __future__ import annotations

import pytest

from connect_core.storage.offset_storage import serialize_offset_value
from mirror.client.formats import TopicPartition
from mirror.connectors.source_incarnation import (
    RECREATED_KEY,
    TOPIC_ID_KEY,
    RecreatedAction,
    RecreatedEvent,
    SourceTopicRecreatedError,
    decide_start,
)

TP = TopicPartition("orders", 1)
DEFAULT = RecreatedAction.MIRROR_FROM_START


def test_no_stored_position_starts_per_auto_offset_reset_and_remembers_the_id() -> None:
    decision = decide_start(TP, None, "id-1", DEFAULT)
    assert (decision.position, decision.extra, decision.event, decision.from_beginning) == (
        None,
        {TOPIC_ID_KEY: "id-1"},
        None,
        False,
    )


def test_an_offset_without_an_id_written_by_java_or_a_backfill_resumes_and_adopts_the_id() -> None:
    decision = decide_start(TP, {"offset": 41}, "id-1", DEFAULT)
    assert (decision.position, decision.extra, decision.event) == (42, {TOPIC_ID_KEY: "id-1"}, None)


def test_an_unknown_id_now_compares_nothing_and_keeps_what_was_stored() -> None:
    stored = {"offset": 41, TOPIC_ID_KEY: "id-1"}
    decision = decide_start(TP, stored, None, DEFAULT)
    assert (decision.position, decision.extra, decision.event) == (42, {TOPIC_ID_KEY: "id-1"}, None)


def test_the_same_id_resumes_and_keeps_an_earlier_event_on_record() -> None:
    stored = {"offset": 7, TOPIC_ID_KEY: "id-2", RECREATED_KEY: "{...}"}
    decision = decide_start(TP, stored, "id-2", DEFAULT)
    assert (decision.position, decision.extra, decision.event) == (
        8,
        {TOPIC_ID_KEY: "id-2", RECREATED_KEY: "{...}"},
        None,
    )


def test_a_new_id_starts_the_new_incarnation_from_its_beginning_and_records_the_event() -> None:
    decision = decide_start(TP, {"offset": 249, TOPIC_ID_KEY: "id-1"}, "id-2", DEFAULT, now_ms=1234)
    assert decision.position is None and decision.from_beginning
    assert decision.event == RecreatedEvent("orders", 1, "id-1", "id-2", 249, 1234)
    assert decision.extra is not None and decision.extra[TOPIC_ID_KEY] == "id-2"
    assert RecreatedEvent.decode("orders", 1, decision.extra[RECREATED_KEY]) == decision.event


def test_keep_position_resumes_where_the_old_incarnation_stopped_and_still_records_it() -> None:
    decision = decide_start(TP, {"offset": 249, TOPIC_ID_KEY: "id-1"}, "id-2", RecreatedAction.KEEP_POSITION)
    assert decision.position == 250 and not decision.from_beginning and decision.event is not None
    line = decision.event.describe("A->B", RecreatedAction.KEEP_POSITION)
    assert "its 250 records below it are never mirrored" in line


def test_fail_raises_one_clear_error_naming_the_topic_ids_offset_and_setting() -> None:
    with pytest.raises(
        SourceTopicRecreatedError,
        match=r"Source topic orders was deleted and recreated \(topic id "
        r"id-1 -> id-2\); partition 1 was mirrored through offset 249 .*recreated.action=fail",
    ):
        decide_start(TP, {"offset": 249, TOPIC_ID_KEY: "id-1"}, "id-2", RecreatedAction.FAIL)


def test_the_choice_is_parsed_strictly() -> None:
    assert RecreatedAction.parse(" Fail ") is RecreatedAction.FAIL
    with pytest.raises(ValueError, match="must be one of mirror-from-start, fail, keep-position"):
        RecreatedAction.parse("skip")


@pytest.mark.parametrize("raw", [None, 5, "not json", "[]", '{"topic.id": "x"}'])
def test_an_unreadable_event_is_no_event(raw: object) -> None:
    assert RecreatedEvent.decode("t", 0, raw) is None


def test_the_offset_value_stays_a_connect_offset_java_reads() -> None:
    """Connect allows only primitive values in an offset; Java MM2 reads only ``offset`` from it."""
    decision = decide_start(TP, {"offset": 3, TOPIC_ID_KEY: "id-1"}, "id-2", DEFAULT, now_ms=5)
    assert decision.extra is not None
    value = serialize_offset_value({**decision.extra, "offset": 0})
    assert value is not None and b'"offset":0' in value
