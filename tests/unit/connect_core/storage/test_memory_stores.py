"""In-memory and file backing stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect_core.api.errors import ConnectError
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.storage.api import ConnectorStatus, TaskStatus, TopicStatus
from connect_core.storage.file_offsets import FileOffsetBackingStore
from connect_core.storage.memory import (
    MemoryConfigBackingStore,
    MemoryOffsetBackingStore,
    MemoryStatusBackingStore,
)
from connect_core.storage.offset_storage import serialize_offset_key as key


def test_offset_store_set_get_tombstone_and_partitions() -> None:
    store = MemoryOffsetBackingStore()
    store.start()
    seen: list[BaseException | None] = []
    store.set({key("c", {"p": 0}): b'{"o":1}', key("c", {"p": 1}): b'{"o":2}'}, seen.append).result(timeout=30)
    assert seen == [None]
    assert store.get([key("c", {"p": 0}), key("c", {"p": 9})]) == {
        key("c", {"p": 0}): b'{"o":1}',
        key("c", {"p": 9}): None,
    }
    assert sorted(p["p"] for p in store.connector_partitions("c")) == [0, 1]
    store.set({key("c", {"p": 1}): None}).result()
    assert store.connector_partitions("c") == [{"p": 0}]
    assert store.connector_partitions("unknown") == []
    store.stop()


def test_file_offset_store_survives_restart(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "offsets.json"
    store = FileOffsetBackingStore(path)
    store.start()
    store.set({key("c", {"p": 0}): b'{"o":1}', key("c", {"p": 1}): b'{"o":2}'}).result()
    store.set({key("c", {"p": 1}): None}).result()
    store.stop()
    again = FileOffsetBackingStore(path)
    again.start()
    assert again.get([key("c", {"p": 0}), key("c", {"p": 1})]) == {
        key("c", {"p": 0}): b'{"o":1}',
        key("c", {"p": 1}): None,
    }
    assert again.connector_partitions("c") == [{"p": 0}]
    assert not [p for p in path.parent.iterdir() if p.name != "offsets.json"]  # no temp files left


def test_file_offset_store_missing_and_foreign_files(tmp_path: Path) -> None:
    fresh = FileOffsetBackingStore(tmp_path / "none.json")
    fresh.start()
    assert fresh.get([key("c", {"p": 0})]) == {key("c", {"p": 0}): None}
    java_file = tmp_path / "java.offsets"
    java_file.write_bytes(b"\xac\xed\x00\x05sr\x00\x11java.util.HashMap")
    with pytest.raises(ConnectError, match="Java-serialized"):
        FileOffsetBackingStore(java_file).start()


def test_status_store_put_get_destroy_and_topics() -> None:
    store = MemoryStatusBackingStore()
    store.put(ConnectorStatus("c", State.RUNNING, "w1", generation=1))
    t0 = TaskStatus(ConnectorTaskId("c", 0), State.RUNNING, "w1", generation=1)
    t1 = TaskStatus(ConnectorTaskId("c", 1), State.FAILED, "w1", trace="boom", generation=1)
    store.put(t1)
    store.put_safe(t0)
    status = store.get_connector("c")
    assert status is not None and status.state == State.RUNNING
    assert store.get_all_tasks("c") == [t0, t1]
    assert store.get_task(ConnectorTaskId("c", 1)) == t1
    assert store.connectors() == {"c"}
    store.put(TaskStatus(ConnectorTaskId("c", 1), State.DESTROYED, "w1"))
    assert store.get_task(ConnectorTaskId("c", 1)) is None
    store.put(ConnectorStatus("c", State.DESTROYED, "w1"))
    assert store.get_connector("c") is None and store.connectors() == set()
    store.put_topic(TopicStatus("t", "c", 0, 123))
    assert store.get_topics("c") == [TopicStatus("t", "c", 0, 123)]
    store.delete_topics("c")
    assert store.get_topics("c") == []


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_connector_config_update(self, connector: str) -> None:
        self.events.append(("config", connector))

    def on_connector_config_remove(self, connector: str) -> None:
        self.events.append(("remove", connector))

    def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        self.events.append(("tasks", tasks))

    def on_connector_target_state_change(self, connector: str) -> None:
        self.events.append(("target", connector))

    def on_session_key_update(self, key: dict[str, Any]) -> None:
        self.events.append(("session", key))


def test_config_store_lifecycle_and_listener() -> None:
    store = MemoryConfigBackingStore()
    rec = _Recorder()
    store.set_update_listener(rec)
    store.put_connector_config("c", {"a": "1"}, None)
    assert store.contains("c")
    snap = store.snapshot()
    assert snap.connector_configs == {"c": {"a": "1"}} and snap.target_state("c") == TargetState.STARTED
    store.put_task_configs("c", [{"t": "0"}, {"t": "1"}])
    snap = store.snapshot()
    assert snap.tasks("c") == [ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)]
    assert snap.task_config(ConnectorTaskId("c", 1)) == {"t": "1"}
    store.put_target_state("c", TargetState.PAUSED)
    store.put_target_state("c", TargetState.PAUSED)  # unchanged: no event
    store.put_connector_config("c", {"a": "2"}, None)  # keeps the target state
    assert store.snapshot().target_state("c") == TargetState.PAUSED
    store.remove_connector_config("c")
    store.remove_connector_config("c")  # absent: no event
    assert not store.contains("c") and store.snapshot().target_state("c") is None
    assert rec.events == [
        ("config", "c"),
        ("tasks", [ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)]),
        ("target", "c"),
        ("config", "c"),
        ("remove", "c"),
    ]
    with pytest.raises(ValueError):
        store.put_task_configs("c", [])
    with pytest.raises(ValueError):
        store.put_target_state("c", TargetState.STARTED)


def test_snapshot_is_isolated_from_later_writes() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("c", {"a": "1"}, TargetState.STOPPED)
    snap = store.snapshot()
    store.put_connector_config("c", {"a": "2"}, None)
    assert snap.connector_configs["c"] == {"a": "1"}
    assert snap.target_state("c") == TargetState.STOPPED
