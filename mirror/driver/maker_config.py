"""The multi-cluster ``mm2.properties`` format, read exactly as Apache MirrorMaker reads it.

Pure: takes the raw properties map and derives flows (source->target pairs), per-herder worker
configs and per-connector configs. Key rules (MirrorMakerConfig in Kafka):

* ``clusters`` lists aliases; ``{alias}.{key}`` are cluster properties;
* ``{src}->{tgt}.enabled=true`` enables a flow; a herder exists for every pair that is enabled
  OR emits heartbeats (``emit.heartbeats.enabled`` globally or per pair, default true);
* worker config = target cluster properties + selected top-level prefixes + defaults
  (``group.id={src}-mm2``, ``mm2-{configs,offsets,status}.{src}.internal``, ByteArray converters);
* connector config = top-level keys the mirror connectors define, ``source.cluster.*``/``source.*``
  and ``target.cluster.*``/``target.*`` from cluster properties, then ``{src}->{tgt}.*`` overrides.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from connect_core.api.errors import ConfigError, ConfigIssue
from mirror.driver.secret_refs import check_provider_name

CLUSTERS = "clusters"
BYTE_ARRAY_CONVERTER = "org.apache.kafka.connect.converters.ByteArrayConverter"
ENABLE_INTERNAL_REST = "dedicated.mode.enable.internal.rest"
EXACTLY_ONCE_SOURCE_SUPPORT = "exactly.once.source.support"
SOURCE_CONSUMER_ISOLATION = "source.consumer.isolation.level"
SOURCE_CONSUMER_MAX_POLL_RECORDS = "source.consumer.max.poll.records"
#: Records per poll of an exactly-once flow's replication consumer (at-least-once: 1000). Each poll batch is
#: one transaction, and its commit waits for the batch's delivery, which at-least-once overlaps with the next
#: polls; the task takes only what is already fetched (it never waits to fill a batch, and the prefetch
#: queue's 32 MB cap bounds a batch's memory), so bigger batches cost no latency and amortise the commit.
#: Measured (``bench.mirror_throughput --exactly-once`` phase, 300k x 1 KB, 4 partitions): 99k rec/s at
#: 1000, 126k at 4000, 151k at 10000, against about 200k at-least-once.
EXACTLY_ONCE_MAX_POLL_RECORDS = "10000"
#: What ``mm2 status`` and the REST status call each ``exactly.once.source.support`` setting.
DELIVERY_MODES = {
    "enabled": "exactly-once",
    "preparing": "at-least-once (preparing exactly-once)",
    "disabled": "at-least-once",
}
EMIT_HEARTBEATS_ENABLED = "emit.heartbeats.enabled"

SOURCE_CONNECTOR = "MirrorSourceConnector"
CHECKPOINT_CONNECTOR = "MirrorCheckpointConnector"
HEARTBEAT_CONNECTOR = "MirrorHeartbeatConnector"
CONNECTOR_CLASSES = {
    SOURCE_CONNECTOR: "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    CHECKPOINT_CONNECTOR: "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    HEARTBEAT_CONNECTOR: "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
}

# Worker keys accepted at top level (everything else must be set per cluster).
_WORKER_PREFIXES = (
    "offset.storage",
    "config.storage",
    "status.storage",
    "key.converter",
    "value.converter",
    "header.converter",
    "task",
    "worker",
    "replication.policy",
)
_CLIENT_ROLE = re.compile(r"^(consumer|producer|admin)")
_FLOW_KEY = re.compile(r"^(?P<source>.+?)->(?P<target>[^.]+)\.(?P<key>.+)$")


def is_client_security_key(key: str) -> bool:
    """Keys Kafka copies to every client (MirrorClientConfig.CLIENT_CONFIG_DEF)."""
    return key in ("bootstrap.servers", "security.protocol") or key.startswith(("ssl.", "sasl."))


def _consumer_key_set(connector_props: dict[str, str], key: str) -> bool:
    """Whether the connector's source consumer has ``key`` set (``consumer.``/``source.consumer.``)."""
    return any(f"{prefix}{key}" in connector_props for prefix in ("consumer.", "source.consumer."))


def _parse_bool(value: str | None) -> bool:
    """Java Boolean.parseBoolean: only a case-insensitive "true" is true."""
    return value is not None and value.strip().lower() == "true"


@dataclass(frozen=True, order=True)
class SourceAndTarget:
    source: str
    target: str

    def __str__(self) -> str:
        return f"{self.source}->{self.target}"


def _default_connector_config_names() -> set[str]:
    from mirror.connectors.config import all_connector_config_names

    return set(all_connector_config_names())


class MirrorMakerConfig:
    """A parsed mm2.properties; construct with the raw (provider-unresolved) properties.

    ``source`` is the file they were read from, when there is one: ``mm2 run`` then stores secrets
    as ``${mm2:KEY}`` references its workers resolve from that file (:mod:`mirror.driver.secret_refs`).
    """

    def __init__(
        self,
        props: dict[str, str],
        connector_config_names: Callable[[], set[str]] = _default_connector_config_names,
        *,
        source: Path | None = None,
    ) -> None:
        self.raw = dict(props)
        self.source = source
        self._connector_config_names = connector_config_names
        if CLUSTERS not in self.raw:
            raise ConfigError([ConfigIssue(CLUSTERS, "missing required setting: list the cluster aliases")])
        self.cluster_list = [c for c in re.split(r"\s*,\s*", self.raw[CLUSTERS].strip()) if c]
        if not self.cluster_list:
            raise ConfigError([ConfigIssue(CLUSTERS, "must name at least one cluster alias")])

    def with_raw(self, props: dict[str, str]) -> MirrorMakerConfig:
        """The same kind of config over other raw properties (e.g. with secrets turned into references)."""
        return MirrorMakerConfig(props, self._connector_config_names, source=self.source)

    # --- flows -----------------------------------------------------------------------------
    def clusters(self) -> list[str]:
        return list(self.cluster_list)

    def enable_internal_rest(self) -> bool:
        return _parse_bool(self.raw.get(ENABLE_INTERNAL_REST, "false"))

    def exactly_once_support(self, target: str) -> str:
        """``{target}.exactly.once.source.support`` (or the top-level key): the herders' worker setting."""
        value = self.cluster_props(target).get(EXACTLY_ONCE_SOURCE_SUPPORT, self.raw.get(EXACTLY_ONCE_SOURCE_SUPPORT))
        return str(value or "disabled").strip().lower()

    def exactly_once_enabled(self, target: str) -> bool:
        return self.exactly_once_support(target) == "enabled"

    def delivery_mode(self, pair: SourceAndTarget) -> str:
        """``exactly-once``, ``at-least-once`` or ``at-least-once (preparing exactly-once)``."""
        return DELIVERY_MODES.get(self.exactly_once_support(pair.target), "at-least-once")

    def copy_path(self, pair: SourceAndTarget) -> str:
        """``batch`` when the flow's MirrorSource tasks copy the source's batches as bytes (enabled, no
        transforms, byte-array converters; exactly-once or not), else ``record``. Single batches the batch
        path cannot pass still go through the record path, in order."""
        return "batch" if self.batch_copy_applies(pair) else "record"

    def batch_copy_applies(self, pair: SourceAndTarget) -> bool:
        """The flow needs no decoded record and copies batches: ``batch.copy.enabled``, no transforms,
        byte-array converters. The live tasks (at-least-once) and the backfill (transactional) both ask."""
        from mirror.connectors.config import BATCH_COPY_ENABLED, BATCH_COPY_ENABLED_DEFAULT

        props = self.connector_base_config(pair, "MirrorSourceConnector")
        worker = self.worker_config(pair)
        enabled = props.get(BATCH_COPY_ENABLED)
        if not (_parse_bool(enabled) if enabled is not None else BATCH_COPY_ENABLED_DEFAULT):
            return False
        if props.get("transforms", "").strip():
            return False
        return all(
            str(props.get(conv) or worker.get(conv, "")).strip().endswith("ByteArrayConverter")
            for conv in ("key.converter", "value.converter", "header.converter")
        )

    def flow_enabled(self, pair: SourceAndTarget) -> bool:
        return _parse_bool(self.raw.get(f"{pair}.enabled"))

    def heartbeats_enabled(self, pair: SourceAndTarget) -> bool:
        default = self.raw.get(EMIT_HEARTBEATS_ENABLED, "true")
        return _parse_bool(self.raw.get(f"{pair}.{EMIT_HEARTBEATS_ENABLED}", default))

    def cluster_pairs(self) -> list[SourceAndTarget]:
        """Every ordered pair that gets a herder: enabled, or emitting heartbeats."""
        return [
            pair
            for s in self.cluster_list
            for t in self.cluster_list
            if s != t
            for pair in [SourceAndTarget(s, t)]
            if self.flow_enabled(pair) or self.heartbeats_enabled(pair)
        ]

    def enabled_flows(self) -> list[SourceAndTarget]:
        return [p for p in self.cluster_pairs() if self.flow_enabled(p)]

    def herder_pairs(self, only_targets: Iterable[str] | None = None) -> list[SourceAndTarget]:
        """Pairs this node runs: those whose target is in ``--clusters`` (all when not given)."""
        wanted = set(only_targets or self.cluster_list)
        pairs = [p for p in self.cluster_pairs() if p.target in wanted]
        if not pairs:
            raise ConfigError([ConfigIssue(CLUSTERS, "no source->target replication flows")])
        return pairs

    # --- derived configs -------------------------------------------------------------------
    def _with_prefix_stripped(self, prefix: str) -> dict[str, str]:
        n = len(prefix)
        return {k[n:]: v for k, v in self.raw.items() if k.startswith(prefix) and len(k) > n}

    def _with_prefix(self, prefix: str) -> dict[str, str]:
        return {k: v for k, v in self.raw.items() if k.startswith(prefix)}

    def cluster_props(self, cluster: str) -> dict[str, str]:
        """``{cluster}.*`` with the prefix stripped; client-security keys fanned out to every role."""
        props = self._with_prefix_stripped(f"{cluster}.")
        for key, value in list(props.items()):
            if is_client_security_key(key):
                for role in ("producer.", "consumer.", "admin."):
                    props.setdefault(role + key, value)
        for key, value in self.raw.items():
            if is_client_security_key(key):
                for role in ("producer.", "consumer.", "admin."):
                    props.setdefault(role + key, value)
                props.setdefault(key, value)
        return props

    def worker_config(self, pair: SourceAndTarget) -> dict[str, str]:
        props = self.cluster_props(pair.target)
        for prefix in _WORKER_PREFIXES:
            props.update(self._with_prefix(prefix))
        props.update(self._with_prefix("config.providers"))
        if EXACTLY_ONCE_SOURCE_SUPPORT in self.raw:
            props.setdefault(EXACTLY_ONCE_SOURCE_SUPPORT, self.raw[EXACTLY_ONCE_SOURCE_SUPPORT])
        props.setdefault("client.id", str(pair))
        props.setdefault("group.id", f"{pair.source}-mm2")
        props.setdefault("offset.storage.topic", f"mm2-offsets.{pair.source}.internal")
        props.setdefault("status.storage.topic", f"mm2-status.{pair.source}.internal")
        props.setdefault("config.storage.topic", f"mm2-configs.{pair.source}.internal")
        for conv in ("key.converter", "value.converter", "header.converter"):
            props.setdefault(conv, BYTE_ARRAY_CONVERTER)
        return props

    def connector_base_config(self, pair: SourceAndTarget, connector_name: str) -> dict[str, str]:
        names = self._connector_config_names()
        props = {k: v for k, v in self.raw.items() if k in names}
        props.update(self._with_prefix("config.providers"))
        props.update(self._with_prefix("replication.policy"))
        for side, cluster in (("source", pair.source), ("target", pair.target)):
            cprops = self.cluster_props(cluster)
            for key, value in cprops.items():
                if _CLIENT_ROLE.match(key):
                    props[f"{side}.{key}"] = value
                else:
                    props[f"{side}.cluster.{key}"] = value
        props.setdefault("name", connector_name)
        props.setdefault("connector.class", CONNECTOR_CLASSES[connector_name])
        props.setdefault("source.cluster.alias", pair.source)
        props.setdefault("target.cluster.alias", pair.target)
        props.update(self._with_prefix_stripped(f"{pair}."))
        props.setdefault("enabled", "false")
        if self.exactly_once_enabled(pair.target):
            if not _consumer_key_set(props, "isolation.level"):
                # An exactly-once copy of an aborted source transaction is still a wrong copy: committed only.
                props[SOURCE_CONSUMER_ISOLATION] = "read_committed"
            if not _consumer_key_set(props, "max.poll.records"):
                props[SOURCE_CONSUMER_MAX_POLL_RECORDS] = EXACTLY_ONCE_MAX_POLL_RECORDS
        return props

    # --- validation ------------------------------------------------------------------------
    def problems(self, only_targets: Iterable[str] | None = None) -> list[ConfigIssue]:
        """Every mistake that must stop ``mm2 run`` before it touches a cluster."""
        issues: list[ConfigIssue] = []
        known = set(self.cluster_list)
        if len(known) != len(self.cluster_list):
            issues.append(ConfigIssue(CLUSTERS, "lists the same alias twice"))
        for key in self.raw:
            m = _FLOW_KEY.match(key)
            if m is None:
                continue
            for role in ("source", "target"):
                alias = m.group(role)
                if alias not in known:
                    listed = ", ".join(self.cluster_list)
                    issues.append(ConfigIssue(key, f"unknown cluster alias '{alias}' (clusters = {listed})"))
        for alias in only_targets or []:
            if alias not in known:
                issues.append(ConfigIssue("--clusters", f"unknown cluster alias '{alias}'"))
        for alias in self.cluster_list:
            if not self.cluster_props(alias).get("bootstrap.servers", "").strip():
                message = f"cluster '{alias}' has no bootstrap servers"
                issues.append(ConfigIssue(f"{alias}.bootstrap.servers", message))
        for target in sorted({p.target for p in self._pairs_for(only_targets)}):
            support = self.exactly_once_support(target)
            key = f"{target}.{EXACTLY_ONCE_SOURCE_SUPPORT}"
            if support not in DELIVERY_MODES:
                issues.append(
                    ConfigIssue(key, f"Invalid value {support}: String must be one of: disabled, preparing, enabled")
                )
            elif support == "enabled" and not self.enable_internal_rest():
                issues.append(
                    ConfigIssue(
                        key,
                        f"exactly-once needs {ENABLE_INTERNAL_REST} = true (KIP-710): the "
                        "nodes fence zombie tasks over the internal REST API",
                    )
                )
        reserved = check_provider_name(self.raw)
        if reserved:
            issues.append(ConfigIssue("config.providers", reserved))
        issues.extend(self._identity_cycle_problems())
        return issues

    def _pairs_for(self, only_targets: Iterable[str] | None) -> list[SourceAndTarget]:
        wanted = set(only_targets or self.cluster_list)
        return [p for p in self.cluster_pairs() if p.target in wanted]

    def validate(self, only_targets: Iterable[str] | None = None) -> None:
        issues = self.problems(only_targets)
        if issues:
            raise ConfigError(issues)

    def _identity_cycle_problems(self) -> list[ConfigIssue]:
        """IdentityReplicationPolicy cannot detect cycles: both directions on one topic would loop."""
        issues: list[ConfigIssue] = []
        flows = self.enabled_flows()
        seen: set[frozenset[str]] = set()
        for pair in flows:
            reverse = SourceAndTarget(pair.target, pair.source)
            key = frozenset((pair.source, pair.target))
            if reverse not in flows or key in seen:
                continue
            seen.add(key)
            policies = {
                self.connector_base_config(p, SOURCE_CONNECTOR).get("replication.policy.class", "")
                for p in (pair, reverse)
            }
            if any(p.endswith("IdentityReplicationPolicy") for p in policies):
                issues.append(
                    ConfigIssue(
                        "replication.policy.class",
                        f"IdentityReplicationPolicy with both {pair} and {reverse} enabled would replicate "
                        "records in a loop; enable one direction or use DefaultReplicationPolicy",
                    )
                )
        return issues
