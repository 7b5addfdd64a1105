"""Decisions of MirrorSourceConnector, without I/O (unit-tested without a broker).

* :func:`assign_round_robin` deals topic-partitions over tasks as Kafka does (``t0p0`` to task 0,
  ``t0p1`` to task 1, ...), so one busy topic spreads over every task.
* :func:`plan_topic_changes` decides which remote topics to create (with the source partition
  count) and which to grow; partitions are never removed.
* :func:`refresh_changes` detects added/removed source partitions and partitions missing on the
  target, the trigger for task reconfiguration.
* :func:`target_config_entries` / :func:`config_alter_ops` turn a source topic's described configs
  into what the remote topic gets. Defaults: Kafka skips entries the broker marks as defaults;
  some brokers mark every entry default, so an entry only counts as a default if its
  value also equals Apache Kafka's documented default for that key (unknown keys: not a default).
* ACL helpers: only LITERAL TOPIC bindings of replicated topics, never ``ALLOW WRITE``,
  ``ALLOW ALL`` downgraded to ``ALLOW READ``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from mirror.client.filters import ConfigPropertyFilter
from mirror.client.formats import TopicPartition
from mirror.client.policy import ReplicationPolicy

STATIC_BROKER_CONFIG = "STATIC_BROKER_CONFIG"
DEFAULT_CONFIG = "DEFAULT_CONFIG"

_LONG_MAX = str(2**63 - 1)

#: Apache Kafka 4.x documented topic-level defaults (TopicConfig / LogConfig / ServerLogConfigs). A
#: key may list several values where versions differ (e.g. message.timestamp.after.max.ms: 4.0
#: changed it to one hour).
KAFKA_TOPIC_CONFIG_DEFAULTS: dict[str, frozenset[str]] = {
    k: frozenset(v)
    for k, v in {
        "cleanup.policy": ("delete",),
        "compression.type": ("producer",),
        "compression.gzip.level": ("-1",),
        "compression.lz4.level": ("9",),
        "compression.zstd.level": ("3",),
        "delete.retention.ms": ("86400000",),
        "file.delete.delay.ms": ("60000",),
        "flush.messages": (_LONG_MAX,),
        "flush.ms": (_LONG_MAX,),
        "follower.replication.throttled.replicas": ("",),
        "index.interval.bytes": ("4096",),
        "leader.replication.throttled.replicas": ("",),
        "local.retention.bytes": ("-2",),
        "local.retention.ms": ("-2",),
        "max.compaction.lag.ms": (_LONG_MAX,),
        "max.message.bytes": ("1048588",),
        "message.downconversion.enable": ("true",),
        "message.format.version": ("3.0-IV1",),
        "message.timestamp.after.max.ms": (_LONG_MAX, "3600000"),
        "message.timestamp.before.max.ms": (_LONG_MAX,),
        "message.timestamp.difference.max.ms": (_LONG_MAX,),
        "message.timestamp.type": ("CreateTime",),
        "min.cleanable.dirty.ratio": ("0.5",),
        "min.compaction.lag.ms": ("0",),
        "min.insync.replicas": ("1",),
        "preallocate": ("false",),
        "remote.log.copy.disable": ("false",),
        "remote.log.delete.on.disable": ("false",),
        "remote.storage.enable": ("false",),
        "retention.bytes": ("-1",),
        "retention.ms": ("604800000",),
        "segment.bytes": ("1073741824",),
        "segment.index.bytes": ("10485760",),
        "segment.jitter.ms": ("0",),
        "segment.ms": ("604800000",),
        "unclean.leader.election.enable": ("false",),
    }.items()
}

AlterOp = Literal["SET", "DELETE"]


# -- assignment -------------------------------------------------------------------------------------


def assign_round_robin(partitions: Sequence[TopicPartition], max_tasks: int) -> list[list[TopicPartition]]:
    """Deal ``partitions`` over ``min(max_tasks, len(partitions))`` tasks; none for no partitions."""
    if max_tasks < 1:
        raise ValueError("max_tasks must be at least 1")
    n = min(max_tasks, len(partitions))
    groups: list[list[TopicPartition]] = [[] for _ in range(n)]
    for i, tp in enumerate(partitions):
        groups[i % n].append(tp)
    return groups


def expand(partition_counts: Mapping[str, int]) -> list[TopicPartition]:
    """Topic -> count, as a sorted list of topic-partitions (stable task assignment)."""
    return [TopicPartition(t, p) for t in sorted(partition_counts) for p in range(partition_counts[t])]


def counts(partitions: Iterable[TopicPartition]) -> dict[str, int]:
    """Topic -> number of partitions seen."""
    out: dict[str, int] = {}
    for tp in partitions:
        out[tp.topic] = out.get(tp.topic, 0) + 1
    return out


# -- topics -------------------------------------------------------------------------------------------


def is_known_target_topic(topic: str, policy: ReplicationPolicy, source_alias: str, checkpoints_topic: str) -> bool:
    """A target topic that mirrors this flow's source (remote topics; not the checkpoints topic)."""
    return policy.topic_source(topic) == source_alias and topic != checkpoints_topic


@dataclass(frozen=True)
class TopicPlan:
    """What the target needs: new remote topics (name -> partition count) and partition growth."""

    create: dict[str, int]
    grow: dict[str, int]


def plan_topic_changes(
    source_counts: Mapping[str, int],
    target_counts: Mapping[str, int],
    format_remote: Callable[[str], str],
) -> TopicPlan:
    """Remote topics to create (keyed by REMOTE name) and remote topics to grow to the source count."""
    create: dict[str, int] = {}
    grow: dict[str, int] = {}
    for topic, count in source_counts.items():
        remote = format_remote(topic)
        have = target_counts.get(remote)
        if have is None:
            create[remote] = count
        elif count > have:
            grow[remote] = count
    return TopicPlan(create, grow)


@dataclass(frozen=True)
class RefreshResult:
    changed: bool
    new: frozenset[TopicPartition]
    deleted: frozenset[TopicPartition]
    missing_in_target: frozenset[TopicPartition]


def refresh_changes(
    known_source: Iterable[TopicPartition],
    source: Iterable[TopicPartition],
    target: Iterable[TopicPartition],
    upstream_topic: Callable[[str], str | None],
) -> RefreshResult:
    """Compare a fresh listing with what the connector knew (Kafka ``refreshTopicPartitions``)."""
    known = frozenset(known_source)
    now = frozenset(source)
    upstream_target = set()
    for tp in target:
        up = upstream_topic(tp.topic)
        if up is not None:
            upstream_target.add(TopicPartition(up, tp.partition))
    missing = now - upstream_target
    return RefreshResult(known != now or bool(missing), now - known, known - now, frozenset(missing))


# -- topic configs ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigEntryInfo:
    """One described topic config entry (client-independent)."""

    name: str
    value: str | None
    is_default: bool = False
    is_read_only: bool = False
    is_sensitive: bool = False
    source: str = "UNKNOWN_CONFIG"


def is_source_default(entry: ConfigEntryInfo) -> bool:
    """True only if the broker calls it a default AND its value is Kafka's documented default."""
    if not (entry.is_default or entry.source == DEFAULT_CONFIG):
        return False
    documented = KAFKA_TOPIC_CONFIG_DEFAULTS.get(entry.name)
    if documented is None:
        return False
    return (entry.value or "") in documented


def target_config_entries(
    entries: Iterable[ConfigEntryInfo],
    config_property_filter: ConfigPropertyFilter,
    incremental: bool,
) -> list[ConfigEntryInfo]:
    """Source entries that are synced to the remote topic, with ``is_default`` made trustworthy.

    At creation (``incremental=False``) defaults are copied only if the filter wants source
    defaults (``use.defaults.from=source``); in incremental sync all survive (defaults become DELETE).
    Read-only, sensitive, static-broker and excluded properties never survive.
    """
    out: list[ConfigEntryInfo] = []
    for entry in entries:
        default = is_source_default(entry)
        if not incremental and default and not config_property_filter.should_replicate_source_default(entry.name):
            continue
        if entry.is_read_only or entry.is_sensitive or entry.source == STATIC_BROKER_CONFIG:
            continue
        if not config_property_filter.should_replicate_config_property(entry.name):
            continue
        out.append(replace(entry, is_default=default))
    return out


def config_alter_ops(
    entries: Iterable[ConfigEntryInfo], config_property_filter: ConfigPropertyFilter
) -> list[tuple[str, str | None, AlterOp]]:
    """Incremental ops for the remote topic: SET each entry, DELETE defaults unless source defaults win."""
    ops: list[tuple[str, str | None, AlterOp]] = []
    for entry in entries:
        if entry.is_default and not config_property_filter.should_replicate_source_default(entry.name):
            ops.append((entry.name, None, "DELETE"))
        else:
            ops.append((entry.name, entry.value, "SET"))
    return ops


def create_configs(entries: Iterable[ConfigEntryInfo]) -> dict[str, str]:
    """Configs for CreateTopics from :func:`target_config_entries` (``incremental=False``)."""
    return {e.name: e.value for e in entries if e.value is not None}


# -- ACLs ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AclSpec:
    """A client-independent ACL binding (names as Kafka spells them: TOPIC, LITERAL, ALLOW, READ ...)."""

    resource_type: str
    name: str
    pattern_type: str
    principal: str
    host: str
    operation: str
    permission_type: str


def should_replicate_acl(acl: AclSpec) -> bool:
    """Never ``ALLOW WRITE``: only MM2 itself should write remote topics."""
    return not (acl.permission_type == "ALLOW" and acl.operation == "WRITE")


def target_acl(acl: AclSpec, remote_topic: str) -> AclSpec:
    """The binding for the remote topic; ``ALLOW ALL`` becomes ``ALLOW READ``."""
    operation = "READ" if acl.permission_type == "ALLOW" and acl.operation == "ALL" else acl.operation
    return replace(acl, resource_type="TOPIC", name=remote_topic, pattern_type="LITERAL", operation=operation)


def acls_to_sync(
    acls: Iterable[AclSpec], should_replicate_topic: Callable[[str], bool], format_remote: Callable[[str], str]
) -> list[AclSpec]:
    return [
        target_acl(a, format_remote(a.name))
        for a in acls
        if a.resource_type == "TOPIC"
        and a.pattern_type == "LITERAL"
        and should_replicate_acl(a)
        and should_replicate_topic(a.name)
    ]


__all__ = [
    "KAFKA_TOPIC_CONFIG_DEFAULTS",
    "AclSpec",
    "ConfigEntryInfo",
    "RefreshResult",
    "TopicPlan",
    "acls_to_sync",
    "assign_round_robin",
    "config_alter_ops",
    "counts",
    "create_configs",
    "expand",
    "is_known_target_topic",
    "is_source_default",
    "plan_topic_changes",
    "refresh_changes",
    "should_replicate_acl",
    "target_acl",
    "target_config_entries",
]
