"""translate-offsets decisions per group (pure): statuses, what --apply writes, failback renaming, the report."""

from __future__ import annotations

import json

from mirror.client.formats import Checkpoint, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.client.policy import DefaultReplicationPolicy
from mirror.connectors.offset_mapping_index import ExactOffsetTranslator, OffsetMappingIndex
from mirror.connectors.offset_sync_store import OffsetSyncStore
from mirror.jobs.translate.job import FlowTranslator
from mirror.jobs.translate.logic import GroupPlan, Translated, plan_group, record_results
from mirror.jobs.translate.report import render_json, render_table

T0, T1, T2 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("t", 2)
R0, R1, R2 = TopicPartition("A.t", 0), TopicPartition("A.t", 1), TopicPartition("A.t", 2)


def shifted(tp: TopicPartition, offset: int) -> Translated:
    """+100, except partition 2, which has no translation."""
    return Translated("A." + tp.topic, None if tp.partition == 2 else offset + 100, 0)


def oam(offsets: dict[TopicPartition, int]) -> dict[TopicPartition, OffsetAndMetadata | None]:
    return {tp: OffsetAndMetadata(o) for tp, o in offsets.items()}


def test_statuses_and_writes_for_an_empty_target_group() -> None:
    plan = plan_group(
        "g",
        {**oam({T0: 5, T1: 7, T2: 1}), TopicPartition("t", 3): None},
        shifted,
        "EMPTY",
        oam({R0: 50, R1: 900}),
        {R0: 200, R1: 1000},
    )
    assert [(r.partition, r.target_offset, r.status) for r in plan.partitions] == [
        (0, 105, "ok"),
        (1, 107, "behind-target"),
        (2, None, "no-sync"),
    ]
    assert plan.writes(force=False) == {R0: OffsetAndMetadata(105)}
    assert plan.writes(force=True) == {R0: OffsetAndMetadata(105), R1: OffsetAndMetadata(107)}
    assert plan.partitions[0].target_end_offset == 200 and plan.partitions[0].target_committed == 50


def test_nothing_written_to_a_group_with_members_or_already_there() -> None:
    active = plan_group("g", oam({T0: 5, T1: 7}), shifted, "STABLE", {}, {})
    assert {r.status for r in active.partitions} == {"active-on-target"}
    assert active.writes(force=True) == {}
    there = plan_group("g", oam({T0: 5}), shifted, "EMPTY", oam({R0: 105}), {})
    assert there.partitions[0].status == "ok" and there.writes(force=False) == {}
    new = plan_group("g", oam({T0: 5}), shifted, "DEAD", {}, {})
    assert new.writes(force=False) == {R0: OffsetAndMetadata(105)}


def test_every_partition_result_is_recorded() -> None:
    plan = plan_group("g", oam({T0: 5, T1: 7}), shifted, "EMPTY", {}, {})
    record_results(plan, {R0: None, R1: "UNKNOWN_MEMBER_ID"})
    assert [(r.applied, r.error) for r in plan.partitions] == [(True, None), (False, "UNKNOWN_MEMBER_ID")]
    doc = render_json([plan], applied=True)
    assert doc["summary"]["applied"] == 1 and doc["summary"]["failed"] == 1
    assert json.loads(json.dumps(doc))["groups"][0]["partitions"][1]["error"] == "UNKNOWN_MEMBER_ID"


def test_report_shapes() -> None:
    plans = [plan_group("g1", oam({T0: 5, T2: 1}), shifted, "EMPTY", {}, {R0: 110}), GroupPlan("g2", "DEAD")]
    doc = render_json(plans, applied=False)
    row = doc["groups"][0]["partitions"][0]
    assert {"topic", "partition", "source_offset", "target_topic", "target_offset", "reread", "status"} <= set(row)
    assert doc["groups"][0]["group"] == "g1"
    assert doc["summary"] == {
        "ok": 1,
        "no-sync": 1,
        "active-on-target": 0,
        "behind-target": 0,
        "old-incarnation": 0,
        "applied": 0,
        "failed": 0,
    }
    table = render_table(plans, applied=False)
    lines = table.splitlines()
    assert lines[0].split()[:3] == ["group", "topic", "partition"]
    assert lines[1].split() == ["g1", "t", "0", "5", "A.t", "105", "110", "-", "0", "ok", "no"]
    assert (
        lines[-1] == "2 groups, 2 partitions: 1 ok, 1 no-sync, 0 active-on-target, 0 behind-target; "
        "dry run: nothing written (add --apply)"
    )


def test_flow_translator_exact_fallback_and_failback() -> None:
    index = OffsetMappingIndex()
    index.on_mapping(OffsetMapping(T0, 0, 0, 40, 10))  # t-0 0..9 at 40..49 on B
    store = OffsetSyncStore()
    store.start(False)
    store.on_sync(OffsetSync(T1, 10, 60))
    store.mark_read_to_end()
    back = OffsetMappingIndex()  # the B->A flow's mappings: B's topic u-0 0..4 at A's B.u 7..11
    back.on_mapping(OffsetMapping(TopicPartition("u", 0), 0, 0, 7, 5))
    policy = DefaultReplicationPolicy()
    forward = FlowTranslator("A", "B", policy, ExactOffsetTranslator(index, store), None)
    assert forward(T0, 4) == Translated("A.t", 44, 0)
    assert forward(T1, 15) == Translated("A.t", 61, 4)  # Kafka's sync at 10: re-reads 11..14 at most
    assert forward(T2, 3) == Translated("A.t", None, None)
    # Failback: job A->B for a group on A consuming B.u (mirrored from B): back to u on B.
    failback = FlowTranslator("A", "B", policy, ExactOffsetTranslator(index, store), back)
    assert failback(TopicPartition("B.u", 0), 9) == Translated("u", 2, 0)
    assert failback(TopicPartition("B.u", 0), 3) == Translated("u", None, None)
    assert forward(TopicPartition("B.u", 0), 9) == Translated("u", None, None)  # no reverse mappings


def test_spark_failure_becomes_its_python_error_line() -> None:
    from mirror.jobs.spark import job_error

    text = (
        "An error occurred while calling o42.collectAndServe.\n"
        ": org.apache.spark.SparkException: Job aborted due to stage failure: Task 0 failed 4 times\n"
        'Traceback (most recent call last):\n  File "x.py", line 1, in f\n'
        "connect_core.api.errors.ConnectError: Timed out after 30s: list consumer groups on cluster B\n"
        "\tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:1)\n"
    )
    assert job_error(RuntimeError(text)) == "ConnectError: Timed out after 30s: list consumer groups on cluster B"
    assert job_error(RuntimeError("plain failure\nmore")) == "plain failure"


def test_flow_translator_applies_the_flows_topic_filter() -> None:
    from mirror.client.filters import topic_filter_from_config

    translator = FlowTranslator(
        "A",
        "B",
        DefaultReplicationPolicy(),
        ExactOffsetTranslator(OffsetMappingIndex(), OffsetSyncStore()),
        None,
        topic_filter_from_config({"topics": "orders.*"}),
    )
    assert translator.accepts("orders-eu") and not translator.accepts("payments")
    assert not translator.accepts("mm2-offset-syncs.B.internal")  # internal topics are never translated


def test_each_task_gets_only_the_translation_state_its_groups_need() -> None:
    import pickle

    from mirror.jobs.translate.checkpoints import Checkpointed
    from mirror.jobs.translate.job import task_slices

    index, back = OffsetMappingIndex(), OffsetMappingIndex()
    store = OffsetSyncStore()
    store.start(False)
    for p in range(50):  # a flow of 50 partitions, each mapped and synced
        tp = TopicPartition("t", p)
        index.on_mapping(OffsetMapping(tp, 0, 0, 10 * p, 100))
        store.on_sync(OffsetSync(tp, 0, 10 * p))
        back.on_mapping(OffsetMapping(TopicPartition("u", p), 0, 0, p, 5))  # B->A: u on B is B.u on A
    store.mark_read_to_end()
    translator = FlowTranslator("A", "B", DefaultReplicationPolicy(), ExactOffsetTranslator(index, store), back)
    offsets = {"g1": oam({T0: 5}), "g2": oam({T1: 7, TopicPartition("B.u", 3): 2}), "g3": oam({T2: 9})}
    slices = task_slices(["g1", "g2", "g3"], 2, translator, offsets)
    assert [s.groups for s in slices] == [["g1", "g2"], ["g3"]]
    first = pickle.loads(pickle.dumps(slices[0]))  # as Spark ships it
    assert set(first.translator.forward.index.topic_partitions()) == {T0, T1}
    assert set(first.translator.forward.syncs.topic_partitions()) == {T0, T1}
    assert first.translator.back.topic_partitions() == [TopicPartition("u", 3)]
    assert first.offsets == {"g1": offsets["g1"], "g2": offsets["g2"]}
    assert first.translator(T1, 7) == translator(T1, 7) == Translated("A.t", 17, 0)
    assert first.translator(TopicPartition("B.u", 3), 5) == Translated("u", 2, 0)  # failback: B.u 3..7 = u 0..4
    assert len(pickle.dumps(slices[1])) < len(pickle.dumps(translator)) / 10  # 1 partition of 50
    # source unreachable: the slice carries its groups' checkpoints and the partitions they name
    cp = Checkpoint("g3", TopicPartition("A.t", 2), 9, 29)
    gone = task_slices(["g3"], 2, translator, checkpoints={"g3": {cp.topic_partition: Checkpointed(cp, 1)}})
    assert gone[0].offsets is None and set(gone[0].translator.forward.index.topic_partitions()) == {T2}
