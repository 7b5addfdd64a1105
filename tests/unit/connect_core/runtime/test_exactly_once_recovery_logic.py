"""What an exactly-once task loop does when its transactional producer's commit fails, against an in-memory
producer (the broker-side triggers are in tests/integration and the broker-restart e2e): a fatal error
that is not fencing asks the worker for a fresh instance while the budget lasts; past it, fencing, and
time-outs (a thawed zombie meets them too) fail the task as before."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaError, KafkaException

from connect_core.converters.byte_array import ByteArrayConverter
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.runtime.exactly_once_config import ExactlyOnceSettings
from connect_core.runtime.exactly_once_source_task import ExactlyOnceWorkerSourceTask
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.tolerance import RetryWithToleranceOperator
from connect_core.runtime.transaction_errors import RecoveryBudget
from connect_core.storage.memory import MemoryOffsetBackingStore, MemoryStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from tests.worker_plugins import CountingSourceTask, FakeProducer, Registry

TID = ConnectorTaskId("conn", 0)


class TxnProducer(FakeProducer):
    """The in-memory producer with transactions; the ``fail_commit``-th commit raises ``error``."""

    def __init__(self, error: KafkaError, fail_commit: int = 2) -> None:
        super().__init__()
        self.error = error
        self.fail_commit = fail_commit
        self.commits = 0
        self.aborts = 0
        self.timeouts: list[float] = []  # of every init and commit

    def init_transactions(self, timeout: float = 0) -> None:
        self.timeouts.append(timeout)

    def begin_transaction(self) -> None:
        pass

    def commit_transaction(self, timeout: float = 0) -> None:
        self.timeouts.append(timeout)
        self.commits += 1
        if self.commits == self.fail_commit:
            raise KafkaException(self.error)
        self.flush()

    def abort_transaction(self, timeout: float = 0) -> None:
        self.aborts += 1
        with self.lock:
            self.queue.clear()


def _task(
    producer: TxnProducer,
    status: MemoryStatusBackingStore,
    budget: RecoveryBudget,
    restarts: list[ExactlyOnceWorkerSourceTask],
    **extra: Any,
) -> ExactlyOnceWorkerSourceTask:
    Registry.reset()
    store = MemoryOffsetBackingStore()
    conv = ByteArrayConverter()

    def restarter(old: ExactlyOnceWorkerSourceTask) -> bool:
        restarts.append(old)
        return True

    return ExactlyOnceWorkerSourceTask(
        TID, CountingSourceTask(),
        {"connector.name": "conn", "topic": "out", "partitions": "0", "records": "1000", "batch": "5",
         "poll.delay": "0.01"},
        producer=producer, offset_reader=OffsetStorageReaderImpl(store, "conn"),
        offset_writer=OffsetStorageWriter(store, "conn"), listener=StatusRecorder(status, "w1"),
        key_converter=conv, value_converter=conv, header_converter=conv, transformation_chain=None,
        tolerance=RetryWithToleranceOperator(0, 1000), initial_state=TargetState.STARTED,
        offset_flush_interval_s=1.0, offset_flush_timeout_s=1.0, status_store=status,
        transactional_id="g-conn-0", offsets_topic="offsets", settings=ExactlyOnceSettings.from_props({}, 1.0),
        recovery=budget, restarter=restarter, **extra,
    )  # fmt: skip


def _run(
    error: KafkaError, budget: RecoveryBudget
) -> tuple[ExactlyOnceWorkerSourceTask, MemoryStatusBackingStore, list[ExactlyOnceWorkerSourceTask], TxnProducer]:
    producer = TxnProducer(error)
    status = MemoryStatusBackingStore()
    restarts: list[ExactlyOnceWorkerSourceTask] = []
    task = _task(producer, status, budget, restarts)
    task.start()
    assert task.await_stop(30.0), "the loop ends on the failed commit"
    return task, status, restarts, producer


def _wait(cond: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 30.0
    while not cond() and time.monotonic() < deadline:
        time.sleep(0.01)


def _state(status: MemoryStatusBackingStore) -> Any:
    found = status.get_task(TID)
    return None if found is None else found.state


def test_a_fatal_error_that_is_not_fencing_asks_for_a_fresh_instance() -> None:
    error = KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "out of order sequence", fatal=True)
    task, status, restarts, producer = _run(error, RecoveryBudget(5, 600.0))
    assert restarts == [task]
    assert task.restart_cause is not None and "out of order sequence" in str(task.restart_cause)
    assert not task.is_failed
    assert _state(status) is State.RUNNING  # the successor reports from here on; this one said nothing more
    assert producer.aborts == 1  # what was open is aborted
    assert producer.purged  # and nothing of the given-up epoch is sent any more


def test_past_its_budget_the_task_fails_saying_so() -> None:
    error = KafkaError(KafkaError.UNKNOWN_PRODUCER_ID, "unknown producer id", fatal=True)
    task, status, restarts, _ = _run(error, RecoveryBudget(0, 600.0))
    assert restarts == [] and task.is_failed
    _wait(lambda: _state(status) is State.FAILED)
    found = status.get_task(TID)
    assert found is not None and found.state is State.FAILED
    assert "failed more often than the 0 recoveries within 600 s it recovers from" in (found.trace or "")


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (KafkaError.PRODUCER_FENCED, "was fenced out"),
        (KafkaError._TIMED_OUT, "Failed to commit the transaction of task conn-0"),  # a thawed zombie's end too
    ],
)
def test_fencing_and_time_outs_fail_the_task_as_before(code: int, words: str) -> None:
    task, status, restarts, _ = _run(KafkaError(code, "the commit failed"), RecoveryBudget(5, 600.0))
    assert restarts == [] and task.is_failed and task.restart_cause is None
    _wait(lambda: _state(status) is State.FAILED)
    found = status.get_task(TID)
    assert found is not None and words in (found.trace or "")


def test_init_and_commit_wait_as_long_as_the_task_s_call_timeout() -> None:
    producer = TxnProducer(KafkaError(KafkaError._TIMED_OUT, "commit timed out"), fail_commit=3)
    status = MemoryStatusBackingStore()
    task = _task(producer, status, RecoveryBudget(5, 600.0), [], call_timeout_s=7.5)
    assert task.call_timeout_s == 7.5
    task.start()
    assert task.await_stop(30.0), "the loop ends on the failed commit"
    assert producer.timeouts and set(producer.timeouts) == {7.5}, producer.timeouts
