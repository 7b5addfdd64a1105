"""``mm2 status`` folding of internal-topic records into report rows (no broker)."""

from __future__ import annotations

from connect_core.model import ConnectorTaskId, State
from connect_core.storage import formats
from connect_core.storage.api import ConnectorStatus, TaskStatus
from connect_core.storage.offset_storage import serialize_offset_key, serialize_offset_value
from mirror.client.formats import Checkpoint, TopicPartition
from mirror.connectors.source_incarnation import RECREATED_KEY, TOPIC_ID_KEY, RecreatedEvent
from mirror.driver.status import CheckpointFold, OffsetFold, StatusFold, source_changes
from mirror.driver.status_lag import partition_lags
from mirror.driver.status_report import FlowStatus, render_table


def _task(name: str, n: int, state: State, worker: str = "A->B", gen: int = 1) -> tuple[str, bytes | None]:
    tid = ConnectorTaskId(name, n)
    return formats.task_status_key(tid), formats.encode_task_status(TaskStatus(tid, state, worker, None, gen))


def test_status_fold_last_value_wins_and_tombstones_delete() -> None:
    fold = StatusFold()
    src = "MirrorSourceConnector"
    fold.apply(
        formats.connector_status_key(src).encode(),
        formats.encode_connector_status(ConnectorStatus(src, State.UNASSIGNED, "A->B")),
    )
    fold.apply(
        formats.connector_status_key(src).encode(),
        formats.encode_connector_status(ConnectorStatus(src, State.RUNNING, "A->B")),
    )
    for key, value in (_task(src, 0, State.RUNNING), _task(src, 1, State.FAILED), _task(src, 2, State.RUNNING)):
        fold.apply(key.encode(), value)
    fold.apply(formats.task_status_key(ConnectorTaskId(src, 2)).encode(), None)
    fold.apply(b"status-connector-", b"{}")  # key Java discards
    fold.apply(b"status-task-junk", b"not json")  # never fails the report
    fold.apply(formats.connector_status_key("Other").encode(), b"{broken")
    states = fold.connector_states([src, "MirrorCheckpointConnector"])
    assert len(states) == 1
    assert states[0].name == src and states[0].state == "RUNNING" and states[0].worker_id == "A->B"
    assert [(t.id, t.state) for t in states[0].tasks] == [(0, "RUNNING"), (1, "FAILED")]


def test_status_fold_tasks_without_connector_status_show_unassigned_connector() -> None:
    fold = StatusFold()
    key, value = _task("MirrorHeartbeatConnector", 0, State.RUNNING)
    fold.apply(key, value)
    [state] = fold.connector_states()
    assert state.state == "UNASSIGNED" and state.tasks[0].state == "RUNNING"


def test_offset_fold_keeps_only_this_source_and_the_source_connector() -> None:
    fold = OffsetFold("A")

    def put(connector: str, cluster: str, topic: str, p: int, offset: int | None) -> None:
        key = serialize_offset_key(connector, {"cluster": cluster, "partition": p, "topic": topic})
        fold.apply(key, serialize_offset_value(None if offset is None else {"offset": offset}))

    put("MirrorSourceConnector", "A", "orders", 0, 9)
    put("MirrorSourceConnector", "A", "orders", 0, 41)
    put("MirrorSourceConnector", "A", "orders", 1, 3)
    put("MirrorSourceConnector", "C", "orders", 2, 5)  # another source writing the same topic
    put("MirrorCheckpointConnector", "A", "orders", 3, 0)
    put("MirrorSourceConnector", "A", "gone", 0, 7)
    put("MirrorSourceConnector", "A", "gone", 0, None)
    fold.apply(b"not json", b"{}")
    fold.apply(serialize_offset_key("MirrorSourceConnector", {"cluster": "A", "topic": "t", "partition": 0}), b"[")
    assert fold.offsets == {("orders", 0): 41, ("orders", 1): 3}


def test_checkpoint_fold_keeps_the_latest_per_group_and_partition() -> None:
    fold = CheckpointFold()
    for up, down in ((5, 4), (10, 9)):
        cp = Checkpoint("g1", TopicPartition("A.orders", 0), up, down)
        fold.apply(cp.record_key(), cp.record_value())
    other = Checkpoint("g0", TopicPartition("A.orders", 1), 2, 2)
    fold.apply(other.record_key(), other.record_value())
    fold.apply(b"\x00", b"\x00")  # malformed: skipped
    fold.apply(other.record_key(), None)
    rows = fold.rows()
    assert [(r.group, r.topic, r.partition, r.upstream_offset, r.downstream_offset) for r in rows] == [
        ("g0", "A.orders", 1, 2, 2),
        ("g1", "A.orders", 0, 10, 9),
    ]


def test_partition_lags_is_end_minus_committed_plus_one() -> None:
    rows = partition_lags(
        {("orders", 0): 100, ("orders", 1): 50, ("new", 0): 7},
        {("orders", 0): 99, ("orders", 1): 9, ("vanished", 0): 4},
        lambda t: "A." + t,
    )
    got = {(r.topic, r.partition): (r.remote_topic, r.source_end_offset, r.mirrored_offset, r.lag) for r in rows}
    assert got == {
        ("orders", 0): ("A.orders", 100, 100, 0),
        ("orders", 1): ("A.orders", 50, 10, 40),
        ("new", 0): ("A.new", 7, 0, 7),
        ("vanished", 0): ("A.vanished", 5, 5, 0),
    }


def test_status_shows_the_event_per_partition_from_the_committed_offsets() -> None:
    fold = OffsetFold("A")
    event = RecreatedEvent("orders", 1, "id-1", "id-2", 249, 0)
    key = serialize_offset_key("MirrorSourceConnector", {"cluster": "A", "partition": 1, "topic": "orders"})
    fold.apply(key, serialize_offset_value({"offset": 10, TOPIC_ID_KEY: "id-2", RECREATED_KEY: event.encode()}))
    assert fold.recreated == {("orders", 1): event} and fold.offsets == {("orders", 1): 10}
    rows = source_changes(fold.recreated, lambda t: f"A.{t}")
    assert [(r.topic, r.partition, r.remote_topic, r.reason, r.detected_at) for r in rows] == [
        ("orders", 1, "A.orders", "topic-recreated", "1970-01-01T00:00:00Z")
    ]
    assert "id-1 -> id-2" in rows[0].detail and "mirrored through offset 249" in rows[0].detail
    table = render_table([FlowStatus("A", "B", True, source_changes=rows)])
    assert "SOURCE CHANGE: TOPIC" in table and "topic-recreated" in table
    fold.apply(key, None)  # the offsets reset: no event left to show
    assert fold.recreated == {}
