"""MM2 record formats: OffsetSync, Checkpoint, Heartbeat, and MM2's Connect source partitions.

The bytes are exactly Kafka's protocol ``Struct`` encoding, so Java MM2 and mm2 read each other's
internal topics: big-endian INT16/INT32/INT64, STRING = INT16 length + UTF-8 (non-nullable, at most
32767 bytes), fields concatenated in order, trailing bytes ignored on read. Checkpoint and Heartbeat
values start with an INT16 version header (only 0 exists; like Java with assertions off, any
version is read as V0); OffsetSync has no header.

=========  ==========================================  ===========================================
record     key                                         value
=========  ==========================================  ===========================================
OffsetSync topic (upstream name), partition:INT32      upstreamOffset:INT64, offset:INT64
Checkpoint group, topic (downstream name), partition   version:INT16, upstreamOffset, offset, metadata
Heartbeat  sourceClusterAlias, targetClusterAlias      version:INT16, timestamp:INT64
=========  ==========================================  ===========================================

No Kafka client is imported: the Spark jobs reuse these.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from connect_core.api.errors import ConnectError
from connect_core.model import TopicPartition  # re-exported: the client layer's users name it from here
from mirror.client.errors import InvalidSourceOffsetError, RecordFormatError

MAX_STRING_LENGTH = 32767
_INT32_MAX = 2**31 - 1

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_OFFSET_SYNC_VALUE = struct.Struct(">qq")
_CHECKPOINT_VALUE_HEAD = struct.Struct(">hqq")
_HEARTBEAT_VALUE = struct.Struct(">hq")

VERSION = 0

# Connect source partition / offset keys (MirrorUtils, Checkpoint, Heartbeat).
SOURCE_CLUSTER_KEY = "cluster"
TOPIC_KEY = "topic"
PARTITION_KEY = "partition"
OFFSET_KEY = "offset"
CONSUMER_GROUP_ID_KEY = "group"
SOURCE_CLUSTER_ALIAS_KEY = "sourceClusterAlias"
TARGET_CLUSTER_ALIAS_KEY = "targetClusterAlias"


class OffsetAndMetadata(NamedTuple):
    """A committed group offset (the next record to read) and its commit metadata."""

    offset: int
    metadata: str = ""


# -- primitive encoding -------------------------------------------------------------------------


def _encode_string(value: str, field: str) -> bytes:
    if not isinstance(value, str):
        raise RecordFormatError(f"Field '{field}' must be a string, got {value!r}")
    data = value.encode("utf-8", "replace")
    if len(data) > MAX_STRING_LENGTH:
        raise RecordFormatError(
            f"String length {len(data)} of field '{field}' is larger than the maximum string length."
        )
    return _I16.pack(len(data)) + data


def _pack(fmt: struct.Struct, *values: int) -> bytes:
    try:
        return fmt.pack(*values)
    except struct.error as e:
        raise RecordFormatError(f"Value out of range for the MM2 wire format: {values!r} ({e})") from e


def _need(buf: bytes, pos: int, n: int, field: str) -> None:
    if pos + n > len(buf):
        raise RecordFormatError(
            f"Error reading field '{field}': need {n} bytes at position {pos}, only {max(len(buf) - pos, 0)} available"
        )


def _read_string(buf: bytes, pos: int, field: str) -> tuple[str, int]:
    _need(buf, pos, 2, field)
    (n,) = _I16.unpack_from(buf, pos)
    pos += 2
    if n < 0:
        raise RecordFormatError(f"Error reading field '{field}': String length {n} cannot be negative")
    _need(buf, pos, n, field)
    return buf[pos : pos + n].decode("utf-8", "replace"), pos + n


def _read_i32(buf: bytes, pos: int, field: str) -> tuple[int, int]:
    _need(buf, pos, 4, field)
    return _I32.unpack_from(buf, pos)[0], pos + 4


def _bytes(data: Any, what: str) -> bytes:
    if data is None:
        raise RecordFormatError(f"Record {what} is null")
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise RecordFormatError(f"Record {what} must be bytes, got {type(data).__name__}")


# -- records ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """Upstream record ``upstream_offset`` of ``topic_partition`` was written at ``downstream_offset``.

    ``topic_partition`` names the UPSTREAM (source) topic. Written to partition 0 of the
    offset-syncs topic.
    """

    topic_partition: TopicPartition
    upstream_offset: int
    downstream_offset: int

    @property
    def topic(self) -> str:
        return self.topic_partition.topic

    @property
    def partition(self) -> int:
        return self.topic_partition.partition

    def record_key(self) -> bytes:
        tp = self.topic_partition
        return _encode_string(tp.topic, TOPIC_KEY) + _pack(_I32, tp.partition)

    def record_value(self) -> bytes:
        return _pack(_OFFSET_SYNC_VALUE, self.upstream_offset, self.downstream_offset)

    @classmethod
    def decode(
        cls, key: bytes | bytearray | memoryview | None, value: bytes | bytearray | memoryview | None
    ) -> OffsetSync:
        """Parse a record of the offset-syncs topic; raises RecordFormatError if malformed."""
        k = _bytes(key, "key")
        v = _bytes(value, "value")
        topic, pos = _read_string(k, 0, TOPIC_KEY)
        partition, _ = _read_i32(k, pos, PARTITION_KEY)
        _need(v, 0, 16, "upstreamOffset")
        upstream, downstream = _OFFSET_SYNC_VALUE.unpack_from(v, 0)
        return cls(TopicPartition(topic, partition), upstream, downstream)

    def __str__(self) -> str:
        return (
            f"OffsetSync{{topicPartition={self.topic_partition}, upstreamOffset={self.upstream_offset}, "
            f"downstreamOffset={self.downstream_offset}}}"
        )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """Group ``consumer_group_id`` at upstream offset ``upstream_offset`` may resume at
    ``downstream_offset`` of ``topic_partition`` (the DOWNSTREAM, renamed topic)."""

    consumer_group_id: str
    topic_partition: TopicPartition
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""

    @property
    def offset_and_metadata(self) -> OffsetAndMetadata:
        return OffsetAndMetadata(self.downstream_offset, self.metadata)

    def record_key(self) -> bytes:
        tp = self.topic_partition
        return (
            _encode_string(self.consumer_group_id, CONSUMER_GROUP_ID_KEY)
            + _encode_string(tp.topic, TOPIC_KEY)
            + _pack(_I32, tp.partition)
        )

    def record_value(self, version: int = VERSION) -> bytes:
        metadata = "" if self.metadata is None else self.metadata
        return _pack(_CHECKPOINT_VALUE_HEAD, version, self.upstream_offset, self.downstream_offset) + _encode_string(
            metadata, "metadata"
        )

    @classmethod
    def decode(
        cls, key: bytes | bytearray | memoryview | None, value: bytes | bytearray | memoryview | None
    ) -> Checkpoint:
        """Parse a record of a checkpoints topic; raises RecordFormatError if malformed."""
        v = _bytes(value, "value")
        k = _bytes(key, "key")
        _need(v, 0, 2, "version")
        _need(v, 2, 16, "upstreamOffset")
        _version, upstream, downstream = _CHECKPOINT_VALUE_HEAD.unpack_from(v, 0)
        metadata, _ = _read_string(v, _CHECKPOINT_VALUE_HEAD.size, "metadata")
        group, pos = _read_string(k, 0, CONSUMER_GROUP_ID_KEY)
        topic, pos = _read_string(k, pos, TOPIC_KEY)
        partition, _ = _read_i32(k, pos, PARTITION_KEY)
        return cls(group, TopicPartition(topic, partition), upstream, downstream, metadata)

    def connect_partition(self) -> dict[str, Any]:
        """Connect source partition of the checkpoint record: ``{group, topic, partition}``."""
        tp = self.topic_partition
        return {CONSUMER_GROUP_ID_KEY: self.consumer_group_id, TOPIC_KEY: tp.topic, PARTITION_KEY: tp.partition}

    @staticmethod
    def connect_offset() -> dict[str, Any]:
        """Connect source offset of every checkpoint record (never read back)."""
        return {OFFSET_KEY: 0}

    @staticmethod
    def unwrap_group(connect_partition: Mapping[str, Any]) -> str:
        return str(connect_partition[CONSUMER_GROUP_ID_KEY])

    def __str__(self) -> str:
        return (
            f"Checkpoint{{consumerGroupId={self.consumer_group_id}, topicPartition={self.topic_partition}, "
            f"upstreamOffset={self.upstream_offset}, downstreamOffset={self.downstream_offset}, "
            f"metadata={self.metadata}}}"
        )


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Proof that the ``source -> target`` flow was alive at ``timestamp`` (epoch ms)."""

    source_cluster_alias: str
    target_cluster_alias: str
    timestamp: int

    def record_key(self) -> bytes:
        return _encode_string(self.source_cluster_alias, SOURCE_CLUSTER_ALIAS_KEY) + _encode_string(
            self.target_cluster_alias, TARGET_CLUSTER_ALIAS_KEY
        )

    def record_value(self, version: int = VERSION) -> bytes:
        return _pack(_HEARTBEAT_VALUE, version, self.timestamp)

    @classmethod
    def decode(
        cls, key: bytes | bytearray | memoryview | None, value: bytes | bytearray | memoryview | None
    ) -> Heartbeat:
        """Parse a record of a heartbeats topic; raises RecordFormatError if malformed."""
        v = _bytes(value, "value")
        k = _bytes(key, "key")
        _need(v, 0, 2, "version")
        _need(v, 2, 8, "timestamp")
        _version, timestamp = _HEARTBEAT_VALUE.unpack_from(v, 0)
        source, pos = _read_string(k, 0, SOURCE_CLUSTER_ALIAS_KEY)
        target, _ = _read_string(k, pos, TARGET_CLUSTER_ALIAS_KEY)
        return cls(source, target, timestamp)

    def connect_partition(self) -> dict[str, Any]:
        """Connect source partition of the heartbeat record: ``{sourceClusterAlias, targetClusterAlias}``."""
        return {
            SOURCE_CLUSTER_ALIAS_KEY: self.source_cluster_alias,
            TARGET_CLUSTER_ALIAS_KEY: self.target_cluster_alias,
        }

    @staticmethod
    def connect_offset() -> dict[str, Any]:
        """Connect source offset of every heartbeat record (never read back)."""
        return {OFFSET_KEY: 0}

    def __str__(self) -> str:
        return (
            f"Heartbeat{{sourceClusterAlias={self.source_cluster_alias}, "
            f"targetClusterAlias={self.target_cluster_alias}, timestamp={self.timestamp}}}"
        )


# -- MirrorSourceTask's Connect source partitions/offsets ---------------------------------------


def wrap_partition(topic_partition: TopicPartition, source_cluster_alias: str) -> dict[str, Any]:
    """Connect source partition of a replicated record: ``{topic, partition, cluster}``."""
    return {
        TOPIC_KEY: topic_partition.topic,
        PARTITION_KEY: topic_partition.partition,
        SOURCE_CLUSTER_KEY: source_cluster_alias,
    }


def wrap_offset(offset: int) -> dict[str, Any]:
    """Connect source offset ``{offset}``: the upstream offset of the last replicated record."""
    return {OFFSET_KEY: offset}


def unwrap_partition(wrapped: Mapping[str, Any]) -> TopicPartition:
    return TopicPartition(str(wrapped[TOPIC_KEY]), int(wrapped[PARTITION_KEY]))


def unwrap_offset(wrapped: Mapping[str, Any] | None) -> int:
    """The stored upstream offset, or -1 if none (then the task does not seek)."""
    if wrapped is None or wrapped.get(OFFSET_KEY) is None:
        return -1
    return int(wrapped[OFFSET_KEY])


# -- KIP-875 alter-offsets validation (shared by the three connectors) ---------------------------


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_source_partition_string(source_partition: Mapping[str, Any], key: str) -> None:
    """``key`` must be present and a string."""
    if key not in source_partition:
        raise InvalidSourceOffsetError(
            f"Source partition {dict(source_partition)} is missing the '{key}' key, which is required"
        )
    value = source_partition[key]
    if not isinstance(value, str):
        raise InvalidSourceOffsetError(
            f"Source partition {dict(source_partition)} has an invalid value {value!r} for the '{key}' key, "
            f"which must be a string"
        )


def validate_source_partition_partition(source_partition: Mapping[str, Any]) -> None:
    """``partition`` must be present and a non-negative 32-bit integer."""
    if PARTITION_KEY not in source_partition:
        raise InvalidSourceOffsetError(
            f"Source partition {dict(source_partition)} is missing the '{PARTITION_KEY}' key, which is required"
        )
    value = source_partition[PARTITION_KEY]
    if not _is_int(value) or value > _INT32_MAX:
        raise InvalidSourceOffsetError(
            f"Source partition {dict(source_partition)} has an invalid value {value!r} for the "
            f"'{PARTITION_KEY}' key, which must be an integer"
        )
    if value < 0:
        raise InvalidSourceOffsetError(
            f"Source partition {dict(source_partition)} has an invalid value {value!r} for the "
            f"'{PARTITION_KEY}' key, which cannot be negative"
        )


def validate_source_offset(
    source_partition: Mapping[str, Any], source_offset: Mapping[str, Any] | None, only_offset_zero: bool
) -> None:
    """A null offset (reset) is valid; otherwise ``{offset: int}``, which must be 0 or >= 0."""
    if source_offset is None:
        return
    if OFFSET_KEY not in source_offset:
        raise InvalidSourceOffsetError(
            f"Source offset {dict(source_offset)} for source partition {dict(source_partition)} is missing the "
            f"'{OFFSET_KEY}' key, which is required"
        )
    offset = source_offset[OFFSET_KEY]
    if not _is_int(offset):
        raise InvalidSourceOffsetError(
            f"Source offset {dict(source_offset)} for source partition {dict(source_partition)} has an invalid "
            f"value {offset!r} for the '{OFFSET_KEY}' key, which must be an integer"
        )
    if only_offset_zero and offset != 0:
        raise InvalidSourceOffsetError(
            f"Source offset {dict(source_offset)} for source partition {dict(source_partition)} has an invalid "
            f"value {offset!r} for the '{OFFSET_KEY}' key; the only accepted value is 0"
        )
    if not only_offset_zero and offset < 0:
        raise InvalidSourceOffsetError(
            f"Source offset {dict(source_offset)} for source partition {dict(source_partition)} has an invalid "
            f"value {offset!r} for the '{OFFSET_KEY}' key, which cannot be negative"
        )


def validate_alter_offsets(
    offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    string_keys: tuple[str, ...],
    *,
    with_partition: bool,
    only_offset_zero: bool,
) -> None:
    """KIP-875 checks the three connectors share: tombstones pass; partitions carry their keys."""
    for partition, offset in offsets:
        if offset is None:
            continue
        if partition is None:
            raise ConnectError("Source partitions may not be null")
        for key in string_keys:
            validate_source_partition_string(partition, key)
        if with_partition:
            validate_source_partition_partition(partition)
        validate_source_offset(partition, offset, only_offset_zero=only_offset_zero)


__all__ = [
    "CONSUMER_GROUP_ID_KEY",
    "MAX_STRING_LENGTH",
    "OFFSET_KEY",
    "PARTITION_KEY",
    "SOURCE_CLUSTER_ALIAS_KEY",
    "SOURCE_CLUSTER_KEY",
    "TARGET_CLUSTER_ALIAS_KEY",
    "TOPIC_KEY",
    "VERSION",
    "Checkpoint",
    "Heartbeat",
    "OffsetAndMetadata",
    "OffsetSync",
    "TopicPartition",
    "unwrap_offset",
    "unwrap_partition",
    "validate_alter_offsets",
    "validate_source_offset",
    "validate_source_partition_partition",
    "validate_source_partition_string",
    "wrap_offset",
    "wrap_partition",
]
