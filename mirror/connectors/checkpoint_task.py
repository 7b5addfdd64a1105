"""MirrorCheckpointTask: translates its groups' source offsets and emits checkpoints; optionally
commits the translations to the target's consumer groups (Kafka 4.x behaviour, §3.2-3.4 of the
reference).

Start-up runs in the background (a task must stay stoppable): read the checkpoints topic once
(the latest checkpoint per group and partition; failure only degrades translation), then read the
offset-syncs topic (partition 0) to its end and keep tailing it. Until both are loaded nothing is
emitted. Kafka gives up for good when the offset-syncs topic cannot be read at start; we retry
every few seconds instead, so a late-created topic or a broker blip does not silence the task
until a restart.

Every ``emit.checkpoints.interval.seconds`` ``poll`` lists the groups' committed offsets on the
source (one request per group, issued together), translates them, keeps them monotonic and emits
them to partition 0 of ``<source>.checkpoints.internal``.

Translation is exact where mm2's offset mappings (``mm2-offset-mappings.<alias>.internal``, written
by mm2's source task next to the offset-syncs topic) cover the group's offset, at any distance from
the head; elsewhere (a Java MirrorMaker source task, records never mirrored) it is Kafka's offset-sync
translation, which may re-read but never skips. The mappings topic is read before the first
checkpoint when it exists, and looked for again every ``MAPPINGS_RETRY_S`` until it does.

With ``sync.group.offsets.enabled`` a job (first run one interval after loading) writes the latest
checkpoints to the target groups: only to groups that are EMPTY (then only partitions the target
is behind on) or do not exist there (DEAD); groups with members are left alone, and every
partition's result is checked.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, Protocol

from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.api.schema import BYTES_SCHEMA
from connect_core.api.task import SourceTask
from connect_core.kafka.log import KafkaBasedLog
from connect_core.kafka.types import Message
from mirror.client.errors import RecordFormatError
from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.connectors.checkpoint_logic import CheckpointEmitter, CheckpointStore, group_offsets_to_sync
from mirror.connectors.config import (
    CHECKPOINT_SOURCE_ADMIN_ROLE,
    CHECKPOINT_TARGET_ADMIN_ROLE,
    CHECKPOINTS_TARGET_CONSUMER_ROLE,
    MirrorCheckpointTaskConfig,
)
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.offset_mapping_index import ExactOffsetTranslator, OffsetMappingIndex
from mirror.connectors.offset_sync_store import OffsetSyncStore
from mirror.connectors.scheduler import Scheduler

log = logging.getLogger(__name__)

OFFSET_SYNCS_RETRY_S = 5.0
MAPPINGS_RETRY_S = 10.0
WRITABLE_STATES = frozenset({"EMPTY", "DEAD"})


class CheckpointMetrics(Protocol):
    """Where the task reports checkpoint latency (ack time minus the time the offsets were listed)."""

    def checkpoint_acknowledged(self, group: str, topic: str, partition: int, latency_ms: float) -> None: ...

    def checkpoints_scheduled(self, interval_s: float) -> None:
        """The task emits checkpoints every ``interval_s`` (told once, at start)."""

    def group_current(self, group: str) -> None:
        """The group's source offsets were listed and nothing newer than its last checkpoint is due:
        the checkpoints on the target are current (an idle group is not a stale one)."""

    def group_offsets_synced(self, group: str, partitions: int = 1) -> None:
        """The group's offsets on the target were moved to its translated positions (sync.group.offsets)."""


class NoOpCheckpointMetrics:
    def checkpoint_acknowledged(self, group: str, topic: str, partition: int, latency_ms: float) -> None:
        return None

    def checkpoints_scheduled(self, interval_s: float) -> None:
        return None

    def group_current(self, group: str) -> None:
        return None

    def group_offsets_synced(self, group: str, partitions: int = 1) -> None:
        return None


class MirrorCheckpointTask(SourceTask):
    """See the module docstring."""

    def __init__(self, metrics: CheckpointMetrics | None = None) -> None:
        self.metrics: CheckpointMetrics = metrics or NoOpCheckpointMetrics()
        self._stopping = threading.Event()
        self._groups: list[str] = []
        self._interval_s = 60.0
        self._poll_timeout_s = 1.0
        self._checkpoints_topic = ""
        self._source_alias = ""
        self._target_alias = ""
        self.offset_sync_store = OffsetSyncStore()
        self.offset_mapping_index = OffsetMappingIndex()
        self.checkpoint_store = CheckpointStore([])
        self._store_lock = threading.Lock()
        self._mapping_log: KafkaBasedLog | None = None
        self._emitter: CheckpointEmitter | None = None
        self._source_admin: MirrorAdmin | None = None
        self._target_admin: MirrorAdmin | None = None
        self._scheduler: Scheduler | None = None
        self._sync_log: KafkaBasedLog | None = None
        self._config: MirrorCheckpointTaskConfig | None = None
        self.stores_loaded = threading.Event()
        self.group_offset_syncs = 0

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        config = self._config = MirrorCheckpointTaskConfig(props)
        self._stopping.clear()
        self._groups = config.task_consumer_groups()
        self._interval_s = config.emit_checkpoints_interval_s()
        self.metrics.checkpoints_scheduled(self._interval_s)
        self._poll_timeout_s = max(config.consumer_poll_timeout_s, 0.001)
        sync_interval_s = config.sync_group_offsets_interval_s()
        self._checkpoints_topic = config.checkpoints_topic()
        self._source_alias = config.source_cluster_alias
        self._target_alias = config.target_cluster_alias
        self.offset_sync_store = OffsetSyncStore()
        self.offset_mapping_index = OffsetMappingIndex()
        self.checkpoint_store = CheckpointStore(self._groups)
        translator = ExactOffsetTranslator(self.offset_mapping_index, self.offset_sync_store)
        self._emitter = CheckpointEmitter(
            self._source_alias,
            self._target_alias,
            config.replication_policy(),
            translator,
            self.checkpoint_store,
            config.topic_filter(),
        )
        timeout = config.admin_timeout_s
        self._source_admin = MirrorAdmin(
            config.source_admin_config(CHECKPOINT_SOURCE_ADMIN_ROLE), self._source_alias, timeout
        )
        self._target_admin = MirrorAdmin(
            config.target_admin_config(CHECKPOINT_TARGET_ADMIN_ROLE), self._target_alias, timeout
        )
        self._scheduler = Scheduler.for_connector(type(self), config.entity_label(), timeout)
        self._scheduler.execute_async(
            lambda: self._start_stores(sync_interval_s), "starting checkpoint and offset sync stores"
        )
        log.info(
            "%s checkpointing %d consumer groups %s->%s: %s.",
            config.entity_label(),
            len(self._groups),
            self._source_alias,
            self._target_alias,
            self._groups,
        )

    def _start_stores(self, sync_interval_s: float) -> None:
        ok = self._load_checkpoints()
        self.offset_sync_store.start(initialization_must_read_to_end=not ok)
        while not self._stopping.is_set():
            try:
                self._start_offset_syncs_log()
                break
            except Exception as e:
                log.error(
                    "Could not read the offset-syncs topic %s (%s); retrying in %.0f s",
                    self._config.offset_syncs_topic() if self._config else "?",
                    e,
                    OFFSET_SYNCS_RETRY_S,
                )
                self._stopping.wait(OFFSET_SYNCS_RETRY_S)
        if self._stopping.is_set():
            return
        self._start_mappings_log()
        self.offset_sync_store.mark_read_to_end()
        self.stores_loaded.set()
        if self._scheduler is not None:
            if self._mapping_log is None:
                self._scheduler.schedule_repeating_delayed(
                    self._start_mappings_log, MAPPINGS_RETRY_S, "looking for the offset-mappings topic"
                )
            self._scheduler.schedule_repeating_delayed(
                self.sync_group_offsets, sync_interval_s, "sync idle consumer group offset from source to target"
            )

    def _load_checkpoints(self) -> bool:
        """Read the checkpoints topic once (partition 0); False when it could not be read."""
        config = self._config
        assert config is not None
        store = self.checkpoint_store

        def consume(msg: Message) -> None:
            if msg.partition() == 0:
                store.on_record(msg.key(), msg.value())

        reader = KafkaBasedLog(
            self._checkpoints_topic,
            {},
            config.target_consumer_config(CHECKPOINTS_TARGET_CONSUMER_ROLE),
            consume,
            read_only=True,
            start_timeout_s=config.admin_timeout_s,
        )
        try:
            reader.start()
        except Exception as e:
            return store.load_failed(e)
        finally:
            reader.stop()
        return store.load_complete()

    def _start_offset_syncs_log(self) -> None:
        config = self._config
        assert config is not None
        store = self.offset_sync_store

        def consume(msg: Message) -> None:
            if msg.partition() != 0:
                return
            try:
                store.on_record(msg.key(), msg.value())
            except RecordFormatError as e:
                log.warning("Ignored invalid offset sync at offset %s: %s", msg.offset(), e)

        sync_log = KafkaBasedLog(
            config.offset_syncs_topic(),
            {},
            config.offset_syncs_topic_consumer_config(),
            consume,
            read_only=True,
            start_timeout_s=30.0,
        )
        sync_log.start()
        if self._stopping.is_set():
            sync_log.stop()
            return
        self._sync_log = sync_log

    def _start_mappings_log(self) -> None:
        """Tail the offset-mappings topic if it exists (it does once an mm2 source task ran for the flow)."""
        config = self._config
        if config is None or self._mapping_log is not None or self._stopping.is_set():
            return
        topic = config.offset_mappings_topic()
        alias = self._source_alias if config.offset_syncs_on_source else self._target_alias
        try:
            admin = MirrorAdmin(config.offset_syncs_topic_admin_config(), alias, config.admin_timeout_s)
            if topic not in admin.topic_partition_counts():
                log.debug("No offset-mappings topic %s yet: translating with offset syncs only", topic)
                return
        except Exception as e:
            log.warning("Could not look for the offset-mappings topic %s: %s", topic, e)
            return
        index, lock = self.offset_mapping_index, self._store_lock

        def consume(msg: Message) -> None:
            if msg.partition() == 0:
                with lock:
                    index.on_record(msg.key(), msg.value())

        mapping_log = KafkaBasedLog(
            topic, {}, config.offset_syncs_topic_consumer_config(), consume, read_only=True, start_timeout_s=30.0
        )
        try:
            mapping_log.start()
        except Exception as e:
            log.warning("Could not read the offset-mappings topic %s (%s); retrying", topic, e)
            return
        if self._stopping.is_set():
            mapping_log.stop()
            return
        self._mapping_log = mapping_log
        log.info("Exact offset translation from %s: %d mapped runs loaded", topic, len(index))

    def stop(self) -> None:
        self._stopping.set()
        if self._scheduler is not None:
            self._scheduler.close()
            self._scheduler = None
        if self._sync_log is not None:
            self._sync_log.stop()
            self._sync_log = None
        if self._mapping_log is not None:
            self._mapping_log.stop()
            self._mapping_log = None

    # -- checkpoints -----------------------------------------------------------------------------

    def poll(self) -> list[SourceRecord] | None:
        deadline = time.monotonic() + self._interval_s
        while not self._stopping.is_set():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            self._stopping.wait(min(self._poll_timeout_s, remaining))
        if self._stopping.is_set() or not self.checkpoint_store.is_initialized:
            return None
        try:
            records = self.checkpoint_records()
        except Exception as e:  # Kafka logs and carries on; the next poll retries
            log.warning("Failure polling consumer state for checkpoints: %s", e)
            return None
        return records or None

    def checkpoint_records(self) -> list[SourceRecord]:
        """List the groups' source offsets once and return the new checkpoint records."""
        admin, emitter = self._source_admin, self._emitter
        assert admin is not None and emitter is not None
        if not self._groups:
            return []
        timestamp = int(time.time() * 1000)
        upstream = admin.list_consumer_group_offsets(self._groups)
        records: list[SourceRecord] = []
        for group in self._groups:
            offsets = upstream.get(group)
            if not offsets:
                continue
            with self._store_lock:
                new = emitter.checkpoints_for_group(offsets, group)
                self.checkpoint_store.update(group, new)
            if new:
                records.extend(self._record(cp, timestamp) for cp in new.values())
            else:
                self.metrics.group_current(group)
        return records

    def _record(self, checkpoint: Checkpoint, timestamp: int) -> SourceRecord:
        return SourceRecord(
            checkpoint.connect_partition(),
            Checkpoint.connect_offset(),
            self._checkpoints_topic,
            0,
            checkpoint.record_key(),
            checkpoint.record_value(),
            None,
            timestamp,
            BYTES_SCHEMA,
            BYTES_SCHEMA,
        )

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        sp = record.source_partition
        if sp is None or record.timestamp is None:
            return
        latency = time.time() * 1000 - record.timestamp
        self.metrics.checkpoint_acknowledged(
            str(sp.get("group")), str(sp.get("topic")), int(sp.get("partition", 0)), latency
        )

    # -- group offset sync -------------------------------------------------------------------------

    def sync_group_offsets(self) -> dict[str, dict[TopicPartition, OffsetAndMetadata]]:
        """Write the latest checkpoints to target groups that are EMPTY or absent; never backwards."""
        admin = self._target_admin
        assert admin is not None
        with self._store_lock:
            converted = self.checkpoint_store.compute_converted_upstream_offset()
        converted = {g: o for g, o in converted.items() if o}
        if not converted:
            return {}
        states = admin.consumer_group_states(converted)
        empty = [g for g in converted if states.get(g) == "EMPTY"]
        target_offsets = admin.list_consumer_group_offsets(empty) if empty else {}
        written: dict[str, dict[TopicPartition, OffsetAndMetadata]] = {}
        for group, offsets in converted.items():
            state = states.get(group)
            if state not in WRITABLE_STATES:
                log.debug("Not syncing offsets of group %s: it is %s on cluster %s", group, state, self._target_alias)
                continue
            current: Mapping[TopicPartition, OffsetAndMetadata | None] | None = (
                target_offsets.get(group, {}) if state == "EMPTY" else None
            )
            to_sync = group_offsets_to_sync(offsets, current)
            if not to_sync:
                continue
            if self._alter_group_offsets(group, to_sync):
                written[group] = to_sync
        return written

    def _alter_group_offsets(self, group: str, offsets: dict[TopicPartition, OffsetAndMetadata]) -> bool:
        admin = self._target_admin
        assert admin is not None
        results = admin.alter_consumer_group_offsets(group, offsets)
        failed = {tp: err for tp, err in results.items() if err is not None}
        if not failed:
            self.group_offset_syncs += 1
            self.metrics.group_offsets_synced(group, len(offsets))
            log.debug("Synced %d offsets for consumer group %s.", len(offsets), group)
            return True
        if any(err == "UNKNOWN_MEMBER_ID" for err in failed.values()):
            log.warning(
                "Unable to sync offsets for consumer group %s. This is likely caused by consumers currently "
                "using this group in the target cluster.",
                group,
            )
        else:
            log.error(
                "Unable to sync offsets for consumer group %s: %s", group, {str(tp): err for tp, err in failed.items()}
            )
        return False

    # -- for tests ---------------------------------------------------------------------------------

    @property
    def assigned_groups(self) -> list[str]:
        return list(self._groups)

    def describe(self) -> dict[str, Any]:
        return {
            "groups": self.assigned_groups,
            "loaded": self.stores_loaded.is_set(),
            "offset_sync_store": repr(self.offset_sync_store),
        }


__all__ = ["CheckpointMetrics", "MirrorCheckpointTask", "NoOpCheckpointMetrics"]
