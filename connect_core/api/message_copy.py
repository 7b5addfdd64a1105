"""Optional source-task interface: copy consumed Kafka messages to Kafka as they are (MirrorMaker).

Connect's per-record contract (``poll`` -> SourceRecord -> converters -> produce -> ``commit_record``)
costs Python work per record that a byte-for-byte copy does not need. A task that also implements
:class:`MessageCopyTask` lets the worker take the consumer's messages directly. The worker uses it
only when nothing could change a record on the way: no transformations, ByteArrayConverter for
keys, values and headers, and a producer that keeps each partition in order (idempotent, or one
request in flight); otherwise it calls ``poll()`` and the task behaves as any source task.

The worker then reports per *run* (consecutive messages of one source partition in one poll)
instead of per record: :meth:`CopyRoute.dispatched` once the run was handed to the producer and
:meth:`CopyRoute.acknowledged` once every record of it was delivered. A run's source offset is
committed only when the whole run is acknowledged.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from connect_core.api.records import SourceRecord


class ConsumedMessage(Protocol):
    """What the worker reads of a consumed message (``confluent_kafka.Message``)."""

    def error(self) -> Any: ...

    def topic(self) -> str | None: ...

    def partition(self) -> int | None: ...

    def offset(self) -> int | None: ...

    def key(self) -> bytes | None: ...

    def value(self) -> bytes | None: ...

    def headers(self) -> list[tuple[str, bytes | None]] | None: ...

    def timestamp(self) -> tuple[int, int]: ...


class CopyRun(Protocol):
    """A run as the worker reports it (offsets are Kafka offsets; -1 where unknown)."""

    route: CopyRoute
    count: int  # records in the run
    first_upstream: int
    last_upstream: int
    upstream_offsets: list[int] | None  # every record's offset, only when they are not consecutive
    value_bytes: int
    first_timestamp: int  # ms; -1 when the message had none
    last_timestamp: int
    delivered: int  # delivery reports served so far (successes and tolerated failures)
    skipped: int  # tolerated failures (errors.tolerance=all)
    first_downstream: int  # offset of the first record written (-1 before it was)
    last_downstream: int  # offset of the last record written, set when the run is acknowledged


class CopyRoute(Protocol):
    """Where the messages of one source partition go, and what the task wants to hear of them."""

    topic: str
    partition: int  # -1: the producer's partitioner decides
    source_partition: dict[str, Any]

    def source_offset(self, upstream_offset: int) -> dict[str, Any]:
        """The Connect source offset to commit once the record at ``upstream_offset`` is written."""
        ...

    def dispatched(self, run: CopyRun) -> None:
        """The run was handed to the producer (task thread; per-batch metrics belong here)."""
        ...

    def acknowledged(self, run: CopyRun) -> None:
        """Every record of the run was delivered (or skipped by errors.tolerance=all)."""
        ...


@runtime_checkable
class MessageCopyTask(Protocol):
    """Implemented, next to ``SourceTask``, by a task whose records are consumed messages copied as they are."""

    def poll_messages(self) -> list[Any] | None:
        """The next consumed messages (``ConsumedMessage``), or None when there are none right now."""
        ...

    def route(self, topic: str, partition: int) -> CopyRoute:
        """The route of a source partition this task consumes (the same object for every call)."""
        ...

    def message_error(self, message: Any) -> None:
        """A consumed message that carries an error instead of a record; raise to fail the task."""
        ...

    def to_source_records(self, messages: list[Any]) -> list[SourceRecord]:
        """The same messages as SourceRecords, for the general path (errors, topic creation, retries)."""
        ...


__all__ = ["ConsumedMessage", "CopyRoute", "CopyRun", "MessageCopyTask"]
