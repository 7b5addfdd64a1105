"""The batch copy loop's acknowledgements go through the worker's one rule for copied runs: a batch the target
holds becomes committable, its route hears of it once and its topic is active; a refused batch fails the task
and is never committable."""

from __future__ import annotations

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
