"""Sink SPI, following Kafka Connect's ``SinkRecord``/``SinkTask``/``SinkTaskContext`` contracts.

A sink task receives records consumed from Kafka (already converted and transformed), writes them
somewhere and tells the runtime, through :meth:`SinkTask.pre_commit`, which offsets are safe to
commit to its consumer group. Offsets are those of the record *as consumed*: transformations may
change ``topic``/``kafka_partition`` but ``original_topic``/``original_kafka_partition``/
``original_kafka_offset`` stay, and the runtime always commits by the originals.
"""

from __future__ import annotations

from abc import abstractmethod
from concurrent.futures import Future
from typing import Any, Protocol

from connect_core.api.records import Header
from connect_core.api.task import Task
from connect_core.model import TopicPartition

TOPICS_CONFIG = "topics"
TOPICS_REGEX_CONFIG = "topics.regex"


class SinkRecord:
    """One consumed record handed to :meth:`SinkTask.put`.

    ``kafka_offset`` is its offset in the consumed partition; ``timestamp_type`` is Kafka's
    (``"CreateTime"``, ``"LogAppendTime"`` or ``"NoTimestampType"``).
    """

    __slots__ = (
        "headers",
        "kafka_offset",
        "kafka_partition",
        "key",
        "key_schema",
        "original_kafka_offset",
        "original_kafka_partition",
        "original_topic",
        "timestamp",
        "timestamp_type",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        topic: str,
        partition: int,
        key_schema: Any,
        key: Any,
        value_schema: Any,
        value: Any,
        kafka_offset: int,
        timestamp: int | None = None,
        timestamp_type: str = "CreateTime",
        headers: list[Header] | None = None,
        original_topic: str | None = None,
        original_kafka_partition: int | None = None,
        original_kafka_offset: int | None = None,
    ) -> None:
        self.topic = topic
        self.kafka_partition = partition
        self.key_schema = key_schema
        self.key = key
        self.value_schema = value_schema
        self.value = value
        self.kafka_offset = kafka_offset
        self.timestamp = timestamp
        self.timestamp_type = timestamp_type
        self.headers = headers
        self.original_topic = topic if original_topic is None else original_topic
        self.original_kafka_partition = partition if original_kafka_partition is None else original_kafka_partition
        self.original_kafka_offset = kafka_offset if original_kafka_offset is None else original_kafka_offset

    def new_record(
        self,
        topic: str | None = None,
        kafka_partition: int | None = None,
        key: Any = None,
        value: Any = None,
        headers: list[Header] | None = None,
        timestamp: int | None = None,
        key_schema: Any = None,
        value_schema: Any = None,
    ) -> SinkRecord:
        """Copy with some fields replaced (what transformations use); None keeps the field.

        The copy keeps the original topic, partition and offset.
        """
        return SinkRecord(
            self.topic if topic is None else topic,
            self.kafka_partition if kafka_partition is None else kafka_partition,
            self.key_schema if key_schema is None else key_schema,
            self.key if key is None else key,
            self.value_schema if value_schema is None else value_schema,
            self.value if value is None else value,
            self.kafka_offset,
            self.timestamp if timestamp is None else timestamp,
            self.timestamp_type,
            self.headers if headers is None else headers,
            self.original_topic,
            self.original_kafka_partition,
            self.original_kafka_offset,
        )

    @property
    def original_partition(self) -> TopicPartition:
        return TopicPartition(self.original_topic, self.original_kafka_partition)

    def __repr__(self) -> str:
        return (
            f"SinkRecord(topic={self.topic!r}, partition={self.kafka_partition}, offset={self.kafka_offset}, "
            f"original={self.original_topic}-{self.original_kafka_partition}@{self.original_kafka_offset})"
        )


class ErrantRecordReporter(Protocol):
    """Reports a record the task could not write (Java ``ErrantRecordReporter``).

    Under ``errors.tolerance=all`` the record goes to the dead-letter queue (if one is configured)
    and is logged when ``errors.log.enable`` is set; under ``none`` the task fails. The returned
    future completes when the DLQ write is acknowledged; the runtime also waits for it before
    committing offsets past the record.
    """

    def report(self, record: SinkRecord, error: BaseException) -> Future[None]: ...


class SinkTaskContext(Protocol):
    """What the runtime offers a running sink task."""

    def configs(self) -> dict[str, str]: ...

    def offset(self, offsets: dict[TopicPartition, int]) -> None:
        """Rewind/forward consumption: the next records of these partitions start at these offsets."""

    def timeout(self, timeout_ms: int) -> None:
        """After a RetriableError from ``put``, wait this long before the batch is delivered again."""

    def assignment(self) -> set[TopicPartition]: ...

    def pause(self, *partitions: TopicPartition) -> None: ...

    def resume(self, *partitions: TopicPartition) -> None: ...

    def request_commit(self) -> None:
        """Commit offsets as soon as possible rather than at the next ``offset.flush.interval.ms``."""

    def errant_record_reporter(self) -> ErrantRecordReporter | None:
        """The reporter, or None when the connector's error handling does not use one."""
        ...


class SinkTask(Task):
    """Writes consumed records to an external system.

    Lifecycle (one thread): ``initialize(context)``, ``start(props)``, then ``open(partitions)``
    on each assignment, ``put(records)`` for each batch, ``pre_commit(offsets)`` before each offset
    commit, ``close(partitions)`` when partitions are revoked, and ``stop()``. ``put`` may raise
    :class:`~connect_core.api.errors.RetriableError`: the same batch is delivered again later.
    """

    context: SinkTaskContext

    TOPICS_CONFIG = TOPICS_CONFIG
    TOPICS_REGEX_CONFIG = TOPICS_REGEX_CONFIG

    def initialize(self, context: SinkTaskContext) -> None:
        self.context = context

    def open(self, partitions: list[TopicPartition]) -> None:
        """Partitions were assigned to this task: set up writers for them."""

    @abstractmethod
    def put(self, records: list[SinkRecord]) -> None:
        """Write (or buffer) these records; may be called with an empty list."""

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        """Make everything put so far durable (the default :meth:`pre_commit` calls this)."""

    def pre_commit(self, current_offsets: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
        """Offsets safe to commit (the next offset to read per partition); by default flush then all."""
        self.flush(current_offsets)
        return current_offsets

    def close(self, partitions: list[TopicPartition]) -> None:
        """Partitions were revoked (or the task stops): release what was kept for them."""
