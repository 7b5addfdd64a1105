"""Task SPI, following Kafka Connect's ``Task``/``SourceTask`` contracts."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Protocol

from connect_core.api.records import RecordMetadata, SourceRecord


class OffsetStorageReader(Protocol):
    """Reads committed source offsets of the task's connector."""

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None: ...

    def offsets(self, partitions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """Offsets for several partitions, in the given order; None where nothing was committed."""
        ...


class TransactionContext(Protocol):
    """Connector-defined transaction boundaries (KIP-618, ``transaction.boundary=connector``).

    Java's ``TransactionContext``: a task asks for its open transaction to be committed or aborted;
    the runtime does it once the batch the task returned from ``poll`` (or that holds ``record``)
    was dispatched. An aborted transaction's records are discarded but its source offsets are
    still committed (in a transaction of their own), so those records are not read again.
    """

    def commit_transaction(self, record: SourceRecord | None = None) -> None: ...

    def abort_transaction(self, record: SourceRecord | None = None) -> None: ...


class SourceTaskContext(Protocol):
    """What the runtime offers a running source task."""

    def offset_storage_reader(self) -> OffsetStorageReader: ...

    def configs(self) -> dict[str, str]: ...

    def transaction_context(self) -> TransactionContext | None:
        """The task's TransactionContext when its connector defines transaction boundaries, else None."""
        ...


class Task(ABC):
    @abstractmethod
    def start(self, props: dict[str, str]) -> None: ...

    @abstractmethod
    def stop(self) -> None:
        """Called from another thread than ``poll``; must make a blocked ``poll`` return soon."""

    def version(self) -> str:
        from connect_core import __version__

        return __version__


class SourceTask(Task):
    """Polls records from somewhere; the runtime produces them and commits their offsets."""

    context: SourceTaskContext

    def initialize(self, context: SourceTaskContext) -> None:
        self.context = context

    @abstractmethod
    def poll(self) -> list[SourceRecord] | None:
        """Return the next batch, or None/[] when nothing is available right now."""

    def commit(self) -> None:
        """Called after source offsets were flushed (every offset.flush.interval.ms and at stop)."""

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Called once per record after the target acknowledged it (metadata None if filtered out).

        Runs on the producer's delivery path: keep it cheap.
        """
