"""MirrorHeartbeatConnector: one task writing a heartbeat to the target every second (Kafka 4.x).

It ignores ``enabled`` (it runs in every herder, which is how MirrorClient traces flows) and always
creates the compacted, single-partition ``heartbeats`` topic on the target at start, even when
emission is disabled. ``emit.heartbeats.enabled=false`` only means no task.
"""

from __future__ import annotations

import logging
from typing import Any

from connect_core.api.connector import SourceConnector
from connect_core.api.task import Task
from connect_core.config.configdef import ConfigDef
from mirror.client.formats import (
    SOURCE_CLUSTER_ALIAS_KEY,
    TARGET_CLUSTER_ALIAS_KEY,
    validate_alter_offsets,
)
from mirror.connectors.config import HEARTBEAT_CONNECTOR_CONFIG_DEF, HEARTBEATS_TARGET_ADMIN_ROLE, MirrorHeartbeatConfig
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.scheduler import Scheduler

log = logging.getLogger(__name__)


class MirrorHeartbeatConnector(SourceConnector):
    """See the module docstring."""

    def __init__(self) -> None:
        self._config: MirrorHeartbeatConfig | None = None
        self._scheduler: Scheduler | None = None
        self._target_admin: MirrorAdmin | None = None

    def start(self, props: dict[str, str]) -> None:
        config = self._config = MirrorHeartbeatConfig(props)
        config.emit_heartbeats_interval_s()  # a bad interval fails start, naming the key
        self._target_admin = MirrorAdmin(
            config.target_admin_config(HEARTBEATS_TARGET_ADMIN_ROLE),
            config.target_cluster_alias,
            config.admin_timeout_s,
        )
        self._scheduler = Scheduler.for_connector(type(self), config.entity_label(), config.admin_timeout_s)
        self._scheduler.execute(self._create_internal_topics, "creating internal topics")

    def _create_internal_topics(self) -> None:
        config, admin = self._config, self._target_admin
        assert config is not None and admin is not None
        admin.create_compacted_topic(config.heartbeats_topic(), 1, config.heartbeats_topic_replication_factor)

    def stop(self) -> None:
        if self._scheduler is not None:
            self._scheduler.close()
            self._scheduler = None
        self._target_admin = None

    def task_class(self) -> type[Task]:
        from mirror.connectors.heartbeat_task import MirrorHeartbeatTask

        return MirrorHeartbeatTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None or config.emit_heartbeats_interval_s() < 0:
            return []
        return [config.originals_strings()]

    def config(self) -> ConfigDef:
        return HEARTBEAT_CONNECTOR_CONFIG_DEF

    def alter_offsets(
        self,
        connector_config: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        """Validate ``{sourceClusterAlias, targetClusterAlias}`` -> ``{offset: 0}``; tombstones pass."""
        validate_alter_offsets(
            offsets,
            (
                SOURCE_CLUSTER_ALIAS_KEY,
                TARGET_CLUSTER_ALIAS_KEY,
            ),
            with_partition=False,
            only_offset_zero=True,
        )
        return True


__all__ = ["MirrorHeartbeatConnector"]
