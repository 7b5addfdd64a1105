"""TopicAdmin: the topic operations Connect and MirrorMaker need, over confluent-kafka's AdminClient.

Follows Java's ``TopicAdmin``: "create if missing" reports which topics it created and which were
there already (TOPIC_ALREADY_EXISTS is success), and a broker that lacks an API (CreateTopics,
IncrementalAlterConfigs...) is logged and reported, not fatal, where Java does the same.

Existence and partition counts come from a *full* metadata request: a metadata request naming a
topic auto-creates it on brokers with ``auto.create.topics.enable`` (and always on Tansu).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError, KafkaException, TopicCollection
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewTopic,
    ResourceType,
)

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.errors import KafkaClientError, RetriableKafkaError, from_exception

log = logging.getLogger(__name__)

_UNSUPPORTED_CODES = frozenset({KafkaError._UNSUPPORTED_FEATURE, KafkaError.UNSUPPORTED_VERSION})
_NOT_AUTHORIZED = frozenset({KafkaError.CLUSTER_AUTHORIZATION_FAILED, KafkaError.TOPIC_AUTHORIZATION_FAILED})
_BAD_TOPIC_CONFIG = frozenset(
    {
        KafkaError.INVALID_CONFIG,
        KafkaError.INVALID_REPLICATION_FACTOR,
        KafkaError.INVALID_PARTITIONS,
        KafkaError.POLICY_VIOLATION,
        KafkaError.TOPIC_EXCEPTION,
        KafkaError.INVALID_REPLICA_ASSIGNMENT,
    }
)


def is_unsupported(exc: BaseException) -> bool:
    """True if ``exc`` says the broker does not implement the requested API/version."""
    code = getattr(exc, "code", None)
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        code = exc.args[0].code()
    return code in _UNSUPPORTED_CODES


@dataclass(frozen=True)
class NewTopicSpec:
    """A topic to create; -1 partitions / replication factor means "the broker's default"."""

    name: str
    partitions: int = -1
    replication_factor: int = -1
    config: Mapping[str, str] = field(default_factory=dict)

    def compacted(self) -> NewTopicSpec:
        return NewTopicSpec(
            self.name, self.partitions, self.replication_factor, {**self.config, "cleanup.policy": "compact"}
        )


@dataclass
class TopicCreationResult:
    created: set[str] = field(default_factory=set)
    existing: set[str] = field(default_factory=set)

    def is_created_or_existing(self, topic: str) -> bool:
        return topic in self.created or topic in self.existing


@dataclass(frozen=True)
class PartitionInfo:
    id: int
    leader: int
    replicas: tuple[int, ...]
    isrs: tuple[int, ...]


@dataclass(frozen=True)
class TopicInfo:
    name: str
    partitions: tuple[PartitionInfo, ...]

    @property
    def partition_count(self) -> int:
        return len(self.partitions)


@dataclass(frozen=True)
class ConfigValue:
    """One topic config entry as DescribeConfigs reports it."""

    name: str
    value: str | None
    is_default: bool
    source: str
    is_sensitive: bool
    is_read_only: bool


def _source_name(source: Any) -> str:
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return name
    try:
        return ConfigSource(int(source)).name
    except (ValueError, TypeError):
        return str(source)


class TopicAdmin:
    """Topic admin operations. Owns the AdminClient it builds from Java-style admin properties."""

    def __init__(
        self,
        props: Mapping[str, Any] | None = None,
        *,
        client: AdminClient | None = None,
        timeout_s: float = 30.0,
    ) -> None:
        if client is None:
            if props is None:
                raise ValueError("TopicAdmin needs admin properties or a client")
            client = create_admin(admin_config(props))
        self.client = client
        self.timeout_s = timeout_s
        self._bootstrap = str((props or {}).get("bootstrap.servers", ""))

    def close(self) -> None:
        """AdminClient has no close(); dropping the reference lets librdkafka shut it down."""

    # ------------------------------------------------------------------------------- metadata

    def _metadata(self, timeout_s: float | None = None) -> Any:
        try:
            return self.client.list_topics(timeout=timeout_s or self.timeout_s)
        except KafkaException as e:
            raise from_exception(e, f"Cannot list topics on {self._bootstrap or 'the cluster'}") from e

    def list_topics(self, timeout_s: float | None = None) -> set[str]:
        """Every topic name (one full metadata request; never names a topic, so never auto-creates)."""
        return set(self._metadata(timeout_s).topics)

    def describe_topics(self, names: Iterable[str], timeout_s: float | None = None) -> dict[str, TopicInfo]:
        """Partitions of the named topics that exist (missing ones are simply absent)."""
        wanted = set(names)
        out: dict[str, TopicInfo] = {}
        for name, meta in self._metadata(timeout_s).topics.items():
            if name not in wanted or (meta.error is not None and not meta.partitions):
                continue
            parts = tuple(
                PartitionInfo(p.id, p.leader, tuple(p.replicas), tuple(p.isrs))
                for p in sorted(meta.partitions.values(), key=lambda p: p.id)
            )
            out[name] = TopicInfo(name, parts)
        return out

    def topic_ids(self, names: Iterable[str], timeout_s: float | None = None) -> dict[str, str]:
        """Topic ids (base64, as Kafka prints them) of the named topics that exist.

        Why: a topic deleted and recreated under its name gets a new id; offsets cannot tell the two apart.
        Existence is read from a full metadata request first: a request naming a missing topic auto-creates
        it on some brokers. A topic without an id (a broker before Kafka 2.8) is left out.
        """
        existing = sorted(set(names) & self.list_topics(timeout_s))
        if not existing:
            return {}
        try:
            futures = self.client.describe_topics(
                TopicCollection(existing), request_timeout=timeout_s or self.timeout_s
            )
        except KafkaException as e:
            raise from_exception(e, "Cannot describe topics") from e
        out: dict[str, str] = {}
        for name, future in futures.items():
            try:
                described = future.result(timeout=timeout_s or self.timeout_s)
            except KafkaException as e:
                if (
                    e.args
                    and isinstance(e.args[0], KafkaError)
                    and e.args[0].code() == KafkaError.UNKNOWN_TOPIC_OR_PART
                ):
                    continue  # deleted since the listing
                raise from_exception(e, f"Cannot describe topic {name}") from e
            topic_id = getattr(described, "topic_id", None)
            text = "" if topic_id is None else str(topic_id)
            if text and text != "AAAAAAAAAAAAAAAAAAAAAA":  # the zero uuid: no id
                out[name] = text
        return out

    def partition_counts(self, names: Iterable[str], timeout_s: float | None = None) -> dict[str, int]:
        return {n: t.partition_count for n, t in self.describe_topics(names, timeout_s).items()}

    def cluster_id(self, timeout_s: float | None = None) -> str | None:
        cid = self._metadata(timeout_s).cluster_id
        return str(cid) if cid else None

    # ------------------------------------------------------------------------------- creation

    def create_topics_if_missing(
        self, specs: Iterable[NewTopicSpec], timeout_s: float | None = None
    ) -> TopicCreationResult:
        """Create the topics that do not exist; report created and already-existing ones.

        Raises ConfigError for a spec the broker rejects (bad config, replication factor larger
        than the cluster), RetriableKafkaError on timeouts. A broker without CreateTopics or a
        principal without permission yields an empty result with a warning, as in Java.
        """
        by_name = {s.name: s for s in specs}
        result = TopicCreationResult()
        if not by_name:
            return result
        timeout = timeout_s or self.timeout_s
        existing = self.list_topics(timeout) & set(by_name)
        result.existing |= existing
        missing = [s for n, s in by_name.items() if n not in existing]
        if not missing:
            return result
        new_topics = [
            NewTopic(
                s.name, num_partitions=s.partitions, replication_factor=s.replication_factor, config=dict(s.config)
            )
            for s in missing
        ]
        try:
            futures = self.client.create_topics(new_topics, operation_timeout=timeout, request_timeout=timeout)
        except KafkaException as e:
            raise from_exception(e, "Cannot create topics") from e
        for name, fut in futures.items():
            try:
                fut.result(timeout=timeout + 5)
                log.info("Created topic %s on %s", by_name[name], self._bootstrap or "the cluster")
                result.created.add(name)
            except KafkaException as e:
                err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                code = err.code() if err is not None else None
                if code == KafkaError.TOPIC_ALREADY_EXISTS:
                    result.existing.add(name)
                elif code in _UNSUPPORTED_CODES:
                    log.warning("Cannot create topic %s: the broker does not support the CreateTopics API", name)
                elif code in _NOT_AUTHORIZED:
                    log.warning("Not authorized to create topic %s; it must be created by an administrator", name)
                elif code in _BAD_TOPIC_CONFIG:
                    spec = by_name[name]
                    raise ConfigError(
                        f"Unable to create topic '{name}' (partitions={spec.partitions}, "
                        f"replication.factor={spec.replication_factor}, config={dict(spec.config)}): "
                        f"{err.str() if err else e}"
                    ) from e
                else:
                    raise from_exception(e, f"Cannot create topic {name}") from e
            except TimeoutError as e:
                raise RetriableKafkaError(
                    f"Timed out creating topic {name}", code=KafkaError._TIMED_OUT, name="_TIMED_OUT", retriable=True
                ) from e
        return result

    def wait_for_topic(self, name: str, timeout_s: float | None = None) -> TopicInfo:
        """Until metadata lists the topic with partitions (creation propagates asynchronously)."""
        deadline = time.monotonic() + (timeout_s or self.timeout_s)
        delay = 0.05
        while True:
            info = self.describe_topics([name], timeout_s=max(1.0, deadline - time.monotonic())).get(name)
            if info is not None and info.partitions:
                return info
            if time.monotonic() >= deadline:
                raise ConnectError(
                    f"Could not look up partition metadata for topic '{name}' in the allotted period. This could "
                    "indicate a connectivity issue, unavailable topic partitions, or if this is your first use of "
                    "the topic it may have taken too long to create."
                )
            time.sleep(delay)
            delay = min(delay * 2, 1.0)

    # ------------------------------------------------------------------------------- configs

    def describe_configs(
        self, topics: Iterable[str], timeout_s: float | None = None
    ) -> dict[str, dict[str, ConfigValue]]:
        """Config entries per topic (topics that do not exist are absent)."""
        timeout = timeout_s or self.timeout_s
        resources = [ConfigResource(ResourceType.TOPIC, t) for t in topics]
        if not resources:
            return {}
        try:
            futures = self.client.describe_configs(resources, request_timeout=timeout)
        except KafkaException as e:
            raise from_exception(e, "Cannot describe topic configs") from e
        out: dict[str, dict[str, ConfigValue]] = {}
        for res, fut in futures.items():
            try:
                entries = fut.result(timeout=timeout + 5)
            except KafkaException as e:
                err = e.args[0] if e.args and isinstance(e.args[0], KafkaError) else None
                if err is not None and err.code() == KafkaError.UNKNOWN_TOPIC_OR_PART:
                    continue
                raise from_exception(e, f"Cannot describe configs of topic {res.name}") from e
            out[res.name] = {
                name: ConfigValue(
                    name,
                    entry.value,
                    bool(entry.is_default),
                    _source_name(entry.source),
                    bool(entry.is_sensitive),
                    bool(entry.is_read_only),
                )
                for name, entry in entries.items()
            }
        return out

    def incremental_alter_configs(
        self, changes: Mapping[str, Mapping[str, str | None]], timeout_s: float | None = None
    ) -> dict[str, BaseException | None]:
        """Per topic, SET each key to its value, or DELETE (revert to default) where the value is None.

        Returns each topic's error (None on success). A broker without IncrementalAlterConfigs
        raises a KafkaClientError for which :func:`is_unsupported` is true.
        """
        timeout = timeout_s or self.timeout_s
        resources = []
        for topic, entries in changes.items():
            ops = [
                ConfigEntry(
                    k,
                    v,
                    incremental_operation=AlterConfigOpType.DELETE if v is None else AlterConfigOpType.SET,
                )
                for k, v in entries.items()
            ]
            resources.append(ConfigResource(ResourceType.TOPIC, topic, incremental_configs=ops))
        if not resources:
            return {}
        try:
            futures = self.client.incremental_alter_configs(resources, request_timeout=timeout)
        except KafkaException as e:
            raise from_exception(e, "Cannot alter topic configs") from e
        out: dict[str, BaseException | None] = {}
        for res, fut in futures.items():
            try:
                fut.result(timeout=timeout + 5)
                out[res.name] = None
            except KafkaException as e:
                mapped = from_exception(e, f"Cannot alter configs of topic {res.name}")
                if isinstance(mapped, KafkaClientError) and mapped.code in _UNSUPPORTED_CODES:
                    raise mapped from e
                out[res.name] = mapped
        return out
