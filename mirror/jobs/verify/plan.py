"""The Spark driver's part of ``mm2 verify``: read the flow's small state and cut the work into chunks.

No record is read here: the committed MirrorSource offsets (``mm2-offsets.<source>.internal`` on the
target: the last source offset copied per partition at the last offset flush), the flow's offset mappings
and offset syncs (where each copied record went; the source task writes them within about a second of
the target acknowledging the copy, so they reach further than the flushed offsets) and the source
partitions' log-start and end offsets. Every verified range ``[log start, last copied + 1)``, the last
copied record being the newest the flushed offsets, mappings or syncs know of, is cut into chunks
(:func:`mirror.jobs.verify.logic.plan_chunks`); records after it are ``pending`` (counted from the first
record after it: commit markers are not).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.types import KafkaException
from connect_core.kafka.watermarks import high_watermarks
from connect_core.storage.internal_topics import store_client_props
from mirror.client.errors import ClusterUnreachableError, RecordFormatError
from mirror.client.filters import should_replicate_topic
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.connectors.config import MirrorSourceConfig
from mirror.connectors.offset_mapping_index import OffsetMappingIndex
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.driver.status import OffsetFold
from mirror.jobs.flows import flow_configs
from mirror.jobs.verify.logic import DEFAULT_CHUNK_RECORDS, ChunkSpec, PartitionReport, plan_chunks
from mirror.jobs.verify.reads import first_records, log_starts, read_state_topic

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
_ROLE = "verify"


@dataclass(frozen=True)
class VerifyClients:
    """What a task needs to read both clusters (picklable: plain dicts)."""

    source_consumer: dict[str, Any]
    target_consumer: dict[str, Any]
    timeout_s: float


@dataclass
class VerifyPlan:
    """The Spark driver's part: one report per verified partition (pending known), and the chunks to compare."""

    reports: list[PartitionReport]
    chunks: list[ChunkSpec]
    clients: VerifyClients


def _compile(pattern: str | None) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern) if pattern else None
    except re.error as e:
        raise ConfigError(f"--topics {pattern!r} is not a valid regular expression: {e}") from None


def _topics(admin: TopicAdmin, alias: str, timeout_s: float) -> set[str]:
    try:
        return admin.list_topics(timeout_s)
    except (ConnectError, KafkaException) as e:
        raise ClusterUnreachableError(f"cluster '{alias}' is unreachable: {' '.join(str(e).split())}", alias) from None


class FlowEvidence:
    """Where the flow wrote each source record: mm2's offset mappings, then Kafka's offset syncs."""

    def __init__(self) -> None:
        self.mappings = OffsetMappingIndex()
        self.syncs: dict[TopicPartition, dict[int, int]] = {}
        self._synced_through: dict[TopicPartition, int] = {}

    def copied_through(self, tp: TopicPartition) -> int:
        """The source offset after the newest record the flow says the target acknowledged (-1: none).

        Mappings and syncs are written only for acknowledged copies, in order per partition, so every
        record before it was copied too (or counts as missing, which is what verify is for).
        """
        return max(self.mappings.copied_through(tp), self._synced_through.get(tp, -1))

    def on_sync(self, key: bytes | None, value: bytes | None, _ts: int | None = None) -> None:
        try:
            sync = OffsetSync.decode(key, value)
        except RecordFormatError as e:
            log.debug("Ignored invalid offset sync: %s", e)
            return
        self.syncs.setdefault(sync.topic_partition, {})[sync.upstream_offset] = sync.downstream_offset
        if sync.upstream_offset >= self._synced_through.get(sync.topic_partition, 0):
            self._synced_through[sync.topic_partition] = sync.upstream_offset + 1

    def on_mapping(self, key: bytes | None, value: bytes | None, _ts: int | None = None) -> None:
        try:
            self.mappings.on_record(key, value)
        except RecordFormatError as e:
            log.debug("Ignored invalid offset mapping: %s", e)

    def translator(self, tp: TopicPartition) -> Callable[[int], int | None]:
        syncs = self.syncs.get(tp, {})

        def translate(offset: int) -> int | None:
            down = self.mappings.translate(tp, offset)
            return down if down is not None else syncs.get(offset)

        return translate


def _read_evidence(
    cfg: MirrorSourceConfig, source_topics: set[str], target_topics: set[str], timeout_s: float
) -> FlowEvidence:
    evidence = FlowEvidence()
    on_source = cfg.offset_syncs_on_source
    props = cfg.source_consumer_config(_ROLE) if on_source else cfg.target_consumer_config(_ROLE)
    admin = TopicAdmin(cfg.offset_syncs_topic_admin_config(), timeout_s=timeout_s)
    present = source_topics if on_source else target_topics
    for topic, apply in (
        (cfg.offset_syncs_topic(), evidence.on_sync),
        (cfg.offset_mappings_topic(), evidence.on_mapping),
    ):
        if topic in present:
            read_state_topic(props, admin, topic, apply, timeout_s)
    return evidence


def plan_verification(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    topics: str | None = None,
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> VerifyPlan:
    """Read the flow's state and plan the chunks (no records are read here)."""
    regex = _compile(topics)
    cfg, _ = flow_configs(config, source, target)
    pair = SourceAndTarget(source, target)
    worker = config.worker_config(pair)
    target_props = store_client_props(worker)
    target_admin = TopicAdmin(target_props, timeout_s=timeout_s)
    target_topics = _topics(target_admin, target, timeout_s)
    source_admin_props = cfg.source_admin_config(_ROLE)
    source_admin = TopicAdmin(source_admin_props, timeout_s=timeout_s)
    source_topics = _topics(source_admin, source, timeout_s)

    policy = cfg.replication_policy()
    accepted = {
        t
        for t in source_topics
        if should_replicate_topic(t, cfg.topic_filter(), policy, target, cfg.heartbeats_replication_enabled)
    }
    if regex is not None:
        accepted = {t for t in accepted if regex.fullmatch(t)}
    source_consumer = cfg.source_consumer_config(_ROLE)

    def positions(topics: Iterable[str]) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
        """Log start and end offsets of every partition of ``topics`` on the source."""
        counts = source_admin.partition_counts(topics, timeout_s)
        parts = [(t, p) for t, n in counts.items() for p in range(n)]
        starts = log_starts(source_admin_props, parts, timeout_s)
        ends = high_watermarks(source_consumer, starts, timeout_s) if parts else {}
        return starts, ends

    committed = OffsetFold(source)
    offsets_topic = str(worker["offset.storage.topic"])
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="mm2-verify-plan") as pool:
        # Independent reads, side by side: where records went (syncs/mappings), the source partitions'
        # positions, and the flow's committed offsets.
        found = pool.submit(_read_evidence, cfg, source_topics, target_topics, timeout_s)
        placed = pool.submit(positions, accepted)
        if offsets_topic in target_topics:
            read_state_topic(target_props, target_admin, offsets_topic, committed.apply, timeout_s)
        evidence = found.result()
        starts, ends = placed.result()
    # Topics the flow copied but its filter no longer selects: still verified.
    others = {
        t
        for t, _ in committed.offsets
        if t in source_topics and t not in accepted and (regex is None or regex.fullmatch(t))
    }
    if others:
        more_starts, more_ends = positions(others)
        starts.update(more_starts)
        ends.update(more_ends)
    if regex is not None and not accepted and not others:
        raise ConfigError(f"--topics {topics!r} matches no topic the flow {source}->{target} mirrors")
    partitions = sorted(starts)

    replicated_at = {
        tp: min(
            ends[tp], max(starts[tp], committed.offsets.get(tp, -1) + 1, evidence.copied_through(TopicPartition(*tp)))
        )
        for tp in partitions
    }
    tails = first_records(source_consumer, {tp: o for tp, o in replicated_at.items() if ends[tp] > o}, timeout_s)

    reports: list[PartitionReport] = []
    chunks: list[ChunkSpec] = []
    for topic, partition in partitions:
        tp = TopicPartition(topic, partition)
        remote = policy.format_remote_topic(source, topic)
        start, end = starts[(topic, partition)], ends[(topic, partition)]
        replicated = replicated_at[(topic, partition)]
        first_pending = tails.get((topic, partition))  # offsets before it hold no record (commit markers)
        report = PartitionReport(
            topic,
            partition,
            remote,
            source_lo=start,
            replicated=replicated,
            pending=0 if first_pending is None else max(0, end - first_pending),
        )
        lost = committed.lost.get((topic, partition))
        report.lost_on_source = 0 if lost is None else lost.count
        recreated = committed.recreated.get((topic, partition))
        if recreated is not None:
            report.source_recreated = (
                f"topic id {recreated.previous_topic_id} -> {recreated.topic_id}, old "
                f"incarnation mirrored through offset {recreated.previous_offset}"
            )
        reports.append(report)
        if replicated > start and remote not in target_topics:
            report.missing = replicated - start  # copied per the flow, but the remote topic is gone
            report.compared = report.missing
            report.first_difference = start
            continue
        chunks.extend(
            plan_chunks(
                topic,
                partition,
                remote,
                start,
                replicated,
                evidence.translator(tp),
                evidence.syncs.get(tp, {}),
                chunk_records,
            )
        )
    clients = VerifyClients(source_consumer, cfg.target_consumer_config(_ROLE), timeout_s)
    log.info(
        "verify %s->%s: %d partitions, %d chunks, %d records pending",
        source,
        target,
        len(reports),
        len(chunks),
        sum(r.pending for r in reports),
    )
    return VerifyPlan(reports, chunks, clients)


__all__ = ["DEFAULT_TIMEOUT_S", "FlowEvidence", "VerifyClients", "VerifyPlan", "plan_verification"]
