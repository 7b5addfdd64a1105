"""The worker's message-copy loop against an in-memory producer: runs, acks, offsets, tolerance, fallback."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_core.api.records import SourceRecord
from connect_core.api.task import SourceTask
from connect_core.converters.byte_array import ByteArrayConverter
from connect_core.model import ConnectorTaskId, State
from connect_core.runtime.connector_config import ToleranceType
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.tolerance import RetryWithToleranceOperator
from connect_core.runtime.worker_source_task import WorkerSourceTask
from connect_core.storage.api import TaskStatus
from connect_core.storage.memory import MemoryOffsetBackingStore, MemoryStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from tests.worker_plugins import FakeProducer

TID = ConnectorTaskId("copy", 0)


class Message:
    """A consumed message, as confluent_kafka.Message answers."""

    def __init__(
        self,
        topic: str,
        partition: int,
        offset: int,
        value: bytes | None = b"v",
        *,
        error: Any = None,
        headers: list[tuple[str, bytes | None]] | None = None,
        ts: int = 1000,
    ) -> None:
        self._topic, self._partition, self._offset = topic, partition, offset
        self._value, self._error, self._headers, self._ts = value, error, headers, ts

    def error(self) -> Any:
        return self._error

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def key(self) -> bytes:
        return f"k{self._offset}".encode()

    def value(self) -> bytes | None:
        return self._value

    def headers(self) -> list[tuple[str, bytes | None]] | None:
        return self._headers

    def timestamp(self) -> tuple[int, int]:
        return (1, self._ts)


class PositionalProducer(FakeProducer):
    """FakeProducer with confluent_kafka's positional produce signature."""

    positional_produce = True
    budget: int | None = None  # delivery reports the worker's polls may still serve (None: all)

    def _deliver(self, limit: int | None = None) -> int:
        if self.budget is not None:
            limit = self.budget if limit is None else min(limit, self.budget)
        served = super()._deliver(limit)
        if self.budget is not None:
            self.budget -= served
        return served

    def produce(self, topic: str, value: Any = None, key: Any = None, partition: int = -1, callback: Any = None,
                on_delivery: Any = None, timestamp: int = 0, headers: Any = None) -> None:  # fmt: skip
        super().produce(topic, value, key, partition, callback or on_delivery, timestamp, headers)


class Route:
    def __init__(self, topic: str, partition: int) -> None:
        self.topic = f"remote.{topic}"
        self.partition = partition
        self.source_partition = {"topic": topic, "partition": partition}
        self.dispatched_runs: list[tuple[int, int, int, list[int] | None]] = []
        self.acked_runs: list[tuple[int, int, int, int, int]] = []

    def source_offset(self, upstream_offset: int) -> dict[str, Any]:
        return {"offset": upstream_offset}

    def dispatched(self, run: Any) -> None:
        self.dispatched_runs.append((run.count, run.first_upstream, run.last_upstream, run.upstream_offsets))

    def acknowledged(self, run: Any) -> None:
        self.acked_runs.append((run.count, run.skipped, run.first_downstream, run.last_downstream, run.value_bytes))


class CopyTask(SourceTask):
    """Hands out prepared batches of messages; ``poll()`` (the record path) converts them."""

    def __init__(self, batches: list[list[Message]]) -> None:
        self.batches = batches
        self.routes: dict[tuple[str, int], Route] = {}
        self.errors: list[Any] = []
        self.polled_records = 0
        self.converted = 0
        self.commits = 0  # offset-commit rounds (commit() follows each one, written or not)

    def start(self, props: dict[str, str]) -> None:
        pass

    def commit(self) -> None:
        self.commits += 1

    def stop(self) -> None:
        pass

    def poll_messages(self) -> list[Any] | None:
        return self.batches.pop(0) if self.batches else None

    def poll(self) -> list[SourceRecord] | None:
        batch = self.poll_messages()
        if batch is None:
            return None
        records = self.to_source_records(batch)
        self.polled_records += len(records)
        return records

    def route(self, topic: str, partition: int) -> Route:
        key = (topic, partition)
        if key not in self.routes:
            self.routes[key] = Route(topic, partition)
        return self.routes[key]

    def message_error(self, message: Any) -> None:
        self.errors.append(message.error())

    def to_source_records(self, messages: list[Any]) -> list[SourceRecord]:
        out = []
        for m in messages:
            if m.error() is not None:
                continue
            route = self.route(m.topic(), m.partition())
            out.append(
                SourceRecord(
                    route.source_partition,
                    route.source_offset(m.offset()),
                    route.topic,
                    m.partition(),
                    m.key(),
                    m.value(),
                    m.headers(),
                    m.timestamp()[1],
                )
            )
        self.converted += len(out)
        return out


def wait_for(cond: Callable[[], bool], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.01)


class Harness:
    def __init__(self) -> None:
        self.store = MemoryOffsetBackingStore()
        self.status = MemoryStatusBackingStore()
        self.producer = PositionalProducer()
        self.tasks: list[WorkerSourceTask] = []

    def run(self, task: CopyTask, *, tolerance: ToleranceType = ToleranceType.NONE,
            ordered: bool = True) -> WorkerSourceTask:  # fmt: skip
        conv = ByteArrayConverter()
        worker_task = WorkerSourceTask(
            TID, task, {}, producer=self.producer,
            offset_reader=OffsetStorageReaderImpl(self.store, "copy"),
            offset_writer=OffsetStorageWriter(self.store, "copy"),
            listener=StatusRecorder(self.status, "w1"),
            key_converter=conv, value_converter=conv, header_converter=conv,
            tolerance=RetryWithToleranceOperator(0, 1000, tolerance),
            offset_flush_interval_s=0.05, offset_flush_timeout_s=1.0,
            status_store=self.status, ordered_delivery=ordered,
        )  # fmt: skip
        self.tasks.append(worker_task)
        worker_task.start()
        return worker_task

    def task_status(self) -> TaskStatus | None:
        return self.status.get_task(TID)

    def committed(self, topic: str, partition: int) -> int | None:
        offset = OffsetStorageReaderImpl(self.store, "copy").offset({"topic": topic, "partition": partition})
        return None if offset is None else int(offset["offset"])


@pytest.fixture
def h() -> Iterator[Harness]:
    harness = Harness()
    yield harness
    for t in harness.tasks:
        t.stop()
        t.await_stop(2)


def test_runs_are_produced_in_order_acknowledged_and_committed(h: Harness) -> None:
    batch = (
        [Message("t", 0, o) for o in range(10, 13)]
        + [Message("t", 1, o) for o in range(5)]
        + [Message("t", 0, 13, headers=[("h", b"x"), ("h", None)])]
    )
    task = CopyTask([batch])
    h.run(task)
    wait_for(lambda: h.committed("t", 0) == 13 and h.committed("t", 1) == 4)
    assert task.polled_records == task.converted == 0  # no SourceRecord was built
    assert [(m.topic(), m.partition(), m.key, m.value) for m in h.producer.log] == [
        ("remote.t", m.partition(), m.key(), m.value()) for m in batch
    ]
    assert h.producer.log[-1].headers == [("h", b"x"), ("h", None)]
    assert h.producer.log[0]._ts == 1000
    p0, p1 = task.routes["t", 0], task.routes["t", 1]
    assert p0.dispatched_runs == [(3, 10, 12, None), (1, 13, 13, None)]
    assert p1.dispatched_runs == [(5, 0, 4, None)]
    # (count, skipped, first downstream, last downstream, value bytes)
    assert p0.acked_runs == [(3, 0, 0, 2, 3), (1, 0, 3, 3, 1)]
    assert p1.acked_runs == [(5, 0, 0, 4, 5)]


def test_a_run_not_fully_delivered_is_not_committed(h: Harness) -> None:
    h.producer.budget = 3  # three of four reports
    task = CopyTask([[Message("t", 0, o) for o in range(4)]])
    worker_task = h.run(task)
    wait_for(lambda: len(h.producer.log) == 3)
    rounds = task.commits
    wait_for(lambda: task.commits >= rounds + 2)  # a whole commit round ran after the three reports
    assert h.committed("t", 0) is None
    assert task.routes["t", 0].acked_runs == []
    h.producer.budget = None
    wait_for(lambda: h.committed("t", 0) == 3)
    assert worker_task.submitted.acked_total == 1  # one handle per run


def test_gaps_in_upstream_offsets_are_reported(h: Harness) -> None:
    task = CopyTask([[Message("t", 0, o) for o in (0, 1, 5, 6)]])
    h.run(task)
    wait_for(lambda: h.committed("t", 0) == 6)
    assert task.routes["t", 0].dispatched_runs == [(4, 0, 6, [0, 1, 5, 6])]


def test_error_messages_go_to_the_task_and_split_runs(h: Harness) -> None:
    oops = object()
    batch = [Message("t", 0, 0), Message("t", 0, 1), Message("t", 0, -1, error=oops), Message("t", 0, 2)]
    task = CopyTask([batch])
    h.run(task)
    wait_for(lambda: h.committed("t", 0) == 2)
    assert task.errors == [oops]
    assert task.routes["t", 0].dispatched_runs == [(2, 0, 1, None), (1, 2, 2, None)]


def test_failed_delivery_fails_the_task_and_commits_only_earlier_runs(h: Harness) -> None:
    task = CopyTask([[Message("ok", 0, 0), Message("ok", 0, 1)], [Message("denied", 0, 7)]])
    h.producer.fail_topics.add("remote.denied")
    h.run(task)
    wait_for(lambda: h.task_status() is not None and h.task_status().state is State.FAILED)  # type: ignore[union-attr]
    assert h.committed("ok", 0) == 1
    assert h.committed("denied", 0) is None
    assert "not authorized" in (h.task_status().trace or "")  # type: ignore[union-attr]


def test_tolerated_failure_is_skipped_and_the_run_committed(h: Harness) -> None:
    task = CopyTask([[Message("denied", 0, 3), Message("denied", 0, 4)]])
    h.producer.fail_topics.add("remote.denied")
    worker_task = h.run(task, tolerance=ToleranceType.ALL)
    wait_for(lambda: h.committed("denied", 0) == 4)
    assert task.routes["denied", 0].acked_runs == [(2, 2, -1, -1, 2)]
    assert worker_task.tolerance.total_failures == 2


def test_without_ordered_delivery_the_record_path_is_used(h: Harness) -> None:
    task = CopyTask([[Message("t", 0, o) for o in range(3)]])
    h.run(task, ordered=False)
    wait_for(lambda: h.committed("t", 0) == 2)
    assert task.polled_records == 3
    assert task.routes["t", 0].dispatched_runs == []
