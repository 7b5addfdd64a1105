"""Config-log replay follows KafkaConfigBackingStore: task configs apply only on a complete commit."""

from __future__ import annotations

from connect_core.model import ConnectorTaskId, TargetState
from connect_core.storage import formats as f
from connect_core.storage.config_state import ConfigState

C1 = {"connector.class": "MirrorSourceConnector", "name": "c1"}


def feed(state: ConfigState, *records: tuple[str, bytes | None]) -> None:
    for key, value in records:
        state.apply(key, value, state.offset if state.offset >= 0 else 0)


def tid(n: int, connector: str = "c1") -> ConnectorTaskId:
    return ConnectorTaskId(connector, n)


def task(n: int, connector: str = "c1") -> tuple[str, bytes]:
    return f.task_key(connector, n), f.encode_task_config({"task.index": str(n), "gen": "a"})


def test_empty_log() -> None:
    snap = ConfigState().snapshot()
    assert snap.offset == -1 and snap.connectors() == [] and snap.task_configs == {}


def test_complete_commit_applies_tasks_and_offsets_advance() -> None:
    s = ConfigState()
    s.apply(f.connector_key("c1"), f.encode_connector_config(C1), 0)
    s.apply(*task(0), 1)
    s.apply(*task(1), 2)
    snap = s.snapshot()
    assert snap.connector_configs == {"c1": C1}
    assert snap.target_state("c1") is TargetState.STARTED
    assert snap.task_configs == {} and snap.tasks("c1") == []  # buffered, not applied
    change = s.apply(f.commit_key("c1"), f.encode_task_commit(2), 3)
    assert change.kind == "tasks_committed" and change.tasks == [tid(0), tid(1)]
    snap = s.snapshot()
    assert snap.offset == 4
    assert snap.tasks("c1") == [tid(0), tid(1)]
    assert snap.task_config(tid(1)) == {"task.index": "1", "gen": "a"}
    assert "c1" in s.pending_fencing and s.task_config_generations["c1"] == 0


def test_missing_commit_keeps_previous_task_configs() -> None:
    s = ConfigState()
    feed(
        s,
        (f.connector_key("c1"), f.encode_connector_config(C1)),
        task(0),
        (f.commit_key("c1"), f.encode_task_commit(1)),
    )
    # A new generation of task configs is written but the leader dies before the commit.
    feed(s, (f.task_key("c1", 0), f.encode_task_config({"gen": "b"})), (f.task_key("c1", 1), f.encode_task_config({})))
    snap = s.snapshot()
    assert snap.tasks("c1") == [tid(0)]
    assert snap.task_config(tid(0)) == {"task.index": "0", "gen": "a"}
    assert "c1" not in snap.inconsistent
    assert set(s.pending_task_configs("c1")) == {tid(0), tid(1)}


def test_incomplete_commit_marks_inconsistent_until_a_complete_one() -> None:
    s = ConfigState()
    feed(
        s,
        (f.connector_key("c1"), f.encode_connector_config(C1)),
        task(0),
        (f.commit_key("c1"), f.encode_task_commit(1)),
    )
    # Compaction removed task-c1-0 of the second generation: commit says 2 tasks but only task 1 is buffered.
    feed(s, (f.task_key("c1", 1), f.encode_task_config({"gen": "b"})), (f.commit_key("c1"), f.encode_task_commit(2)))
    snap = s.snapshot()
    assert snap.inconsistent == {"c1"}
    assert snap.tasks("c1") == []  # inconsistent connectors expose no tasks
    assert snap.task_counts["c1"] == 2
    assert snap.task_config(tid(0)) == {"task.index": "0", "gen": "a"}  # old config untouched
    assert snap.task_config(tid(1)) is None
    assert s.pending_task_configs("c1") == {}  # buffer cleared either way
    # The leader rewrites a full set: consistent again.
    feed(s, task(0), task(1), (f.commit_key("c1"), f.encode_task_commit(2)))
    snap = s.snapshot()
    assert snap.inconsistent == set() and snap.tasks("c1") == [tid(0), tid(1)]


def test_extra_stale_task_ids_do_not_block_a_commit() -> None:
    # [task-2 (stale, from an older 3-task generation), task-0, task-1, commit(2)] is consistent.
    s = ConfigState()
    feed(s, (f.connector_key("c1"), f.encode_connector_config(C1)), task(2), task(0), task(1),
         (f.commit_key("c1"), f.encode_task_commit(2)))  # fmt: skip
    snap = s.snapshot()
    assert snap.tasks("c1") == [tid(0), tid(1)] and not snap.inconsistent


def test_zero_task_commit_is_consistent() -> None:
    s = ConfigState()
    feed(s, (f.connector_key("c1"), f.encode_connector_config(C1)), (f.commit_key("c1"), f.encode_task_commit(0)))
    snap = s.snapshot()
    assert snap.tasks("c1") == [] and snap.task_counts == {"c1": 0} and not snap.inconsistent


def test_connector_tombstone_removes_configs_and_tasks_but_target_state_needs_its_own() -> None:
    s = ConfigState()
    feed(
        s,
        (f.connector_key("c1"), f.encode_connector_config(C1)),
        (f.target_state_key("c1"), f.encode_target_state(TargetState.PAUSED)),
        task(0),
        (f.commit_key("c1"), f.encode_task_commit(1)),
        (f.connector_key("c2"), f.encode_connector_config({"name": "c2"})),
        task(0, "c2"),
        (f.commit_key("c2"), f.encode_task_commit(1)),
    )
    change = s.apply(f.connector_key("c1"), None, 7)
    assert change.kind == "connector_removed" and change.notify
    snap = s.snapshot()
    assert snap.connectors() == ["c2"]
    assert snap.task_configs == {tid(0, "c2"): {"task.index": "0", "gen": "a"}}
    assert "c1" not in snap.task_counts
    assert snap.target_states["c1"] is TargetState.PAUSED  # until its own tombstone
    assert snap.target_state("c1") is None  # but no connector, so none reported
    s.apply(f.target_state_key("c1"), None, 8)
    assert "c1" not in s.snapshot().target_states


def test_commit_after_compacted_deletion_is_ignored() -> None:
    s = ConfigState()
    feed(s, task(0, "gone"), (f.commit_key("gone"), f.encode_task_commit(1)))
    snap = s.snapshot()
    assert snap.task_configs == {} and snap.task_counts == {} and snap.connectors() == []


def test_target_states() -> None:
    s = ConfigState()
    # A target state written before its connector (explicit initial state): kept, no notification.
    ch = s.apply(f.target_state_key("c1"), f.encode_target_state(TargetState.STOPPED), 0)
    assert not ch.notify
    s.apply(f.connector_key("c1"), f.encode_connector_config(C1), 1)
    assert s.snapshot().target_state("c1") is TargetState.STOPPED
    ch = s.apply(f.target_state_key("c1"), f.encode_target_state(TargetState.STOPPED), 2)
    assert not ch.notify  # unchanged
    ch = s.apply(f.target_state_key("c1"), f.encode_target_state(TargetState.STARTED), 3)
    assert ch.notify and s.snapshot().target_state("c1") is TargetState.STARTED
    # v0 record from an old worker
    s.apply(f.target_state_key("c1"), b'{"state":"PAUSED"}', 4)
    assert s.snapshot().target_state("c1") is TargetState.PAUSED
    # tombstone while the connector exists -> back to STARTED
    s.apply(f.target_state_key("c1"), None, 5)
    assert s.snapshot().target_states["c1"] is TargetState.STARTED


def test_fencing_session_key_restart_and_invalid_records() -> None:
    s = ConfigState()
    feed(
        s,
        (f.connector_key("c1"), f.encode_connector_config(C1)),
        task(0),
        (f.commit_key("c1"), f.encode_task_commit(1)),
    )
    assert "c1" in s.pending_fencing
    s.apply(f.task_count_record_key("c1"), f.encode_task_count_record(1), 10)
    assert "c1" not in s.pending_fencing and s.task_count_records == {"c1": 1}
    s.apply(f.SESSION_KEY_KEY, f.encode_session_key(b"k", "HmacSHA256", 9), 11)
    assert s.snapshot().session_key == {"key": b"k", "algorithm": "HmacSHA256", "creation_timestamp": 9}
    ch = s.apply(f.restart_key("c1"), f.encode_restart_request(True, True), 12)
    assert ch.kind == "restart" and ch.restart is not None and ch.restart.only_failed
    before = s.snapshot()
    ch = s.apply("garbage", b"{}", 13)
    assert ch.kind == "none"
    after = s.snapshot()
    assert after.offset == 14 and after.connector_configs == before.connector_configs


def test_snapshot_is_isolated_from_later_records() -> None:
    s = ConfigState()
    feed(s, (f.connector_key("c1"), f.encode_connector_config(C1)))
    snap = s.snapshot()
    feed(s, (f.connector_key("c1"), f.encode_connector_config({"name": "changed"})))
    assert snap.connector_configs["c1"] == C1
