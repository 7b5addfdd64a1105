"""The batch copy loop's acknowledgements go through the worker's one rule for copied runs: a batch the target
holds becomes committable, its route hears of it once and its topic is active; a refused batch fails the task
and is never committable."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from connect_core.api.batch_copy import CopyBatch
from connect_core.api.records import SourceRecord
from connect_core.api.task import SourceTask
from connect_core.converters.byte_array import ByteArrayConverter
from connect_core.model import ConnectorTaskId
from connect_core.runtime.batch_copy_loop import BatchCopier, BatchRun
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.tolerance import RetryWithToleranceOperator
from connect_core.runtime.worker_source_task import WorkerSourceTask
from connect_core.storage.memory import MemoryOffsetBackingStore, MemoryStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from tests.unit.connect_core.runtime.test_message_copy_loop import PositionalProducer, Route

TID = ConnectorTaskId("batches", 0)


class IdleTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass

    def poll(self) -> list[SourceRecord] | None:
        return None


class BatchProducer:
    """Takes batches; the test answers them (base offset, or an error) through their callbacks."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, int, Any, BatchRun]] = []

    @property
    def in_flight(self) -> int:
        return len(self.sent)

    def send(self, topic: str, partition: int, batch: Any, callback: BatchRun) -> None:
        self.sent.append((topic, partition, batch, callback))

    def poll(self, timeout: float = 0) -> None:
        return None


def batch(base: int, count: int, size: int = 100) -> Any:
    header = SimpleNamespace(
        base_offset=base,
        last_offset=base + count - 1,
        last_offset_delta=count - 1,
        record_count=count,
        size=size,
        base_timestamp=1000,
        max_timestamp=1001,
    )
    return SimpleNamespace(header=header)


class Setup:
    def __init__(self) -> None:
        self.status = MemoryStatusBackingStore()
        store = MemoryOffsetBackingStore()
        conv = ByteArrayConverter()
        self.worker = WorkerSourceTask(
            TID, IdleTask(), {}, producer=PositionalProducer(),
            offset_reader=OffsetStorageReaderImpl(store, "batches"),
            offset_writer=OffsetStorageWriter(store, "batches"),
            listener=StatusRecorder(self.status, "w1"),
            key_converter=conv, value_converter=conv, header_converter=conv,
            tolerance=RetryWithToleranceOperator(0, 1000), status_store=self.status,
        )  # fmt: skip
        self.producer = BatchProducer()
        task: Any = None  # the copier only sends what it is given
        producer: Any = self.producer
        self.copier = BatchCopier(self.worker, task, producer, lambda records: None, lambda: 0, lambda timeout: None)
        self.route = Route("t", 0)

    def committable(self) -> list[Any]:
        return [offset for _partition, offset in self.worker.submitted.committable_offsets().offset_map()]


@pytest.fixture
def s() -> Iterator[Setup]:
    setup = Setup()
    yield setup
    setup.worker.offset_reader.close()


def test_an_acknowledged_batch_is_committable_and_its_route_hears_of_it_once(s: Setup) -> None:
    s.copier.send([CopyBatch(s.route, batch(10, 5)), CopyBatch(s.route, batch(15, 3))], lambda: False)  # type: ignore[arg-type]
    assert s.route.dispatched_runs == [(5, 10, 14, None), (3, 15, 17, None)]
    assert s.copier.bytes_in_flight == 200 and s.worker.submitted.num_unacked == 2
    first = s.producer.sent[0][3]
    first(40, None)  # the target wrote the first batch at 40..44
    # (count, skipped, first downstream, last downstream, value bytes)
    assert s.route.acked_runs == [(5, 0, 40, 44, 100)]
    assert s.committable() == [{"offset": 14}]
    assert s.copier.records_acked == 5 and s.copier.bytes_in_flight == 100
    assert [t.topic for t in s.status.get_topics("batches")] == ["remote.t"]  # the topic is active
    assert s.worker.producer_error is None


def test_a_refused_batch_fails_the_task_and_is_never_committable(s: Setup) -> None:
    s.copier.send([CopyBatch(s.route, batch(0, 4))], lambda: False)  # type: ignore[arg-type]
    refused = RuntimeError("MESSAGE_TOO_LARGE")
    s.producer.sent[0][3](-1, refused)
    assert s.worker.producer_error is refused
    assert s.route.acked_runs == [] and s.committable() == []
    assert s.copier.bytes_in_flight == 0 and s.copier.records_acked == 0
    s.copier.send([CopyBatch(s.route, batch(4, 1))], lambda: False)  # type: ignore[arg-type]
    s.producer.sent[1][3](-1, RuntimeError("later"))
    assert s.worker.producer_error is refused  # the first failure is what the task fails with


class WaitingProducer:
    """A producer whose waits are recorded; ``handle`` is what it says its connections are watched by."""

    def __init__(self, handle: int | None) -> None:
        self.wait_handle = handle
        self.polls: list[float] = []

    def poll(self, timeout: float = 0) -> None:
        self.polls.append(timeout)


class ReadingTask:
    def __init__(self, handle: int | None) -> None:
        self.handle = handle

    def batch_read_handle(self) -> int | None:
        return self.handle


def copier_for(task: ReadingTask, producer: WaitingProducer) -> BatchCopier:
    worker: Any = None
    given_task: Any = task
    given_producer: Any = producer
    return BatchCopier(worker, given_task, given_producer, lambda records: None, lambda: 0, lambda timeout: None)


def test_with_a_read_out_the_wait_ends_at_the_reads_first_data_then_serves_the_target() -> None:
    read_end, source = socket.socketpair()
    target_end, target = socket.socketpair()
    with read_end, source, target_end, target:
        producer = WaitingProducer(target_end.fileno())
        copier = copier_for(ReadingTask(read_end.fileno()), producer)
        source.send(b"fetch answer")
        started = time.monotonic()
        copier.serve_while_reading(5.0)
        assert time.monotonic() - started < 1.0  # woken by the read, not by the timeout
        assert producer.polls == [0]  # the target's loop runs without waiting


def test_with_nothing_ready_the_wait_is_bounded_then_serves_the_target() -> None:
    read_end, source = socket.socketpair()
    target_end, target = socket.socketpair()
    with read_end, source, target_end, target:
        producer = WaitingProducer(target_end.fileno())
        copier = copier_for(ReadingTask(read_end.fileno()), producer)
        started = time.monotonic()
        copier.serve_while_reading(0.05)
        assert time.monotonic() - started >= 0.04
        assert producer.polls == [0]


def test_without_a_read_out_or_a_target_connection_the_producer_waits_alone() -> None:
    no_read = WaitingProducer(7)
    copier_for(ReadingTask(None), no_read).serve_while_reading(0.02)
    assert no_read.polls == [0.02]  # nothing to watch on the source: the producer's own wait, whole
    unconnected = WaitingProducer(None)
    copier_for(ReadingTask(5), unconnected).serve_while_reading(0.02)
    assert unconnected.polls == [0.005]  # a read out that cannot be watched with it: short waits, as before
