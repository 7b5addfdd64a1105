"""Replication policies: how remote topics and MM2's internal topics are named.

Pure string logic with no Kafka client, so applications, the connectors and the Spark jobs all
agree on names. Behaviour follows Apache Kafka 4.x ``ReplicationPolicy`` /
``DefaultReplicationPolicy`` / ``IdentityReplicationPolicy`` exactly, including KIP-949
(``replication.policy.internal.topic.separator.enabled``) and KIP-1074 (only ``mm2*...internal``
and checkpoint topics count as MM2-internal; ``__``/``.`` prefixes are Kafka-internal).

Example::

    >>> p = DefaultReplicationPolicy()
    >>> p.format_remote_topic("us-west", "orders")
    'us-west.orders'
    >>> p.topic_source("us-east.us-west.orders"), p.original_topic("us-east.us-west.orders")
    ('us-east', 'orders')
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from mirror.client._classes import instantiate, java_bool, resolve_class
from mirror.client.errors import MirrorConfigError

log = logging.getLogger(__name__)

REPLICATION_POLICY_CLASS = "replication.policy.class"
REPLICATION_POLICY_CLASS_DEFAULT = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
SEPARATOR_CONFIG = "replication.policy.separator"
SEPARATOR_DEFAULT = "."
INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG = "replication.policy.internal.topic.separator.enabled"
INTERNAL_TOPIC_SEPARATOR_ENABLED_DEFAULT = True
SOURCE_CLUSTER_ALIAS_CONFIG = "source.cluster.alias"

HEARTBEATS_TOPIC = "heartbeats"


class ReplicationPolicy(ABC):
    """Maps topic names between clusters and names MM2's internal topics.

    Implementations must be constructible without arguments; :meth:`configure` then receives the
    connector (or client) properties, as Kafka's ``Configurable`` does. ``None`` plays the role of
    Java ``null``: "not a remote topic".
    """

    def configure(self, props: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply settings; the default policy reads the separator keys."""

    @abstractmethod
    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        """Name of ``topic`` from ``source_cluster_alias`` once replicated to another cluster."""

    @abstractmethod
    def topic_source(self, topic: str) -> str | None:
        """Alias of the cluster ``topic`` was replicated from, or None if it is not remote."""

    @abstractmethod
    def upstream_topic(self, topic: str) -> str | None:
        """Name of ``topic`` on the cluster it came from (may itself be remote), or None."""

    def original_topic(self, topic: str) -> str:
        """Name of the topic on the cluster where it was first produced (any number of hops)."""
        while True:
            upstream = self.upstream_topic(topic)
            if upstream is None or upstream == topic:
                return topic
            topic = upstream

    def heartbeats_topic(self) -> str:
        return HEARTBEATS_TOPIC

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return f"mm2-offset-syncs.{cluster_alias}.internal"

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return f"{cluster_alias}.checkpoints.internal"

    def is_heartbeats_topic(self, topic: str) -> bool:
        return self.heartbeats_topic() == self.original_topic(topic)

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(".checkpoints.internal")

    def is_mm2_internal_topic(self, topic: str) -> bool:
        """KIP-1074: MM2's own topics, never replicated."""
        return (topic.startswith("mm2") and topic.endswith(".internal")) or self.is_checkpoints_topic(topic)

    def is_internal_topic(self, topic: str) -> bool:
        """Topics never replicated whatever the filter says (KIP-1074 rules)."""
        return self.is_mm2_internal_topic(topic) or topic.startswith("__") or topic.startswith(".")


def java_split(text: str, separator: str) -> list[str]:
    """``text.split(Pattern.quote(separator))`` with Java semantics: trailing empty parts dropped."""
    parts = text.split(separator)
    while parts and not parts[-1]:
        parts.pop()
    return parts


class DefaultReplicationPolicy(ReplicationPolicy):
    """Prefixes remote topics with the source alias: ``<source><separator><topic>``."""

    def __init__(self) -> None:
        self._separator = SEPARATOR_DEFAULT
        self._internal_separator_enabled = INTERNAL_TOPIC_SEPARATOR_ENABLED_DEFAULT
        self._recompute()

    def configure(self, props: Mapping[str, Any]) -> None:
        # As in Kafka, the internal-separator flag is read only together with a separator.
        if SEPARATOR_CONFIG in props:
            separator = props[SEPARATOR_CONFIG]
            if not isinstance(separator, str) or not separator:
                raise MirrorConfigError("the separator must be a non-empty string", key=SEPARATOR_CONFIG)
            self._separator = separator
            if separator != SEPARATOR_DEFAULT:
                log.info("Using custom remote topic separator: '%s'", separator)
            if INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG in props:
                self._internal_separator_enabled = java_bool(props[INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG])
                if not self._internal_separator_enabled:
                    log.warning(
                        "Disabling custom topic separator for internal topics; will use '.' instead of '%s'", separator
                    )
        self._recompute()

    def _recompute(self) -> None:
        isep = self._separator if self._internal_separator_enabled else "."
        self._internal_sep = isep
        self._internal_suffix = isep + "internal"
        self._checkpoints_suffix = isep + "checkpoints" + isep + "internal"

    @property
    def separator(self) -> str:
        return self._separator

    @property
    def internal_topic_separator_enabled(self) -> bool:
        return self._internal_separator_enabled

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        return source_cluster_alias + self._separator + topic

    def topic_source(self, topic: str) -> str | None:
        parts = java_split(topic, self._separator)
        return parts[0] if len(parts) >= 2 else None

    def upstream_topic(self, topic: str) -> str | None:
        source = DefaultReplicationPolicy.topic_source(self, topic)
        if source is None:
            return None
        return topic[len(source) + len(self._separator) :]

    def offset_syncs_topic(self, cluster_alias: str) -> str:
        return "mm2-offset-syncs" + self._internal_sep + cluster_alias + self._internal_suffix

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return cluster_alias + self._checkpoints_suffix

    def is_checkpoints_topic(self, topic: str) -> bool:
        return topic.endswith(self._checkpoints_suffix)

    def is_mm2_internal_topic(self, topic: str) -> bool:
        return (topic.startswith("mm2") and topic.endswith(self._internal_suffix)) or self.is_checkpoints_topic(topic)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(separator={self._separator!r}, "
            f"internal_topic_separator_enabled={self._internal_separator_enabled})"
        )


class IdentityReplicationPolicy(DefaultReplicationPolicy):
    """Keeps topic names unchanged (one-way replication, legacy MirrorMaker migration).

    Heartbeat topics (names ending in ``heartbeats``) still follow the default rules, so
    ``MirrorClient`` can trace flows. This policy cannot detect cycles: keep the topology acyclic.
    """

    def __init__(self) -> None:
        super().__init__()
        self._source_cluster_alias: str | None = None

    def configure(self, props: Mapping[str, Any]) -> None:
        super().configure(props)
        if SOURCE_CLUSTER_ALIAS_CONFIG in props:
            alias = props[SOURCE_CLUSTER_ALIAS_CONFIG]
            self._source_cluster_alias = None if alias is None else str(alias)

    @property
    def source_cluster_alias(self) -> str | None:
        return self._source_cluster_alias

    def _looks_like_heartbeat(self, topic: str) -> bool:
        return topic.endswith(self.heartbeats_topic())

    def format_remote_topic(self, source_cluster_alias: str, topic: str) -> str:
        if self._looks_like_heartbeat(topic):
            return super().format_remote_topic(source_cluster_alias, topic)
        return topic

    def topic_source(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().topic_source(topic)
        return self._source_cluster_alias

    def upstream_topic(self, topic: str) -> str | None:
        if self._looks_like_heartbeat(topic):
            return super().upstream_topic(topic)
        return topic


_ALIASES: dict[str, type[ReplicationPolicy]] = {}
for _cls in (DefaultReplicationPolicy, IdentityReplicationPolicy):
    _ALIASES[f"org.apache.kafka.connect.mirror.{_cls.__name__}"] = _cls
    _ALIASES[_cls.__name__] = _cls


def policy_class(name: Any) -> type[ReplicationPolicy]:
    """Resolve a ``replication.policy.class`` value (Java name, Python path or class)."""
    return resolve_class(REPLICATION_POLICY_CLASS, name, ReplicationPolicy, _ALIASES)


def policy_from_config(props: Mapping[str, Any]) -> ReplicationPolicy:
    """Build and configure the policy ``props`` select, as Kafka's ``getConfiguredInstance`` does.

    All of ``props`` are passed to :meth:`ReplicationPolicy.configure`, so custom policies see
    every connector/client setting (IdentityReplicationPolicy reads ``source.cluster.alias``).
    """
    cls = policy_class(props.get(REPLICATION_POLICY_CLASS) or REPLICATION_POLICY_CLASS_DEFAULT)
    policy = instantiate(REPLICATION_POLICY_CLASS, cls)
    policy.configure(props)
    return policy


def is_cycle(policy: ReplicationPolicy, topic: str, target_cluster_alias: str) -> bool:
    """True if ``topic`` already passed through ``target_cluster_alias`` (replicating it loops).

    Mirrors ``MirrorSourceConnector.isCycle``: walk upstream until the name stops changing, since
    policies like IdentityReplicationPolicy cannot tell.
    """
    seen: set[str] = set()
    while True:
        source = policy.topic_source(topic)
        if source is None:
            return False
        if source == target_cluster_alias:
            return True
        upstream = policy.upstream_topic(topic)
        if upstream is None or upstream == topic or upstream in seen:
            return False
        seen.add(topic)
        topic = upstream


__all__ = [
    "HEARTBEATS_TOPIC",
    "INTERNAL_TOPIC_SEPARATOR_ENABLED_CONFIG",
    "REPLICATION_POLICY_CLASS",
    "REPLICATION_POLICY_CLASS_DEFAULT",
    "SEPARATOR_CONFIG",
    "SEPARATOR_DEFAULT",
    "SOURCE_CLUSTER_ALIAS_CONFIG",
    "DefaultReplicationPolicy",
    "IdentityReplicationPolicy",
    "ReplicationPolicy",
    "is_cycle",
    "java_split",
    "policy_class",
    "policy_from_config",
]
