"""The partition a keyed record goes to under Kafka's default partitioner (librdkafka's ``murmur2_random``).

Java's producers, and ours (``connect_core.kafka.clients`` sets ``partitioner=murmur2_random``), put a
record with a key on ``murmur2(key) & 0x7fffffff`` modulo the partition count: MurmurHash2 (32 bits,
seed 0x9747b28c). Connect's offset stores rely on it (one key, one partition, so the last write wins);
a planner that must know in advance where a key lands (the backfill keeps concurrent transactions on
disjoint partitions of the offsets topic) computes it here. Pure logic, no I/O.
"""

from __future__ import annotations

_SEED = 0x9747B28C
_M = 0x5BD1E995
_MASK = 0xFFFFFFFF


def murmur2(data: bytes) -> int:
    """MurmurHash2 of ``data`` as an unsigned 32-bit integer (the partitioner's variant and seed)."""
    length = len(data)
    h = (_SEED ^ length) & _MASK
    whole = length - length % 4
    for i in range(0, whole, 4):
        k = int.from_bytes(data[i : i + 4], "little")
        k = (k * _M) & _MASK
        k ^= k >> 24
        k = (k * _M) & _MASK
        h = ((h * _M) & _MASK) ^ k
    tail = data[whole:]
    if tail:
        for shift, byte in zip((0, 8, 16), tail, strict=False):
            h ^= byte << shift
        h = (h * _M) & _MASK
    h ^= h >> 13
    h = (h * _M) & _MASK
    h ^= h >> 15
    return h


def key_partition(key: bytes, partitions: int) -> int:
    """The partition of ``partitions`` a record with this (non-null) key goes to."""
    if partitions <= 0:
        raise ValueError(f"a topic has at least one partition, not {partitions}")
    return (murmur2(key) & 0x7FFFFFFF) % partitions


__all__ = ["key_partition", "murmur2"]
