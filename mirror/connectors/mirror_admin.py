"""The admin operations MirrorMaker needs, as a thin shell over confluent-kafka's AdminClient.

Results come back as the client-independent types of :mod:`mirror.client.formats` and
:mod:`mirror.connectors.source_logic`, so connector logic never touches confluent-kafka objects. Errors are
mapped with :mod:`connect_core.kafka.errors` (retriable ones become ``RetriableError``).

Broker gaps are feature-detected, not assumed: CreatePartitions and the ACL APIs may be missing
on some brokers: :meth:`MirrorAdmin.create_partitions` logs once and carries on; ACL sync never calls
CreateAcls unless DescribeAcls returned bindings to copy.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.errors import from_exception
from connect_core.kafka.types import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ClientPartition,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    NewPartitions,
    NewTopic,
    ResourcePatternType,
    ResourceType,
)
from mirror.client.formats import OffsetAndMetadata, TopicPartition
from mirror.connectors.source_logic import AclSpec, ConfigEntryInfo

log = logging.getLogger(__name__)

_UNSUPPORTED = {KafkaError._UNSUPPORTED_FEATURE, KafkaError.UNSUPPORTED_VERSION}
_SECURITY_DISABLED = {KafkaError.SECURITY_DISABLED}
_AUTH = {KafkaError.TOPIC_AUTHORIZATION_FAILED, KafkaError.CLUSTER_AUTHORIZATION_FAILED}


def _code(exc: BaseException) -> int | None:
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        return int(exc.args[0].code())
    if isinstance(exc, KafkaError):
        return int(exc.code())
    return None


def _source_name(source: Any) -> str:
    """``ConfigSource`` name (the client sometimes hands out the raw int)."""
    if isinstance(source, ConfigSource):
        return source.name
    try:
        return ConfigSource(int(source)).name
    except (TypeError, ValueError):
        return str(source)


class MirrorAdmin:
    """One admin client for one cluster, used from the connector's scheduler thread."""

    def __init__(
        self,
        java_props: Mapping[str, Any],
        cluster_alias: str,
        timeout_s: float = 60.0,
        client: AdminClient | None = None,
    ) -> None:
        self.cluster_alias = cluster_alias
        self.timeout_s = timeout_s
        self._client = client if client is not None else create_admin(admin_config(java_props))
        self._create_partitions_unsupported = False

    @property
    def client(self) -> AdminClient:
        return self._client

    def close(self) -> None:
        """AdminClient has no close; dropping the reference lets librdkafka tear it down now, not when this
        object goes (a connector outlives its stop, and its admin would keep reconnecting to a gone broker)."""
        self._client = None  # type: ignore[assignment]

    def _wait(self, future: Future[Any], what: str) -> Any:
        try:
            return future.result(timeout=self.timeout_s)
        except TimeoutError as e:  # concurrent.futures.TimeoutError is TimeoutError on 3.11
            raise ConnectError(f"Timed out after {self.timeout_s}s: {what} on cluster {self.cluster_alias}") from e
        except KafkaException as e:
            raise from_exception(e, f"{what} on cluster {self.cluster_alias}") from e

    # -- topics -------------------------------------------------------------------------------

    def topic_partition_counts(self) -> dict[str, int]:
        """Every topic (full metadata: a named request would auto-create on some brokers) -> partitions."""
        try:
            md = self._client.list_topics(timeout=self.timeout_s)
        except KafkaException as e:
            raise from_exception(e, f"list topics on cluster {self.cluster_alias}") from e
        return {name: len(t.partitions) for name, t in md.topics.items() if t.error is None and t.partitions}

    def describe_topic_configs(self, topics: Iterable[str]) -> dict[str, list[ConfigEntryInfo]]:
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in topics]
        if not resources:
            return {}
        futures = self._client.describe_configs(resources, request_timeout=self.timeout_s)
        out: dict[str, list[ConfigEntryInfo]] = {}
        for resource, future in futures.items():
            entries: dict[str, ConfigEntry] = self._wait(future, f"describe configs of topic {resource.name}")
            out[resource.name] = [
                ConfigEntryInfo(
                    name=e.name,
                    value=e.value,
                    is_default=bool(e.is_default),
                    is_read_only=bool(e.is_read_only),
                    is_sensitive=bool(e.is_sensitive),
                    source=_source_name(e.source),
                )
                for e in entries.values()
            ]
        return out

    def create_topics(self, topics: Mapping[str, tuple[int, int, Mapping[str, str]]]) -> dict[str, Exception | None]:
        """Create ``name -> (partitions, replication factor, configs)``; per-topic results, logged."""
        if not topics:
            return {}
        new = [
            NewTopic(name, num_partitions=p, replication_factor=rf, config=dict(cfg))
            for name, (p, rf, cfg) in topics.items()
        ]
        futures = self._client.create_topics(new, request_timeout=self.timeout_s, operation_timeout=self.timeout_s)
        results: dict[str, Exception | None] = {}
        for name, future in futures.items():
            try:
                self._wait(future, f"create topic {name}")
                results[name] = None
                log.info("Created remote topic %s with %d partitions.", name, topics[name][0])
            except ConnectError as e:
                results[name] = e
                log.warning("Could not create topic %s: %s", name, e)
        return results

    def create_compacted_topic(self, name: str, partitions: int, replication_factor: int) -> None:
        """Kafka ``MirrorUtils.createCompactedTopic``: exists/unsupported/unauthorized are fine."""
        new = NewTopic(
            name, num_partitions=partitions, replication_factor=replication_factor, config={"cleanup.policy": "compact"}
        )
        future = self._client.create_topics([new], request_timeout=self.timeout_s, operation_timeout=self.timeout_s)[
            name
        ]
        try:
            future.result(timeout=self.timeout_s)
            log.info("Created topic '%s' on cluster %s", name, self.cluster_alias)
        except TimeoutError as e:
            raise ConnectError(
                f"Timed out while checking for or creating topic '{name}' on cluster {self.cluster_alias}"
            ) from e
        except KafkaException as e:
            code = _code(e)
            if code == KafkaError.TOPIC_ALREADY_EXISTS:
                log.debug("Topic '%s' already exists.", name)
                return
            if code in _UNSUPPORTED or code in _AUTH:
                log.debug("Unable to create topic '%s' (%s); assuming it exists or will be auto-created.", name, e)
                return
            raise from_exception(e, f"Unable to create topic '{name}' on cluster {self.cluster_alias}") from e

    def create_partitions(self, totals: Mapping[str, int]) -> None:
        """Grow topics to the given partition counts; a broker without CreatePartitions is logged once."""
        if not totals or self._create_partitions_unsupported:
            return
        futures = self._client.create_partitions(
            [NewPartitions(t, n) for t, n in totals.items()], request_timeout=self.timeout_s
        )
        for topic, future in futures.items():
            try:
                future.result(timeout=self.timeout_s)
                log.info("Increased size of %s to %d partitions.", topic, totals[topic])
            except KafkaException as e:
                code = _code(e)
                if code in _UNSUPPORTED:
                    self._create_partitions_unsupported = True
                    log.warning(
                        "Cluster %s does not support CreatePartitions; remote topics will not grow (%s)",
                        self.cluster_alias,
                        e,
                    )
                    return
                if code == KafkaError.INVALID_PARTITIONS:
                    continue  # raced with another node: normal
                log.warning("Could not create topic-partitions for %s: %s", topic, e)
            except TimeoutError:
                log.warning("Timed out growing %s to %d partitions", topic, totals[topic])

    def incremental_alter_topic_configs(
        self, ops: Mapping[str, Sequence[tuple[str, str | None, str]]]
    ) -> dict[str, Exception | None]:
        """Per topic ``[(name, value, "SET"|"DELETE")]``; raises ConnectError if the API is unsupported."""
        resources = []
        for topic, topic_ops in ops.items():
            entries = [
                ConfigEntry(
                    name,
                    value if op == "SET" else None,
                    incremental_operation=AlterConfigOpType.SET if op == "SET" else AlterConfigOpType.DELETE,
                )
                for name, value, op in topic_ops
            ]
            resources.append(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=entries))
        results: dict[str, Exception | None] = {}
        if not resources:
            return results
        futures = self._client.incremental_alter_configs(resources, request_timeout=self.timeout_s)
        for resource, future in futures.items():
            try:
                future.result(timeout=self.timeout_s)
                results[resource.name] = None
            except KafkaException as e:
                if _code(e) in _UNSUPPORTED:
                    raise ConnectError(
                        f"the target cluster '{self.cluster_alias}' is not compatible with IncrementalAlterConfigs API"
                    ) from e
                results[resource.name] = e
                log.warning("Could not alter configuration of topic %s: %s", resource.name, e)
            except TimeoutError as e:
                results[resource.name] = e
                log.warning("Timed out altering configuration of topic %s", resource.name)
        return results

    # -- ACLs ---------------------------------------------------------------------------------

    def describe_topic_acls(self) -> list[AclSpec] | None:
        """All TOPIC ACL bindings, or None when the cluster has no authorizer / no ACL API."""
        flt = AclBindingFilter(
            ResourceType.TOPIC,
            None,  # type: ignore[arg-type]
            ResourcePatternType.ANY,
            None,  # type: ignore[arg-type]
            None,  # type: ignore[arg-type]
            AclOperation.ANY,
            AclPermissionType.ANY,
        )
        try:
            bindings = self._client.describe_acls(flt, request_timeout=self.timeout_s).result(timeout=self.timeout_s)
        except KafkaException as e:
            if _code(e) in _SECURITY_DISABLED | _UNSUPPORTED:
                return None
            raise from_exception(e, f"describe ACLs on cluster {self.cluster_alias}") from e
        return [
            AclSpec(
                b.restype.name,
                b.name,
                b.resource_pattern_type.name,
                b.principal,
                b.host,
                b.operation.name,
                b.permission_type.name,
            )
            for b in bindings
        ]

    def create_acls(self, acls: list[AclSpec]) -> None:
        """Only ever called with bindings DescribeAcls returned (so the broker has an authorizer)."""
        if not acls:
            return
        bindings = [
            AclBinding(
                ResourceType[a.resource_type],
                a.name,
                ResourcePatternType[a.pattern_type],
                a.principal,
                a.host,
                AclOperation[a.operation],
                AclPermissionType[a.permission_type],
            )
            for a in acls
        ]
        futures = self._client.create_acls(bindings, request_timeout=self.timeout_s)
        for binding, future in futures.items():
            try:
                future.result(timeout=self.timeout_s)
            except (KafkaException, TimeoutError) as e:
                log.warning("Could not sync ACL of topic %s: %s", binding.name, e)

    # -- consumer groups ----------------------------------------------------------------------

    def list_consumer_groups(self, strict: bool = False) -> list[str]:
        """Group ids; ``strict``: a listing that failed everywhere (no group, only errors: the cluster is down)
        raises instead of reading as "no groups"."""
        result = self._wait(self._client.list_consumer_groups(request_timeout=self.timeout_s), "list consumer groups")
        errors = getattr(result, "errors", None) or []
        for err in errors:
            log.debug("Error listing some consumer groups on %s: %s", self.cluster_alias, err)
        if strict and errors and not result.valid:
            raise ConnectError(f"list consumer groups on cluster {self.cluster_alias}: {errors[0]}")
        return [g.group_id for g in result.valid]

    def list_consumer_group_offsets(
        self, groups: Iterable[str]
    ) -> dict[str, dict[TopicPartition, OffsetAndMetadata | None]]:
        """Committed offsets per group (requests issued together, one per group as librdkafka requires).

        A partition with no valid offset (reset to -1 by some clients) maps to None.
        """
        futures: dict[str, Future[Any]] = {}
        for group in groups:
            futures.update(
                self._client.list_consumer_group_offsets(
                    [ConsumerGroupTopicPartitions(group)], request_timeout=self.timeout_s
                )
            )
        out: dict[str, dict[TopicPartition, OffsetAndMetadata | None]] = {}
        for group, future in futures.items():
            result = self._wait(future, f"list offsets for consumer group {group}")
            offsets: dict[TopicPartition, OffsetAndMetadata | None] = {}
            for ktp in result.topic_partitions or []:
                if ktp.error is not None:
                    continue
                tp = TopicPartition(ktp.topic, ktp.partition)
                offsets[tp] = None if ktp.offset < 0 else OffsetAndMetadata(ktp.offset, ktp.metadata or "")
            out[group] = offsets
        return out

    def consumer_group_states(self, groups: Iterable[str]) -> dict[str, str]:
        """Group -> state name (EMPTY, STABLE, DEAD, ...); a group that does not exist is DEAD."""
        groups = list(groups)
        if not groups:
            return {}
        futures = self._client.describe_consumer_groups(groups, request_timeout=self.timeout_s)
        out: dict[str, str] = {}
        for group, future in futures.items():
            try:
                desc = future.result(timeout=self.timeout_s)
                out[group] = desc.state.name
            except KafkaException as e:
                if _code(e) == KafkaError.GROUP_ID_NOT_FOUND:
                    out[group] = "DEAD"
                else:
                    log.error("Error querying for consumer group %s on cluster %s: %s", group, self.cluster_alias, e)
            except TimeoutError:
                log.error("Timed out describing consumer group %s on cluster %s", group, self.cluster_alias)
        return out

    def alter_consumer_group_offsets(
        self, group: str, offsets: Mapping[TopicPartition, OffsetAndMetadata]
    ) -> dict[TopicPartition, str | None]:
        """Commit offsets for ``group``; per-partition error names (None = written). Never raises for them."""
        ktps = [
            ClientPartition(tp.topic, tp.partition, oam.offset, metadata=oam.metadata)
            if oam.metadata
            else ClientPartition(tp.topic, tp.partition, oam.offset)
            for tp, oam in offsets.items()
        ]
        futures = self._client.alter_consumer_group_offsets(
            [ConsumerGroupTopicPartitions(group, ktps)], request_timeout=self.timeout_s
        )
        out: dict[TopicPartition, str | None] = {}
        try:
            result = futures[group].result(timeout=self.timeout_s)
        except KafkaException as e:
            name = e.args[0].name() if e.args and isinstance(e.args[0], KafkaError) else str(e)
            return {tp: name for tp in offsets}
        except TimeoutError:
            return {tp: "TIMED_OUT" for tp in offsets}
        for ktp in result.topic_partitions or []:
            out[TopicPartition(ktp.topic, ktp.partition)] = None if ktp.error is None else ktp.error.name()
        for tp in offsets:
            out.setdefault(tp, None)
        return out


__all__ = ["MirrorAdmin"]
