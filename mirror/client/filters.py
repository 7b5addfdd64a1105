"""Topic, group and topic-config-property filters (Kafka's ``DefaultTopicFilter`` & co.).

Each include/exclude setting is a Kafka LIST of regexes. The items are joined with ``|`` into one
regex that must match the WHOLE name (Java ``Matcher.matches``); an empty list matches nothing, so
``topics=`` replicates nothing and ``topics.exclude=`` excludes nothing. Excludes win over includes.

Defaults are Kafka 4.x's (KIP-1074 narrowed ``topics.exclude`` to MM2's own ``mm2*.internal``
topics). The pre-3.0 ``*.blacklist`` keys, which Kafka 4.0 dropped, are still honoured here when the
new key is absent, so old mm2.properties files keep their meaning.

Custom filters: subclass :class:`TopicFilter` / :class:`GroupFilter` / :class:`ConfigPropertyFilter`
and name the class in ``topic.filter.class`` etc. (``pkg.module.Class``); it is built without
arguments and then ``configure``-d with all connector properties.
"""

from __future__ import annotations

import logging
import re
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

from mirror.client._classes import instantiate, resolve_class
from mirror.client.errors import MirrorConfigError
from mirror.client.policy import ReplicationPolicy, is_cycle

log = logging.getLogger(__name__)

TOPICS_INCLUDE_CONFIG = "topics"
TOPICS_INCLUDE_DEFAULT = ".*"
TOPICS_EXCLUDE_CONFIG = "topics.exclude"
TOPICS_EXCLUDE_DEFAULT = r"mm2.*\.internal, .*\.replica, __.*"
TOPICS_EXCLUDE_ALIAS_CONFIG = "topics.blacklist"

GROUPS_INCLUDE_CONFIG = "groups"
GROUPS_INCLUDE_DEFAULT = ".*"
GROUPS_EXCLUDE_CONFIG = "groups.exclude"
GROUPS_EXCLUDE_DEFAULT = "console-consumer-.*, connect-.*, __.*"
GROUPS_EXCLUDE_ALIAS_CONFIG = "groups.blacklist"

CONFIG_PROPERTIES_EXCLUDE_CONFIG = "config.properties.exclude"
CONFIG_PROPERTIES_EXCLUDE_DEFAULT = (
    r"follower\.replication\.throttled\.replicas, "
    r"leader\.replication\.throttled\.replicas, "
    r"message\.timestamp\.difference\.max\.ms, "
    r"message\.timestamp\.type, "
    r"unclean\.leader\.election\.enable, "
    r"min\.insync\.replicas"
)
CONFIG_PROPERTIES_EXCLUDE_ALIAS_CONFIG = "config.properties.blacklist"
USE_DEFAULTS_FROM_CONFIG = "use.defaults.from"
USE_DEFAULTS_FROM_DEFAULT = "target"

TOPIC_FILTER_CLASS_CONFIG = "topic.filter.class"
GROUP_FILTER_CLASS_CONFIG = "group.filter.class"
CONFIG_PROPERTY_FILTER_CLASS_CONFIG = "config.property.filter.class"

_COMMA = re.compile(r"\s*,\s*")


def parse_list(value: Any) -> list[str]:
    """Kafka ``ConfigDef`` LIST parsing: trim, empty -> [], else split on commas (keeping empties)."""
    if value is None:
        return []
    if isinstance(value, str):
        trimmed = value.strip()
        return _COMMA.split(trimmed) if trimmed else []
    if isinstance(value, Sequence):
        return [str(v) for v in value]
    raise TypeError(f"expected a comma-separated string or a list, got {value!r}")


def compile_pattern_list(key: str, items: Sequence[str]) -> re.Pattern[str] | None:
    """One regex for a LIST setting; None (match nothing) for an empty list."""
    if not items:
        return None
    joined = "|".join(items)
    try:
        return re.compile(joined)
    except re.error as e:
        raise MirrorConfigError(f"invalid regular expression {joined!r}: {e}", key=key) from e


def _setting(props: Mapping[str, Any], key: str, default: str, alias: str | None = None) -> Any:
    """Value for ``key``, else the deprecated ``alias`` value, else ``default``."""
    value = props.get(key)
    if value is not None:
        if alias is not None and props.get(alias) is not None:
            log.warning("Both %s and deprecated %s are set; using %s", key, alias, key)
        return value
    if alias is not None:
        value = props.get(alias)
        if value is not None:
            log.warning("%s is deprecated; use %s", alias, key)
            return value
    return default


def _pattern(props: Mapping[str, Any], key: str, default: str, alias: str | None = None) -> re.Pattern[str] | None:
    value = _setting(props, key, default, alias)
    try:
        items = parse_list(value)
    except TypeError as e:
        raise MirrorConfigError(str(e), key=key) from e
    return compile_pattern_list(key, items)


class TopicFilter(ABC):
    """Decides which source topics are replicated (and checkpointed)."""

    def configure(self, props: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply connector properties; the default does nothing."""

    @abstractmethod
    def should_replicate_topic(self, topic: str) -> bool:
        """True to replicate."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; the default does nothing."""


class GroupFilter(ABC):
    """Decides which consumer groups are checkpointed."""

    def configure(self, props: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply connector properties; the default does nothing."""

    @abstractmethod
    def should_replicate_group(self, group: str) -> bool:
        """True to replicate."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; the default does nothing."""


class ConfigPropertyFilter(ABC):
    """Decides which topic config properties are synced to remote topics."""

    def configure(self, props: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Apply connector properties; the default does nothing."""

    @abstractmethod
    def should_replicate_config_property(self, prop: str) -> bool:
        """True to replicate."""

    def should_replicate_source_default(self, prop: str) -> bool:
        """For a property at its source default: copy the source value (True) or keep the target's."""
        return False

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources; the default does nothing."""


class DefaultTopicFilter(TopicFilter):
    """``topics`` (include, default ``.*``) minus ``topics.exclude``."""

    def __init__(self, props: Mapping[str, Any] | None = None) -> None:
        self.configure(props or {})

    def configure(self, props: Mapping[str, Any]) -> None:
        self._include = _pattern(props, TOPICS_INCLUDE_CONFIG, TOPICS_INCLUDE_DEFAULT)
        self._exclude = _pattern(props, TOPICS_EXCLUDE_CONFIG, TOPICS_EXCLUDE_DEFAULT, TOPICS_EXCLUDE_ALIAS_CONFIG)

    def should_replicate_topic(self, topic: str) -> bool:
        return _included(self._include, topic) and not _included(self._exclude, topic)


class DefaultGroupFilter(GroupFilter):
    """``groups`` (include, default ``.*``) minus ``groups.exclude``."""

    def __init__(self, props: Mapping[str, Any] | None = None) -> None:
        self.configure(props or {})

    def configure(self, props: Mapping[str, Any]) -> None:
        self._include = _pattern(props, GROUPS_INCLUDE_CONFIG, GROUPS_INCLUDE_DEFAULT)
        self._exclude = _pattern(props, GROUPS_EXCLUDE_CONFIG, GROUPS_EXCLUDE_DEFAULT, GROUPS_EXCLUDE_ALIAS_CONFIG)

    def should_replicate_group(self, group: str) -> bool:
        return _included(self._include, group) and not _included(self._exclude, group)


class DefaultConfigPropertyFilter(ConfigPropertyFilter):
    """Everything except ``config.properties.exclude``; source defaults per ``use.defaults.from``."""

    def __init__(self, props: Mapping[str, Any] | None = None) -> None:
        self.configure(props or {})

    def configure(self, props: Mapping[str, Any]) -> None:
        self._exclude = _pattern(
            props,
            CONFIG_PROPERTIES_EXCLUDE_CONFIG,
            CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
            CONFIG_PROPERTIES_EXCLUDE_ALIAS_CONFIG,
        )
        use_defaults_from = _setting(props, USE_DEFAULTS_FROM_CONFIG, USE_DEFAULTS_FROM_DEFAULT)
        self._use_defaults_from = str(use_defaults_from)

    @property
    def use_defaults_from(self) -> str:
        return self._use_defaults_from

    def should_replicate_config_property(self, prop: str) -> bool:
        return not _included(self._exclude, prop)

    def should_replicate_source_default(self, prop: str) -> bool:
        return self._use_defaults_from == "source"


def _included(pattern: re.Pattern[str] | None, name: str) -> bool:
    return pattern is not None and pattern.fullmatch(name) is not None


def _aliases(*classes: type[Any]) -> dict[str, type[Any]]:
    out: dict[str, type[Any]] = {}
    for cls in classes:
        out[f"org.apache.kafka.connect.mirror.{cls.__name__}"] = cls
        out[cls.__name__] = cls
    return out


_TOPIC_ALIASES: dict[str, type[TopicFilter]] = _aliases(DefaultTopicFilter)
_GROUP_ALIASES: dict[str, type[GroupFilter]] = _aliases(DefaultGroupFilter)
_CONFIG_PROPERTY_ALIASES: dict[str, type[ConfigPropertyFilter]] = _aliases(DefaultConfigPropertyFilter)


def topic_filter_from_config(props: Mapping[str, Any]) -> TopicFilter:
    """The filter named by ``topic.filter.class`` (default DefaultTopicFilter), configured with props."""
    cls = resolve_class(
        TOPIC_FILTER_CLASS_CONFIG,
        props.get(TOPIC_FILTER_CLASS_CONFIG) or DefaultTopicFilter,
        TopicFilter,
        _TOPIC_ALIASES,
    )
    f = instantiate(TOPIC_FILTER_CLASS_CONFIG, cls)
    f.configure(props)
    return f


def group_filter_from_config(props: Mapping[str, Any]) -> GroupFilter:
    """The filter named by ``group.filter.class`` (default DefaultGroupFilter), configured with props."""
    cls = resolve_class(
        GROUP_FILTER_CLASS_CONFIG,
        props.get(GROUP_FILTER_CLASS_CONFIG) or DefaultGroupFilter,
        GroupFilter,
        _GROUP_ALIASES,
    )
    f = instantiate(GROUP_FILTER_CLASS_CONFIG, cls)
    f.configure(props)
    return f


def config_property_filter_from_config(props: Mapping[str, Any]) -> ConfigPropertyFilter:
    """The filter named by ``config.property.filter.class`` (default DefaultConfigPropertyFilter)."""
    cls = resolve_class(
        CONFIG_PROPERTY_FILTER_CLASS_CONFIG,
        props.get(CONFIG_PROPERTY_FILTER_CLASS_CONFIG) or DefaultConfigPropertyFilter,
        ConfigPropertyFilter,
        _CONFIG_PROPERTY_ALIASES,
    )
    f = instantiate(CONFIG_PROPERTY_FILTER_CLASS_CONFIG, cls)
    f.configure(props)
    return f


def should_replicate_topic(
    topic: str,
    topic_filter: TopicFilter,
    policy: ReplicationPolicy,
    target_cluster_alias: str,
    heartbeats_replication_enabled: bool = True,
) -> bool:
    """MirrorSourceConnector's topic predicate: filter (or heartbeat), never internal, never a cycle."""
    return (
        (
            topic_filter.should_replicate_topic(topic)
            or (heartbeats_replication_enabled and policy.is_heartbeats_topic(topic))
        )
        and not policy.is_internal_topic(topic)
        and not is_cycle(policy, topic, target_cluster_alias)
    )


__all__ = [
    "CONFIG_PROPERTIES_EXCLUDE_ALIAS_CONFIG",
    "CONFIG_PROPERTIES_EXCLUDE_CONFIG",
    "CONFIG_PROPERTIES_EXCLUDE_DEFAULT",
    "CONFIG_PROPERTY_FILTER_CLASS_CONFIG",
    "GROUPS_EXCLUDE_ALIAS_CONFIG",
    "GROUPS_EXCLUDE_CONFIG",
    "GROUPS_EXCLUDE_DEFAULT",
    "GROUPS_INCLUDE_CONFIG",
    "GROUPS_INCLUDE_DEFAULT",
    "GROUP_FILTER_CLASS_CONFIG",
    "TOPICS_EXCLUDE_ALIAS_CONFIG",
    "TOPICS_EXCLUDE_CONFIG",
    "TOPICS_EXCLUDE_DEFAULT",
    "TOPICS_INCLUDE_CONFIG",
    "TOPICS_INCLUDE_DEFAULT",
    "TOPIC_FILTER_CLASS_CONFIG",
    "USE_DEFAULTS_FROM_CONFIG",
    "USE_DEFAULTS_FROM_DEFAULT",
    "ConfigPropertyFilter",
    "DefaultConfigPropertyFilter",
    "DefaultGroupFilter",
    "DefaultTopicFilter",
    "GroupFilter",
    "TopicFilter",
    "compile_pattern_list",
    "config_property_filter_from_config",
    "group_filter_from_config",
    "parse_list",
    "should_replicate_topic",
]
