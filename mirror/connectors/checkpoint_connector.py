"""MirrorCheckpointConnector: finds the consumer groups to checkpoint and splits them over tasks.

Kafka 4.x behaviour: at start create ``<source>.checkpoints.internal`` on the target (compacted,
one partition) and load the groups; every ``refresh.groups.interval.seconds`` (first run one
interval later) reload them and ask for new task configs if the set changed. A group is kept when
the group filter accepts it and it has a committed offset for at least one topic the topic filter
accepts. Groups are dealt in contiguous, near-equal chunks (Connect's ``groupPartitions``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Any, TypeVar

from connect_core.api.connector import SourceConnector
from connect_core.api.errors import RetriableError
from connect_core.api.task import Task
from connect_core.closing import close_quietly
from connect_core.config.configdef import ConfigDef, ConfigValue
from mirror.client.filters import GroupFilter, TopicFilter
from mirror.client.formats import (
    CONSUMER_GROUP_ID_KEY,
    TOPIC_KEY,
    validate_alter_offsets,
)
from mirror.connectors.config import (
    CHECKPOINT_CONNECTOR_CONFIG_DEF,
    CHECKPOINT_SOURCE_ADMIN_ROLE,
    CHECKPOINT_TARGET_ADMIN_ROLE,
    MirrorCheckpointConfig,
    add_errors,
    validate_checkpoint_connector_props,
)
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.scheduler import Scheduler

log = logging.getLogger(__name__)

T = TypeVar("T")


def group_partitions(elements: Sequence[T], num_groups: int) -> list[list[T]]:
    """Contiguous chunks whose sizes differ by at most one (Connect ``ConnectorUtils.groupPartitions``)."""
    if num_groups <= 0:
        raise ValueError("Number of groups must be positive.")
    per_group, leftover = divmod(len(elements), num_groups)
    out: list[list[T]] = []
    index = 0
    for g in range(num_groups):
        size = per_group + (1 if g < leftover else 0)
        out.append(list(elements[index : index + size]))
        index += size
    return out


class MirrorCheckpointConnector(SourceConnector):
    """See the module docstring."""

    def __init__(self) -> None:
        self._config: MirrorCheckpointConfig | None = None
        self._scheduler: Scheduler | None = None
        self._source_admin: MirrorAdmin | None = None
        self._target_admin: MirrorAdmin | None = None
        self._topic_filter: TopicFilter | None = None
        self._group_filter: GroupFilter | None = None
        self._known_groups: frozenset[str] | None = None
        self._lock = threading.Lock()

    def start(self, props: dict[str, str]) -> None:
        config = self._config = MirrorCheckpointConfig(props)
        if not config.enabled:
            return
        refresh_s = config.refresh_groups_interval_s()
        config.emit_checkpoints_interval_s()
        self._topic_filter = config.topic_filter()
        self._group_filter = config.group_filter()
        timeout = config.admin_timeout_s
        self._source_admin = MirrorAdmin(
            config.source_admin_config(CHECKPOINT_SOURCE_ADMIN_ROLE), config.source_cluster_alias, timeout
        )
        self._target_admin = MirrorAdmin(
            config.target_admin_config(CHECKPOINT_TARGET_ADMIN_ROLE), config.target_cluster_alias, timeout
        )
        scheduler = self._scheduler = Scheduler.for_connector(type(self), config.entity_label(), timeout)
        scheduler.execute(self._create_internal_topics, "creating internal topics")
        scheduler.execute(self._load_initial_consumer_groups, "loading initial consumer groups")
        scheduler.schedule_repeating_delayed(self.refresh_consumer_groups, refresh_s, "refreshing consumer groups")

    def stop(self) -> None:
        config = self._config
        if config is None or not config.enabled:
            return
        if self._scheduler is not None:
            self._scheduler.close()
        close_quietly((self._topic_filter, self._group_filter, self._source_admin, self._target_admin), log)

    def task_class(self) -> type[Task]:
        from mirror.connectors.checkpoint_task import MirrorCheckpointTask

        return MirrorCheckpointTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None or not config.enabled:
            return []
        known = self._known_groups
        if known is None:
            log.debug("Initial consumer group loading has not yet completed")
            raise RetriableError("Timeout while loading consumer groups.")
        if not known or config.emit_checkpoints_interval_s() < 0:
            return []
        groups = sorted(known)
        chunks = group_partitions(groups, min(max_tasks, len(groups)))
        return [config.task_config_for_consumer_groups(chunk, i) for i, chunk in enumerate(chunks)]

    def config(self) -> ConfigDef:
        return CHECKPOINT_CONNECTOR_CONFIG_DEF

    def validate(self, props: dict[str, str]) -> list[ConfigValue]:
        return add_errors(super().validate(props), validate_checkpoint_connector_props(props))

    def alter_offsets(
        self,
        connector_config: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        """Validate ``{group, topic, partition}`` -> ``{offset: 0}``; tombstones always pass."""
        validate_alter_offsets(
            offsets,
            (
                CONSUMER_GROUP_ID_KEY,
                TOPIC_KEY,
            ),
            with_partition=True,
            only_offset_zero=True,
        )
        return True

    # -- state ----------------------------------------------------------------------------------

    @property
    def known_consumer_groups(self) -> frozenset[str] | None:
        return self._known_groups

    # -- jobs -----------------------------------------------------------------------------------

    def _create_internal_topics(self) -> None:
        config, admin = self._config, self._target_admin
        assert config is not None and admin is not None
        admin.create_compacted_topic(config.checkpoints_topic(), 1, config.checkpoints_topic_replication_factor)

    def _load_initial_consumer_groups(self) -> None:
        groups = self.find_consumer_groups()
        with self._lock:
            self._known_groups = groups
        assert self._config is not None
        log.info("Started %s with %d consumer groups.", self._config.connector_name, len(groups))

    def refresh_consumer_groups(self) -> None:
        groups = self.find_consumer_groups()
        with self._lock:
            known = self._known_groups or frozenset()
            if groups == known:
                return
            self._known_groups = groups
        log.info(
            "Found %d consumer groups. %d are new. %d were removed. Previously had %d.",
            len(groups),
            len(groups - known),
            len(known - groups),
            len(known),
        )
        context = getattr(self, "context", None)
        if context is not None:
            context.request_task_reconfiguration()

    def find_consumer_groups(self) -> frozenset[str]:
        admin, gf, tf = self._source_admin, self._group_filter, self._topic_filter
        assert admin is not None and gf is not None and tf is not None
        candidates = [g for g in admin.list_consumer_groups() if gf.should_replicate_group(g)]
        offsets = admin.list_consumer_group_offsets(candidates)
        keep = set()
        for group in candidates:
            if any(tf.should_replicate_topic(tp.topic) for tp in offsets.get(group, {})):
                keep.add(group)
        ignored = set(candidates) - keep
        if ignored:
            log.debug("Ignoring groups without offsets for topics the topic filter accepts: %s", sorted(ignored))
        return frozenset(keep)


__all__ = ["MirrorCheckpointConnector", "group_partitions"]
