"""Record types on the source path.

These objects are created once per record on the hot path, so they use ``__slots__`` and keep
the caller's containers as they are (no defensive copies).
"""

from __future__ import annotations

from typing import Any

# confluent-kafka's header representation: a list of (key, value) pairs; duplicates allowed.
# Values are bytes as read from Kafka; transformations may set Connect values (e.g. text) that the
# header converter turns into bytes.
Header = tuple[str, Any]


class SourceRecord:
    """A record produced by a source task: where it came from and where it goes.

    ``source_partition`` and ``source_offset`` are JSON-serialisable maps, exactly as in Kafka
    Connect; the runtime stores ``source_offset`` under ``[connector, source_partition]``.
    ``kafka_partition`` None lets the producer's partitioner choose. ``timestamp`` is epoch ms
    or None (the producer stamps it).
    """

    __slots__ = (
        "headers",
        "kafka_partition",
        "key",
        "key_schema",
        "source_offset",
        "source_partition",
        "timestamp",
        "topic",
        "value",
        "value_schema",
    )

    def __init__(
        self,
        source_partition: dict[str, Any] | None,
        source_offset: dict[str, Any] | None,
        topic: str,
        kafka_partition: int | None = None,
        key: Any = None,
        value: Any = None,
        headers: list[Header] | None = None,
        timestamp: int | None = None,
        key_schema: Any = None,
        value_schema: Any = None,
    ) -> None:
        self.source_partition = source_partition
        self.source_offset = source_offset
        self.topic = topic
        self.kafka_partition = kafka_partition
        self.key = key
        self.value = value
        self.headers = headers
        self.timestamp = timestamp
        self.key_schema = key_schema
        self.value_schema = value_schema

    def new_record(
        self,
        topic: str | None = None,
        kafka_partition: int | None = None,
        key: Any = None,
        value: Any = None,
        headers: list[Header] | None = None,
        timestamp: int | None = None,
    ) -> SourceRecord:
        """Copy with some fields replaced (what transformations use); None keeps the field."""
        return SourceRecord(
            self.source_partition,
            self.source_offset,
            self.topic if topic is None else topic,
            self.kafka_partition if kafka_partition is None else kafka_partition,
            self.key if key is None else key,
            self.value if value is None else value,
            self.headers if headers is None else headers,
            self.timestamp if timestamp is None else timestamp,
            self.key_schema,
            self.value_schema,
        )

    def __repr__(self) -> str:
        return (
            f"SourceRecord(topic={self.topic!r}, partition={self.kafka_partition}, "
            f"source_partition={self.source_partition!r}, source_offset={self.source_offset!r})"
        )


class RecordMetadata:
    """What the target broker acknowledged for one produced record."""

    __slots__ = ("offset", "partition", "timestamp", "topic")

    def __init__(self, topic: str, partition: int, offset: int, timestamp: int | None = None) -> None:
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.timestamp = timestamp

    def __repr__(self) -> str:
        return f"RecordMetadata({self.topic}-{self.partition}@{self.offset})"
