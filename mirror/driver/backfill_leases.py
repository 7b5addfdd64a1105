"""Backfill leases: which topics a running ``mm2 backfill`` holds, kept in the flow's own state on the target.

A backfill takes topics from live tailing by writing a lease to ``mm2-backfill-leases.<source>.internal``
(compacted, one partition, on the target), keyed by the flow: the job id, the topics, the transactional
ids its Spark tasks commit with, and an expiry. The job renews it while it runs and deletes it (a
tombstone) when it ends. ``mm2 run`` reads the leases at start and tails them; every node derives the
MirrorSourceConnector config with the active leases' topics added to ``topics.exclude``, so whichever node
leads, before or after a restart, writes the same exclusion. A lease whose job stopped renewing it expires:
its transactional ids are fenced first (a stalled job can no longer commit), then the topics go back to
live tailing, which resumes from what the job committed.

Pure logic only (no I/O): the record format, the expiry rule and the merge into a connector config.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

LEASES_TOPIC_PREFIX = "mm2-backfill-leases."
#: How long a lease lives without renewal (the job renews it every third of this).
DEFAULT_LEASE_TTL_S = 60.0
_VERSION = 1


def leases_topic(source: str) -> str:
    """The leases topic of the flows from ``source`` (on their target, like ``mm2-offsets.<source>.internal``)."""
    return f"{LEASES_TOPIC_PREFIX}{source}.internal"


def lease_key(source: str, target: str) -> bytes:
    return f"{source}->{target}".encode()


@dataclass(frozen=True)
class Lease:
    """One flow's backfill lease: ``topics`` are the job's until ``expires_at_ms`` (writer's clock)."""

    source: str
    target: str
    job_id: str
    topics: tuple[str, ...]
    expires_at_ms: int
    #: the ids the job's transactions use: fenced before an expired lease's topics go back to live tailing
    transactional_ids: tuple[str, ...] = ()

    def active(self, now_ms: int) -> bool:
        return now_ms < self.expires_at_ms

    def renewed(self, now_ms: int, ttl_s: float) -> Lease:
        return Lease(
            self.source, self.target, self.job_id, self.topics, now_ms + int(ttl_s * 1000), self.transactional_ids
        )


def encode_lease(lease: Lease) -> tuple[bytes, bytes]:
    """Key and value of a lease record (JSON value, so an operator can read it with any console consumer)."""
    value = {
        "version": _VERSION,
        "job": lease.job_id,
        "topics": list(lease.topics),
        "expires_at_ms": lease.expires_at_ms,
        "transactional_ids": list(lease.transactional_ids),
    }
    return lease_key(lease.source, lease.target), json.dumps(value, sort_keys=True).encode()


def decode_lease(key: bytes | None, value: bytes | None) -> Lease | None:
    """The lease of a record; None for a tombstone (released) or a record this version cannot read."""
    if key is None or value is None:
        return None
    source, sep, target = key.decode(errors="replace").partition("->")
    if not sep:
        return None
    try:
        doc = json.loads(value)
        return Lease(
            source,
            target,
            str(doc["job"]),
            tuple(str(t) for t in doc["topics"]),
            int(doc["expires_at_ms"]),
            tuple(str(i) for i in doc.get("transactional_ids", ())),
        )
    except (ValueError, KeyError, TypeError):
        return None


@dataclass
class LeaseTable:
    """The latest lease per flow, fed the leases topic's records in log order."""

    leases: dict[bytes, Lease] = field(default_factory=dict)

    def apply(self, key: bytes | None, value: bytes | None) -> bool:
        """Take one record; True if the flow's lease changed (taken, renewed with other topics, released)."""
        if key is None:
            return False
        before = self.leases.get(key)
        lease = decode_lease(key, value)
        if lease is None:
            self.leases.pop(key, None)
        else:
            self.leases[key] = lease
        return _holding(before) != _holding(lease)

    def lease(self, source: str, target: str) -> Lease | None:
        return self.leases.get(lease_key(source, target))

    def active(self, source: str, target: str, now_ms: int) -> Lease | None:
        lease = self.lease(source, target)
        return lease if lease is not None and lease.active(now_ms) else None


def _holding(lease: Lease | None) -> tuple[str, tuple[str, ...], tuple[str, ...]] | None:
    """What a lease change means to live tailing (a renewal changes only the expiry: no change)."""
    return None if lease is None else (lease.job_id, lease.topics, lease.transactional_ids)


def with_topics_excluded(current_exclude: str | None, topics: Iterable[str]) -> str:
    """``topics.exclude`` value that also excludes exactly ``topics`` (MirrorMaker's comma-separated regexes)."""
    parts = [p.strip() for p in (current_exclude or "").split(",") if p.strip()]
    for topic in sorted(set(topics)):
        exact = re.escape(topic)
        if exact not in parts:
            parts.append(exact)
    return ", ".join(parts)


def with_lease(connector_config: Mapping[str, str], lease: Lease | None) -> dict[str, str]:
    """The MirrorSourceConnector config with an active lease's topics excluded from live tailing.

    Without a lease the config is returned unchanged, so a flow no backfill holds is configured exactly
    as before leases existed (and as Java's MirrorMaker configures it)."""
    # deferred: `mm2 --help` imports this module for DEFAULT_LEASE_TTL_S, and the mirror.client package is
    # ~15 ms of start-up CPU that a help text does not need
    from mirror.client.filters import TOPICS_EXCLUDE_ALIAS_CONFIG, TOPICS_EXCLUDE_CONFIG, TOPICS_EXCLUDE_DEFAULT

    config = dict(connector_config)
    if lease is None or not lease.topics:
        return config
    current = config.pop(TOPICS_EXCLUDE_ALIAS_CONFIG, None)
    current = config.get(TOPICS_EXCLUDE_CONFIG, current if current is not None else TOPICS_EXCLUDE_DEFAULT)
    config[TOPICS_EXCLUDE_CONFIG] = with_topics_excluded(current, lease.topics)
    return config


def next_expiry_s(lease: Lease | None, now_ms: int) -> float | None:
    """Seconds until an active lease expires (None: no active lease)."""
    if lease is None or not lease.active(now_ms):
        return None
    return (lease.expires_at_ms - now_ms) / 1000.0


__all__ = [
    "DEFAULT_LEASE_TTL_S",
    "Lease",
    "LeaseTable",
    "decode_lease",
    "encode_lease",
    "lease_key",
    "leases_topic",
    "next_expiry_s",
    "with_lease",
    "with_topics_excluded",
]
