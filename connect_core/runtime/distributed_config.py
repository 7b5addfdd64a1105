"""Distributed worker configuration (Kafka's ``DistributedConfig``).

Keys and defaults are Kafka's, so a Java ``connect-distributed.properties`` keeps working:
``group.id`` and the three ``*.storage.topic`` keys are required; group timing
(``session.timeout.ms`` 10 s, ``heartbeat.interval.ms`` 3 s, ``rebalance.timeout.ms`` 60 s),
``worker.sync.timeout.ms`` 3 s, ``worker.unsync.backoff.ms`` 5 min,
``scheduled.rebalance.max.delay.ms`` 5 min, ``connect.protocol`` (``sessioned`` by default),
the ``inter.worker.*`` request-signing keys, and ``exactly.once.source.support``.

Signing algorithms are the JVM names (``HmacSHA256``...) mapped to :mod:`hashlib` digests, so
workers of one cluster can name the same algorithm in the same words as Java does.

``exactly.once.source.support`` (KIP-618): ``enabled`` runs every source task as an exactly-once
task (:mod:`connect_core.runtime.exactly_once_source_task`: records and source offsets in one
transaction per task) and turns on zombie fencing in the distributed herder. ``preparing`` is the
first step of Java's two-step rolling upgrade: the worker still runs at-least-once tasks (in Java it
only changes the leader's config-topic producer, which mm2 does not make transactional).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.config.configdef import ConfigDef, Importance, Range, Type
from connect_core.runtime.worker_config import WorkerConfig, base_config_def

GROUP_ID_CONFIG = "group.id"
SESSION_TIMEOUT_MS_CONFIG = "session.timeout.ms"
HEARTBEAT_INTERVAL_MS_CONFIG = "heartbeat.interval.ms"
REBALANCE_TIMEOUT_MS_CONFIG = "rebalance.timeout.ms"
WORKER_SYNC_TIMEOUT_MS_CONFIG = "worker.sync.timeout.ms"
WORKER_UNSYNC_BACKOFF_MS_CONFIG = "worker.unsync.backoff.ms"
OFFSET_STORAGE_TOPIC_CONFIG = "offset.storage.topic"
OFFSET_STORAGE_PARTITIONS_CONFIG = "offset.storage.partitions"
OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG = "offset.storage.replication.factor"
CONFIG_TOPIC_CONFIG = "config.storage.topic"
CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG = "config.storage.replication.factor"
STATUS_STORAGE_TOPIC_CONFIG = "status.storage.topic"
STATUS_STORAGE_PARTITIONS_CONFIG = "status.storage.partitions"
STATUS_STORAGE_REPLICATION_FACTOR_CONFIG = "status.storage.replication.factor"
CONNECT_PROTOCOL_CONFIG = "connect.protocol"
SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG = "scheduled.rebalance.max.delay.ms"
INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG = "inter.worker.key.generation.algorithm"
INTER_WORKER_KEY_SIZE_CONFIG = "inter.worker.key.size"
INTER_WORKER_KEY_TTL_MS_CONFIG = "inter.worker.key.ttl.ms"
INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG = "inter.worker.signature.algorithm"
INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG = "inter.worker.verification.algorithms"
EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG = "exactly.once.source.support"

DEFAULT_ALGORITHM = "HmacSHA256"
# JVM Mac names -> hashlib digest names (key generation and signing use the same family).
MAC_ALGORITHMS: dict[str, str] = {
    "HmacSHA1": "sha1",
    "HmacSHA224": "sha224",
    "HmacSHA256": "sha256",
    "HmacSHA384": "sha384",
    "HmacSHA512": "sha512",
}
# Default key sizes in bits (the JVM KeyGenerator defaults for HmacSHA*).
DEFAULT_KEY_BITS: dict[str, int] = {
    "HmacSHA1": 512,
    "HmacSHA224": 224,
    "HmacSHA256": 256,
    "HmacSHA384": 384,
    "HmacSHA512": 512,
}


class ConnectProtocol(enum.Enum):
    """``connect.protocol``: which group sub-protocols this worker offers (Java ConnectProtocolCompatibility)."""

    EAGER = "eager"  # V0: stop everything on every rebalance
    COMPATIBLE = "compatible"  # V1: incremental cooperative, no request signing
    SESSIONED = "sessioned"  # V2: incremental cooperative + signed internal requests

    @classmethod
    def parse(cls, text: str) -> ConnectProtocol:
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise ConfigError(
                f"Invalid value {text} for configuration {CONNECT_PROTOCOL_CONFIG}: Invalid Connect protocol "
                "compatibility (expected eager, compatible or sessioned)",
                key=CONNECT_PROTOCOL_CONFIG,
            ) from None


class ExactlyOnceSourceSupport(enum.Enum):
    DISABLED = "disabled"
    PREPARING = "preparing"
    ENABLED = "enabled"


def _protocol_validator(name: str, value: Any) -> None:
    ConnectProtocol.parse(str(value))


def _mac_validator(name: str, value: Any) -> None:
    if value is None:
        return
    if str(value) not in MAC_ALGORITHMS:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: unsupported MAC algorithm "
            f"(supported: {', '.join(MAC_ALGORITHMS)})",
            key=name,
        )


def _mac_list_validator(name: str, value: Any) -> None:
    values = list(value or [])
    if not values:
        raise ConfigError(f"Invalid value [] for configuration {name}: at least one algorithm is required", key=name)
    for v in values:
        _mac_validator(name, v)


def _eos_validator(name: str, value: Any) -> None:
    text = str(value).strip().lower()
    if text not in {e.value for e in ExactlyOnceSourceSupport}:
        raise ConfigError(
            f"Invalid value {value} for configuration {name}: String must be one of: disabled, preparing, enabled",
            key=name,
        )


def distributed_config_def() -> ConfigDef:
    """The worker's common keys plus the distributed-mode keys."""
    req_topic = "Required in distributed mode."
    return (
        base_config_def()
        .define(GROUP_ID_CONFIG, Type.STRING, importance=Importance.HIGH,
                documentation="Unique name of the Connect cluster (the group its workers join).")
        .define(SESSION_TIMEOUT_MS_CONFIG, Type.INT, 10000, importance=Importance.HIGH,
                documentation="How long the coordinator waits for a worker's heartbeat before dropping it.")
        .define(HEARTBEAT_INTERVAL_MS_CONFIG, Type.INT, 3000, importance=Importance.HIGH,
                documentation="Expected time between heartbeats to the group coordinator.")
        .define(REBALANCE_TIMEOUT_MS_CONFIG, Type.INT, 60000, importance=Importance.HIGH,
                documentation="Maximum time each worker may take to rejoin once a rebalance starts (flushing "
                "offsets and stopping revoked work included).")
        .define(WORKER_SYNC_TIMEOUT_MS_CONFIG, Type.INT, 3000, importance=Importance.MEDIUM,
                documentation="How long a worker behind the config log tries to catch up before leaving the group "
                "and backing off.")
        .define(WORKER_UNSYNC_BACKOFF_MS_CONFIG, Type.INT, 5 * 60 * 1000, importance=Importance.MEDIUM,
                documentation="Back-off before rejoining after failing to catch up with the config log (eager "
                "protocol; the cooperative protocols back off by fractions of scheduled.rebalance.max.delay.ms).")
        .define(OFFSET_STORAGE_TOPIC_CONFIG, Type.STRING, importance=Importance.HIGH,
                documentation="Topic storing source connector offsets. " + req_topic)
        .define(OFFSET_STORAGE_PARTITIONS_CONFIG, Type.INT, 25, importance=Importance.LOW,
                documentation="Partitions of the offset topic when created (-1: broker default).")
        .define(OFFSET_STORAGE_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, importance=Importance.LOW,
                documentation="Replication factor of the offset topic when created (-1: broker default).")
        .define(CONFIG_TOPIC_CONFIG, Type.STRING, importance=Importance.HIGH,
                documentation="Topic storing connector and task configurations (one partition). " + req_topic)
        .define(CONFIG_STORAGE_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, importance=Importance.LOW,
                documentation="Replication factor of the config topic when created (-1: broker default).")
        .define(STATUS_STORAGE_TOPIC_CONFIG, Type.STRING, importance=Importance.HIGH,
                documentation="Topic storing connector and task statuses. " + req_topic)
        .define(STATUS_STORAGE_PARTITIONS_CONFIG, Type.INT, 5, importance=Importance.LOW,
                documentation="Partitions of the status topic when created (-1: broker default).")
        .define(STATUS_STORAGE_REPLICATION_FACTOR_CONFIG, Type.SHORT, 3, importance=Importance.LOW,
                documentation="Replication factor of the status topic when created (-1: broker default).")
        .define(CONNECT_PROTOCOL_CONFIG, Type.STRING, ConnectProtocol.SESSIONED.value, _protocol_validator,
                importance=Importance.LOW,
                documentation="eager, compatible or sessioned (incremental cooperative rebalancing with signed "
                "internal requests; the cluster uses the newest protocol every worker supports).")
        .define(SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG, Type.INT, 300000, Range.between(0, 2**31 - 1),
                importance=Importance.LOW,
                documentation="How long the leader keeps a departed worker's connectors and tasks unassigned, "
                "waiting for it to return, before giving them to the remaining workers. Unlike Java Connect, "
                "this also holds when the departed worker was the leader: its successor rebuilds the last "
                "assignment from the members' reports.")
        .define(INTER_WORKER_KEY_TTL_MS_CONFIG, Type.INT, 3600000, Range.between(0, 2**31 - 1),
                importance=Importance.LOW,
                documentation="Lifetime of the session key signing internal requests; the leader rotates it.")
        .define(INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG, Type.STRING, DEFAULT_ALGORITHM, _mac_validator,
                importance=Importance.LOW, documentation="Algorithm of the generated session keys.")
        .define(INTER_WORKER_KEY_SIZE_CONFIG, Type.INT, None, importance=Importance.LOW,
                documentation="Session key size in bits (default: the algorithm's default).")
        .define(INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG, Type.STRING, DEFAULT_ALGORITHM, _mac_validator,
                importance=Importance.LOW, documentation="MAC algorithm signing internal requests.")
        .define(INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG, Type.LIST, DEFAULT_ALGORITHM, _mac_list_validator,
                importance=Importance.LOW,
                documentation="MAC algorithms accepted when verifying internal requests.")
        .define(EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG, Type.STRING, ExactlyOnceSourceSupport.DISABLED.value,
                _eos_validator, importance=Importance.HIGH,
                documentation="Whether source tasks write their records and source offsets in one transaction "
                "(KIP-618): disabled, preparing or enabled. To enable it on a running cluster, set 'preparing' on "
                "every worker first, then 'enabled' (a rolling restart each time).")
    )  # fmt: skip


class DistributedConfig(WorkerConfig):
    """Parsed distributed worker config (raises ConfigError naming every bad or missing key)."""

    def __init__(self, props: Mapping[str, Any]) -> None:
        super().__init__(props, distributed_config_def())
        self._check_key_settings()

    def _check_key_settings(self) -> None:
        signature = self.signature_algorithm
        if signature not in self.verification_algorithms:
            raise ConfigError(
                f"Signature algorithm '{signature}' must be present in {INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG} "
                f"list {self.verification_algorithms}",
                key=INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG,
            )
        size = self.get(INTER_WORKER_KEY_SIZE_CONFIG)
        if size is not None and (int(size) <= 0 or int(size) % 8 != 0):
            raise ConfigError(
                f"Invalid value {size} for configuration {INTER_WORKER_KEY_SIZE_CONFIG}: key size must be a positive "
                "multiple of 8 bits",
                key=INTER_WORKER_KEY_SIZE_CONFIG,
            )

    # ------------------------------------------------------------------------------- accessors

    @property
    def group_id(self) -> str:
        return str(self.get_string(GROUP_ID_CONFIG))

    def _ms(self, key: str) -> float:
        return float(self.get_int(key)) / 1000.0

    @property
    def session_timeout_s(self) -> float:
        return self._ms(SESSION_TIMEOUT_MS_CONFIG)

    @property
    def heartbeat_interval_s(self) -> float:
        return self._ms(HEARTBEAT_INTERVAL_MS_CONFIG)

    @property
    def rebalance_timeout_s(self) -> float:
        return self._ms(REBALANCE_TIMEOUT_MS_CONFIG)

    @property
    def worker_sync_timeout_s(self) -> float:
        return self._ms(WORKER_SYNC_TIMEOUT_MS_CONFIG)

    @property
    def worker_unsync_backoff_s(self) -> float:
        return self._ms(WORKER_UNSYNC_BACKOFF_MS_CONFIG)

    @property
    def scheduled_rebalance_max_delay_ms(self) -> int:
        return int(self.get_int(SCHEDULED_REBALANCE_MAX_DELAY_MS_CONFIG))

    @property
    def connect_protocol(self) -> ConnectProtocol:
        return ConnectProtocol.parse(str(self.get_string(CONNECT_PROTOCOL_CONFIG)))

    @property
    def key_ttl_ms(self) -> int:
        return int(self.get_int(INTER_WORKER_KEY_TTL_MS_CONFIG))

    @property
    def key_generation_algorithm(self) -> str:
        return str(self.get_string(INTER_WORKER_KEY_GENERATION_ALGORITHM_CONFIG))

    @property
    def key_size_bits(self) -> int:
        size = self.get(INTER_WORKER_KEY_SIZE_CONFIG)
        if size is not None:
            return int(size)
        return DEFAULT_KEY_BITS[self.key_generation_algorithm]

    @property
    def signature_algorithm(self) -> str:
        return str(self.get_string(INTER_WORKER_SIGNATURE_ALGORITHM_CONFIG))

    @property
    def verification_algorithms(self) -> list[str]:
        return [str(v) for v in self.get_list(INTER_WORKER_VERIFICATION_ALGORITHMS_CONFIG)]

    @property
    def exactly_once_source_support(self) -> ExactlyOnceSourceSupport:
        return ExactlyOnceSourceSupport(str(self.get_string(EXACTLY_ONCE_SOURCE_SUPPORT_CONFIG)).strip().lower())

    @property
    def exactly_once_source_enabled(self) -> bool:
        """Java's ``exactlyOnceSourceEnabled()``: source tasks run as exactly-once tasks."""
        return self.exactly_once_source_support is ExactlyOnceSourceSupport.ENABLED

    def check_supported(self) -> None:
        """Refuse settings this build parses but cannot honour (every setting is honoured today)."""
