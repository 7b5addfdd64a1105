"""What the source-task loop talks to besides the task: its producer, its metrics sink, the topic
creator, the context handed to the task and a listener that ignores status events. Kept apart from
:mod:`~connect_core.runtime.worker_source_task` (the loop itself) so that the worker and the herders
name these without importing the loop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from connect_core.api.task import OffsetStorageReader, TransactionContext
from connect_core.model import ConnectorTaskId
from connect_core.runtime.connector_config import TopicCreationGroup


class TaskMetrics(Protocol):
    """Per-batch observations of one task; implementations must be cheap and must not raise."""

    def record_batch(self, polled: int, value_bytes: int, elapsed_s: float) -> None:
        """A polled batch was dispatched to the producer (``elapsed_s``: poll + dispatch time)."""

    def record_acks(self, acked: int, failed: int) -> None:
        """Delivery reports served since the last call."""

    def record_skipped(self, count: int) -> None:
        """Records dropped by errors.tolerance=all."""

    def record_commit(self, success: bool, duration_s: float) -> None:
        """An offset flush finished."""

    def record_client_error(self, error: str, fatal: bool) -> None:
        """The task's producer reported a client-level error (librdkafka's ``error_cb``: broker down,
        connection timed out...); ``error`` is the Kafka error name. Called from the producer's poll."""


class NoTaskMetrics:
    def record_batch(self, polled: int, value_bytes: int, elapsed_s: float) -> None:
        pass

    def record_acks(self, acked: int, failed: int) -> None:
        pass

    def record_skipped(self, count: int) -> None:
        pass

    def record_commit(self, success: bool, duration_s: float) -> None:
        pass

    def record_client_error(self, error: str, fatal: bool) -> None:
        pass


class ProducerLike(Protocol):
    """The part of confluent_kafka.Producer the loop uses."""

    def produce(self, *args: Any, **kwargs: Any) -> None: ...

    def poll(self, timeout: float = ...) -> int: ...

    def flush(self, timeout: float = ...) -> int: ...

    def purge(self, *args: Any, **kwargs: Any) -> None: ...


#: Creates a topic for a group's settings if it is missing; True if it now exists.
TopicCreator = Callable[[str, TopicCreationGroup | None], bool]


class WorkerSourceTaskContext:
    """What a SourceTask may ask of the runtime: its stored offsets and its configs (Java's context)."""

    def __init__(
        self, reader: OffsetStorageReader, configs: dict[str, str], transactions: TransactionContext | None = None
    ) -> None:
        self._reader = reader
        self._configs = configs
        self._transactions = transactions

    def offset_storage_reader(self) -> OffsetStorageReader:
        return self._reader

    def configs(self) -> dict[str, str]:
        return self._configs

    def transaction_context(self) -> TransactionContext | None:
        """Only exactly-once tasks of a connector with ``transaction.boundary=connector`` have one."""
        return self._transactions


class SilentTaskListener:
    """Status events go nowhere (a task run without a herder, as in tests and benchmarks)."""

    def on_task_startup(self, task: ConnectorTaskId) -> None:
        pass

    def on_task_pause(self, task: ConnectorTaskId) -> None:
        pass

    def on_task_resume(self, task: ConnectorTaskId) -> None:
        pass

    def on_task_shutdown(self, task: ConnectorTaskId) -> None:
        pass

    def on_task_failure(self, task: ConnectorTaskId, error: BaseException) -> None:
        pass
