"""The source-task loop against an in-memory producer: offsets, tolerance, back-pressure, pause, cancel."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_core.converters.byte_array import ByteArrayConverter
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.runtime.connector_config import ToleranceType
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.tolerance import RetryWithToleranceOperator
from connect_core.runtime.worker_source_task import WorkerSourceTask
from connect_core.storage.memory import MemoryOffsetBackingStore, MemoryStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from connect_core.transforms.chain import TransformationChain
from tests.worker_plugins import CountingSourceTask, FakeProducer, Registry

TID = ConnectorTaskId("conn", 0)
DEFAULT_PROPS = {"connector.name": "conn", "topic": "out", "partitions": "0,1", "records": "20", "batch": "7"}


def wait_for(cond: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def commit_rounds(h: Harness, rounds: int) -> None:
    """Wait until the task loop has attempted ``rounds`` more offset commits (it does every flush interval,
    paused or not): evidence that time passed with the loop running, however slow the machine is."""
    start = len(h.metrics.commits)
    wait_for(lambda: len(h.metrics.commits) >= start + rounds, what=f"{rounds} more offset commit rounds")


class Metrics:
    def __init__(self) -> None:
        self.batches: list[tuple[int, int]] = []
        self.commits: list[bool] = []
        self.skipped = 0
        self.acked = 0

    def record_batch(self, polled: int, value_bytes: int, elapsed_s: float) -> None:
        self.batches.append((polled, value_bytes))

    def record_acks(self, acked: int, failed: int) -> None:
        self.acked += acked

    def record_skipped(self, count: int) -> None:
        self.skipped += count

    def record_commit(self, success: bool, duration_s: float) -> None:
        self.commits.append(success)

    def record_client_error(self, error: str, fatal: bool) -> None:
        pass


@pytest.fixture(autouse=True)
def _registry() -> Iterator[None]:
    Registry.reset()
    yield


class Harness:
    def __init__(self) -> None:
        self.store = MemoryOffsetBackingStore()
        self.status = MemoryStatusBackingStore()
        self.recorder = StatusRecorder(self.status, "w1")
        self.producer = FakeProducer()
        self.metrics = Metrics()
        self.tasks: list[WorkerSourceTask] = []

    def task(self, props: dict[str, str] | None = None, *, tolerance: ToleranceType = ToleranceType.NONE,
             chain: Any = None, flush_interval: float = 0.05, state: TargetState = TargetState.STARTED,
             ) -> WorkerSourceTask:  # fmt: skip
        conv = ByteArrayConverter()
        t = WorkerSourceTask(
            TID,
            CountingSourceTask(),
            {
                "connector.name": "conn",
                "topic": "out",
                "partitions": "0,1",
                "records": "20",
                "batch": "7",
                **(props or {}),
            },
            producer=self.producer,
            offset_reader=OffsetStorageReaderImpl(self.store, "conn"),
            offset_writer=OffsetStorageWriter(self.store, "conn"),
            listener=self.recorder,
            key_converter=conv,
            value_converter=conv,
            header_converter=conv,
            transformation_chain=chain,
            tolerance=RetryWithToleranceOperator(0, 1000, tolerance),
            initial_state=state,
            offset_flush_interval_s=flush_interval,
            offset_flush_timeout_s=1.0,
            status_store=self.status,
            metrics=self.metrics,
        )
        self.tasks.append(t)
        return t

    def committed(self) -> dict[int, int | None]:
        reader = OffsetStorageReaderImpl(self.store, "conn")
        return {p["p"]: (o or {}).get("n") for p, o in reader.offsets([{"p": 0}, {"p": 1}])}

    def state(self) -> State | None:
        s = self.status.get_task(TID)
        return None if s is None else s.state


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    for t in harness.tasks:
        t.stop()
        t.await_stop(2)


def test_produces_everything_commits_offsets_and_reports_running(h: Harness) -> None:
    t = h.task()
    t.start()
    wait_for(lambda: len(h.producer.log) == 40, what="40 records")
    wait_for(lambda: h.committed() == {0: 19, 1: 19}, what="offsets committed")
    assert h.state() is State.RUNNING
    assert Registry.commits["conn"] >= 1
    # order per source partition is kept, key/value/headers/timestamp untouched
    p0 = [m for m in h.producer.log if m.key.startswith(b"k0-")]
    assert [m.value for m in p0] == [f"v0-{n}".encode() for n in range(20)]
    assert p0[3].headers == [("h", b"x")] and p0[3]._ts == 1_700_000_000_003
    assert [n for n, md in Registry.committed_records["conn"] if md is not None][:3] == [0, 1, 2]
    assert sum(b[0] for b in h.metrics.batches) == 40 and h.metrics.acked == 40
    assert [s.topic for s in h.status.get_topics("conn")] == ["out"]
    t.stop()
    assert t.await_stop(3)
    assert h.state() is State.UNASSIGNED
    assert Registry.stopped["conn"] == 1


def test_offsets_only_behind_acknowledged_prefix(h: Harness) -> None:
    h.producer.hold = True
    t = h.task({"records": "5", "partitions": "0"})
    t.start()
    wait_for(lambda: len(h.producer.queue) == 5, what="5 queued")
    commit_rounds(h, 3)  # several offset commits pass with nothing acknowledged
    assert h.committed()[0] is None
    # acknowledge out of order: only records 0..1 form a prefix
    with h.producer.lock:
        queue = h.producer.queue
        h.producer.queue = []
    for idx in (0, 1, 3):
        msg, cb = queue[idx]
        msg._offset = idx
        cb(None, msg)
    t._maybe_commit()  # the loop commits on its own too; make it deterministic here
    wait_for(lambda: h.committed()[0] == 1, what="prefix offset 1")
    commit_rounds(h, 3)  # record 3 is acknowledged too, but 2 is not: the commits stay at 1
    assert h.committed()[0] == 1
    for idx in (2, 4):
        msg, cb = queue[idx]
        cb(None, msg)
    wait_for(lambda: h.committed()[0] == 4, what="all committed")


def test_producer_failure_fails_task_under_none_without_committing_past_it(h: Harness) -> None:
    h.producer.fail_topics.add("out")
    t = h.task({"records": "3", "partitions": "0"})
    t.start()
    wait_for(lambda: h.state() is State.FAILED, what="FAILED")
    status = h.status.get_task(TID)
    assert status is not None and status.trace and "not authorized" in status.trace
    assert h.committed()[0] is None
    assert t.is_failed


def test_producer_failure_skipped_under_all(h: Harness) -> None:
    h.producer.fail_topics.add("out")
    t = h.task({"records": "3", "partitions": "0"}, tolerance=ToleranceType.ALL)
    t.start()
    wait_for(lambda: h.committed()[0] == 2, what="offsets past skipped records")
    assert h.state() is State.RUNNING
    assert t.tolerance.total_skipped == 3
    assert [md for _, md in Registry.committed_records["conn"]] == [None, None, None]


def test_converter_error_tolerance(h: Harness) -> None:
    class Boom:
        def apply(self, record: Any) -> Any:
            if record.source_offset["n"] == 2:
                raise ValueError("cannot transform")
            return record

        def close(self) -> None:
            pass

    chain = TransformationChain([_stage(Boom())])
    t = h.task({"records": "5", "partitions": "0"}, tolerance=ToleranceType.ALL, chain=chain)
    t.start()
    wait_for(lambda: h.committed()[0] == 4, what="all offsets")
    assert len(h.producer.log) == 4 and t.tolerance.total_skipped == 1
    h2 = Harness()
    t2 = h2.task({"records": "5", "partitions": "0"}, chain=TransformationChain([_stage(Boom())]))
    h.tasks.append(t2)
    t2.start()
    wait_for(lambda: h2.state() is State.FAILED, what="FAILED under none")
    status = h2.status.get_task(TID)
    assert status is not None and "Tolerance exceeded" in (status.trace or "")
    # records before the bad one were committed at failure (final commit of a failing task)
    wait_for(lambda: h2.committed()[0] == 1, what="prefix committed")


def _stage(transformation: Any) -> Any:
    from connect_core.transforms.chain import TransformationStage

    return TransformationStage(transformation)


def test_filtered_records_are_committed_without_sending(h: Harness) -> None:
    class DropOdd:
        def apply(self, record: Any) -> Any:
            return None if record.source_offset["n"] % 2 else record

        def close(self) -> None:
            pass

    t = h.task({"records": "6", "partitions": "0"}, chain=TransformationChain([_stage(DropOdd())]))
    t.start()
    wait_for(lambda: h.committed()[0] == 5, what="offsets incl. filtered")
    assert [m.key for m in h.producer.log] == [b"k0-0", b"k0-2", b"k0-4"]


def test_back_pressure_on_full_queue(h: Harness) -> None:
    h.producer.max_queue = 3
    t = h.task({"records": "50", "partitions": "0"})
    t.start()
    wait_for(lambda: h.committed()[0] == 49, what="all committed")
    assert h.producer.buffer_errors > 0
    assert [m.key for m in h.producer.log] == [f"k0-{n}".encode() for n in range(50)]


def test_pause_and_resume(h: Harness) -> None:
    t = h.task({"records": "1000000", "batch": "10", "partitions": "0", "poll.sleep": "0.01"})
    t.start()
    wait_for(lambda: len(h.producer.log) > 50, what="some records")
    t.transition_to(TargetState.PAUSED)
    wait_for(lambda: h.state() is State.PAUSED, what="PAUSED")
    commit_rounds(h, 2)  # the loop goes round while paused (it keeps committing offsets): nothing in flight now
    n = len(h.producer.log)
    commit_rounds(h, 4)  # an unpaused loop would have produced 10 records in each of these rounds
    assert len(h.producer.log) == n
    t.transition_to(TargetState.STARTED)
    wait_for(lambda: h.state() is State.RUNNING, what="RUNNING again")
    wait_for(lambda: len(h.producer.log) > n, what="more records")


def test_initially_paused_task_starts_only_on_resume(h: Harness) -> None:
    t = h.task({"records": "3", "partitions": "0"}, state=TargetState.PAUSED)
    t.start()
    wait_for(lambda: h.state() is State.PAUSED, what="PAUSED")
    assert Registry.started["conn"] == 0
    t.transition_to(TargetState.STARTED)
    wait_for(lambda: h.committed()[0] == 2, what="committed after resume")


def test_stop_flushes_outstanding_records_and_commits(h: Harness) -> None:
    t = h.task({"records": "10", "partitions": "0"}, flush_interval=3600)
    t.start()
    wait_for(lambda: len(h.producer.log) == 10, what="10 records")
    assert h.committed()[0] is None  # interval not reached yet
    t.stop()
    assert t.await_stop(3)
    assert h.committed()[0] == 9
    assert Registry.commits["conn"] == 1


def test_cancelled_task_never_writes_status_or_offsets(h: Harness) -> None:
    h.producer.hold = True
    t = h.task({"records": "5", "partitions": "0"}, flush_interval=3600)
    t.start()
    wait_for(lambda: len(h.producer.queue) == 5, what="queued")
    t.cancel()
    assert t.await_stop(3)
    # a successor reports RUNNING; the abandoned instance must not overwrite it afterwards
    h.recorder.on_task_startup(TID)
    h.producer.hold = False
    h.producer.flush()  # runs the held delivery callbacks here; the task's thread has already ended
    assert h.state() is State.RUNNING
    assert h.committed()[0] is None
    assert t.is_cancelled


def test_poll_exception_fails_task_with_trace(h: Harness) -> None:
    t = h.task({"records": "10", "partitions": "0", "fail.at": "4", "batch": "1"})
    t.start()
    wait_for(lambda: h.state() is State.FAILED, what="FAILED")
    status = h.status.get_task(TID)
    assert status is not None and "boom at 4" in (status.trace or "")
    wait_for(lambda: h.committed()[0] == 3, what="committed before failure")
