"""The Spark driver's side of ``mm2 backfill``: the flow's settings, the checks, the plan and the topics it needs.

Everything here runs before Spark starts and reads only metadata and small topics; every mistake is
found here, before anything is written: an unknown alias, a disabled flow, a regex that matches
nothing, an unreachable cluster, a target topic with fewer partitions than its source.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.clients import admin_config, consumer_config, create_admin, create_consumer
from connect_core.kafka.types import ClientPartition, KafkaError, KafkaException, OffsetSpec
from connect_core.kafka.watermarks import high_watermarks
from connect_core.storage.committed_offsets import read_committed_offsets
from connect_core.storage.internal_topics import (
    CONFIG_STORAGE,
    OFFSET_STORAGE,
    STATUS_STORAGE,
    internal_topic_spec,
    store_client_props,
)
from mirror.client.errors import ClusterUnreachableError
from mirror.connectors.config import MirrorSourceConfig
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.source_logic import create_configs, target_config_entries
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.jobs.backfill.bounds import transaction_bounds, with_transaction_timeout
from mirror.jobs.backfill.copy import BackfillClients, decode_progress
from mirror.jobs.backfill.plan import DEFAULT_CHUNK_RECORDS, BackfillPlan, WorkUnit, plan_units
from mirror.jobs.flows import checked_pair

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
_ROLE = "backfill"
_SAMPLE_RECORDS = 200


@dataclass(frozen=True)
class Flow:
    """One source -> target flow as ``mm2 run`` would configure it."""

    pair: SourceAndTarget
    source_config: MirrorSourceConfig
    worker_props: dict[str, str]
    #: the flow needs no decoded record: the backfill copies the source's batches as bytes
    batch_copy: bool = False

    @property
    def offsets_topic(self) -> str:
        return internal_topic_spec(self.worker_props, OFFSET_STORAGE).name

    @property
    def configs_topic(self) -> str:
        return internal_topic_spec(self.worker_props, CONFIG_STORAGE).name

    @property
    def status_topic(self) -> str:
        return internal_topic_spec(self.worker_props, STATUS_STORAGE).name

    def remote_topic(self, topic: str) -> str:
        return self.source_config.replication_policy().format_remote_topic(self.pair.source, topic)


def resolve_flow(config: MirrorMakerConfig, source: str, target: str) -> Flow:
    """The enabled flow ``source -> target`` of CONFIG, or a ConfigError naming what is wrong."""
    pair = checked_pair(config, source, target)
    if not config.flow_enabled(pair):
        raise ConfigError(f"flow {pair} is not enabled in the config (set {pair}.enabled=true)")
    cfg = MirrorSourceConfig(config.connector_base_config(pair, "MirrorSourceConnector"))
    return Flow(pair, cfg, dict(config.worker_config(pair)), config.batch_copy_applies(pair))


def _admin(flow: Flow, which: str) -> MirrorAdmin:
    cfg = flow.source_config
    props = cfg.source_admin_config(_ROLE) if which == "source" else cfg.target_admin_config(_ROLE)
    alias = flow.pair.source if which == "source" else flow.pair.target
    return MirrorAdmin(props, alias, min(cfg.admin_timeout_s, DEFAULT_TIMEOUT_S))


def partition_counts(flow: Flow, which: str) -> dict[str, int]:
    alias = flow.pair.source if which == "source" else flow.pair.target
    admin = _admin(flow, which)
    try:
        return admin.topic_partition_counts()
    except ConnectError as e:
        raise ClusterUnreachableError(f"{which} cluster '{alias}' is unreachable: {e}", alias) from None
    finally:
        admin.close()


def select_topics(flow: Flow, source_counts: Mapping[str, int], pattern: str | None) -> list[str]:
    """Source topics the flow's topic filter accepts and ``pattern`` (full match) selects."""
    try:
        regex = re.compile(pattern) if pattern else None
    except re.error as e:
        raise ConfigError(f"--topics {pattern!r} is not a valid regular expression: {e}") from None
    topic_filter = flow.source_config.topic_filter()
    chosen = sorted(
        t for t in source_counts if topic_filter.should_replicate_topic(t) and (regex is None or regex.fullmatch(t))
    )
    if not chosen:
        what = f"--topics {pattern!r} and the flow's topic filter" if pattern else "the flow's topic filter"
        raise ConfigError(f"no topic of cluster '{flow.pair.source}' matches {what}")
    return chosen


def check_target_topics(
    flow: Flow, topics: Iterable[str], source_counts: Mapping[str, int], target_counts: Mapping[str, int]
) -> list[str]:
    """Remote topics to create; ConfigError when an existing one has fewer partitions than its source."""
    missing = []
    for topic in topics:
        remote = flow.remote_topic(topic)
        if remote not in target_counts:
            missing.append(topic)
        elif target_counts[remote] < source_counts[topic]:
            raise ConfigError(
                f"target topic {remote!r} on '{flow.pair.target}' has {target_counts[remote]} "
                f"partition(s), fewer than the {source_counts[topic]} of {topic!r} on "
                f"'{flow.pair.source}': add partitions first"
            )
    return missing


def create_target_topics(flow: Flow, topics: list[str], source_counts: Mapping[str, int]) -> None:
    """Remote topics as MirrorSource creates them: the source's partitions and its non-default configs."""
    if not topics:
        return
    cfg = flow.source_config
    source_admin, target_admin = _admin(flow, "source"), _admin(flow, "target")
    try:
        described = source_admin.describe_topic_configs(topics)
        new_topics = {}
        for topic in topics:
            entries = target_config_entries(described.get(topic, []), cfg.config_property_filter(), incremental=False)
            new_topics[flow.remote_topic(topic)] = (
                source_counts[topic],
                cfg.replication_factor,
                create_configs(entries),
            )
        failed = {name: e for name, e in target_admin.create_topics(new_topics).items() if e is not None}
        if failed:
            name, error = next(iter(failed.items()))
            raise ConnectError(f"cannot create topic {name!r} on '{flow.pair.target}': {error}")
    finally:
        source_admin.close()
        target_admin.close()


def create_internal_topics(flow: Flow) -> None:
    """The flow's internal topics, as the herder and the MirrorSource connector create them."""
    admin = TopicAdmin(store_client_props(flow.worker_props))
    try:
        admin.create_topics_if_missing(
            [
                internal_topic_spec(flow.worker_props, prefix)
                for prefix in (OFFSET_STORAGE, CONFIG_STORAGE, STATUS_STORAGE)
            ]
        )
    finally:
        admin.close()
    cfg = flow.source_config
    if cfg.emit_offset_syncs_enabled:
        alias = flow.pair.source if cfg.offset_syncs_on_source else flow.pair.target
        syncs_admin = MirrorAdmin(cfg.offset_syncs_topic_admin_config(), alias, cfg.admin_timeout_s)
        try:
            syncs_admin.create_compacted_topic(cfg.offset_syncs_topic(), 1, cfg.offset_syncs_topic_replication_factor)
            syncs_admin.create_compacted_topic(
                cfg.offset_mappings_topic(), 1, cfg.offset_syncs_topic_replication_factor
            )
        finally:
            syncs_admin.close()


def log_starts(flow: Flow, partitions: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    admin = create_admin(admin_config(flow.source_config.source_admin_config(_ROLE)))
    request = {ClientPartition(t, p): OffsetSpec.earliest() for t, p in partitions}
    futures = admin.list_offsets(request, request_timeout=DEFAULT_TIMEOUT_S)
    out = {}
    for ktp, future in futures.items():
        try:
            out[(ktp.topic, ktp.partition)] = max(0, int(future.result(timeout=DEFAULT_TIMEOUT_S).offset))
        except (KafkaException, TimeoutError) as e:
            raise ConnectError(
                f"cannot list offsets of {ktp.topic}-{ktp.partition} on '{flow.pair.source}': {e}"
            ) from None
    return out


def committed_offsets(flow: Flow, target_topics: Iterable[str]) -> dict[tuple[str, int], int]:
    """The flow's committed MirrorSource offsets (last copied source offset) per source partition."""
    if flow.offsets_topic not in target_topics:
        return {}
    out: dict[tuple[str, int], int] = {}
    source = flow.pair.source

    # read_committed on any broker (from the transaction markers where the broker lists no aborted
    # transactions): a killed attempt's aborted offset record must not move the resume point past
    # records that were never committed
    for key, value in read_committed_offsets(flow.offsets_topic, target_consumer_props(flow), DEFAULT_TIMEOUT_S):
        decoded = decode_progress(key, value)
        if decoded is not None and _cluster_of(key) == source:
            out[decoded[0]] = decoded[1]
    return out


def _cluster_of(key: bytes | None) -> str | None:
    from connect_core.storage.offset_storage import deserialize_offset_key

    decoded = deserialize_offset_key(key)
    return None if decoded is None or decoded[1] is None else str(decoded[1].get("cluster"))


def target_consumer_props(flow: Flow) -> dict[str, Any]:
    props = dict(flow.source_config.target_consumer_config(_ROLE))
    props["isolation.level"] = "read_committed"
    return props


def average_record_bytes(
    flow: Flow, starts: Mapping[tuple[str, int], int], ends: Mapping[tuple[str, int], int]
) -> tuple[float, dict[str, float]]:
    """Key + value bytes per record over a small sample from the partitions' starts (for the estimate),
    overall and per sampled topic (tasks are sized by bytes)."""
    wanted = {tp: s for tp, s in starts.items() if ends.get(tp, 0) > s}
    if not wanted:
        return 0.0, {}
    conf = consumer_config(
        flow.source_config.source_consumer_config(_ROLE),
        {"group.id": "mm2-backfill-sample", "enable.auto.commit": False, "enable.partition.eof": True},
    )
    consumer = create_consumer(conf)
    sizes: list[int] = []
    by_topic: dict[str, list[int]] = {}
    eof: set[tuple[str, int]] = set()
    try:
        consumer.assign([ClientPartition(t, p, o) for (t, p), o in wanted.items()])
        deadline = time.monotonic() + 10
        while len(sizes) < _SAMPLE_RECORDS and len(eof) < len(wanted) and time.monotonic() < deadline:
            for msg in consumer.consume(_SAMPLE_RECORDS, 0.5):
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        eof.add((str(msg.topic()), int(msg.partition() or 0)))
                    continue
                value, key = msg.value(), msg.key()
                size = (len(value) if value else 0) + (len(key) if key else 0)
                sizes.append(size)
                by_topic.setdefault(str(msg.topic()), []).append(size)
    finally:
        consumer.close()
    return (sum(sizes) / len(sizes) if sizes else 0.0), {t: sum(v) / len(v) for t, v in by_topic.items()}


@dataclass(frozen=True)
class PreparedBackfill:
    """The checked plan and what executors need; ``missing_topics`` are created only when not a dry run."""

    flow: Flow
    plan: BackfillPlan
    clients: BackfillClients
    missing_topics: list[str]
    source_counts: dict[str, int]
    #: the flow's config topic existed at planning: ``mm2 run`` may be running it (else it never ran)
    flow_has_run: bool
    #: every partition of the selected topics, planned or already complete
    partitions: tuple[tuple[str, int], ...] = ()
    #: the flow's committed position (last copied source offset) per source partition
    committed: Mapping[tuple[str, int], int] = field(default_factory=dict)


def prepare(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    pattern: str | None,
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> PreparedBackfill:
    """Every check and the plan; writes nothing."""
    flow = resolve_flow(config, source, target)
    source_counts = partition_counts(flow, "source")
    target_counts = partition_counts(flow, "target")
    topics = select_topics(flow, source_counts, pattern)
    missing = check_target_topics(flow, topics, source_counts, target_counts)
    partitions = [(t, p) for t in topics for p in range(source_counts[t])]
    starts = log_starts(flow, partitions)
    try:
        ends = high_watermarks(flow.source_config.source_consumer_config(_ROLE), starts, timeout_s)
    except ConnectError as e:
        raise ConnectError(f"cannot read the end offsets of '{source}': {e}") from None
    committed = committed_offsets(flow, target_counts)
    units = plan_units(partitions, starts, ends, committed, {t: flow.remote_topic(t) for t in topics})
    average, per_topic = average_record_bytes(flow, starts, ends)
    plan = BackfillPlan(source, target, tuple(units), average, per_topic)
    return PreparedBackfill(
        flow,
        plan,
        backfill_clients(flow, chunk_records, timeout_s),
        missing,
        source_counts,
        flow.configs_topic in target_counts,
        tuple(partitions),
        committed,
    )


def backfill_clients(flow: Flow, chunk_records: int, timeout_s: float) -> BackfillClients:
    cfg = flow.source_config
    syncs_producer = cfg.offset_syncs_topic_producer_config() if cfg.emit_offset_syncs_enabled else None
    target_producer = cfg.target_producer_config(_ROLE)
    bounds = transaction_bounds(target_producer, chunk_records)
    return BackfillClients(
        source=flow.pair.source,
        target=flow.pair.target,
        source_consumer=dict(cfg.source_consumer_config(_ROLE)),
        target_producer=with_transaction_timeout(target_producer, bounds),
        target_consumer=target_consumer_props(flow),
        offsets_topic=flow.offsets_topic,
        syncs_producer=syncs_producer,
        syncs_topic=cfg.offset_syncs_topic(),
        mappings_topic=cfg.offset_mappings_topic() if syncs_producer is not None else None,
        chunk_records=bounds.records,
        timeout_s=timeout_s,
        chunk_bytes=bounds.bytes,
        chunk_seconds=bounds.seconds,
        batch_copy=flow.batch_copy,
    )


def batch_copy_clients(
    flow: Flow, clients: BackfillClients, units: Iterable[WorkUnit], offsets_partitions: int
) -> BackfillClients:
    """What the batch path needs besides (once the target topics exist): where each unit's progress record
    goes (its key's partition of the offsets topic) and the target topics' own max.message.bytes (a larger
    batch is re-encoded in smaller ones; topics that set none get Kafka's default)."""
    if not clients.batch_copy:
        return clients
    found: list[tuple[str, int]] = []
    topics = sorted({u.target_topic for u in units})
    for topic, entries in _admin(flow, "target").describe_topic_configs(topics).items():
        found.extend((topic, int(e.value)) for e in entries if e.name == "max.message.bytes" and e.value)
    return replace(clients, offsets_partitions=offsets_partitions, max_message_bytes=tuple(found))


__all__ = [
    "Flow",
    "PreparedBackfill",
    "batch_copy_clients",
    "create_internal_topics",
    "create_target_topics",
    "prepare",
    "resolve_flow",
]
