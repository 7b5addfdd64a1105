"""a task that hangs in poll() is abandoned after task.shutdown.graceful.timeout.ms when it is
restarted, and when it finally wakes up it can neither overwrite its successor's status nor commit
its offsets (Java's WorkerTask.cancel)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path

import pytest

from connect_core.api.errors import NotFoundError
from connect_core.herder.standalone import StandaloneHerder, build_standalone_herder
from connect_core.model import ConnectorTaskId, State
from connect_core.storage.memory import MemoryOffsetBackingStore
from embedded_kafka import KafkaCluster
from tests.gated_plugins import GATED, TaskGate

pytestmark = pytest.mark.integration

BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


def wait_for(cond: Callable[[], bool], what: str, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def herder(kafka_cluster: KafkaCluster, tmp_path: Path) -> Iterator[StandaloneHerder]:
    TaskGate.reset()
    h = build_standalone_herder(
        {
            "bootstrap.servers": kafka_cluster.bootstrap_servers,
            "key.converter": BYTES,
            "value.converter": BYTES,
            "header.converter": BYTES,
            "offset.flush.interval.ms": "200",
            "task.shutdown.graceful.timeout.ms": "1000",
            "offset.storage.file.filename": str(tmp_path / "offsets.json"),
            "listeners": "http://127.0.0.1:0",
        }
    )
    h.start()
    try:
        yield h
    finally:
        TaskGate.release.set()
        h.stop()
        TaskGate.reset()


def test_hung_task_is_cancelled_and_never_clobbers_its_successor(
    herder: StandaloneHerder,
    kafka_cluster: KafkaCluster,
    unique_name: Callable[[str], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    offset_writes: list[bytes | None] = []
    real_set = MemoryOffsetBackingStore.set

    def watched_set(
        self: MemoryOffsetBackingStore,
        values: dict[bytes, bytes | None],
        callback: Callable[[BaseException | None], None] | None = None,
    ) -> Future[None]:
        offset_writes.extend(values.values())
        return real_set(self, values, callback)

    monkeypatch.setattr(MemoryOffsetBackingStore, "set", watched_set)  # the file store inherits it
    topic = kafka_cluster.create_topic(unique_name("hung"))
    config = {"connector.class": GATED, "topic": topic, "records": "1000000", "batch": "1", "poll.delay": "0.05",
              "tasks.max": "1", "source.partitions": "1"}  # fmt: skip
    herder.put_connector_config("h", config, False)
    tid = ConnectorTaskId("h", 0)

    def state() -> State | None:
        try:
            return herder.task_status(tid).state
        except NotFoundError:
            return None

    def committed() -> int:
        return next((o["n"] for p, o in herder.connector_offsets("h") if p == {"p": 0}), -1)

    wait_for(lambda: state() is State.RUNNING and committed() >= 0, "task running and committing")

    TaskGate.holding = {0}
    assert TaskGate.hung.wait(10), "task never reached the hanging poll"
    TaskGate.holding = set()  # only the current poll hangs; the successor polls normally

    # The hung poll holds until TaskGate.release, which is set only further down: a restart that waited
    # for the task instead of cancelling it after the 1 s graceful timeout would not return before the
    # join's 60 s (generous for a loaded machine; the restart itself is about the graceful timeout).
    failures: list[BaseException] = []

    def restart_task() -> None:
        try:
            herder.restart_task(tid)
        except BaseException as e:
            failures.append(e)

    restart = threading.Thread(target=restart_task, name="restart-hung-task", daemon=True)
    restart.start()
    restart.join(60)
    assert not restart.is_alive(), "restart waited for a hung task (graceful timeout is 1s)"
    assert failures == []
    wait_for(lambda: TaskGate.task_start_count("h", "0") == 2, "successor started")

    wait_for(lambda: state() is State.RUNNING, "successor running")
    before = committed()
    wait_for(lambda: committed() > before + 3, "successor commits")

    # The hung poll now returns its record with offset n=999999; the cancelled task must not write its
    # status or commit that offset. Every offset write is watched (a later commit by the successor
    # would hide one in the store), and the checks wait until the zombie's thread has ended.
    zombie = TaskGate.hung_thread
    assert zombie is not None and zombie.is_alive()
    TaskGate.release.set()
    wait_for(lambda: not zombie.is_alive(), "the cancelled task's thread to end", timeout=30)
    mark = committed()
    wait_for(lambda: committed() > mark + 5, "successor keeps committing after the zombie ended")
    assert not [v for v in offset_writes if v is not None and b"999999" in v], "a cancelled task committed its offsets"
    assert any(v is not None and b'"n"' in v for v in offset_writes)  # the spy does see the successor's commits
    assert state() is State.RUNNING
    assert herder.connector_status("h").tasks[0].state is State.RUNNING
