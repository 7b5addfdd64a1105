"""How far ``mm2 verify`` compares: to the newest copy the mappings or syncs report, not only the flushed offset."""

from __future__ import annotations

from mirror.client.formats import OffsetSync, TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.jobs.verify.plan import FlowEvidence

TP = TopicPartition("orders", 0)


def test_copied_through_is_the_newest_acknowledged_copy_of_mappings_or_syncs() -> None:
    evidence = FlowEvidence()
    assert evidence.copied_through(TP) == -1
    sync = OffsetSync(TP, 100, 140)
    evidence.on_sync(sync.record_key(), sync.record_value())
    assert evidence.copied_through(TP) == 101  # record 100 was acknowledged: compare up to it
    mapping = OffsetMapping(TP, 0, 0, 40, 250)  # records 0..249 at 40..289
    evidence.on_mapping(mapping.record_key(), mapping.record_value())
    assert evidence.copied_through(TP) == 250
    older = OffsetSync(TP, 50, 90)  # an older sync read later never moves it back
    evidence.on_sync(older.record_key(), older.record_value())
    assert evidence.copied_through(TP) == 250
    assert evidence.copied_through(TopicPartition("orders", 1)) == -1
