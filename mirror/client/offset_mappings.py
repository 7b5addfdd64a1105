"""Offset mappings: mm2's exact record of where each mirrored upstream record was written downstream.

Why a separate record type and topic: Kafka's offset syncs (``mm2-offset-syncs.<alias>.internal``)
are sparse points (one every ``offset.lag.max`` records) and Java MirrorMaker reads that topic with a
strict key/value schema, so anything new there could break a Java reader sharing the flow. A mapping
lives in its own compacted topic, ``mm2-offset-mappings.<alias>.internal`` next to the offset-syncs
topic (same cluster, same naming rule), whose name ends in ``.internal`` so no MirrorMaker (Java or
mm2) ever replicates it; Java MirrorMaker never reads it. The offset-syncs and checkpoints topics keep
Kafka's formats unchanged.

One mapping describes one *contiguous run*: upstream records ``[upstream_offset, upstream_offset +
count)`` were written at ``[downstream_offset, downstream_offset + count)``, and the upstream offsets
``[upstream_low, upstream_offset)`` hold no record (transaction markers, compacted-away records, or
offsets below the position the mirror resumed from). So for any committed upstream offset ``o`` in
``[upstream_low, upstream_offset + count]`` the first record the group has not consumed is known
exactly: it sits at ``downstream_offset + max(0, o - upstream_offset)``.

Wire format (Kafka ``Struct`` encoding, like the MM2 formats):

* key: ``topic:STRING, partition:INT32, upstreamLow:INT64`` (the ``upstreamLow`` of the record's first
  run: compaction keeps the latest, longest version of a record and drops nothing else);
* value, version 0 (one run): ``version:INT16, upstreamOffset:INT64, downstreamOffset:INT64, count:INT64``;
* value, version 1 (a *segment*: every run the source task closed since its last publication, then its
  open run): ``version:INT16, guard:INT64 (-1), runs:INT32``, then per run ``upstreamLow:INT64,
  upstreamOffset:INT64, downstreamOffset:INT64, count:INT64``, in copy order (the guard sits where a
  version-0 reader expects ``upstreamOffset``, so an older mm2 rejects a segment rather than misread it).
  A transactional source (a marker after every transaction: one run each) thus costs one record per
  partition per publication, not one per transaction; decoding yields the same runs, so translation is
  the same. Readers accept both versions.
* a tombstone (null value) removes a record whose runs all lie below the source partition's log-start
  offset (:mod:`mirror.connectors.offset_mapping_retention`), so compaction really shrinks the topic.

:func:`mapping_for_copied_range` is what a writer other than the source task (``mm2 backfill``) calls
for a range it copied with known downstream offsets.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

from mirror.client.errors import RecordFormatError
from mirror.client.formats import TopicPartition
from mirror.client.policy import ReplicationPolicy

VERSION = 0
SEGMENT_VERSION = 1
#: Runs per segment record at most (32 bytes each): a faster copy writes more records, never bigger ones.
MAX_RUNS_PER_RECORD = 1024
_SYNCS_PREFIX = "mm2-offset-syncs"
_MAPPINGS_PREFIX = "mm2-offset-mappings"
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_VALUE = struct.Struct(">hqqq")
_SEGMENT_HEAD = struct.Struct(">hqi")
#: Where a version-0 reader (mm2 before segments) expects ``upstreamOffset``: -1 makes it reject a segment
#: as malformed (and fall back to offset syncs) instead of misreading it during a rolling upgrade.
_SEGMENT_GUARD = -1
_RUN = struct.Struct(">qqqq")


def offset_mappings_topic(policy: ReplicationPolicy, cluster_alias: str) -> str:
    """The mappings topic that sits next to ``policy.offset_syncs_topic(cluster_alias)``."""
    syncs = policy.offset_syncs_topic(cluster_alias)
    if syncs.startswith(_SYNCS_PREFIX):
        return _MAPPINGS_PREFIX + syncs[len(_SYNCS_PREFIX) :]
    return f"{_MAPPINGS_PREFIX}.{cluster_alias}.internal"


@dataclass(frozen=True, slots=True)
class OffsetMapping:
    """Upstream records ``[upstream_offset, +count)`` of ``topic_partition`` sit at ``[downstream_offset, +count)``;
    upstream offsets ``[upstream_low, upstream_offset)`` hold no record. A run of no records (``count`` 0,
    segments only) says that much for offsets after the last copied record (a trailing transaction marker)."""

    topic_partition: TopicPartition
    upstream_low: int
    upstream_offset: int
    downstream_offset: int
    count: int

    def __post_init__(self) -> None:
        if (
            self.count < 0
            or self.upstream_low > self.upstream_offset
            or self.upstream_low < 0
            or self.downstream_offset < 0
        ):
            raise RecordFormatError(f"Invalid offset mapping: {self}")

    @property
    def upstream_end(self) -> int:
        """The upstream offset after the run's last record (a group that consumed the whole run)."""
        return self.upstream_offset + self.count

    @property
    def downstream_end(self) -> int:
        return self.downstream_offset + self.count

    def covers(self, upstream: int) -> bool:
        return self.upstream_low <= upstream <= self.upstream_end

    def translate(self, upstream: int) -> int:
        """Downstream offset of the first record at or after ``upstream`` (``covers(upstream)`` must hold)."""
        if upstream <= self.upstream_offset:
            return self.downstream_offset
        return self.downstream_offset + upstream - self.upstream_offset

    def record_key(self) -> bytes:
        return mapping_key(self.topic_partition, self.upstream_low)

    def record_value(self) -> bytes:
        return _VALUE.pack(VERSION, self.upstream_offset, self.downstream_offset, self.count)

    @classmethod
    def decode(
        cls, key: bytes | bytearray | memoryview | None, value: bytes | bytearray | memoryview | None
    ) -> OffsetMapping:
        """Parse a record of the mappings topic; raises RecordFormatError if malformed."""
        if key is None or value is None:
            raise RecordFormatError("Offset mapping record with a null key or value")
        tp, low = decode_key(key)
        v = bytes(value)
        if len(v) < _VALUE.size:
            raise RecordFormatError("Offset mapping value too short")
        _version, upstream, downstream, count = _VALUE.unpack_from(v, 0)
        if count < 1:
            raise RecordFormatError(f"Offset mapping of {count} records (version 0 runs hold records)")
        return cls(tp, low, upstream, downstream, count)


def mapping_key(tp: TopicPartition, upstream_low: int) -> bytes:
    """The key of a mappings-topic record (also what a tombstone names)."""
    topic = tp.topic.encode("utf-8", "replace")
    if len(topic) > 32767:
        raise RecordFormatError(f"Topic name of {tp} is too long for an offset mapping")
    return _I16.pack(len(topic)) + topic + _I32.pack(tp.partition) + _I64.pack(upstream_low)


def encode_segment(runs: Sequence[OffsetMapping]) -> tuple[bytes, bytes]:
    """(key, value) of one segment record holding ``runs`` (one partition, copy order, at least one)."""
    if not runs or len(runs) > MAX_RUNS_PER_RECORD:
        raise RecordFormatError(f"A segment holds 1 to {MAX_RUNS_PER_RECORD} runs, not {len(runs)}")
    tp = runs[0].topic_partition
    if any(m.topic_partition != tp for m in runs):
        raise RecordFormatError("A segment holds the runs of one partition")
    value = _SEGMENT_HEAD.pack(SEGMENT_VERSION, _SEGMENT_GUARD, len(runs)) + b"".join(
        _RUN.pack(m.upstream_low, m.upstream_offset, m.downstream_offset, m.count) for m in runs
    )
    return runs[0].record_key(), value


def decode_key(key: bytes | bytearray | memoryview | None) -> tuple[TopicPartition, int]:
    """(topic-partition, upstreamLow) of a mappings-topic key; raises RecordFormatError if malformed."""
    if key is None:
        raise RecordFormatError("Offset mapping record with a null key")
    k = bytes(key)
    if len(k) < 2:
        raise RecordFormatError("Offset mapping key too short")
    (n,) = _I16.unpack_from(k, 0)
    if n < 0 or len(k) < 2 + n + 12:
        raise RecordFormatError("Offset mapping key too short")
    topic = k[2 : 2 + n].decode("utf-8", "replace")
    (partition,) = _I32.unpack_from(k, 2 + n)
    (low,) = _I64.unpack_from(k, 6 + n)
    return TopicPartition(topic, partition), low


def decode_mappings(
    key: bytes | bytearray | memoryview | None, value: bytes | bytearray | memoryview | None
) -> list[OffsetMapping]:
    """The runs of any record of the mappings topic (version 0 or 1); a tombstone has none.

    Raises RecordFormatError if the record is malformed.
    """
    tp, _low = decode_key(key)
    if value is None:
        return []
    v = bytes(value)
    if len(v) < 2:
        raise RecordFormatError("Offset mapping value too short")
    (version,) = _I16.unpack_from(v, 0)
    if version != SEGMENT_VERSION:
        return [OffsetMapping.decode(key, value)]
    if len(v) < _SEGMENT_HEAD.size:
        raise RecordFormatError("Offset mapping segment too short")
    _version, guard, n = _SEGMENT_HEAD.unpack_from(v, 0)
    if guard != _SEGMENT_GUARD or n < 1 or len(v) < _SEGMENT_HEAD.size + n * _RUN.size:
        raise RecordFormatError(f"Offset mapping segment of {n} runs too short")
    return [OffsetMapping(tp, *_RUN.unpack_from(v, _SEGMENT_HEAD.size + i * _RUN.size)) for i in range(n)]


def mapping_for_copied_range(
    topic_partition: TopicPartition,
    first_upstream: int,
    first_downstream: int,
    count: int,
    previous_upstream: int | None = None,
) -> OffsetMapping:
    """The mapping for ``count`` records copied with consecutive offsets on both sides.

    ``previous_upstream`` is the upstream offset of the record copied just before the range (in the
    same pass over the partition), when known: the offsets between hold no record, so a group
    committed there translates exactly too. Backfill emits one per transaction it commits.
    """
    low = first_upstream
    if previous_upstream is not None and previous_upstream < first_upstream:
        low = previous_upstream + 1
    return OffsetMapping(topic_partition, low, first_upstream, first_downstream, count)


__all__ = [
    "MAX_RUNS_PER_RECORD",
    "OffsetMapping",
    "decode_key",
    "decode_mappings",
    "encode_segment",
    "mapping_for_copied_range",
    "mapping_key",
    "offset_mappings_topic",
]
