"""``mm2 translate-offsets``: consumer-group offset translation for many groups at once, as a PySpark job.

The Spark driver reads the flow's translation data once - mm2's offset mappings and Kafka's offset syncs
for ``source -> target``, and for failback the mappings of ``target -> source`` - lists the groups
and their committed offsets on the source, and cuts the groups into slices: each Spark task receives
its groups' offsets and only the translation state of the partitions those groups committed (not the
whole flow's: a task's input is bounded by its groups, not by the flow). With its own admin client
(executor to broker, never through the Spark driver) the task describes the groups on the target
(state, committed offsets), lists the target's end offsets, plans every partition
(:mod:`mirror.jobs.translate.logic`) and, with ``--apply``, writes the offsets of groups with no
active members on the target, checking every partition's result.

When the source is unreachable (an unplanned failover: cluster A is gone), the groups and their
positions come from the flow's checkpoints topic on the target instead, each placed at its last
checkpoint (exact where the target's mappings confirm it), and every plan says so and how old each
checkpoint is (:mod:`mirror.jobs.translate.checkpoints`). Nothing located on the source is waited for.

Failback works as Kafka's ``RemoteClusterUtils``/checkpoint renaming does: a remote topic whose
source is the target (``A.orders`` on B, job B->A) is translated back to its original name
(``orders`` on A), with the inverse of the A->B mappings.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.types import ClientPartition, KafkaException, OffsetSpec
from connect_core.storage.internal_topics import store_client_props
from mirror.client.errors import ClusterUnreachableError
from mirror.client.filters import TopicFilter
from mirror.client.formats import OffsetAndMetadata, TopicPartition
from mirror.client.policy import ReplicationPolicy
from mirror.connectors.checkpoint_logic import rename_topic_partition
from mirror.connectors.config import MirrorCheckpointConfig, MirrorSourceConfig
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.offset_mapping_index import ExactOffsetTranslator, OffsetMappingIndex
from mirror.connectors.offset_sync_store import OffsetSyncStore
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.driver.status import OffsetFold, read_topic
from mirror.jobs.flows import flow_configs
from mirror.jobs.spark import context_of, executor_logging, job_error, run_slices
from mirror.jobs.translate.checkpoints import (
    Checkpointed,
    LatestCheckpoints,
    plan_from_checkpoints,
    upstream_topic_partition,
)
from mirror.jobs.translate.incarnations import merge_plans, old_incarnation_rows
from mirror.jobs.translate.logic import (
    WRITABLE_STATES,
    GroupPlan,
    PartitionRow,
    Translated,
    plan_group,
    record_results,
)

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
GROUPS_PER_TASK = 500
#: Per group, its committed offsets on the source (None: no valid offset for that partition).
GroupOffsets = dict[str, dict[TopicPartition, OffsetAndMetadata | None]]
_ROLE = "translate-offsets"


@dataclass(frozen=True)
class FlowClients:
    """What executors need to reach both clusters (picklable: plain dicts and strings)."""

    source: str
    target: str
    source_admin: dict[str, Any]
    target_admin: dict[str, Any]
    timeout_s: float


class FlowTranslator:
    """Translates a source topic-partition's committed offset to the target (picklable, broadcast)."""

    def __init__(
        self,
        source: str,
        target: str,
        policy: ReplicationPolicy,
        forward: ExactOffsetTranslator,
        back: OffsetMappingIndex | None,
        topic_filter: TopicFilter | None = None,
    ) -> None:
        self.source = source
        self.target = target
        self.policy = policy
        self.forward = forward
        self.back = back
        self.topic_filter = topic_filter

    def accepts(self, topic: str) -> bool:
        """The flow's topic filter, as the checkpoint task applies it (groups' other topics are not listed)."""
        return self.topic_filter is None or self.topic_filter.should_replicate_topic(topic)

    def target_topic_partition(self, tp: TopicPartition) -> TopicPartition:
        return rename_topic_partition(tp, self.policy, self.source, self.target)

    def subset(self, source_partitions: Iterable[TopicPartition]) -> FlowTranslator:
        """The translator for these source partitions only: what one Spark task needs of the flow's state."""
        wanted = set(source_partitions)
        syncs = self.forward.syncs
        store = syncs.subset(wanted) if isinstance(syncs, OffsetSyncStore) else syncs
        back = None if self.back is None else self.back.subset({self.target_topic_partition(tp) for tp in wanted})
        return FlowTranslator(
            self.source,
            self.target,
            self.policy,
            ExactOffsetTranslator(self.forward.index.subset(wanted), store),
            back,
            self.topic_filter,
        )

    def __call__(self, tp: TopicPartition, offset: int) -> Translated:
        target_tp = self.target_topic_partition(tp)
        if self.policy.topic_source(tp.topic) == self.target:
            # Failback: the remote topic goes back to its source name; the target -> source flow's mappings, inverted.
            back = None if self.back is None else self.back.translate_back(target_tp, offset)
            if back is None:
                return Translated(target_tp.topic, None, None)
            return Translated(target_tp.topic, back.offset, 0 if back.exact else None)
        downstream, exact = self.forward.translate(None, tp, offset)
        if downstream is None or downstream < 0:
            return Translated(target_tp.topic, None, None)
        return Translated(target_tp.topic, downstream, 0 if exact else self._sync_reread(tp, offset))

    def _sync_reread(self, tp: TopicPartition, offset: int) -> int | None:
        """Upper bound of the records re-read with Kafka's offset-sync translation (sync point, then + 1)."""
        store = self.forward.syncs
        if not isinstance(store, OffsetSyncStore):
            return None
        for sync in store.distinct_syncs(tp):
            if sync.upstream_offset <= offset:
                return 0 if sync.upstream_offset == offset else offset - sync.upstream_offset - 1
        return None


# -- Spark driver side -----------------------------------------------------------------------------


def _read_if_exists(
    admin: MirrorAdmin,
    consumer_props: dict[str, Any],
    topic: str,
    apply: Callable[[bytes | None, bytes | None], object],
    timeout_s: float,
) -> bool:
    if topic not in admin.topic_partition_counts():
        return False

    def consume(key: bytes | None, value: bytes | None, _timestamp: int | None) -> None:
        apply(key, value)

    read_topic(consumer_props, topic, consume, timeout_s)
    return True


def _syncs_location(cfg: MirrorSourceConfig) -> tuple[str, MirrorAdmin, dict[str, Any]]:
    alias = cfg.source_cluster_alias if cfg.offset_syncs_on_source else cfg.target_cluster_alias
    consumer = cfg.source_consumer_config(_ROLE) if cfg.offset_syncs_on_source else cfg.target_consumer_config(_ROLE)
    return alias, MirrorAdmin(cfg.offset_syncs_topic_admin_config(), alias, cfg.admin_timeout_s), consumer


def load_translator(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    unreachable: str | None = None,
) -> FlowTranslator:
    """Read the flow's offset mappings and offset syncs (and the reverse flow's mappings) once.

    ``unreachable``: a cluster alias known to be down; topics located there are skipped (no wait on it).
    """
    cfg, checkpoint_cfg = flow_configs(config, source, target)
    alias, admin, consumer = _syncs_location(cfg)
    index = OffsetMappingIndex()
    store = OffsetSyncStore()
    store.start(initialization_must_read_to_end=False)  # keep every sync: no checkpoint history to protect

    def on_sync(key: bytes | None, value: bytes | None) -> None:
        try:
            store.on_record(key, value)
        except Exception as e:  # one malformed record must not stop a failover
            log.warning("Ignored invalid offset sync: %s", e)

    if alias != unreachable:
        _read_if_exists(admin, consumer, cfg.offset_syncs_topic(), on_sync, timeout_s)
        _read_if_exists(admin, consumer, cfg.offset_mappings_topic(), index.on_record, timeout_s)
    store.mark_read_to_end()
    back: OffsetMappingIndex | None = None
    reverse, _ = flow_configs(config, target, source)
    reverse_alias, reverse_admin, reverse_consumer = _syncs_location(reverse)
    candidate = OffsetMappingIndex()
    if reverse_alias != unreachable and _read_if_exists(
        reverse_admin, reverse_consumer, reverse.offset_mappings_topic(), candidate.on_record, timeout_s
    ):
        back = candidate
    log.info(
        "Translation data of %s->%s: %d mapped runs, %d partitions with offset syncs, %d mapped runs for failback",
        source,
        target,
        len(index),
        len(store.topic_partitions()),
        len(back or []),
    )
    return FlowTranslator(
        source,
        target,
        cfg.replication_policy(),
        ExactOffsetTranslator(index, store),
        back,
        checkpoint_cfg.topic_filter(),
    )


def _group_selector(checkpoint_cfg: MirrorCheckpointConfig, pattern: str | None) -> Callable[[str], bool]:
    """The flow's group filter and ``pattern`` (full match)."""
    try:
        regex = re.compile(pattern) if pattern else None
    except re.error as e:
        raise ConfigError(f"--groups {pattern!r} is not a valid regular expression: {e}") from None
    group_filter = checkpoint_cfg.group_filter()
    return lambda g: group_filter.should_replicate_group(g) and (regex is None or regex.fullmatch(g) is not None)


def select_groups(
    config: MirrorMakerConfig, source: str, target: str, pattern: str | None, timeout_s: float | None = None
) -> list[str]:
    """The source's consumer groups the flow's group filter accepts and ``pattern`` (full match) selects."""
    _, checkpoint_cfg = flow_configs(config, source, target)
    selected = _group_selector(checkpoint_cfg, pattern)
    wait_s = checkpoint_cfg.admin_timeout_s if timeout_s is None else min(timeout_s, checkpoint_cfg.admin_timeout_s)
    admin = MirrorAdmin(checkpoint_cfg.source_admin_config(_ROLE), source, wait_s)
    try:
        groups = admin.list_consumer_groups(strict=True)
    except ConnectError as e:
        raise ClusterUnreachableError(
            f"source cluster '{source}' is unreachable: {' '.join(str(e).split())}", source
        ) from None
    finally:
        admin.close()
    return sorted(g for g in groups if selected(g))


def checkpointed_groups(
    config: MirrorMakerConfig, source: str, target: str, pattern: str | None, timeout_s: float, why: str
) -> dict[str, dict[TopicPartition, Checkpointed]]:
    """The selected groups' last checkpoints in ``<source>.checkpoints.internal`` on the target (source gone)."""
    cfg, checkpoint_cfg = flow_configs(config, source, target)
    selected = _group_selector(checkpoint_cfg, pattern)
    admin = MirrorAdmin(cfg.target_admin_config(_ROLE), target, min(timeout_s, cfg.admin_timeout_s))
    try:
        topics = admin.topic_partition_counts()
    except ConnectError as e:
        raise ClusterUnreachableError(
            f"{why}; target cluster '{target}' is unreachable too: {' '.join(str(e).split())}", target
        ) from None
    finally:
        admin.close()
    topic = cfg.checkpoints_topic()
    if topic not in topics:
        raise ClusterUnreachableError(
            f"{why}, and cluster '{target}' has no checkpoints topic {topic} to fail over from", source
        )
    latest = LatestCheckpoints()
    read_topic(cfg.target_consumer_config(_ROLE), topic, latest.on_record, timeout_s)
    if latest.ignored_records:
        log.warning("Ignored %d malformed records of %s", latest.ignored_records, topic)
    return {g: cps for g, cps in sorted(latest.groups.items()) if selected(g)}


def flow_clients(
    config: MirrorMakerConfig, source: str, target: str, timeout_s: float = DEFAULT_TIMEOUT_S
) -> FlowClients:
    cfg, _ = flow_configs(config, source, target)
    return FlowClients(source, target, cfg.source_admin_config(_ROLE), cfg.target_admin_config(_ROLE), timeout_s)


# -- executor side -------------------------------------------------------------------------------


def end_offsets(
    admin_props: dict[str, Any], partitions: Iterable[TopicPartition], timeout_s: float
) -> dict[TopicPartition, int]:
    """Latest offsets of the given target partitions in one request; missing partitions are left out."""
    wanted = sorted(set(partitions))
    if not wanted:
        return {}
    admin = create_admin(admin_config(admin_props))
    futures = admin.list_offsets(
        {ClientPartition(tp.topic, tp.partition): OffsetSpec.latest() for tp in wanted}, request_timeout=timeout_s
    )
    out: dict[TopicPartition, int] = {}
    for ktp, future in futures.items():
        try:
            out[TopicPartition(ktp.topic, ktp.partition)] = int(future.result(timeout=timeout_s).offset)
        except (KafkaException, TimeoutError) as e:
            log.debug("No end offset for %s-%s: %s", ktp.topic, ktp.partition, e)
    return out


def translate_groups(
    groups: list[str],
    clients: FlowClients,
    translator: FlowTranslator,
    apply: bool,
    force: bool,
    checkpoints: Mapping[str, Mapping[TopicPartition, Checkpointed]] | None = None,
    unreachable: str = "",
    offsets: GroupOffsets | None = None,
) -> list[GroupPlan]:
    """One Spark task: plan (and with ``apply`` write) a slice of groups.

    ``offsets``: the groups' committed offsets on the source, when the driver listed them (else listed
    here). ``checkpoints`` (the source is unreachable): the groups' last checkpoints on the target, which
    place them instead; ``unreachable`` says why, in each plan.
    """
    if not groups:
        return []
    target = MirrorAdmin(clients.target_admin, clients.target, clients.timeout_s)
    states = target.consumer_group_states(groups)
    empty = [g for g in groups if states.get(g) == "EMPTY"]
    committed = target.list_consumer_group_offsets(empty) if empty else {}
    if checkpoints is not None:
        plans = _plans_from_checkpoints(groups, checkpoints, clients, translator, states, committed, unreachable)
    else:
        plans = _plans_from_source(groups, clients, translator, states, committed, offsets)
    if apply:
        for plan in plans:
            _apply(target, plan, force)
    return plans


def _plans_from_source(
    groups: list[str],
    clients: FlowClients,
    translator: FlowTranslator,
    states: Mapping[str, str],
    committed: Mapping[str, Mapping[TopicPartition, OffsetAndMetadata | None]],
    offsets: GroupOffsets | None,
) -> list[GroupPlan]:
    if offsets is None:
        source = MirrorAdmin(clients.source_admin, clients.source, clients.timeout_s)
        offsets = source.list_consumer_group_offsets(groups)
    wanted = {
        translator.target_topic_partition(tp)
        for g in groups
        for tp in offsets.get(g, {})
        if translator.accepts(tp.topic)
    }
    ends = end_offsets(clients.target_admin, wanted, clients.timeout_s)
    plans: list[GroupPlan] = []
    for group in groups:
        source_offsets = {tp: oam for tp, oam in (offsets.get(group) or {}).items() if translator.accepts(tp.topic)}
        if not any(oam is not None for oam in source_offsets.values()):
            continue
        plans.append(
            plan_group(group, source_offsets, translator, states.get(group, "UNKNOWN"), committed.get(group, {}), ends)
        )
    return plans


def _plans_from_checkpoints(
    groups: list[str],
    checkpoints: Mapping[str, Mapping[TopicPartition, Checkpointed]],
    clients: FlowClients,
    translator: FlowTranslator,
    states: Mapping[str, str],
    committed: Mapping[str, Mapping[TopicPartition, OffsetAndMetadata | None]],
    unreachable: str,
) -> list[GroupPlan]:
    ends = end_offsets(clients.target_admin, {tp for g in groups for tp in checkpoints.get(g, {})}, clients.timeout_s)
    now_ms = int(time.time() * 1000)

    def upstream_of(tp: TopicPartition) -> TopicPartition:
        return upstream_topic_partition(tp, translator.policy, translator.source, translator.target)

    return [
        plan_from_checkpoints(
            group,
            checkpoints[group],
            upstream_of,
            translator,
            states.get(group, "UNKNOWN"),
            committed.get(group, {}),
            ends,
            now_ms,
            unreachable,
        )
        for group in groups
        if checkpoints.get(group)
    ]


def _apply(target: MirrorAdmin, plan: GroupPlan, force: bool) -> None:
    writes = plan.writes(force)
    if not writes:
        return
    # Re-check right before writing: a consumer may have joined since the slice was described.
    state = target.consumer_group_states([plan.group]).get(plan.group, "UNKNOWN")
    if state not in WRITABLE_STATES:
        plan.target_state = state
        for row in plan.partitions:
            if row.status in ("ok", "behind-target"):
                row.status = "active-on-target"
        return
    results = target.alter_consumer_group_offsets(plan.group, writes)
    record_results(plan, results)


@dataclass(frozen=True)
class TaskSlice:
    """One Spark task's work: its groups, their source offsets (or, source unreachable, their checkpoints),
    and the flow's translation state for only the partitions those groups committed."""

    groups: list[str]
    translator: FlowTranslator
    offsets: GroupOffsets | None = None
    checkpoints: dict[str, dict[TopicPartition, Checkpointed]] | None = None


def task_slices(
    groups: list[str],
    per_task: int,
    translator: FlowTranslator,
    offsets: GroupOffsets | None = None,
    checkpoints: Mapping[str, dict[TopicPartition, Checkpointed]] | None = None,
) -> list[TaskSlice]:
    """``groups`` cut into slices of ``per_task``, each with the subset of ``translator`` its groups need."""
    out: list[TaskSlice] = []
    for i in range(0, len(groups), per_task):
        chunk = groups[i : i + per_task]
        if checkpoints is not None:
            mine = {g: checkpoints[g] for g in chunk}
            needed = {
                upstream_topic_partition(tp, translator.policy, translator.source, translator.target)
                for cps in mine.values()
                for tp in cps
            }
            out.append(TaskSlice(chunk, translator.subset(needed), checkpoints=mine))
        elif offsets is not None:
            listed = {g: dict(offsets.get(g) or {}) for g in chunk}
            needed = {tp for o in listed.values() for tp in o if translator.accepts(tp.topic)}
            out.append(TaskSlice(chunk, translator.subset(needed), offsets=listed))
        else:
            out.append(TaskSlice(chunk, translator))
    return out


def list_source_offsets(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    groups: list[str],
    timeout_s: float,
    per_request: int = GROUPS_PER_TASK,
) -> GroupOffsets:
    """The groups' committed offsets on the source (driver side: each task then gets only what its groups need)."""
    _, checkpoint_cfg = flow_configs(config, source, target)
    admin = MirrorAdmin(
        checkpoint_cfg.source_admin_config(_ROLE), source, min(timeout_s, checkpoint_cfg.admin_timeout_s)
    )
    out: GroupOffsets = {}
    try:
        for i in range(0, len(groups), per_request):
            out.update(admin.list_consumer_group_offsets(groups[i : i + per_request]))
    finally:
        admin.close()
    return out


def run_job(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    pattern: str | None = None,
    apply: bool = False,
    force: bool = False,
    master: str | None = None,
    groups_per_task: int = GROUPS_PER_TASK,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    spark: SparkSession | SparkContext | None = None,
) -> list[GroupPlan]:
    """The whole job: every selected group's plan (and writes with ``apply``), sorted by group.

    With the source unreachable (no answer within ``timeout_s``), the groups and their positions come from the
    flow's checkpoints on the target instead (see :mod:`mirror.jobs.translate.checkpoints`).
    ``spark``: an existing session or context to run in (tests, notebooks); by default one is built for the job.
    """
    checkpoints: dict[str, dict[TopicPartition, Checkpointed]] | None = None
    unreachable = ""
    work_s = max(timeout_s, DEFAULT_TIMEOUT_S)  # once the source answered (or not), requests get their usual time
    try:
        groups = select_groups(config, source, target, pattern, timeout_s)
    except ClusterUnreachableError as e:
        if e.alias != source:
            raise
        unreachable = str(e)
        log.warning("%s: placing the groups at their last checkpoints on '%s'", unreachable, target)
        checkpoints = checkpointed_groups(config, source, target, pattern, work_s, unreachable)
        groups = list(checkpoints)
    translator = load_translator(config, source, target, work_s, source if checkpoints is not None else None)
    clients = flow_clients(config, source, target, work_s)
    offsets = (
        None if checkpoints is not None or not groups else list_source_offsets(config, source, target, groups, work_s)
    )
    # issue 38: groups left on an old incarnation of a recreated source topic are reported, never translated
    old = (
        {}
        if checkpoints is not None
        else old_incarnation_groups(config, source, target, pattern, offsets or {}, translator, work_s)
    )
    if not groups:
        return merge_plans([], old)
    slices = task_slices(groups, groups_per_task, translator, offsets, checkpoints)
    if spark is not None:
        return merge_plans(_run(context_of(spark), slices, clients, apply, force, unreachable), old)
    from mirror.jobs.spark import spark_context

    with spark_context(f"mm2 translate-offsets {source}->{target}", master) as sc:
        return merge_plans(_run(sc, slices, clients, apply, force, unreachable), old)


def old_incarnation_groups(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    pattern: str | None,
    offsets: GroupOffsets,
    translator: FlowTranslator,
    timeout_s: float,
) -> dict[str, list[PartitionRow]]:
    """Rows of the selected groups whose last checkpoint lies in an old incarnation of a recreated source topic.

    Reads the flow's committed offsets on the target (a recreation is recorded there) and, only when some
    partition was recreated, its checkpoints. Best effort: a read that fails is logged, never fatal.
    """
    cfg, checkpoint_cfg = flow_configs(config, source, target)
    worker = config.worker_config(SourceAndTarget(source, target))
    target_admin = MirrorAdmin(cfg.target_admin_config(_ROLE), target, min(timeout_s, cfg.admin_timeout_s))
    try:
        committed = OffsetFold(source)
        if (
            not _read_if_exists(
                target_admin,
                store_client_props(worker),
                str(worker["offset.storage.topic"]),
                lambda k, v: committed.apply(k, v),
                timeout_s,
            )
            or not committed.recreated
        ):
            return {}
        latest = LatestCheckpoints()  # with each checkpoint's record time: before or after the recreation was found
        if cfg.checkpoints_topic() in target_admin.topic_partition_counts():
            read_topic(cfg.target_consumer_config(_ROLE), cfg.checkpoints_topic(), latest.on_record, timeout_s)
    except ConnectError as e:
        log.warning("Could not look for groups left on an old incarnation of a recreated topic: %s", e)
        return {}
    finally:
        target_admin.close()
    selected = _group_selector(checkpoint_cfg, pattern)

    def upstream_of(tp: TopicPartition) -> TopicPartition:
        return upstream_topic_partition(tp, translator.policy, source, target)

    return old_incarnation_rows(
        {g: cps for g, cps in latest.groups.items() if selected(g)}, offsets, committed.recreated, upstream_of
    )


def _run(
    sc: SparkContext, slices: list[TaskSlice], clients: FlowClients, apply: bool, force: bool, unreachable: str
) -> list[GroupPlan]:
    shared = sc.broadcast(clients)

    def task(part: Iterable[TaskSlice]) -> Iterator[GroupPlan]:
        executor_logging()  # a local executor's log lines go to the job's Spark log, not the terminal
        flow = shared.value
        for chunk in part:
            yield from translate_groups(
                chunk.groups, flow, chunk.translator, apply, force, chunk.checkpoints, unreachable, chunk.offsets
            )

    try:
        plans = run_slices(sc, slices, task, "translate-offsets")
    finally:
        shared.unpersist()
    return sorted(plans, key=lambda p: p.group)


def offsets_written(plans: Iterable[GroupPlan]) -> dict[str, dict[TopicPartition, OffsetAndMetadata]]:
    """Per group, the offsets the job wrote (for reports and tests)."""
    out: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
    for plan in plans:
        for row in plan.partitions:
            if row.applied and row.target_offset is not None:
                out.setdefault(plan.group, {})[TopicPartition(row.target_topic, row.partition)] = OffsetAndMetadata(
                    row.target_offset
                )
    return out


__all__ = [
    "FlowClients",
    "FlowTranslator",
    "checkpointed_groups",
    "flow_clients",
    "job_error",
    "list_source_offsets",
    "load_translator",
    "offsets_written",
    "run_job",
    "select_groups",
    "task_slices",
    "translate_groups",
]
