"""Checkpoint decisions of the checkpoint task, without I/O (Kafka's ``CheckpointStore`` and the pure
parts of ``MirrorCheckpointTask``).

* :class:`CheckpointStore` keeps the latest checkpoint per (group, downstream topic-partition). It is
  loaded once from the checkpoints topic at task start; whether that load succeeded decides how the
  offset-sync store initialises (see :meth:`OffsetSyncStore.start`).
* :func:`checkpoint_is_more_recent` keeps emitted checkpoints monotonic: a coarser sync history
  after eviction or a restart must not move a group's downstream offset backwards, while a
  deliberate upstream rewind of the group is passed on.
* :func:`rename_topic_partition` names the downstream topic: a topic that originally came FROM the
  target gets its original name back (``B.topic1`` -> ``topic1`` for flow A->B), which is what makes
  failback translation work; anything else gets the remote name (``topic1`` -> ``A.topic1``).
* :func:`group_offsets_to_sync` / :func:`plan_group_offset_sync` choose which translated offsets
  to commit to the target's consumer groups: never moving a target group backwards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Protocol

from mirror.client.errors import RecordFormatError
from mirror.client.filters import TopicFilter
from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.policy import ReplicationPolicy

log = logging.getLogger(__name__)


class OffsetTranslator(Protocol):
    """What the checkpoint logic needs from an offset-sync store."""

    def translate_downstream(
        self, group: str | None, topic_partition: TopicPartition, upstream_offset: int
    ) -> int | None: ...


class CheckpointStore:
    """Latest checkpoint per group and downstream topic-partition, for this task's groups."""

    def __init__(self, consumer_groups: Iterable[str] | None = None) -> None:
        """``consumer_groups``: the task's groups; records of other groups are ignored (None = all)."""
        self._groups: frozenset[str] | None = None if consumer_groups is None else frozenset(consumer_groups)
        self.checkpoints_per_consumer_group: dict[str, dict[TopicPartition, Checkpoint]] = {}
        self._initialized = False
        self._load_success = False
        self.ignored_records = 0

    @classmethod
    def of(cls, checkpoints_per_consumer_group: Mapping[str, Mapping[TopicPartition, Checkpoint]]) -> CheckpointStore:
        """An initialised store holding the given checkpoints (tests, Spark jobs)."""
        store = cls()
        store.checkpoints_per_consumer_group = {g: dict(cps) for g, cps in checkpoints_per_consumer_group.items()}
        store._initialized = True
        store._load_success = True
        return store

    # -- loading -------------------------------------------------------------------------------

    def on_record(self, key: bytes | None, value: bytes | None) -> Checkpoint | None:
        """Apply one record read from the checkpoints topic; malformed records are skipped."""
        try:
            cp = Checkpoint.decode(key, value)
        except RecordFormatError as e:
            self.ignored_records += 1
            log.warning("Ignored invalid checkpoint record: %s", e)
            return None
        if self._groups is not None and cp.consumer_group_id not in self._groups:
            return None
        self.checkpoints_per_consumer_group.setdefault(cp.consumer_group_id, {})[cp.topic_partition] = cp
        return cp

    def load_complete(self) -> bool:
        """The checkpoints topic was read to its end."""
        self._initialized = True
        self._load_success = True
        return True

    def load_failed(self, error: BaseException | None = None) -> bool:
        """Reading failed (e.g. no READ permission): start empty; translation is then degraded."""
        self.checkpoints_per_consumer_group.clear()
        self._initialized = True
        self._load_success = False
        log.info(
            "Could not load the checkpoints topic (%s); only checkpoints for offsets mirrored after "
            "the task started will be emitted",
            error,
        )
        return False

    def load(self, records: Iterable[tuple[bytes | None, bytes | None]]) -> bool:
        """Feed every (key, value) of the checkpoints topic; returns the load success."""
        try:
            for key, value in records:
                self.on_record(key, value)
        except Exception as e:  # any read failure degrades, as in Kafka
            return self.load_failed(e)
        return self.load_complete()

    @property
    def is_initialized(self) -> bool:
        return self._initialized

    @property
    def load_success(self) -> bool:
        return self._load_success

    # -- state ---------------------------------------------------------------------------------

    def update(self, group: str, new_checkpoints: Mapping[TopicPartition, Checkpoint]) -> None:
        self.checkpoints_per_consumer_group.setdefault(group, {}).update(new_checkpoints)

    def get(self, group: str) -> Mapping[TopicPartition, Checkpoint] | None:
        return self.checkpoints_per_consumer_group.get(group)

    def last_checkpoint(self, group: str, topic_partition: TopicPartition) -> Checkpoint | None:
        cps = self.checkpoints_per_consumer_group.get(group)
        return None if cps is None else cps.get(topic_partition)

    def compute_converted_upstream_offset(self) -> dict[str, dict[TopicPartition, OffsetAndMetadata]]:
        """Per group, the downstream offset and metadata of each latest checkpoint."""
        return {
            group: {tp: cp.offset_and_metadata for tp, cp in cps.items()}
            for group, cps in self.checkpoints_per_consumer_group.items()
        }


def checkpoint_is_more_recent(checkpoint: Checkpoint, last: Checkpoint | None) -> bool:
    """Emit ``checkpoint`` given the last one emitted for its group and partition?

    Yes if there is none, if the group rewound upstream, or if the downstream offset advanced; no
    for a repeat or a downstream rewind.
    """
    if last is None:
        return True
    if checkpoint.upstream_offset < last.upstream_offset:
        return True
    return checkpoint.downstream_offset > last.downstream_offset


def rename_topic_partition(
    topic_partition: TopicPartition, policy: ReplicationPolicy, source_cluster_alias: str, target_cluster_alias: str
) -> TopicPartition:
    """Downstream name of an upstream topic-partition in flow source -> target."""
    topic = topic_partition.topic
    if target_cluster_alias == policy.topic_source(topic):
        return TopicPartition(policy.original_topic(topic), topic_partition.partition)
    return TopicPartition(policy.format_remote_topic(source_cluster_alias, topic), topic_partition.partition)


class CheckpointEmitter:
    """Turns a group's upstream committed offsets into the checkpoints to emit (pure)."""

    def __init__(
        self,
        source_cluster_alias: str,
        target_cluster_alias: str,
        policy: ReplicationPolicy,
        translator: OffsetTranslator,
        checkpoint_store: CheckpointStore,
        topic_filter: TopicFilter | Callable[[str], bool] | None = None,
    ) -> None:
        self.source_cluster_alias = source_cluster_alias
        self.target_cluster_alias = target_cluster_alias
        self.policy = policy
        self.translator = translator
        self.checkpoint_store = checkpoint_store
        if topic_filter is None:
            self._accepts: Callable[[str], bool] = lambda _t: True
        elif isinstance(topic_filter, TopicFilter):
            self._accepts = topic_filter.should_replicate_topic
        else:
            self._accepts = topic_filter

    def rename_topic_partition(self, topic_partition: TopicPartition) -> TopicPartition:
        return rename_topic_partition(
            topic_partition, self.policy, self.source_cluster_alias, self.target_cluster_alias
        )

    def checkpoint(
        self, group: str, topic_partition: TopicPartition, offset_and_metadata: OffsetAndMetadata | None
    ) -> Checkpoint | None:
        """The checkpoint for one committed offset, or None if there is no translation (yet).

        A ``-1`` downstream offset (older than every retained sync) is returned as is.
        """
        if offset_and_metadata is None:
            return None
        upstream = offset_and_metadata.offset
        downstream = self.translator.translate_downstream(group, topic_partition, upstream)
        if downstream is None:
            return None
        metadata = offset_and_metadata.metadata or ""
        return Checkpoint(group, self.rename_topic_partition(topic_partition), upstream, downstream, metadata)

    def checkpoints_for_group(
        self, upstream_group_offsets: Mapping[TopicPartition, OffsetAndMetadata | None], group: str
    ) -> dict[TopicPartition, Checkpoint]:
        """New checkpoints for ``group``, keyed by downstream topic-partition.

        Skips topics the topic filter rejects, partitions without a translation, untranslatable
        (negative) offsets and checkpoints that are not more recent than the stored one. Does not
        update the store: the caller does after deciding to emit.
        """
        out: dict[TopicPartition, Checkpoint] = {}
        last_for_group = self.checkpoint_store.get(group)
        for tp, oam in upstream_group_offsets.items():
            if not self._accepts(tp.topic):
                continue
            cp = self.checkpoint(group, tp, oam)
            if cp is None or cp.downstream_offset < 0:
                continue
            last = None if last_for_group is None else last_for_group.get(cp.topic_partition)
            if checkpoint_is_more_recent(cp, last):
                out[cp.topic_partition] = cp
        return out


def group_offsets_to_sync(
    converted: Mapping[TopicPartition, OffsetAndMetadata],
    target_offsets: Mapping[TopicPartition, OffsetAndMetadata | None] | None,
) -> dict[TopicPartition, OffsetAndMetadata]:
    """Which translated offsets to commit for one group on the target.

    ``target_offsets`` is the group's committed offsets on the target, taken while the group was
    EMPTY there; None means no such snapshot (a new group, or one active on the target: then the
    broker rejects the commit, which is what keeps MM2 from disturbing live consumers). Without a
    snapshot everything is written. With one, a partition is written if the target has no offset
    for it, or a null one (reset to -1 by some clients), or one strictly behind the translation;
    never if the target is at or ahead of it.
    """
    if target_offsets is None:
        return dict(converted)
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    for tp, oam in converted.items():
        if tp in target_offsets:
            current = target_offsets[tp]
            if current is not None and current.offset >= oam.offset:
                continue
            if current is None:
                log.warning(
                    "Group offset for partition %s may have been reset to a negative offset; "
                    "syncing the translated offset",
                    tp,
                )
        out[tp] = oam
    return out


def plan_group_offset_sync(
    converted_upstream_offsets: Mapping[str, Mapping[TopicPartition, OffsetAndMetadata]],
    idle_consumer_groups_offset: Mapping[str, Mapping[TopicPartition, OffsetAndMetadata | None]],
) -> dict[str, dict[TopicPartition, OffsetAndMetadata]]:
    """Per group, the offsets to alter on the target (groups with nothing to write are left out).

    ``converted_upstream_offsets`` is :meth:`CheckpointStore.compute_converted_upstream_offset`;
    ``idle_consumer_groups_offset`` the target offsets of groups found EMPTY on the target.
    """
    plan: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
    for group, converted in converted_upstream_offsets.items():
        offsets = group_offsets_to_sync(converted, idle_consumer_groups_offset.get(group))
        if offsets:
            plan[group] = offsets
    return plan


__all__ = [
    "CheckpointEmitter",
    "CheckpointStore",
    "OffsetTranslator",
    "checkpoint_is_more_recent",
    "group_offsets_to_sync",
    "plan_group_offset_sync",
    "rename_topic_partition",
]
