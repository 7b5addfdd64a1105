"""Worker configuration (Kafka's ``WorkerConfig`` / ``StandaloneConfig``) and client config building.

Keys and defaults are Kafka's, so a Java ``connect-standalone.properties`` keeps working. Keys that
only make sense on the JVM are accepted and ignored with a note in their documentation
(``plugin.path``: plugins are Python classes resolved by :mod:`connect_core.plugins`).

Client configs follow Java's ``Worker.baseProducerConfigs``/``adminConfigs``: worker-level shared
keys, then ``producer.``/``consumer.``/``admin.`` worker overrides, then the connector's
``producer.override.``/``admin.override.`` keys, which the
``connector.client.config.override.policy`` (All / None / Principal) must allow.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError, ConfigIssue
from connect_core.config.configdef import (
    AbstractConfig,
    CaseInsensitiveValidString,
    ConfigDef,
    ConfigValue,
    Importance,
    Range,
    Type,
    ValidString,
)
from connect_core.kafka.clients import SHARED_CLIENT_KEYS

BOOTSTRAP_SERVERS_CONFIG = "bootstrap.servers"
KEY_CONVERTER_CLASS_CONFIG = "key.converter"
VALUE_CONVERTER_CLASS_CONFIG = "value.converter"
HEADER_CONVERTER_CLASS_CONFIG = "header.converter"
HEADER_CONVERTER_CLASS_DEFAULT = "org.apache.kafka.connect.storage.SimpleHeaderConverter"
TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG = "task.shutdown.graceful.timeout.ms"
TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_DEFAULT = 5000
OFFSET_COMMIT_INTERVAL_MS_CONFIG = "offset.flush.interval.ms"
OFFSET_COMMIT_TIMEOUT_MS_CONFIG = "offset.flush.timeout.ms"
PLUGIN_PATH_CONFIG = "plugin.path"
CONFIG_PROVIDERS_CONFIG = "config.providers"
CONNECTOR_CLIENT_POLICY_CLASS_CONFIG = "connector.client.config.override.policy"
TOPIC_TRACKING_ENABLE_CONFIG = "topic.tracking.enable"
TOPIC_TRACKING_ALLOW_RESET_CONFIG = "topic.tracking.allow.reset"
TOPIC_CREATION_ENABLE_CONFIG = "topic.creation.enable"
LISTENERS_CONFIG = "listeners"
REST_ADVERTISED_HOST_NAME_CONFIG = "rest.advertised.host.name"
REST_ADVERTISED_PORT_CONFIG = "rest.advertised.port"
REST_ADVERTISED_LISTENER_CONFIG = "rest.advertised.listener"
ACCESS_CONTROL_ALLOW_ORIGIN_CONFIG = "access.control.allow.origin"
ACCESS_CONTROL_ALLOW_METHODS_CONFIG = "access.control.allow.methods"
ADMIN_LISTENERS_CONFIG = "admin.listeners"
OFFSET_STORAGE_FILE_FILENAME_CONFIG = "offset.storage.file.filename"

COMMON_GROUP = "Common"

# --------------------------------------------------------------------------- override policies

_POLICY_PACKAGE = "org.apache.kafka.connect.connector.policy."
_PRINCIPAL_ALLOWED = frozenset({"sasl.jaas.config", "sasl.mechanism", "security.protocol"})


class ConnectorClientConfigOverridePolicy:
    """Which ``<client>.override.*`` keys a connector may set (Kafka's policies of the same names)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def is_allowed(self, key: str) -> bool:
        if self.name == "All":
            return True
        if self.name == "Principal":
            return key in _PRINCIPAL_ALLOWED
        return False

    def validate(self, overrides: Mapping[str, Any]) -> list[ConfigValue]:
        """One ConfigValue per override key, with an error where the policy forbids it."""
        out: list[ConfigValue] = []
        for key, value in overrides.items():
            cv = ConfigValue(key, value)
            if not self.is_allowed(key):
                cv.add_error(
                    f"The '{self.name}' policy does not allow '{key}' to be overridden in the connector configuration."
                )
            out.append(cv)
        return out

    def __repr__(self) -> str:
        return f"ConnectorClientConfigOverridePolicy({self.name})"


def override_policy(name: str) -> ConnectorClientConfigOverridePolicy:
    """Resolve ``All``/``None``/``Principal`` or the Java class names of those policies."""
    raw = (name or "").strip()
    simple = raw[len(_POLICY_PACKAGE) :] if raw.startswith(_POLICY_PACKAGE) else raw
    simple = simple.removesuffix("ConnectorClientConfigOverridePolicy")
    for candidate in ("All", "None", "Principal"):
        if simple.lower() == candidate.lower():
            return ConnectorClientConfigOverridePolicy(candidate)
    raise ConfigError(
        f"Invalid value {raw} for configuration {CONNECTOR_CLIENT_POLICY_CLASS_CONFIG}: "
        "expected All, None or Principal (or their Java class names)",
        key=CONNECTOR_CLIENT_POLICY_CLASS_CONFIG,
    )


def _policy_validator(name: str, value: Any) -> None:
    override_policy(str(value))


# --------------------------------------------------------------------------- definitions


def base_config_def() -> ConfigDef:
    """Keys every worker (standalone or distributed) understands."""
    order = 0

    def nxt() -> int:
        nonlocal order
        order += 1
        return order

    return (
        ConfigDef()
        .define(BOOTSTRAP_SERVERS_CONFIG, Type.LIST, "localhost:9092", importance=Importance.HIGH,
                documentation="Kafka brokers the worker connects to (host:port,...).", group=COMMON_GROUP,
                order_in_group=nxt())
        .define("client.dns.lookup", Type.STRING, "use_all_dns_ips",
                ValidString.in_("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"),
                importance=Importance.MEDIUM, documentation="How clients use DNS lookups.")
        .define(KEY_CONVERTER_CLASS_CONFIG, Type.CLASS, importance=Importance.HIGH,
                documentation="Converter class for record keys (e.g. ByteArrayConverter).", group=COMMON_GROUP,
                order_in_group=nxt())
        .define(VALUE_CONVERTER_CLASS_CONFIG, Type.CLASS, importance=Importance.HIGH,
                documentation="Converter class for record values.", group=COMMON_GROUP, order_in_group=nxt())
        .define(HEADER_CONVERTER_CLASS_CONFIG, Type.CLASS, HEADER_CONVERTER_CLASS_DEFAULT, importance=Importance.LOW,
                documentation="HeaderConverter class for record headers.", group=COMMON_GROUP,
                order_in_group=nxt())
        .define(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG, Type.LONG, TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_DEFAULT,
                Range.at_least(0), importance=Importance.LOW,
                documentation="How long to wait for tasks to stop gracefully before abandoning them (total, not "
                "per task).")
        .define(OFFSET_COMMIT_INTERVAL_MS_CONFIG, Type.LONG, 60000, Range.at_least(0), importance=Importance.LOW,
                documentation="Interval at which source tasks flush their committable offsets.")
        .define(OFFSET_COMMIT_TIMEOUT_MS_CONFIG, Type.LONG, 5000, Range.at_least(0), importance=Importance.LOW,
                documentation="Maximum time to wait for an offset flush (and for outstanding records at stop) "
                "before cancelling it.")
        .define(PLUGIN_PATH_CONFIG, Type.LIST, None, importance=Importance.LOW,
                documentation="Accepted for compatibility and ignored: mm2 plugins are Python classes named by "
                "Java alias or 'package.module:Class'.")
        .define("plugin.discovery", Type.STRING, "hybrid_warn",
                CaseInsensitiveValidString.in_("only_scan", "hybrid_warn", "hybrid_fail", "service_load"),
                importance=Importance.LOW, documentation="Accepted for compatibility and ignored.")
        .define("metrics.sample.window.ms", Type.LONG, 30000, Range.at_least(0), importance=Importance.LOW)
        .define("metrics.num.samples", Type.INT, 2, Range.at_least(1), importance=Importance.LOW)
        .define("metrics.recording.level", Type.STRING, "INFO", ValidString.in_("INFO", "DEBUG"),
                importance=Importance.LOW)
        .define("metric.reporters", Type.LIST, "", importance=Importance.LOW,
                documentation="Accepted for compatibility and ignored (metrics are exported to Prometheus).")
        .define(CONFIG_PROVIDERS_CONFIG, Type.LIST, "", importance=Importance.LOW,
                documentation="Config providers; ${env:NAME} and ${file:path:key} are always available.")
        .define(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG, Type.STRING, "All", _policy_validator,
                importance=Importance.MEDIUM,
                documentation="Which client configs connectors may override with producer.override.*, "
                "consumer.override.* and admin.override.*: All, None or Principal (sasl.jaas.config, "
                "sasl.mechanism, security.protocol).")
        .define(TOPIC_CREATION_ENABLE_CONFIG, Type.BOOLEAN, True, importance=Importance.LOW,
                documentation="Whether source connectors may create their topics per topic.creation.* settings.")
        .define(TOPIC_TRACKING_ENABLE_CONFIG, Type.BOOLEAN, True, importance=Importance.LOW,
                documentation="Track the topics each connector writes to (GET /connectors/{name}/topics).")
        .define(TOPIC_TRACKING_ALLOW_RESET_CONFIG, Type.BOOLEAN, True, importance=Importance.LOW,
                documentation="Allow PUT /connectors/{name}/topics/reset.")
        .define(LISTENERS_CONFIG, Type.LIST, "http://:8083", importance=Importance.LOW,
                documentation="REST listeners, protocol://host:port, protocol http or https "
                              "(TLS from listeners.https.ssl.* or ssl.*; see the README).")
        .define(REST_ADVERTISED_HOST_NAME_CONFIG, Type.STRING, None, importance=Importance.LOW)
        .define(REST_ADVERTISED_PORT_CONFIG, Type.INT, None, importance=Importance.LOW)
        .define(REST_ADVERTISED_LISTENER_CONFIG, Type.STRING, None, importance=Importance.LOW)
        .define(ACCESS_CONTROL_ALLOW_ORIGIN_CONFIG, Type.STRING, "", importance=Importance.LOW)
        .define(ACCESS_CONTROL_ALLOW_METHODS_CONFIG, Type.STRING, "", importance=Importance.LOW)
        .define(ADMIN_LISTENERS_CONFIG, Type.LIST, None, importance=Importance.LOW)
    )  # fmt: skip


def standalone_config_def() -> ConfigDef:
    return base_config_def().define(
        OFFSET_STORAGE_FILE_FILENAME_CONFIG,
        Type.STRING,
        None,
        importance=Importance.HIGH,
        documentation="File to store source offsets in (mm2's own JSON format; Java's serialized files cannot "
        "be read). Unset: offsets are kept in memory only.",
    )


class WorkerConfig(AbstractConfig):
    """Parsed worker config; unknown keys are kept (they are client or store settings)."""

    def __init__(self, props: Mapping[str, Any], definition: ConfigDef | None = None) -> None:
        super().__init__(definition or base_config_def(), props, log_unknown=False)

    # Durations in seconds, as the runtime uses them.
    @property
    def offset_flush_interval_s(self) -> float:
        return float(self.get_long(OFFSET_COMMIT_INTERVAL_MS_CONFIG)) / 1000.0

    @property
    def offset_flush_timeout_s(self) -> float:
        return float(self.get_long(OFFSET_COMMIT_TIMEOUT_MS_CONFIG)) / 1000.0

    @property
    def task_shutdown_timeout_s(self) -> float:
        return float(self.get_long(TASK_SHUTDOWN_GRACEFUL_TIMEOUT_MS_CONFIG)) / 1000.0

    @property
    def topic_creation_enable(self) -> bool:
        return bool(self.get_boolean(TOPIC_CREATION_ENABLE_CONFIG))

    @property
    def topic_tracking_enable(self) -> bool:
        return bool(self.get_boolean(TOPIC_TRACKING_ENABLE_CONFIG))

    @property
    def topic_tracking_allow_reset(self) -> bool:
        return bool(self.get_boolean(TOPIC_TRACKING_ALLOW_RESET_CONFIG))

    @property
    def bootstrap_servers(self) -> str:
        return ",".join(self.get_list(BOOTSTRAP_SERVERS_CONFIG))

    def override_policy(self) -> ConnectorClientConfigOverridePolicy:
        return override_policy(self.get_string(CONNECTOR_CLIENT_POLICY_CLASS_CONFIG))

    def raw(self) -> dict[str, Any]:
        """The originals as given (what stores and clients are built from)."""
        return self.originals()


class StandaloneConfig(WorkerConfig):
    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(props, standalone_config_def())

    @property
    def offset_file(self) -> str | None:
        value = self.get_string(OFFSET_STORAGE_FILE_FILENAME_CONFIG)
        return value or None


# --------------------------------------------------------------------------- client configs

#: Producer settings for source tasks: Connect's own (``Worker.baseProducerConfigs``: acks=all, retry
#: "forever", no idempotence, one request in flight so retries cannot reorder a partition) with
#: batching tuned for throughput; the local queue is capped so memory stays bounded (produce()
#: raises BufferError and the task loop polls until space frees up).
SOURCE_PRODUCER_DEFAULTS: dict[str, str] = {
    "acks": "all",
    "enable.idempotence": "false",
    "max.in.flight.requests.per.connection": "1",
    "delivery.timeout.ms": "2147483647",
    "linger.ms": "10",
    "batch.size": "1000000",
    "batch.num.messages": "10000",
    "queue.buffering.max.kbytes": "16384",
    "queue.buffering.max.messages": "100000",
}


def keeps_partition_order(producer_props: Mapping[str, Any]) -> bool:
    """Whether a producer with these (Java-style) settings writes each partition in produce order
    even across retries: idempotence on, or at most one request in flight."""
    if str(producer_props.get("enable.idempotence", "false")).strip().lower() == "true":
        return True
    try:
        return int(str(producer_props.get("max.in.flight.requests.per.connection", "5")).strip()) <= 1
    except ValueError:
        return False


def _worker_shared(worker: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in worker.items() if k in SHARED_CLIENT_KEYS or k.startswith(("ssl.", "sasl."))}


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    n = len(prefix)
    return {k[n:]: v for k, v in props.items() if k.startswith(prefix) and len(k) > n}


def connector_overrides(
    connector_props: Mapping[str, Any], prefix: str, policy: ConnectorClientConfigOverridePolicy
) -> dict[str, Any]:
    """The connector's ``<prefix>*`` keys, refused with a ConfigError if the policy forbids any."""
    overrides = _with_prefix(connector_props, prefix)
    issues = [ConfigIssue(prefix + cv.name, msg) for cv in policy.validate(overrides) for msg in cv.errors]
    if issues:
        raise ConfigError(issues)
    return overrides


def producer_props(
    worker: Mapping[str, Any],
    connector_props: Mapping[str, Any],
    policy: ConnectorClientConfigOverridePolicy,
    client_id: str,
) -> dict[str, Any]:
    """Java-style producer properties for a source task (translate with ``kafka.clients.producer_config``)."""
    props: dict[str, Any] = {"client.id": client_id, **SOURCE_PRODUCER_DEFAULTS}
    props.update(_worker_shared(worker))
    props[BOOTSTRAP_SERVERS_CONFIG] = worker.get(BOOTSTRAP_SERVERS_CONFIG, "localhost:9092")
    props.update(_with_prefix(worker, "producer."))
    props.update(connector_overrides(connector_props, "producer.override.", policy))
    return props


def admin_props(
    worker: Mapping[str, Any],
    connector_props: Mapping[str, Any],
    policy: ConnectorClientConfigOverridePolicy,
    client_id: str,
) -> dict[str, Any]:
    """Admin properties: shared worker keys, ``admin.`` overrides, then ``admin.override.`` (policy-checked)."""
    props: dict[str, Any] = {"client.id": client_id}
    props.update(_worker_shared(worker))
    props[BOOTSTRAP_SERVERS_CONFIG] = worker.get(BOOTSTRAP_SERVERS_CONFIG, "localhost:9092")
    props.update(_with_prefix(worker, "admin."))
    props.update(connector_overrides(connector_props, "admin.override.", policy))
    return props


def sink_consumer_group(connector: str) -> str:
    """The consumer group of a sink connector's tasks (Java ``SinkUtils.consumerGroupId``)."""
    return f"connect-{connector}"


def consumer_props(
    worker: Mapping[str, Any],
    connector_props: Mapping[str, Any],
    policy: ConnectorClientConfigOverridePolicy,
    connector: str,
    client_id: str,
) -> dict[str, Any]:
    """Java-style consumer properties for a sink task: group ``connect-<connector>``, no auto-commit,
    earliest reset, then the worker's ``consumer.`` keys and the connector's ``consumer.override.``
    keys (policy-checked; ``consumer.override.group.id`` changes the group)."""
    props: dict[str, Any] = {
        "group.id": sink_consumer_group(connector),
        "client.id": client_id,
        "enable.auto.commit": "false",
        "auto.offset.reset": "earliest",
    }
    props.update(_worker_shared(worker))
    props[BOOTSTRAP_SERVERS_CONFIG] = worker.get(BOOTSTRAP_SERVERS_CONFIG, "localhost:9092")
    props.update(_with_prefix(worker, "consumer."))
    props.update(connector_overrides(connector_props, "consumer.override.", policy))
    return props
