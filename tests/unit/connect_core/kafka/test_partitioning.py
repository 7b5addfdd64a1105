"""The partition of a keyed record under Kafka's default partitioner (MurmurHash2, as Java's and librdkafka's)."""

from __future__ import annotations

import pytest

from connect_core.kafka.partitioning import key_partition, murmur2


def signed(value: int) -> int:
    return value - (1 << 32) if value >= 1 << 31 else value


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("21", -973932308),
        ("foobar", -790332482),
        ("a-little-bit-long-string", -985981536),
        ("a-little-bit-longer-string", -1486304829),
        ("lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
        ("abc", 479470107),
    ],
)
def test_murmur2_matches_the_java_clients_hash(key: str, expected: int) -> None:
    """Published values of the Java client's murmur2 (Java ints, so signed): every tail length 0-3."""
    assert signed(murmur2(key.encode())) == expected


def test_a_key_lands_on_the_positive_hash_modulo_the_partition_count() -> None:
    assert key_partition(b"foobar", 25) == (-790332482 & 0x7FFFFFFF) % 25
    assert key_partition(b"", 7) == (murmur2(b"") & 0x7FFFFFFF) % 7
    assert {key_partition(f"k{i}".encode(), 25) for i in range(500)} == set(range(25))
    with pytest.raises(ValueError, match="at least one partition"):
        key_partition(b"k", 0)
