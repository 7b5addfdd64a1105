"""Configuration of the three MirrorMaker 2 connectors and their tasks.

Every key and default of Apache Kafka 4.x ``MirrorConnectorConfig``, ``MirrorSourceConfig``,
``MirrorCheckpointConfig``, ``MirrorHeartbeatConfig`` and the two task configs, on top of Connect's
own connector keys (``name``, ``connector.class``, ``tasks.max`` ...), so existing mm2 connector
configs parse unchanged. Parsing raises one :class:`~connect_core.api.errors.ConfigError` naming
every bad key; unknown keys are logged once as warnings (client keys under the documented
prefixes are expected and not reported).

Client configs follow Kafka exactly (reference 1.4): for e.g. the source consumer, the
``source.cluster.*`` keys restricted to client connection/security names, then ``consumer.*``,
then ``source.consumer.*`` (last wins), plus ``client.id`` =
``[user client.id|]<source>-><target>|<connector>[-<task>]|<role>``. The maps use Java client key
names; :mod:`connect_core.kafka.clients` turns them into librdkafka configs.

Intervals come back in seconds as floats; a negative value means "feature disabled", as in Kafka.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from connect_core.api.errors import ConfigError, ConfigIssue
from connect_core.config.configdef import (
    NO_DEFAULT,
    AbstractConfig,
    ConfigDef,
    ConfigValue,
    Importance,
    Range,
    Type,
    ValidString,
)
from connect_core.runtime.connector_config import connector_config_def
from mirror.client.filters import (
    CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
    GROUPS_EXCLUDE_DEFAULT,
    GROUPS_INCLUDE_DEFAULT,
    TOPICS_EXCLUDE_DEFAULT,
    TOPICS_INCLUDE_DEFAULT,
    ConfigPropertyFilter,
    GroupFilter,
    TopicFilter,
    config_property_filter_from_config,
    group_filter_from_config,
    topic_filter_from_config,
)
from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import offset_mappings_topic
from mirror.client.policy import ReplicationPolicy, policy_from_config
from mirror.client.remote_topics import decode_topic_partition, encode_topic_partition
from mirror.connectors.source_incarnation import RECREATED_ACTION_CONFIG, RecreatedAction
from mirror.connectors.throughput_cap import THROUGHPUT_LIMIT, THROUGHPUT_LIMIT_DOC

log = logging.getLogger(__name__)

# -- key names ------------------------------------------------------------------------------------

NAME = "name"
CONNECTOR_CLASS = "connector.class"
TASKS_MAX = "tasks.max"

ENABLED = "enabled"
SOURCE_CLUSTER_ALIAS = "source.cluster.alias"
SOURCE_CLUSTER_ALIAS_DEFAULT = "source"
TARGET_CLUSTER_ALIAS = "target.cluster.alias"
TARGET_CLUSTER_ALIAS_DEFAULT = "target"
REPLICATION_POLICY_CLASS = "replication.policy.class"
REPLICATION_POLICY_CLASS_DEFAULT = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
REPLICATION_POLICY_SEPARATOR = "replication.policy.separator"
INTERNAL_TOPIC_SEPARATOR_ENABLED = "replication.policy.internal.topic.separator.enabled"
ADMIN_TASK_TIMEOUT_MILLIS = "admin.timeout.ms"
FORWARDING_ADMIN_CLASS = "forwarding.admin.class"
FORWARDING_ADMIN_CLASS_DEFAULT = "org.apache.kafka.clients.admin.ForwardingAdmin"
METRIC_REPORTER_CLASSES = "metric.reporters"
SECURITY_PROTOCOL = "security.protocol"
TOPIC_FILTER_CLASS = "topic.filter.class"
TOPIC_FILTER_CLASS_DEFAULT = "org.apache.kafka.connect.mirror.DefaultTopicFilter"
OFFSET_SYNCS_TOPIC_CONFIG_PREFIX = "offset-syncs.topic."
OFFSET_SYNCS_TOPIC_LOCATION = "offset-syncs.topic.location"
EMIT_OFFSET_SYNCS_ENABLED = "emit.offset-syncs.enabled"
OFFSET_SYNCS_CLIENT_ROLE_PREFIX = "offset-syncs-"
TASK_INDEX = "task.index"

# source
TOPICS = "topics"
TOPICS_EXCLUDE = "topics.exclude"
CONFIG_PROPERTIES_EXCLUDE = "config.properties.exclude"
CONFIG_PROPERTY_FILTER_CLASS = "config.property.filter.class"
CONFIG_PROPERTY_FILTER_CLASS_DEFAULT = "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter"
CONSUMER_POLL_TIMEOUT_MILLIS = "consumer.poll.timeout.ms"
REFRESH_TOPICS_ENABLED = "refresh.topics.enabled"
REFRESH_TOPICS_INTERVAL_SECONDS = "refresh.topics.interval.seconds"
SYNC_TOPIC_CONFIGS_ENABLED = "sync.topic.configs.enabled"
SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS = "sync.topic.configs.interval.seconds"
SYNC_TOPIC_ACLS_ENABLED = "sync.topic.acls.enabled"
SYNC_TOPIC_ACLS_INTERVAL_SECONDS = "sync.topic.acls.interval.seconds"
REPLICATION_FACTOR = "replication.factor"
OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR = "offset-syncs.topic.replication.factor"
OFFSET_LAG_MAX = "offset.lag.max"
HEARTBEATS_REPLICATION_ENABLED = "heartbeats.replication.enabled"
BATCH_COPY_ENABLED = "batch.copy.enabled"
BATCH_COPY_ENABLED_DEFAULT = True
BATCH_COPY_MAX_IN_FLIGHT_BYTES = "batch.copy.max.in.flight.bytes"
BATCH_COPY_TRANSACTION_MAX_BYTES = "batch.copy.transaction.max.bytes"
BATCH_COPY_TRANSACTION_MAX_MS = "batch.copy.transaction.max.ms"
#: where a MirrorSource partition without a stored offset starts
OffsetReset = Literal["earliest", "latest"]
#: auto.offset.reset values (Kafka's and librdkafka's spellings) -> their OffsetReset
_OFFSET_RESETS: dict[str, OffsetReset] = {
    "earliest": "earliest",
    "smallest": "earliest",
    "beginning": "earliest",
    "latest": "latest",
    "largest": "latest",
    "end": "latest",
}
USE_DEFAULTS_FROM = "use.defaults.from"
TASK_TOPIC_PARTITIONS = "task.assigned.partitions"

# checkpoint
GROUPS = "groups"
GROUPS_EXCLUDE = "groups.exclude"
GROUP_FILTER_CLASS = "group.filter.class"
GROUP_FILTER_CLASS_DEFAULT = "org.apache.kafka.connect.mirror.DefaultGroupFilter"
REFRESH_GROUPS_ENABLED = "refresh.groups.enabled"
REFRESH_GROUPS_INTERVAL_SECONDS = "refresh.groups.interval.seconds"
EMIT_CHECKPOINTS_ENABLED = "emit.checkpoints.enabled"
EMIT_CHECKPOINTS_INTERVAL_SECONDS = "emit.checkpoints.interval.seconds"
SYNC_GROUP_OFFSETS_ENABLED = "sync.group.offsets.enabled"
SYNC_GROUP_OFFSETS_INTERVAL_SECONDS = "sync.group.offsets.interval.seconds"
CHECKPOINTS_TOPIC_REPLICATION_FACTOR = "checkpoints.topic.replication.factor"
TASK_CONSUMER_GROUPS = "task.assigned.groups"

# heartbeat
EMIT_HEARTBEATS_ENABLED = "emit.heartbeats.enabled"
EMIT_HEARTBEATS_INTERVAL_SECONDS = "emit.heartbeats.interval.seconds"
HEARTBEATS_TOPIC_REPLICATION_FACTOR = "heartbeats.topic.replication.factor"

# Connect source-connector keys the worker reads (not part of the MM2 ConfigDefs, but expected).
EXACTLY_ONCE_SUPPORT = "exactly.once.support"

# client prefixes
SOURCE_CLUSTER_PREFIX = "source.cluster."
TARGET_CLUSTER_PREFIX = "target.cluster."
SOURCE_PREFIX = "source."
TARGET_PREFIX = "target."
PRODUCER_CLIENT_PREFIX = "producer."
CONSUMER_CLIENT_PREFIX = "consumer."
ADMIN_CLIENT_PREFIX = "admin."

# client roles (the last part of client.id)
REPLICATION_CONSUMER_ROLE = "replication-consumer"
REPLICATION_SOURCE_ADMIN_ROLE = "replication-source-admin"
REPLICATION_TARGET_ADMIN_ROLE = "replication-target-admin"
CHECKPOINT_SOURCE_ADMIN_ROLE = "checkpoint-source-admin"
CHECKPOINT_TARGET_ADMIN_ROLE = "checkpoint-target-admin"
HEARTBEATS_TARGET_ADMIN_ROLE = "heartbeats-target-admin"
OFFSET_SYNCS_SOURCE_PRODUCER_ROLE = "offset-syncs-source-producer"
OFFSET_SYNCS_TARGET_PRODUCER_ROLE = "offset-syncs-target-producer"
OFFSET_SYNCS_SOURCE_CONSUMER_ROLE = "offset-syncs-source-consumer"
OFFSET_SYNCS_TARGET_CONSUMER_ROLE = "offset-syncs-target-consumer"
OFFSET_SYNCS_SOURCE_ADMIN_ROLE = "offset-syncs-source-admin"
OFFSET_SYNCS_TARGET_ADMIN_ROLE = "offset-syncs-target-admin"
CHECKPOINTS_TARGET_CONSUMER_ROLE = "checkpoints-target-consumer"

_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")

# -- Connect's connector keys (ConnectorConfig.configDef) -----------------------------------------


def connect_connector_config_def() -> ConfigDef:
    """Connect's common connector keys (``name``, ``connector.class``, ``tasks.max`` ...), shared with
    the runtime so the two never disagree."""
    return connector_config_def()


# -- client security keys (SslConfigs / SaslConfigs client support) -------------------------------

_SSL_KEYS: tuple[tuple[str, Type, Any, Importance], ...] = (
    ("ssl.protocol", Type.STRING, "TLSv1.3", Importance.MEDIUM),
    ("ssl.provider", Type.STRING, None, Importance.MEDIUM),
    ("ssl.cipher.suites", Type.LIST, None, Importance.LOW),
    ("ssl.enabled.protocols", Type.LIST, "TLSv1.2,TLSv1.3", Importance.MEDIUM),
    ("ssl.keystore.type", Type.STRING, "JKS", Importance.MEDIUM),
    ("ssl.keystore.location", Type.STRING, None, Importance.HIGH),
    ("ssl.keystore.password", Type.PASSWORD, None, Importance.HIGH),
    ("ssl.key.password", Type.PASSWORD, None, Importance.HIGH),
    ("ssl.keystore.key", Type.PASSWORD, None, Importance.HIGH),
    ("ssl.keystore.certificate.chain", Type.PASSWORD, None, Importance.HIGH),
    ("ssl.truststore.certificates", Type.PASSWORD, None, Importance.HIGH),
    ("ssl.truststore.type", Type.STRING, "JKS", Importance.MEDIUM),
    ("ssl.truststore.location", Type.STRING, None, Importance.HIGH),
    ("ssl.truststore.password", Type.PASSWORD, None, Importance.HIGH),
    ("ssl.keymanager.algorithm", Type.STRING, "SunX509", Importance.LOW),
    ("ssl.trustmanager.algorithm", Type.STRING, "PKIX", Importance.LOW),
    ("ssl.endpoint.identification.algorithm", Type.STRING, "https", Importance.LOW),
    ("ssl.secure.random.implementation", Type.STRING, None, Importance.LOW),
    ("ssl.engine.factory.class", Type.CLASS, None, Importance.LOW),
)

_SASL_KEYS: tuple[tuple[str, Type, Any, Any, Importance], ...] = (
    ("sasl.kerberos.service.name", Type.STRING, None, None, Importance.MEDIUM),
    ("sasl.kerberos.kinit.cmd", Type.STRING, "/usr/bin/kinit", None, Importance.LOW),
    ("sasl.kerberos.ticket.renew.window.factor", Type.DOUBLE, 0.8, None, Importance.LOW),
    ("sasl.kerberos.ticket.renew.jitter", Type.DOUBLE, 0.05, None, Importance.LOW),
    ("sasl.kerberos.min.time.before.relogin", Type.LONG, 60000, None, Importance.LOW),
    ("sasl.login.refresh.window.factor", Type.DOUBLE, 0.8, Range.between(0.5, 1.0), Importance.LOW),
    ("sasl.login.refresh.window.jitter", Type.DOUBLE, 0.05, Range.between(0.0, 0.25), Importance.LOW),
    ("sasl.login.refresh.min.period.seconds", Type.SHORT, 60, Range.between(0, 900), Importance.LOW),
    ("sasl.login.refresh.buffer.seconds", Type.SHORT, 300, Range.between(0, 3600), Importance.LOW),
    ("sasl.mechanism", Type.STRING, "GSSAPI", None, Importance.MEDIUM),
    ("sasl.jaas.config", Type.PASSWORD, None, None, Importance.MEDIUM),
    ("sasl.client.callback.handler.class", Type.CLASS, None, None, Importance.MEDIUM),
    ("sasl.login.callback.handler.class", Type.CLASS, None, None, Importance.MEDIUM),
    ("sasl.login.class", Type.CLASS, None, None, Importance.MEDIUM),
    ("sasl.login.connect.timeout.ms", Type.INT, None, None, Importance.LOW),
    ("sasl.login.read.timeout.ms", Type.INT, None, None, Importance.LOW),
    ("sasl.login.retry.backoff.max.ms", Type.LONG, 10000, None, Importance.LOW),
    ("sasl.login.retry.backoff.ms", Type.LONG, 100, None, Importance.LOW),
    ("sasl.oauthbearer.scope.claim.name", Type.STRING, "scope", None, Importance.LOW),
    ("sasl.oauthbearer.sub.claim.name", Type.STRING, "sub", None, Importance.LOW),
    ("sasl.oauthbearer.token.endpoint.url", Type.STRING, None, None, Importance.MEDIUM),
    ("sasl.oauthbearer.jwks.endpoint.url", Type.STRING, None, None, Importance.MEDIUM),
    ("sasl.oauthbearer.jwks.endpoint.refresh.ms", Type.LONG, 3600000, None, Importance.LOW),
    ("sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", Type.LONG, 10000, None, Importance.LOW),
    ("sasl.oauthbearer.jwks.endpoint.retry.backoff.ms", Type.LONG, 100, None, Importance.LOW),
    ("sasl.oauthbearer.clock.skew.seconds", Type.INT, 30, None, Importance.LOW),
    ("sasl.oauthbearer.expected.audience", Type.LIST, None, None, Importance.LOW),
    ("sasl.oauthbearer.expected.issuer", Type.STRING, None, None, Importance.LOW),
    ("sasl.oauthbearer.header.urlencode", Type.BOOLEAN, False, None, Importance.LOW),
)

#: Names kept from ``source.cluster.*`` / ``target.cluster.*`` (Kafka's MirrorClientConfig.CLIENT_CONFIG_DEF).
CLIENT_CONNECTION_KEYS: frozenset[str] = frozenset(
    {"bootstrap.servers", SECURITY_PROTOCOL} | {k[0] for k in _SSL_KEYS} | {k[0] for k in _SASL_KEYS}
)


def _with_client_security(cd: ConfigDef) -> ConfigDef:
    for name, type_, default, importance in _SSL_KEYS:
        cd.define(name, type_, default, None, importance, f"Client SSL setting {name} (see Kafka client docs).")
    for name, type_, default, validator, importance in _SASL_KEYS:
        cd.define(name, type_, default, validator, importance, f"Client SASL setting {name} (see Kafka client docs).")
    return cd


# -- the ConfigDefs ---------------------------------------------------------------------------------


def _location(name: str, value: Any) -> None:
    ValidString.in_(SOURCE_CLUSTER_ALIAS_DEFAULT, TARGET_CLUSTER_ALIAS_DEFAULT).ensure_valid(name, value)


def _recreated_action(name: str, value: Any) -> None:
    ValidString.in_(*(a.value for a in RecreatedAction)).ensure_valid(name, value)


def _define_base(cd: ConfigDef) -> ConfigDef:
    cd.define(ENABLED, Type.BOOLEAN, True, None, Importance.LOW, "Whether to replicate source->target.")
    cd.define(SOURCE_CLUSTER_ALIAS, Type.STRING, NO_DEFAULT, None, Importance.HIGH, "Alias of source cluster")
    cd.define(
        TARGET_CLUSTER_ALIAS,
        Type.STRING,
        TARGET_CLUSTER_ALIAS_DEFAULT,
        None,
        Importance.HIGH,
        "Alias of target cluster. Used in metrics reporting.",
    )
    cd.define(
        ADMIN_TASK_TIMEOUT_MILLIS,
        Type.LONG,
        60000,
        None,
        Importance.LOW,
        "Timeout for administrative tasks, e.g. detecting new topics.",
    )
    cd.define(
        REPLICATION_POLICY_CLASS,
        Type.CLASS,
        REPLICATION_POLICY_CLASS_DEFAULT,
        None,
        Importance.LOW,
        "Class which defines the remote topic naming convention.",
    )
    cd.define(
        REPLICATION_POLICY_SEPARATOR,
        Type.STRING,
        ".",
        None,
        Importance.LOW,
        "Separator used in remote topic naming convention.",
    )
    cd.define(
        INTERNAL_TOPIC_SEPARATOR_ENABLED,
        Type.BOOLEAN,
        True,
        None,
        Importance.LOW,
        "Whether to use replication.policy.separator to control the names of topics used for checkpoints "
        "and offset syncs. By default, custom separators are used in these topic names; however, if "
        "upgrading MirrorMaker 2 from older versions that did not allow for these topic names to be "
        "customized, it may be necessary to set this property to 'false' in order to continue using the "
        "same names for those topics.",
    )
    cd.define(
        FORWARDING_ADMIN_CLASS,
        Type.CLASS,
        FORWARDING_ADMIN_CLASS_DEFAULT,
        None,
        Importance.LOW,
        "Class which extends ForwardingAdmin to define custom cluster resource management (topics, "
        "configs, etc). Accepted for compatibility; mm2 always uses its own admin client.",
    )
    cd.define(
        METRIC_REPORTER_CLASSES,
        Type.LIST,
        "org.apache.kafka.common.metrics.JmxReporter",
        None,
        Importance.LOW,
        "A list of classes to use as metrics reporters. Accepted for compatibility; mm2 exports Prometheus metrics.",
    )
    cd.define(
        SECURITY_PROTOCOL,
        Type.STRING,
        "PLAINTEXT",
        ValidString.in_(*_SECURITY_PROTOCOLS),
        Importance.MEDIUM,
        "Protocol used to communicate with brokers.",
    )
    return _with_client_security(cd)


def _define_source(cd: ConfigDef) -> ConfigDef:
    long_ = Type.LONG
    low = Importance.LOW
    return (
        cd.define(
            TOPICS,
            Type.LIST,
            TOPICS_INCLUDE_DEFAULT,
            None,
            Importance.HIGH,
            "Topics to replicate. Supports comma-separated topic names and regexes.",
        )
        .define(
            TOPICS_EXCLUDE,
            Type.LIST,
            TOPICS_EXCLUDE_DEFAULT,
            None,
            Importance.HIGH,
            "Excluded topics. Supports comma-separated topic names and regexes. "
            "Excludes take precedence over includes.",
        )
        .define(
            CONFIG_PROPERTIES_EXCLUDE,
            Type.LIST,
            CONFIG_PROPERTIES_EXCLUDE_DEFAULT,
            None,
            Importance.HIGH,
            "Topic config properties that should not be replicated. Supports comma-separated property names "
            "and regexes.",
        )
        .define(
            TOPIC_FILTER_CLASS,
            Type.CLASS,
            TOPIC_FILTER_CLASS_DEFAULT,
            None,
            low,
            "TopicFilter to use. Selects topics to replicate.",
        )
        .define(
            CONFIG_PROPERTY_FILTER_CLASS,
            Type.CLASS,
            CONFIG_PROPERTY_FILTER_CLASS_DEFAULT,
            None,
            low,
            "ConfigPropertyFilter to use. Selects topic config properties to replicate.",
        )
        .define(CONSUMER_POLL_TIMEOUT_MILLIS, long_, 1000, None, low, "Timeout when polling source cluster.")
        .define(
            REFRESH_TOPICS_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to periodically check for new topics and partitions.",
        )
        .define(REFRESH_TOPICS_INTERVAL_SECONDS, long_, 600, None, low, "Frequency of topic refresh.")
        .define(
            SYNC_TOPIC_CONFIGS_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to periodically configure remote topics to match their corresponding upstream topics.",
        )
        .define(SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS, long_, 600, None, low, "Frequency of topic config sync.")
        .define(
            SYNC_TOPIC_ACLS_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to periodically configure remote topic ACLs to match their corresponding upstream topics.",
        )
        .define(SYNC_TOPIC_ACLS_INTERVAL_SECONDS, long_, 600, None, low, "Frequency of topic ACL sync.")
        .define(REPLICATION_FACTOR, Type.INT, 2, None, low, "Replication factor for newly created remote topics.")
        .define(
            OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR,
            Type.SHORT,
            3,
            None,
            low,
            "Replication factor for offset-syncs topic.",
        )
        .define(
            OFFSET_LAG_MAX, long_, 100, None, low, "How out-of-sync a remote partition can be before it is resynced."
        )
        .define(THROUGHPUT_LIMIT, long_, -1, None, Importance.MEDIUM, THROUGHPUT_LIMIT_DOC)
        .define(
            RECREATED_ACTION_CONFIG,
            Type.STRING,
            RecreatedAction.MIRROR_FROM_START.value,
            _recreated_action,
            Importance.MEDIUM,
            "What the flow does when a mirrored source topic was deleted and recreated (a new topic id): "
            "mirror-from-start copies the new incarnation from its first record into the same remote topic; "
            "fail stops the task with an error until an operator acts; keep-position resumes at the old "
            "incarnation's position, as Java MirrorMaker does (records below it are never mirrored).",
        )
        .define(
            OFFSET_SYNCS_TOPIC_LOCATION,
            Type.STRING,
            SOURCE_CLUSTER_ALIAS_DEFAULT,
            _location,
            low,
            "The location (source/target) of the offset-syncs topic.",
        )
        .define(
            EMIT_OFFSET_SYNCS_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to store the new offset of the replicated records in offset-syncs topic or not. "
            "MirrorCheckpointConnector will not be able to sync group offsets or emit checkpoints if "
            "emit.checkpoints.enabled and/or sync.group.offsets.enabled are enabled while "
            "emit.offset-syncs.enabled is disabled.",
        )
        .define(
            BATCH_COPY_ENABLED,
            Type.BOOLEAN,
            BATCH_COPY_ENABLED_DEFAULT,
            None,
            Importance.MEDIUM,
            "Copy the source's record batches as bytes (never decompressed or re-compressed; only the "
            "producer's fields and the CRC are rewritten) wherever the flow needs no decoded record: "
            "byte-array converters (the default), no transforms or predicates (at-least-once and exactly-once "
            "alike). A batch it cannot pass (old message format, LogAppendTime, offset gaps, above the target topic's "
            "max.message.bytes) goes through the record path, in order. false: every record is decoded and "
            "produced again.",
        )
        .define(
            BATCH_COPY_MAX_IN_FLIGHT_BYTES,
            long_,
            32 * 1024 * 1024,
            Range.at_least(1),
            low,
            "Batch path: the most bytes of source batches produced and not yet acknowledged by the target "
            "per task; fetching waits above it (bounds the task's memory).",
        )
        .define(
            BATCH_COPY_TRANSACTION_MAX_BYTES,
            long_,
            64 * 1024 * 1024,
            Range.at_least(0),
            low,
            "Batch path, exactly-once with transaction.boundary=poll: while the source has a backlog (full "
            "polls), one transaction takes the batches of successive polls up to this many bytes, instead of "
            "one transaction per poll, whose commit each waits for the target to acknowledge everything "
            "first. 0: a transaction per poll.",
        )
        .define(
            BATCH_COPY_TRANSACTION_MAX_MS,
            long_,
            1000,
            Range.at_least(0),
            low,
            "Batch path, exactly-once with transaction.boundary=poll: the longest a transaction spanning "
            "successive polls stays open (read_committed readers see its records only once it commits).",
        )
        .define(
            HEARTBEATS_REPLICATION_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to replicate the heartbeats topics even when the topic filter does not include them. If "
            "set to true, heartbeats topics identified by the replication policy will always be replicated, "
            "regardless of the topic filter configuration. If set to false, heartbeats topics will only be "
            "replicated if the topic filter allows.",
        )
    )


def _define_checkpoint(cd: ConfigDef) -> ConfigDef:
    long_ = Type.LONG
    low = Importance.LOW
    return (
        cd.define(CONSUMER_POLL_TIMEOUT_MILLIS, long_, 1000, None, low, "Timeout when polling source cluster.")
        .define(
            GROUPS,
            Type.LIST,
            GROUPS_INCLUDE_DEFAULT,
            None,
            Importance.HIGH,
            "Consumer groups to replicate. Supports comma-separated group IDs and regexes.",
        )
        .define(
            GROUPS_EXCLUDE,
            Type.LIST,
            GROUPS_EXCLUDE_DEFAULT,
            None,
            Importance.HIGH,
            "Exclude groups. Supports comma-separated group IDs and regexes. Excludes take precedence over includes.",
        )
        .define(
            GROUP_FILTER_CLASS,
            Type.CLASS,
            GROUP_FILTER_CLASS_DEFAULT,
            None,
            low,
            "GroupFilter to use. Selects consumer groups to replicate.",
        )
        .define(
            REFRESH_GROUPS_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to periodically check for new consumer groups.",
        )
        .define(REFRESH_GROUPS_INTERVAL_SECONDS, long_, 600, None, low, "Frequency of group refresh.")
        .define(
            EMIT_CHECKPOINTS_ENABLED,
            Type.BOOLEAN,
            True,
            None,
            low,
            "Whether to replicate consumer offsets to target cluster.",
        )
        .define(EMIT_CHECKPOINTS_INTERVAL_SECONDS, long_, 60, None, low, "Frequency of checkpoints.")
        .define(
            SYNC_GROUP_OFFSETS_ENABLED,
            Type.BOOLEAN,
            False,
            None,
            low,
            "Whether to periodically write the translated offsets to __consumer_offsets topic in target "
            "cluster, as long as no active consumers in that group are connected to the target cluster",
        )
        .define(SYNC_GROUP_OFFSETS_INTERVAL_SECONDS, long_, 60, None, low, "Frequency of consumer group offset sync.")
        .define(
            CHECKPOINTS_TOPIC_REPLICATION_FACTOR, Type.SHORT, 3, None, low, "Replication factor for checkpoints topic."
        )
        .define(
            OFFSET_SYNCS_TOPIC_LOCATION,
            Type.STRING,
            SOURCE_CLUSTER_ALIAS_DEFAULT,
            _location,
            low,
            "The location (source/target) of the offset-syncs topic.",
        )
        .define(
            TOPIC_FILTER_CLASS,
            Type.CLASS,
            TOPIC_FILTER_CLASS_DEFAULT,
            None,
            low,
            "TopicFilter to use. Selects topics to replicate.",
        )
    )


def _define_heartbeat(cd: ConfigDef) -> ConfigDef:
    low = Importance.LOW
    return (
        cd.define(
            EMIT_HEARTBEATS_ENABLED, Type.BOOLEAN, True, None, low, "Whether to emit heartbeats to target cluster."
        )
        .define(EMIT_HEARTBEATS_INTERVAL_SECONDS, Type.LONG, 1, None, low, "Frequency of heartbeats.")
        .define(
            HEARTBEATS_TOPIC_REPLICATION_FACTOR, Type.SHORT, 3, None, low, "Replication factor for heartbeats topic."
        )
    )


BASE_CONNECTOR_CONFIG_DEF: ConfigDef = _define_base(connect_connector_config_def())
SOURCE_CONNECTOR_CONFIG_DEF: ConfigDef = _define_source(ConfigDef(BASE_CONNECTOR_CONFIG_DEF))
CHECKPOINT_CONNECTOR_CONFIG_DEF: ConfigDef = _define_checkpoint(ConfigDef(BASE_CONNECTOR_CONFIG_DEF))
HEARTBEAT_CONNECTOR_CONFIG_DEF: ConfigDef = _define_heartbeat(ConfigDef(BASE_CONNECTOR_CONFIG_DEF))
SOURCE_TASK_CONFIG_DEF: ConfigDef = (
    ConfigDef(SOURCE_CONNECTOR_CONFIG_DEF)
    .define(
        TASK_TOPIC_PARTITIONS,
        Type.LIST,
        None,
        None,
        Importance.LOW,
        "Topic-partitions assigned to this task to replicate.",
    )
    .define(TASK_INDEX, Type.INT, None, None, Importance.LOW, "The index of the task")
)
CHECKPOINT_TASK_CONFIG_DEF: ConfigDef = (
    ConfigDef(CHECKPOINT_CONNECTOR_CONFIG_DEF)
    .define(
        TASK_CONSUMER_GROUPS,
        Type.LIST,
        None,
        None,
        Importance.LOW,
        "Consumer groups assigned to this task to replicate.",
    )
    .define(TASK_INDEX, Type.INT, None, None, Importance.LOW, "The index of the task")
)


def all_connector_config_names() -> frozenset[str]:
    """Every key the three connectors define (what the dedicated driver copies from top-level keys)."""
    return (
        SOURCE_CONNECTOR_CONFIG_DEF.names()
        | CHECKPOINT_CONNECTOR_CONFIG_DEF.names()
        | HEARTBEAT_CONNECTOR_CONFIG_DEF.names()
    )


#: Prefixes of keys expected in connector configs without being MM2 ConfigDef keys: client settings
#: and Connect's per-connector settings (source-connector EOS, topic creation, SMT settings).
KNOWN_PREFIXES: tuple[str, ...] = (
    SOURCE_CLUSTER_PREFIX,
    TARGET_CLUSTER_PREFIX,
    SOURCE_PREFIX,
    TARGET_PREFIX,
    PRODUCER_CLIENT_PREFIX,
    CONSUMER_CLIENT_PREFIX,
    ADMIN_CLIENT_PREFIX,
    "transforms.",
    "predicates.",
    "key.converter.",
    "value.converter.",
    "header.converter.",
    "topic.creation.",
    "transaction.boundary",
    "config.providers",
    "errors.",
    OFFSET_SYNCS_TOPIC_CONFIG_PREFIX,
)

#: Exact keys that are never "unknown": every MM2 connector key (dedicated mode hands the same
#: settings to all three connectors), filter settings read from the originals, Connect EOS keys.
KNOWN_KEYS: frozenset[str] = (
    SOURCE_TASK_CONFIG_DEF.names()
    | CHECKPOINT_TASK_CONFIG_DEF.names()
    | HEARTBEAT_CONNECTOR_CONFIG_DEF.names()
    | {
        TOPICS,
        TOPICS_EXCLUDE,
        GROUPS,
        GROUPS_EXCLUDE,
        USE_DEFAULTS_FROM,
        EMIT_OFFSET_SYNCS_ENABLED,
        EXACTLY_ONCE_SUPPORT,
        "offsets.storage.topic",
        "task.class",
        "topics.blacklist",
        "groups.blacklist",
        "config.properties.blacklist",
    }
)


# -- config objects -------------------------------------------------------------------------------


def _interval(config: AbstractConfig, enabled_key: str, seconds_key: str) -> float:
    """Seconds between runs, or -1 when the feature is disabled (Kafka's negative Duration)."""
    if not config.get_boolean(enabled_key):
        return -1.0
    seconds = config.get_long(seconds_key)
    if seconds <= 0:
        raise ConfigError(
            [ConfigIssue(seconds_key, f"Invalid value {seconds}: must be positive while {enabled_key} is true")]
        )
    return float(seconds)


class MirrorConnectorConfig(AbstractConfig):
    """Settings shared by the three connectors; builds client configs and the replication policy."""

    definition_for_class: ConfigDef = BASE_CONNECTOR_CONFIG_DEF

    def __init__(self, props: Mapping[str, Any], definition: ConfigDef | None = None) -> None:
        super().__init__(definition or self.definition_for_class, props, log_unknown=False)
        for key in self.originals():
            if key not in KNOWN_KEYS and not key.startswith(KNOWN_PREFIXES):
                log.warning("The configuration '%s' was supplied but isn't a known config.", key)
        use_defaults_from = self.originals().get(USE_DEFAULTS_FROM)
        if use_defaults_from is not None and str(use_defaults_from).strip() not in ("source", "target"):
            raise ConfigError(
                [
                    ConfigIssue(
                        USE_DEFAULTS_FROM, f"Invalid value {use_defaults_from}: String must be one of: source, target"
                    )
                ]
            )
        self._policy: ReplicationPolicy | None = None
        # Build the policy now so a bad replication.policy.class fails at start, naming the key.
        self.replication_policy()

    # -- basic values --------------------------------------------------------------------------

    @property
    def connector_name(self) -> str:
        return self.get_string(NAME)

    @property
    def enabled(self) -> bool:
        return self.get_boolean(ENABLED)

    @property
    def admin_timeout_s(self) -> float:
        return self.get_long(ADMIN_TASK_TIMEOUT_MILLIS) / 1000.0

    @property
    def source_cluster_alias(self) -> str:
        return self.get_string(SOURCE_CLUSTER_ALIAS)

    @property
    def target_cluster_alias(self) -> str:
        return self.get_string(TARGET_CLUSTER_ALIAS)

    def replication_policy(self) -> ReplicationPolicy:
        """Configured once per config object with the connector originals (Kafka ``getConfiguredInstance``)."""
        if self._policy is None:
            props = self.originals()
            props.setdefault(REPLICATION_POLICY_CLASS, self.get(REPLICATION_POLICY_CLASS))
            self._policy = policy_from_config(props)
        return self._policy

    def entity_label(self) -> str:
        return f"{self.source_cluster_alias}->{self.target_cluster_alias}|{self.connector_name}"

    # -- clients ---------------------------------------------------------------------------------

    def _client_props(self, cluster_prefix: str, client_prefix: str, scoped_prefix: str) -> dict[str, Any]:
        props: dict[str, Any] = {
            k: v for k, v in self.originals_with_prefix(cluster_prefix).items() if k in CLIENT_CONNECTION_KEYS
        }
        props.update(self._prefixed_client_keys(client_prefix))
        props.update(self._prefixed_client_keys(scoped_prefix))
        return props

    def _prefixed_client_keys(self, prefix: str) -> dict[str, Any]:
        """``prefix*`` originals, minus MM2's own keys that merely share the prefix (admin.timeout.ms...)."""
        own = self.definition.names()
        return {
            k[len(prefix) :]: v
            for k, v in self.originals().items()
            if k.startswith(prefix) and len(k) > len(prefix) and k not in own and not k.startswith(prefix + "override.")
        }

    def add_client_id(self, props: dict[str, Any], role: str | None) -> dict[str, Any]:
        client_id = self.entity_label() + ("" if role is None else "|" + role)
        user = props.get("client.id")
        props["client.id"] = client_id if user is None else f"{user}|{client_id}"
        return props

    def source_consumer_config(self, role: str) -> dict[str, Any]:
        props = source_consumer_config(self.originals(), self.definition.names())
        return self.add_client_id(props, role)

    def source_producer_config(self, role: str) -> dict[str, Any]:
        props = self._client_props(
            SOURCE_CLUSTER_PREFIX, PRODUCER_CLIENT_PREFIX, SOURCE_PREFIX + PRODUCER_CLIENT_PREFIX
        )
        return self.add_client_id(props, role)

    def source_admin_config(self, role: str) -> dict[str, Any]:
        props = self._client_props(SOURCE_CLUSTER_PREFIX, ADMIN_CLIENT_PREFIX, SOURCE_PREFIX + ADMIN_CLIENT_PREFIX)
        return self.add_client_id(props, role)

    def target_admin_config(self, role: str) -> dict[str, Any]:
        props = self._client_props(TARGET_CLUSTER_PREFIX, ADMIN_CLIENT_PREFIX, TARGET_PREFIX + ADMIN_CLIENT_PREFIX)
        return self.add_client_id(props, role)

    def target_producer_config(self, role: str) -> dict[str, Any]:
        props = self._client_props(
            TARGET_CLUSTER_PREFIX, PRODUCER_CLIENT_PREFIX, TARGET_PREFIX + PRODUCER_CLIENT_PREFIX
        )
        return self.add_client_id(props, role)

    def target_consumer_config(self, role: str) -> dict[str, Any]:
        props = self._client_props(
            TARGET_CLUSTER_PREFIX, CONSUMER_CLIENT_PREFIX, TARGET_PREFIX + CONSUMER_CLIENT_PREFIX
        )
        props["enable.auto.commit"] = "false"
        props.setdefault("auto.offset.reset", "earliest")
        return self.add_client_id(props, role)

    # -- offset syncs (shared by source and checkpoint) ------------------------------------------

    @property
    def offset_syncs_topic_location(self) -> str:
        return self.get_string(OFFSET_SYNCS_TOPIC_LOCATION)

    @property
    def offset_syncs_on_source(self) -> bool:
        return self.offset_syncs_topic_location == SOURCE_CLUSTER_ALIAS_DEFAULT

    def offset_syncs_topic(self) -> str:
        """Named after the OTHER cluster: ``mm2-offset-syncs.<target>.internal`` on the source by default."""
        other = self.target_cluster_alias if self.offset_syncs_on_source else self.source_cluster_alias
        return self.replication_policy().offset_syncs_topic(other)

    def offset_mappings_topic(self) -> str:
        """mm2's exact offset mappings, next to the offset-syncs topic (same cluster, same naming rule)."""
        other = self.target_cluster_alias if self.offset_syncs_on_source else self.source_cluster_alias
        return offset_mappings_topic(self.replication_policy(), other)

    def offset_syncs_topic_admin_config(self) -> dict[str, Any]:
        if self.offset_syncs_on_source:
            return self.source_admin_config(OFFSET_SYNCS_SOURCE_ADMIN_ROLE)
        return self.target_admin_config(OFFSET_SYNCS_TARGET_ADMIN_ROLE)

    def checkpoints_topic(self) -> str:
        return self.replication_policy().checkpoints_topic(self.source_cluster_alias)

    def topic_filter(self) -> TopicFilter:
        return topic_filter_from_config(self._filter_props())

    def _filter_props(self) -> dict[str, Any]:
        """Originals plus the parsed class defaults, so filters see Kafka's defaults."""
        props = self.originals()
        for key in (TOPIC_FILTER_CLASS, GROUP_FILTER_CLASS, CONFIG_PROPERTY_FILTER_CLASS):
            if key in self.definition:
                props.setdefault(key, self.get(key))
        return props


def source_consumer_config(props: Mapping[str, Any], own_keys: Iterable[str] = ()) -> dict[str, Any]:
    """The effective source consumer props (no client.id): Kafka's static ``sourceConsumerConfig``.

    Used for the exactly-once check on raw connector props as well.
    """
    own = frozenset(own_keys) | {CONSUMER_POLL_TIMEOUT_MILLIS}
    out: dict[str, Any] = {
        k[len(SOURCE_CLUSTER_PREFIX) :]: v
        for k, v in props.items()
        if k.startswith(SOURCE_CLUSTER_PREFIX) and k[len(SOURCE_CLUSTER_PREFIX) :] in CLIENT_CONNECTION_KEYS
    }
    for prefix in (CONSUMER_CLIENT_PREFIX, SOURCE_PREFIX + CONSUMER_CLIENT_PREFIX):
        out.update(
            {
                k[len(prefix) :]: v
                for k, v in props.items()
                if k.startswith(prefix)
                and len(k) > len(prefix)
                and k not in own
                and not k.startswith(prefix + "override.")
            }
        )
    out["enable.auto.commit"] = "false"
    out.setdefault("auto.offset.reset", "earliest")
    return out


class MirrorSourceConfig(MirrorConnectorConfig):
    """MirrorSourceConnector settings."""

    definition_for_class = SOURCE_CONNECTOR_CONFIG_DEF

    @property
    def consumer_poll_timeout_s(self) -> float:
        return self.get_long(CONSUMER_POLL_TIMEOUT_MILLIS) / 1000.0

    def refresh_topics_interval_s(self) -> float:
        return _interval(self, REFRESH_TOPICS_ENABLED, REFRESH_TOPICS_INTERVAL_SECONDS)

    def sync_topic_configs_interval_s(self) -> float:
        return _interval(self, SYNC_TOPIC_CONFIGS_ENABLED, SYNC_TOPIC_CONFIGS_INTERVAL_SECONDS)

    def sync_topic_acls_interval_s(self) -> float:
        return _interval(self, SYNC_TOPIC_ACLS_ENABLED, SYNC_TOPIC_ACLS_INTERVAL_SECONDS)

    @property
    def replication_factor(self) -> int:
        return self.get_int(REPLICATION_FACTOR)

    @property
    def offset_syncs_topic_replication_factor(self) -> int:
        return self.get_int(OFFSET_SYNCS_TOPIC_REPLICATION_FACTOR)

    @property
    def max_offset_lag(self) -> int:
        return self.get_long(OFFSET_LAG_MAX)

    @property
    def recreated_action(self) -> RecreatedAction:
        return RecreatedAction.parse(str(self.get(RECREATED_ACTION_CONFIG)))

    @property
    def emit_offset_syncs_enabled(self) -> bool:
        return self.get_boolean(EMIT_OFFSET_SYNCS_ENABLED)

    @property
    def batch_copy_enabled(self) -> bool:
        return self.get_boolean(BATCH_COPY_ENABLED)

    @property
    def offset_reset(self) -> OffsetReset:
        """Where a partition without a stored offset starts: ``earliest`` or ``latest``, from the source
        consumer's ``auto.offset.reset`` (MirrorMaker's default ``earliest``; librdkafka's aliases accepted)."""
        value = str(source_consumer_config(self.originals(), self.definition.names())["auto.offset.reset"]).strip()
        reset = _OFFSET_RESETS.get(value.lower())
        if reset is None:
            raise ConfigError(
                [
                    ConfigIssue(
                        "consumer.auto.offset.reset",
                        f"Invalid value {value}: MirrorSourceTask needs earliest or latest for "
                        "partitions without a stored offset",
                    )
                ]
            )
        return reset

    @property
    def batch_copy_max_in_flight_bytes(self) -> int:
        return self.get_long(BATCH_COPY_MAX_IN_FLIGHT_BYTES)

    @property
    def batch_copy_transaction_max_bytes(self) -> int:
        return self.get_long(BATCH_COPY_TRANSACTION_MAX_BYTES)

    @property
    def batch_copy_transaction_max_ms(self) -> int:
        return self.get_long(BATCH_COPY_TRANSACTION_MAX_MS)

    @property
    def heartbeats_replication_enabled(self) -> bool:
        return self.get_boolean(HEARTBEATS_REPLICATION_ENABLED)

    def config_property_filter(self) -> ConfigPropertyFilter:
        return config_property_filter_from_config(self._filter_props())

    def offset_syncs_topic_producer_config(self) -> dict[str, Any]:
        if self.offset_syncs_on_source:
            return self.source_producer_config(OFFSET_SYNCS_SOURCE_PRODUCER_ROLE)
        return self.target_producer_config(OFFSET_SYNCS_TARGET_PRODUCER_ROLE)

    def task_config_for_topic_partitions(
        self, topic_partitions: Iterable[TopicPartition], task_index: int
    ) -> dict[str, str]:
        props = self.originals_strings()
        props[TASK_TOPIC_PARTITIONS] = ",".join(encode_topic_partition(tp) for tp in topic_partitions)
        props[TASK_INDEX] = str(task_index)
        return props


class MirrorSourceTaskConfig(MirrorSourceConfig):
    """MirrorSourceTask settings: the connector's plus the assigned partitions and task index."""

    definition_for_class = SOURCE_TASK_CONFIG_DEF

    def task_topic_partitions(self) -> list[TopicPartition]:
        fields = self.get(TASK_TOPIC_PARTITIONS) or []
        out: list[TopicPartition] = []
        seen: set[TopicPartition] = set()
        for field in fields:
            try:
                tp = decode_topic_partition(field)
            except Exception as e:  # any decode problem is a config problem
                raise ConfigError(
                    [ConfigIssue(TASK_TOPIC_PARTITIONS, f"Invalid topic-partition {field!r}: {e}")]
                ) from e
            if tp not in seen:
                seen.add(tp)
                out.append(tp)
        return out

    @property
    def task_index(self) -> int | None:
        value = self.get(TASK_INDEX)
        return None if value is None else int(value)

    def entity_label(self) -> str:
        index = self.get(TASK_INDEX)
        return f"{super().entity_label()}-{'?' if index is None else index}"


class MirrorCheckpointConfig(MirrorConnectorConfig):
    """MirrorCheckpointConnector settings."""

    definition_for_class = CHECKPOINT_CONNECTOR_CONFIG_DEF

    @property
    def consumer_poll_timeout_s(self) -> float:
        return self.get_long(CONSUMER_POLL_TIMEOUT_MILLIS) / 1000.0

    def emit_checkpoints_interval_s(self) -> float:
        return _interval(self, EMIT_CHECKPOINTS_ENABLED, EMIT_CHECKPOINTS_INTERVAL_SECONDS)

    def refresh_groups_interval_s(self) -> float:
        return _interval(self, REFRESH_GROUPS_ENABLED, REFRESH_GROUPS_INTERVAL_SECONDS)

    def sync_group_offsets_interval_s(self) -> float:
        return _interval(self, SYNC_GROUP_OFFSETS_ENABLED, SYNC_GROUP_OFFSETS_INTERVAL_SECONDS)

    @property
    def checkpoints_topic_replication_factor(self) -> int:
        return self.get_int(CHECKPOINTS_TOPIC_REPLICATION_FACTOR)

    def group_filter(self) -> GroupFilter:
        return group_filter_from_config(self._filter_props())

    def offset_syncs_topic_consumer_config(self) -> dict[str, Any]:
        if self.offset_syncs_on_source:
            return self.source_consumer_config(OFFSET_SYNCS_SOURCE_CONSUMER_ROLE)
        return self.target_consumer_config(OFFSET_SYNCS_TARGET_CONSUMER_ROLE)

    def task_config_for_consumer_groups(self, groups: Iterable[str], task_index: int) -> dict[str, str]:
        props = self.originals_strings()
        props[TASK_CONSUMER_GROUPS] = ",".join(groups)
        props[TASK_INDEX] = str(task_index)
        return props


class MirrorCheckpointTaskConfig(MirrorCheckpointConfig):
    """MirrorCheckpointTask settings: the connector's plus the assigned groups and task index."""

    definition_for_class = CHECKPOINT_TASK_CONFIG_DEF

    def task_consumer_groups(self) -> list[str]:
        groups = self.get(TASK_CONSUMER_GROUPS) or []
        return list(dict.fromkeys(g for g in groups if g))

    def entity_label(self) -> str:
        index = self.get(TASK_INDEX)
        return f"{super().entity_label()}-{'?' if index is None else index}"


class MirrorHeartbeatConfig(MirrorConnectorConfig):
    """MirrorHeartbeatConnector settings."""

    definition_for_class = HEARTBEAT_CONNECTOR_CONFIG_DEF

    def heartbeats_topic(self) -> str:
        return self.replication_policy().heartbeats_topic()

    def emit_heartbeats_interval_s(self) -> float:
        """Seconds between heartbeats (0 allowed, as in Kafka); -1 when disabled."""
        if not self.get_boolean(EMIT_HEARTBEATS_ENABLED):
            return -1.0
        seconds = self.get_long(EMIT_HEARTBEATS_INTERVAL_SECONDS)
        if seconds < 0:
            raise ConfigError(
                [ConfigIssue(EMIT_HEARTBEATS_INTERVAL_SECONDS, f"Invalid value {seconds}: must not be negative")]
            )
        return float(seconds)

    @property
    def heartbeats_topic_replication_factor(self) -> int:
        return self.get_int(HEARTBEATS_TOPIC_REPLICATION_FACTOR)


# -- cross-key validation (Connect's validate endpoint) ------------------------------------------


def validate_source_connector_props(props: Mapping[str, str]) -> dict[str, str]:
    """Errors MirrorSourceConnector.validate adds beyond per-key checks, by key."""
    errors: dict[str, str] = {}
    if props.get(EXACTLY_ONCE_SUPPORT) == "required" and not consumer_uses_read_committed(props):
        errors[EXACTLY_ONCE_SUPPORT] = (
            "MirrorSourceConnector can only provide exactly-once guarantees when its source consumer is "
            "configured with isolation.level set to 'read_committed'; otherwise, records from aborted and "
            "uncommitted transactions will be replicated from the source cluster to the target cluster."
        )
    offset_syncs_configured = any(
        k.startswith(OFFSET_SYNCS_CLIENT_ROLE_PREFIX) or k.startswith(OFFSET_SYNCS_TOPIC_CONFIG_PREFIX) for k in props
    )
    if props.get(EMIT_OFFSET_SYNCS_ENABLED) == "false" and offset_syncs_configured:
        errors[EMIT_OFFSET_SYNCS_ENABLED] = (
            f"MirrorSourceConnector can't setup offset-syncs feature while {EMIT_OFFSET_SYNCS_ENABLED} set to false"
        )
    return errors


def validate_checkpoint_connector_props(props: Mapping[str, str]) -> dict[str, str]:
    """Errors MirrorCheckpointConfig.validate adds (none when the connector is disabled)."""
    errors: dict[str, str] = {}
    if props.get(ENABLED, "true") == "false":
        return errors
    if props.get(EMIT_CHECKPOINTS_ENABLED) == "false":
        errors[EMIT_CHECKPOINTS_ENABLED] = (
            f"MirrorCheckpointConnector can't run with {EMIT_CHECKPOINTS_ENABLED} set to false"
        )
    if props.get(EMIT_OFFSET_SYNCS_ENABLED) == "false":
        errors[EMIT_OFFSET_SYNCS_ENABLED] = "MirrorCheckpointConnector can't run without offset syncs"
    return errors


def add_errors(config_values: list[ConfigValue], errors: Mapping[str, str]) -> list[ConfigValue]:
    """Attach cross-key errors to the matching ConfigValue (creating it if the key is not defined)."""
    by_name = {cv.name: cv for cv in config_values}
    for key, message in errors.items():
        cv = by_name.get(key)
        if cv is None:
            cv = ConfigValue(key)
            config_values.append(cv)
            by_name[key] = cv
        cv.add_error(message)
    return config_values


def consumer_uses_read_committed(props: Mapping[str, Any]) -> bool:
    return str(source_consumer_config(props).get("isolation.level", "")).strip() == "read_committed"


__all__ = [
    "BASE_CONNECTOR_CONFIG_DEF",
    "CHECKPOINT_CONNECTOR_CONFIG_DEF",
    "CHECKPOINT_TASK_CONFIG_DEF",
    "CLIENT_CONNECTION_KEYS",
    "HEARTBEAT_CONNECTOR_CONFIG_DEF",
    "SOURCE_CONNECTOR_CONFIG_DEF",
    "SOURCE_TASK_CONFIG_DEF",
    "MirrorCheckpointConfig",
    "MirrorCheckpointTaskConfig",
    "MirrorConnectorConfig",
    "MirrorHeartbeatConfig",
    "MirrorSourceConfig",
    "MirrorSourceTaskConfig",
    "add_errors",
    "all_connector_config_names",
    "connect_connector_config_def",
    "consumer_uses_read_committed",
    "source_consumer_config",
    "validate_checkpoint_connector_props",
    "validate_source_connector_props",
]
