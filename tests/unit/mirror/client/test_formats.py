"""MM2 wire formats: byte-exact with Kafka's Struct encoding (reference vectors), round trips, malformed input."""

from __future__ import annotations

import pytest

from mirror.client.errors import InvalidSourceOffsetError, RecordFormatError
from mirror.client.formats import (
    Checkpoint,
    Heartbeat,
    OffsetAndMetadata,
    OffsetSync,
    TopicPartition,
    unwrap_offset,
    unwrap_partition,
    validate_source_offset,
    validate_source_partition_partition,
    validate_source_partition_string,
    wrap_offset,
    wrap_partition,
)


def hexb(s: str) -> bytes:
    return bytes.fromhex(s.replace("|", " "))


# -- reference vectors (mm2-reference.md 2.2-2.4) ----------------------------------------------


def test_offset_sync_vector() -> None:
    s = OffsetSync(TopicPartition("topic1", 2), 100, 200)
    assert s.record_key() == hexb("00 06 74 6f 70 69 63 31 00 00 00 02")
    assert s.record_value() == hexb("00 00 00 00 00 00 00 64 00 00 00 00 00 00 00 c8")
    assert OffsetSync.decode(s.record_key(), s.record_value()) == s


def test_checkpoint_vector() -> None:
    c = Checkpoint("group1", TopicPartition("A.topic1", 2), 150, 201, "")
    assert c.record_key() == hexb("00 06 67 72 6f 75 70 31 00 08 41 2e 74 6f 70 69 63 31 00 00 00 02")
    assert c.record_value() == hexb("00 00 | 00 00 00 00 00 00 00 96 | 00 00 00 00 00 00 00 c9 | 00 00")
    assert Checkpoint.decode(c.record_key(), c.record_value()) == c


def test_heartbeat_vector() -> None:
    h = Heartbeat("A", "B", 1700000000000)
    assert h.record_key() == hexb("00 01 41 00 01 42")
    assert h.record_value() == hexb("00 00 00 00 01 8b cf e5 68 00")
    assert Heartbeat.decode(h.record_key(), h.record_value()) == h


# -- round trips (OffsetSyncTest, CheckpointTest, HeartbeatTest) -------------------------------


def test_offset_sync_serde() -> None:
    s = OffsetSync(TopicPartition("topic-1", 2), 3, 4)
    d = OffsetSync.decode(s.record_key(), s.record_value())
    assert d.topic_partition == TopicPartition("topic-1", 2)
    assert (d.topic, d.partition, d.upstream_offset, d.downstream_offset) == ("topic-1", 2, 3, 4)


def test_checkpoint_serde() -> None:
    c = Checkpoint("group-1", TopicPartition("topic-2", 3), 4, 5, "metadata-6")
    d = Checkpoint.decode(c.record_key(), c.record_value())
    assert d == c
    assert d.offset_and_metadata == OffsetAndMetadata(5, "metadata-6")


def test_heartbeat_serde() -> None:
    h = Heartbeat("source-1", "target-2", 1234567890)
    assert Heartbeat.decode(h.record_key(), h.record_value()) == h


def test_extreme_values_and_unicode() -> None:
    s = OffsetSync(TopicPartition("t\u00e9st-\u65e5\u672c", 2**31 - 1), 2**63 - 1, -1)
    assert OffsetSync.decode(s.record_key(), s.record_value()) == s
    c = Checkpoint("g\u00fc", TopicPartition("", 0), -(2**63), 0, "m" * 32767)
    assert Checkpoint.decode(c.record_key(), c.record_value()) == c
    # length prefix counts UTF-8 bytes, not characters
    assert OffsetSync(TopicPartition("\u00e9", 0), 0, 0).record_key()[:2] == b"\x00\x02"


def test_decode_accepts_bytearray_and_memoryview() -> None:
    s = OffsetSync(TopicPartition("t", 1), 5, 6)
    assert OffsetSync.decode(bytearray(s.record_key()), memoryview(s.record_value())) == s


def test_trailing_bytes_are_ignored() -> None:
    s = OffsetSync(TopicPartition("t", 1), 5, 6)
    assert OffsetSync.decode(s.record_key() + b"xx", s.record_value() + b"\x01") == s
    c = Checkpoint("g", TopicPartition("t", 0), 1, 2, "m")
    assert Checkpoint.decode(c.record_key() + b"\x00", c.record_value() + b"\xff\xff") == c


def test_future_value_version_is_read_as_v0() -> None:
    c = Checkpoint("g", TopicPartition("t", 0), 1, 2, "m")
    assert Checkpoint.decode(c.record_key(), c.record_value(version=1)) == c
    h = Heartbeat("a", "b", 7)
    assert Heartbeat.decode(h.record_key(), h.record_value(version=3)) == h


def test_null_metadata_is_written_as_empty_string() -> None:
    c = Checkpoint("g", TopicPartition("t", 0), 1, 2, None)  # type: ignore[arg-type]
    assert c.record_value().endswith(b"\x00\x00")


# -- malformed input (Kafka SchemaException) ---------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (b"", b""),
        (None, b"\x00" * 16),
        (b"\x00\x01t\x00\x00\x00\x01", None),
        (b"\x00\x05ab", b"\x00" * 16),  # string longer than the buffer
        (b"\xff\xfft\x00\x00\x00\x01", b"\x00" * 16),  # negative string length
        (b"\x00\x01t\x00\x00", b"\x00" * 16),  # truncated partition
        (b"\x00\x01t\x00\x00\x00\x01", b"\x00" * 15),  # truncated value
        ("text", b"\x00" * 16),
    ],
)
def test_malformed_offset_sync(key: object, value: object) -> None:
    with pytest.raises(RecordFormatError):
        OffsetSync.decode(key, value)  # type: ignore[arg-type]


def test_malformed_checkpoints() -> None:
    c = Checkpoint("g", TopicPartition("t", 0), 1, 2, "meta")
    with pytest.raises(RecordFormatError):
        Checkpoint.decode(b"", b"")
    with pytest.raises(RecordFormatError):
        Checkpoint.decode(c.record_key(), c.record_value()[:-1])  # metadata cut short
    with pytest.raises(RecordFormatError):
        Checkpoint.decode(c.record_key()[:-1], c.record_value())
    with pytest.raises(RecordFormatError):
        Heartbeat.decode(b"\x00\x01A", b"\x00\x00" + b"\x00" * 8)  # missing target alias
    with pytest.raises(RecordFormatError):
        Heartbeat.decode(b"\x00\x01A\x00\x01B", b"\x00\x00\x00")


def test_encoding_limits() -> None:
    with pytest.raises(RecordFormatError):
        OffsetSync(TopicPartition("x" * 32768, 0), 0, 0).record_key()
    with pytest.raises(RecordFormatError):
        OffsetSync(TopicPartition("x", 0), 2**63, 0).record_value()
    with pytest.raises(RecordFormatError):
        OffsetSync(TopicPartition("x", 2**31), 0, 0).record_key()


def test_java_tostring_formats() -> None:
    assert str(OffsetSync(TopicPartition("topic1", 2), 100, 200)) == (
        "OffsetSync{topicPartition=topic1-2, upstreamOffset=100, downstreamOffset=200}"
    )
    assert str(Checkpoint("g", TopicPartition("A.t", 0), 1, 2, "m")) == (
        "Checkpoint{consumerGroupId=g, topicPartition=A.t-0, upstreamOffset=1, downstreamOffset=2, metadata=m}"
    )
    assert str(Heartbeat("A", "B", 5)) == "Heartbeat{sourceClusterAlias=A, targetClusterAlias=B, timestamp=5}"


# -- Connect source partitions/offsets ---------------------------------------------------------


def test_source_task_partition_and_offset() -> None:
    tp = TopicPartition("orders", 3)
    part = wrap_partition(tp, "A")
    assert part == {"topic": "orders", "partition": 3, "cluster": "A"}
    assert unwrap_partition(part) == tp
    assert wrap_offset(41) == {"offset": 41}
    assert unwrap_offset({"offset": 41}) == 41
    assert unwrap_offset(None) == -1
    assert unwrap_offset({}) == -1
    assert unwrap_offset({"offset": None}) == -1


def test_checkpoint_and_heartbeat_connect_maps() -> None:
    c = Checkpoint("group9", TopicPartition("source1.topic1", 2), 10, 5, "")
    assert c.connect_partition() == {"group": "group9", "topic": "source1.topic1", "partition": 2}
    assert Checkpoint.unwrap_group(c.connect_partition()) == "group9"
    assert c.connect_offset() == {"offset": 0}
    h = Heartbeat("A", "B", 1)
    assert h.connect_partition() == {"sourceClusterAlias": "A", "targetClusterAlias": "B"}
    assert h.connect_offset() == {"offset": 0}


def test_alter_offsets_validation() -> None:
    good = {"cluster": "A", "topic": "t", "partition": 0}
    validate_source_partition_string(good, "cluster")
    validate_source_partition_partition(good)
    validate_source_offset(good, {"offset": 5}, only_offset_zero=False)
    validate_source_offset(good, None, only_offset_zero=True)  # reset
    validate_source_offset(good, {"offset": 0}, only_offset_zero=True)

    with pytest.raises(InvalidSourceOffsetError, match="missing the 'topic' key"):
        validate_source_partition_string({"cluster": "A"}, "topic")
    with pytest.raises(InvalidSourceOffsetError, match="must be a string"):
        validate_source_partition_string({"topic": 5}, "topic")
    for bad in ("0", 1.0, True, 2**31, None):
        with pytest.raises(InvalidSourceOffsetError, match="must be an integer"):
            validate_source_partition_partition({"partition": bad})
    with pytest.raises(InvalidSourceOffsetError, match="cannot be negative"):
        validate_source_partition_partition({"partition": -1})
    with pytest.raises(InvalidSourceOffsetError, match="missing the 'partition' key"):
        validate_source_partition_partition({})
    with pytest.raises(InvalidSourceOffsetError, match="missing the 'offset' key"):
        validate_source_offset(good, {}, only_offset_zero=False)
    with pytest.raises(InvalidSourceOffsetError, match="must be an integer"):
        validate_source_offset(good, {"offset": "5"}, only_offset_zero=False)
    with pytest.raises(InvalidSourceOffsetError, match="cannot be negative"):
        validate_source_offset(good, {"offset": -1}, only_offset_zero=False)
    with pytest.raises(InvalidSourceOffsetError, match="only accepted value is 0"):
        validate_source_offset(good, {"offset": 1}, only_offset_zero=True)
