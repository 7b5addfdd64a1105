"""Connector-level configuration (Kafka's ``ConnectorConfig``, ``SourceConnectorConfig``, topic creation).

Pure logic, no Kafka client: the herder validates with these definitions and the worker reads
tasks.max, converters, error handling and topic-creation groups from them.

Topic creation (KIP-158): ``topic.creation.default.replication.factor`` and ``.partitions`` are
required as soon as any ``topic.creation.*`` key is set; further groups listed in
``topic.creation.groups`` inherit those two and match topics by ``include``/``exclude`` regex
lists (full match, Java ``Matcher.matches``). The first listed group that matches wins, else the
default group (which always includes ``.*``).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.config.configdef import (
    NO_DEFAULT,
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    Importance,
    Range,
    Type,
    ValidString,
    Width,
)

NAME_CONFIG = "name"
CONNECTOR_CLASS_CONFIG = "connector.class"
TASKS_MAX_CONFIG = "tasks.max"
TASKS_MAX_ENFORCE_CONFIG = "tasks.max.enforce"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
CONFIG_RELOAD_ACTION_CONFIG = "config.action.reload"
ERRORS_RETRY_TIMEOUT_CONFIG = "errors.retry.timeout"
ERRORS_RETRY_MAX_DELAY_CONFIG = "errors.retry.delay.max.ms"
ERRORS_TOLERANCE_CONFIG = "errors.tolerance"
ERRORS_LOG_ENABLE_CONFIG = "errors.log.enable"
ERRORS_LOG_INCLUDE_MESSAGES_CONFIG = "errors.log.include.messages"
PRODUCER_OVERRIDES_PREFIX = "producer.override."
CONSUMER_OVERRIDES_PREFIX = "consumer.override."
ADMIN_OVERRIDES_PREFIX = "admin.override."

TOPIC_CREATION_PREFIX = "topic.creation."
TOPIC_CREATION_GROUPS_CONFIG = "topic.creation.groups"
DEFAULT_TOPIC_CREATION_GROUP = "default"
INCLUDE_REGEX_CONFIG = "include"
EXCLUDE_REGEX_CONFIG = "exclude"
REPLICATION_FACTOR_CONFIG = "replication.factor"
PARTITIONS_CONFIG = "partitions"
EXACTLY_ONCE_SUPPORT_CONFIG = "exactly.once.support"
TRANSACTION_BOUNDARY_CONFIG = "transaction.boundary"
TRANSACTION_BOUNDARY_INTERVAL_CONFIG = "transaction.boundary.interval.ms"
OFFSETS_TOPIC_CONFIG = "offsets.storage.topic"

COMMON_GROUP = "Common"
TRANSFORMS_GROUP = "Transforms"
PREDICATES_GROUP = "Predicates"
ERROR_GROUP = "Error Handling"
TOPIC_CREATION_GROUP = "Topic Creation"
EXACTLY_ONCE_GROUP = "Exactly Once Support"
OFFSETS_TOPIC_GROUP = "offsets.topic"

_CONTROL_CHARS = re.compile(r"[\x00-\x1f\x7f]")


class ToleranceType(enum.Enum):
    NONE = "none"
    ALL = "all"


def _name_validator(name: str, value: Any) -> None:
    if value is None or not str(value).strip():
        raise ConfigError(f"Invalid value {value} for configuration {name}: String may not be empty", key=name)
    if _CONTROL_CHARS.search(str(value)):
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: String may not contain control sequences", key=name
        )


def _unique_aliases(kind: str) -> Any:
    def check(name: str, value: Any) -> None:
        if value is None:
            raise ConfigError(f"Invalid value null for configuration {name}", key=name)
        if len(set(value)) != len(value):
            raise ConfigError(
                f"Invalid value {','.join(value)} for configuration {name}: Duplicate alias provided.", key=name
            )

    check.__doc__ = f"unique {kind} aliases"
    return check


def _plugin_validator(kind: str) -> Any:
    def check(name: str, value: Any) -> None:
        if value is None:
            return
        from connect_core.plugins import Plugins

        Plugins.load(str(value), kind, key=name)

    return check


def connector_config_def() -> ConfigDef:
    """Keys every connector accepts (Java ``ConnectorConfig.configDef()``)."""
    o = iter(range(1, 100))
    e = iter(range(1, 100))
    return (
        ConfigDef()
        .define(NAME_CONFIG, Type.STRING, NO_DEFAULT, _name_validator, Importance.HIGH,
                "Globally unique name to use for this connector.", COMMON_GROUP, next(o), Width.MEDIUM,
                "Connector name")
        .define(CONNECTOR_CLASS_CONFIG, Type.STRING, NO_DEFAULT, None, Importance.HIGH,
                "Name or alias of the class for this connector (Java class name, alias, or package.module:Class).",
                COMMON_GROUP, next(o), Width.LONG, "Connector class")
        .define(TASKS_MAX_CONFIG, Type.INT, 1, Range.at_least(1), Importance.HIGH,
                "Maximum number of tasks to use for this connector.", COMMON_GROUP, next(o), Width.SHORT,
                "Tasks max")
        .define(TASKS_MAX_ENFORCE_CONFIG, Type.BOOLEAN, True, None, Importance.LOW,
                "(Deprecated) Whether to fail a connector that generates more tasks than tasks.max.", COMMON_GROUP,
                next(o), Width.SHORT, "Enforce tasks max")
        .define(KEY_CONVERTER_CLASS_CONFIG, Type.CLASS, None, _plugin_validator("converter"), Importance.LOW,
                "Converter for record keys; overrides the worker's.", COMMON_GROUP, next(o), Width.SHORT,
                "Key converter class")
        .define(VALUE_CONVERTER_CLASS_CONFIG, Type.CLASS, None, _plugin_validator("converter"), Importance.LOW,
                "Converter for record values; overrides the worker's.", COMMON_GROUP, next(o), Width.SHORT,
                "Value converter class")
        .define(HEADER_CONVERTER_CLASS_CONFIG, Type.CLASS, None, _plugin_validator("header_converter"),
                Importance.LOW, "HeaderConverter for record headers; overrides the worker's.", COMMON_GROUP,
                next(o), Width.SHORT, "Header converter class")
        .define(TRANSFORMS_CONFIG, Type.LIST, "", _unique_aliases("transformation"), Importance.LOW,
                "Aliases for the transformations to apply to records.", TRANSFORMS_GROUP, next(o), Width.LONG,
                "Transforms")
        .define(PREDICATES_CONFIG, Type.LIST, "", _unique_aliases("predicate"), Importance.LOW,
                "Aliases for the predicates used by transformations.", PREDICATES_GROUP, next(o), Width.LONG,
                "Predicates")
        .define(CONFIG_RELOAD_ACTION_CONFIG, Type.STRING, "restart", ValidString.in_("none", "restart"),
                Importance.LOW, "What to do when external config provider values change.", COMMON_GROUP, next(o),
                Width.MEDIUM, "Reload Action")
        .define(ERRORS_RETRY_TIMEOUT_CONFIG, Type.LONG, 0, None, Importance.MEDIUM,
                "Maximum duration in ms a failed operation is retried; 0 = no retries, -1 = forever.",
                ERROR_GROUP, next(e), Width.MEDIUM, "Retry Timeout for Errors")
        .define(ERRORS_RETRY_MAX_DELAY_CONFIG, Type.LONG, 60000, None, Importance.MEDIUM,
                "Maximum duration in ms between consecutive retry attempts.", ERROR_GROUP, next(e), Width.MEDIUM,
                "Maximum Delay Between Retries for Errors")
        .define(ERRORS_TOLERANCE_CONFIG, Type.STRING, "none", ValidString.in_("none", "all"), Importance.MEDIUM,
                "'none' fails the task on any error; 'all' skips problematic records.", ERROR_GROUP, next(e),
                Width.SHORT, "Error Tolerance")
        .define(ERRORS_LOG_ENABLE_CONFIG, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Log each error and the failed operation.", ERROR_GROUP, next(e), Width.SHORT, "Log Errors")
        .define(ERRORS_LOG_INCLUDE_MESSAGES_CONFIG, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Include the record in error logs.", ERROR_GROUP, next(e), Width.SHORT, "Log Error Details")
    )  # fmt: skip


def source_connector_config_def() -> ConfigDef:
    """``connector_config_def`` plus source-only keys (Java ``SourceConnectorConfig.configDef()``)."""
    o = iter(range(1, 100))

    def non_empty_or_null(name: str, value: Any) -> None:
        if value is not None and not str(value).strip():
            raise ConfigError(f"Invalid value {value} for configuration {name}: String must be non-empty", key=name)

    def at_least_zero_or_null(name: str, value: Any) -> None:
        if value is not None and int(value) < 0:
            raise ConfigError(f"Invalid value {value} for configuration {name}: Value must be at least 0", key=name)

    return (
        ConfigDef(connector_config_def())
        .define(TOPIC_CREATION_GROUPS_CONFIG, Type.LIST, "", _unique_aliases("topic creation group"), Importance.LOW,
                "Groups of configurations for topics created by source connectors.", TOPIC_CREATION_GROUP, next(o),
                Width.LONG, "Topic Creation Groups")
        .define(EXACTLY_ONCE_SUPPORT_CONFIG, Type.STRING, "requested",
                CaseInsensitiveValidString.in_("requested", "required"), Importance.MEDIUM,
                "'required' makes creation fail unless the connector can run exactly-once.", EXACTLY_ONCE_GROUP,
                next(o), Width.SHORT, "Exactly once support")
        .define(TRANSACTION_BOUNDARY_CONFIG, Type.STRING, "poll",
                CaseInsensitiveValidString.in_("poll", "interval", "connector"), Importance.MEDIUM,
                "Transaction boundaries for exactly-once source tasks.", EXACTLY_ONCE_GROUP, next(o), Width.SHORT,
                "Transaction Boundary")
        .define(TRANSACTION_BOUNDARY_INTERVAL_CONFIG, Type.LONG, None, at_least_zero_or_null, Importance.LOW,
                "Transaction commit interval when transaction.boundary=interval.", EXACTLY_ONCE_GROUP, next(o),
                Width.SHORT, "Transaction boundary interval")
        .define(OFFSETS_TOPIC_CONFIG, Type.STRING, None, non_empty_or_null, Importance.LOW,
                "A separate offsets topic for this connector (distributed mode only).", OFFSETS_TOPIC_GROUP, 1,
                Width.LONG, "Offsets topic")
    )  # fmt: skip


# --------------------------------------------------------------------------- topic creation


def _rf_validator(name: str, value: Any) -> None:
    if value is not None and value != -1 and value < 1:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Replication factor must be positive and not larger "
            "than the number of brokers in the Kafka cluster, or -1 to use the broker's default",
            key=name,
        )


def _partitions_validator(name: str, value: Any) -> None:
    if value is not None and value != -1 and value < 1:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Number of partitions must be positive, or -1 to use "
            "the broker's default",
            key=name,
        )


def _regex_validator(name: str, value: Any) -> None:
    for pattern in value or []:
        try:
            re.compile(pattern)
        except re.error as e:
            raise ConfigError(
                f"Invalid value {pattern} for configuration {name}: Syntax error in regular expression: {e}", key=name
            ) from None


def uses_topic_creation(props: Mapping[str, Any]) -> bool:
    return any(k.startswith(TOPIC_CREATION_PREFIX) for k in props)


def _group_aliases(props: Mapping[str, Any]) -> list[str]:
    raw = props.get(TOPIC_CREATION_GROUPS_CONFIG)
    if raw is None:
        return []
    items = raw if isinstance(raw, list | tuple) else [s.strip() for s in str(raw).split(",")]
    out: list[str] = []
    for alias in items:
        a = str(alias).strip()
        if a and a != DEFAULT_TOPIC_CREATION_GROUP and a not in out:
            out.append(a)
    return out


def enrich_topic_creation(definition: ConfigDef, props: Mapping[str, Any]) -> ConfigDef:
    """Add the default group's keys and each listed group's keys (as Java's ``enrich``)."""
    out = ConfigDef(definition)
    prefix = f"{TOPIC_CREATION_PREFIX}{DEFAULT_TOPIC_CREATION_GROUP}."
    group = f"{TOPIC_CREATION_GROUP}: {DEFAULT_TOPIC_CREATION_GROUP}"
    out.define(
        prefix + INCLUDE_REGEX_CONFIG,
        Type.LIST,
        ".*",
        None,
        Importance.LOW,
        "Regexes of topics this group creates.",
        group,
        1,
        Width.LONG,
    )
    out.define(
        prefix + EXCLUDE_REGEX_CONFIG,
        Type.LIST,
        "",
        None,
        Importance.LOW,
        "Regexes of topics this group does not create.",
        group,
        2,
        Width.LONG,
    )
    out.define(
        prefix + REPLICATION_FACTOR_CONFIG,
        Type.SHORT,
        NO_DEFAULT,
        _rf_validator,
        Importance.LOW,
        "Replication factor of created topics (-1: broker default).",
        group,
        3,
        Width.LONG,
    )
    out.define(prefix + PARTITIONS_CONFIG, Type.INT, NO_DEFAULT, _partitions_validator, Importance.LOW,
               "Partitions of created topics (-1: broker default).", group, 4, Width.LONG)  # fmt: skip
    for alias in _group_aliases(props):
        p = f"{TOPIC_CREATION_PREFIX}{alias}."
        g = f"{TOPIC_CREATION_GROUP}: {alias}"
        out.define(
            p + INCLUDE_REGEX_CONFIG,
            Type.LIST,
            "",
            _regex_validator,
            Importance.LOW,
            "Regexes of topics this group creates.",
            g,
            1,
            Width.LONG,
        )
        out.define(
            p + EXCLUDE_REGEX_CONFIG,
            Type.LIST,
            "",
            _regex_validator,
            Importance.LOW,
            "Regexes of topics this group does not create.",
            g,
            2,
            Width.LONG,
        )
        out.define(
            p + REPLICATION_FACTOR_CONFIG,
            Type.SHORT,
            None,
            _rf_validator,
            Importance.LOW,
            "Replication factor (default: the default group's).",
            g,
            3,
            Width.LONG,
        )
        out.define(p + PARTITIONS_CONFIG, Type.INT, None, _partitions_validator, Importance.LOW,
                   "Partitions (default: the default group's).", g, 4, Width.LONG)  # fmt: skip
    return out


@dataclass
class TopicCreationGroup:
    """Settings for topics a source connector creates; ``matches`` is Java's full-match semantics."""

    name: str
    include: list[str]
    exclude: list[str]
    partitions: int
    replication_factor: int
    other_configs: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._include = re.compile("|".join(self.include)) if self.include else None
        self._exclude = re.compile("|".join(self.exclude)) if self.exclude else None

    def matches(self, topic: str) -> bool:
        if self._exclude is not None and self._exclude.fullmatch(topic):
            return False
        return self._include is not None and self._include.fullmatch(topic) is not None


_GROUP_RESERVED = {INCLUDE_REGEX_CONFIG, EXCLUDE_REGEX_CONFIG, REPLICATION_FACTOR_CONFIG, PARTITIONS_CONFIG}


class ConnectorConfig(AbstractConfig):
    """A connector's parsed config; raises ConfigError naming every bad key."""

    def __init__(self, props: Mapping[str, Any], definition: ConfigDef | None = None) -> None:
        super().__init__(definition or connector_config_def(), props, log_unknown=False)

    @property
    def name(self) -> str:
        return str(self.get(NAME_CONFIG))

    @property
    def tasks_max(self) -> int:
        return int(self.get_int(TASKS_MAX_CONFIG))

    @property
    def enforce_tasks_max(self) -> bool:
        return bool(self.get_boolean(TASKS_MAX_ENFORCE_CONFIG))

    @property
    def errors_retry_timeout_ms(self) -> int:
        return int(self.get_long(ERRORS_RETRY_TIMEOUT_CONFIG))

    @property
    def errors_retry_max_delay_ms(self) -> int:
        return int(self.get_long(ERRORS_RETRY_MAX_DELAY_CONFIG))

    @property
    def errors_tolerance(self) -> ToleranceType:
        return ToleranceType(str(self.get_string(ERRORS_TOLERANCE_CONFIG)).lower())

    @property
    def errors_log_enable(self) -> bool:
        return bool(self.get_boolean(ERRORS_LOG_ENABLE_CONFIG))

    @property
    def errors_log_include_messages(self) -> bool:
        return bool(self.get_boolean(ERRORS_LOG_INCLUDE_MESSAGES_CONFIG))


class SourceConnectorConfig(ConnectorConfig):
    """Source connector config; topic-creation groups are parsed only when the worker allows creation."""

    def __init__(self, props: Mapping[str, Any], topic_creation_enabled: bool = True) -> None:
        creating = topic_creation_enabled and uses_topic_creation(props)
        definition = source_connector_config_def()
        if creating:
            definition = enrich_topic_creation(definition, props)
        super().__init__(props, definition)
        self.uses_topic_creation = creating

    def topic_creation_groups(self) -> list[TopicCreationGroup]:
        """Listed groups in order, then the default group (last, matches anything not excluded)."""
        if not self.uses_topic_creation:
            return []
        default_prefix = f"{TOPIC_CREATION_PREFIX}{DEFAULT_TOPIC_CREATION_GROUP}."
        default_rf = int(self.get(default_prefix + REPLICATION_FACTOR_CONFIG))
        default_partitions = int(self.get(default_prefix + PARTITIONS_CONFIG))
        groups: list[TopicCreationGroup] = []
        originals = self.originals()
        for alias in [*_group_aliases(originals), DEFAULT_TOPIC_CREATION_GROUP]:
            p = f"{TOPIC_CREATION_PREFIX}{alias}."
            rf = self.get(p + REPLICATION_FACTOR_CONFIG)
            partitions = self.get(p + PARTITIONS_CONFIG)
            include = list(self.get(p + INCLUDE_REGEX_CONFIG) or [])
            exclude = list(self.get(p + EXCLUDE_REGEX_CONFIG) or [])
            if alias == DEFAULT_TOPIC_CREATION_GROUP:
                include, exclude = [".*"], []  # regexes of the default group are ignored, as in Java
            others = {
                k[len(p) :]: str(v)
                for k, v in originals.items()
                if k.startswith(p) and k[len(p) :] not in _GROUP_RESERVED
            }
            groups.append(
                TopicCreationGroup(
                    alias,
                    include,
                    exclude,
                    default_partitions if partitions is None else int(partitions),
                    default_rf if rf is None else int(rf),
                    others,
                )
            )
        return groups


def topic_creation_group_for(groups: list[TopicCreationGroup], topic: str) -> TopicCreationGroup | None:
    """The first group that matches ``topic`` (the default group comes last)."""
    for group in groups:
        if group.matches(topic):
            return group
    return None


# --------------------------------------------------------------------------- sink connectors

SINK_TOPICS_CONFIG = "topics"
SINK_TOPICS_REGEX_CONFIG = "topics.regex"
DLQ_PREFIX = "errors.deadletterqueue."
DLQ_TOPIC_NAME_CONFIG = DLQ_PREFIX + "topic.name"
DLQ_TOPIC_REPLICATION_FACTOR_CONFIG = DLQ_PREFIX + "topic.replication.factor"
DLQ_CONTEXT_HEADERS_ENABLE_CONFIG = DLQ_PREFIX + "context.headers.enable"


def _java_regex_validator(name: str, value: Any) -> None:
    if value is None or not str(value).strip():
        return
    try:
        re.compile(str(value))
    except re.error as e:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: Syntax error in regular expression: {e}", key=name
        ) from None


def sink_connector_config_def() -> ConfigDef:
    """``connector_config_def`` plus the sink keys (Java ``SinkConnectorConfig.configDef()``)."""
    return (
        ConfigDef(connector_config_def())
        .define(SINK_TOPICS_CONFIG, Type.LIST, "", None, Importance.HIGH,
                "List of topics to consume, separated by commas", COMMON_GROUP, 4, Width.LONG, "Topics")
        .define(SINK_TOPICS_REGEX_CONFIG, Type.STRING, "", _java_regex_validator, Importance.HIGH,
                "Regular expression giving topics to consume. Only one of topics or topics.regex should be "
                "specified.", COMMON_GROUP, 4, Width.LONG, "Topics regex")
        .define(DLQ_TOPIC_NAME_CONFIG, Type.STRING, "", None, Importance.MEDIUM,
                "Topic that receives the records this sink connector, its transformations or converters fail "
                "on (blank: no dead letter queue).", ERROR_GROUP, 6, Width.MEDIUM,
                "Dead Letter Queue Topic Name")
        .define(DLQ_TOPIC_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, None, Importance.MEDIUM,
                "Replication factor of the dead letter queue topic when it must be created.", ERROR_GROUP, 7,
                Width.MEDIUM, "Dead Letter Queue Topic Replication Factor")
        .define(DLQ_CONTEXT_HEADERS_ENABLE_CONFIG, Type.BOOLEAN, False, None, Importance.MEDIUM,
                "Add __connect.errors.* headers describing the error to records written to the dead letter "
                "queue.", ERROR_GROUP, 8, Width.MEDIUM, "Enable Error Context Headers")
    )  # fmt: skip


def parse_topics_list(props: Mapping[str, Any]) -> list[str]:
    """The ``topics`` list without blanks and repeats, in order (Java ``parseTopicsList``)."""
    raw = props.get(SINK_TOPICS_CONFIG)
    items = raw if isinstance(raw, list | tuple) else str(raw or "").split(",")
    out: list[str] = []
    for item in items:
        t = str(item).strip()
        if t and t not in out:
            out.append(t)
    return out


def sink_topic_errors(props: Mapping[str, Any]) -> dict[str, list[str]]:
    """Java ``SinkConnectorConfig.validate``'s cross-key rules: key -> error messages (empty when valid)."""
    topics = str(props.get(SINK_TOPICS_CONFIG) or "")
    regex = str(props.get(SINK_TOPICS_REGEX_CONFIG) or "")
    dlq = str(props.get(DLQ_TOPIC_NAME_CONFIG) or "").strip()
    has_topics, has_regex = bool(topics.strip()), bool(regex.strip())
    errors: dict[str, list[str]] = {}

    def add(key: str, message: str) -> None:
        errors.setdefault(key, []).append(message)

    if has_topics and has_regex:
        message = (
            f"{SINK_TOPICS_CONFIG} and {SINK_TOPICS_REGEX_CONFIG} are mutually exclusive options, but both are set."
        )
        add(SINK_TOPICS_CONFIG, message)
        add(SINK_TOPICS_REGEX_CONFIG, message)
    if not has_topics and not has_regex:
        message = f"Must configure one of {SINK_TOPICS_CONFIG} or {SINK_TOPICS_REGEX_CONFIG}"
        add(SINK_TOPICS_CONFIG, message)
        add(SINK_TOPICS_REGEX_CONFIG, message)
    if dlq:
        listed = parse_topics_list(props)
        if has_topics and dlq in listed:
            add(
                SINK_TOPICS_CONFIG,
                f"The DLQ topic '{dlq}' may not be included in the list of topics "
                f"('{SINK_TOPICS_CONFIG}=[{', '.join(listed)}]') consumed by the connector",
            )
        if has_regex:
            try:
                matched = re.fullmatch(regex, dlq) is not None
            except re.error:
                matched = False
            if matched:
                add(
                    SINK_TOPICS_REGEX_CONFIG,
                    f"The DLQ topic '{dlq}' may not be matched by the regex for the "
                    f"topics ('{SINK_TOPICS_REGEX_CONFIG}={regex}') consumed by the "
                    "connector",
                )
    return errors


class SinkConnectorConfig(ConnectorConfig):
    """Sink connector config: raises ConfigError for bad keys and for the topics/DLQ rules."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(props, sink_connector_config_def())
        errors = sink_topic_errors(props)
        if errors:
            key, messages = next(iter(errors.items()))
            raise ConfigError(messages[0], key=key)

    @property
    def topics(self) -> list[str]:
        return parse_topics_list(self.originals())

    @property
    def topics_regex(self) -> str | None:
        regex = str(self.get(SINK_TOPICS_REGEX_CONFIG) or "").strip()
        return regex or None

    @property
    def dlq_topic(self) -> str:
        return str(self.get(DLQ_TOPIC_NAME_CONFIG) or "").strip()

    @property
    def dlq_replication_factor(self) -> int:
        return int(self.get(DLQ_TOPIC_REPLICATION_FACTOR_CONFIG))

    @property
    def dlq_context_headers(self) -> bool:
        return bool(self.get_boolean(DLQ_CONTEXT_HEADERS_ENABLE_CONFIG))
