"""MirrorSourceConnector: finds the topics to mirror, keeps the target's remote topics in shape and
splits the partitions over MirrorSourceTasks (Kafka 4.x behaviour).

On start (each step a one-shot scheduler job whose failure is logged, not raised, so the connector
starts even with a cluster down): create the offset-syncs topic, list source and target topics,
create missing remote topics (source partition count, ``replication.factor``, filtered source
configs), then schedule ACL sync and config sync (first run now) and the topic refresh (first run
one interval from now). A refresh that sees partitions added or removed on the source, or
missing on the target, creates what is missing and asks the runtime for new task configs.

Decisions are in :mod:`mirror.connectors.source_logic`; admin I/O in :mod:`mirror.connectors.mirror_admin`.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from connect_core.api.connector import ExactlyOnceSupport, SourceConnector
from connect_core.api.errors import ConnectError
from connect_core.api.task import Task
from connect_core.closing import close_quietly
from connect_core.config.configdef import ConfigDef, ConfigValue
from mirror.client.filters import ConfigPropertyFilter, TopicFilter, should_replicate_topic
from mirror.client.formats import (
    SOURCE_CLUSTER_KEY,
    TOPIC_KEY,
    TopicPartition,
    validate_alter_offsets,
)
from mirror.client.policy import ReplicationPolicy
from mirror.connectors.config import (
    REPLICATION_SOURCE_ADMIN_ROLE,
    REPLICATION_TARGET_ADMIN_ROLE,
    SOURCE_CONNECTOR_CONFIG_DEF,
    SYNC_TOPIC_ACLS_ENABLED,
    MirrorSourceConfig,
    add_errors,
    consumer_uses_read_committed,
    validate_source_connector_props,
)
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.scheduler import Scheduler
from mirror.connectors.source_logic import (
    acls_to_sync,
    assign_round_robin,
    config_alter_ops,
    counts,
    create_configs,
    expand,
    is_known_target_topic,
    plan_topic_changes,
    refresh_changes,
    target_config_entries,
)

log = logging.getLogger(__name__)


class MirrorSourceConnector(SourceConnector):
    """See the module docstring."""

    def __init__(self) -> None:
        self._config: MirrorSourceConfig | None = None
        self._scheduler: Scheduler | None = None
        self._source_admin: MirrorAdmin | None = None
        self._target_admin: MirrorAdmin | None = None
        self._policy: ReplicationPolicy | None = None
        self._topic_filter: TopicFilter | None = None
        self._config_filter: ConfigPropertyFilter | None = None
        self._known_source: list[TopicPartition] = []
        self._known_target: list[TopicPartition] = []
        self._no_acl_authorizer = False
        self._lock = threading.Lock()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        config = self._config = MirrorSourceConfig(props)
        if not config.enabled:
            return
        self._policy = config.replication_policy()
        self._topic_filter = config.topic_filter()
        self._config_filter = config.config_property_filter()
        timeout = config.admin_timeout_s
        self._source_admin = MirrorAdmin(
            config.source_admin_config(REPLICATION_SOURCE_ADMIN_ROLE), config.source_cluster_alias, timeout
        )
        self._target_admin = MirrorAdmin(
            config.target_admin_config(REPLICATION_TARGET_ADMIN_ROLE), config.target_cluster_alias, timeout
        )
        # Validate the intervals now so a bad one fails start, naming its key.
        acls_s = config.sync_topic_acls_interval_s()
        configs_s = config.sync_topic_configs_interval_s()
        refresh_s = config.refresh_topics_interval_s()
        scheduler = self._scheduler = Scheduler.for_connector(type(self), config.entity_label(), timeout)
        scheduler.execute(self._create_offset_syncs_topic, "creating upstream offset-syncs topic")
        scheduler.execute(self._load_topic_partitions, "loading initial set of topic-partitions")
        scheduler.execute(self.compute_and_create_topic_partitions, "creating downstream topic-partitions")
        scheduler.execute(self._refresh_known_target_topics, "refreshing known target topics")
        scheduler.schedule_repeating(self.sync_topic_acls, acls_s, "syncing topic ACLs")
        scheduler.schedule_repeating(self.sync_topic_configs, configs_s, "syncing topic configs")
        scheduler.schedule_repeating_delayed(self.refresh_topic_partitions, refresh_s, "refreshing topics")
        log.info("Started %s with %d topic-partitions.", config.connector_name, len(self._known_source))

    def stop(self) -> None:
        config = self._config
        if config is None or not config.enabled:
            return
        if self._scheduler is not None:
            self._scheduler.close()
        close_quietly((self._topic_filter, self._config_filter, self._source_admin, self._target_admin), log)

    def task_class(self) -> type[Task]:
        from mirror.connectors.source_task import MirrorSourceTask

        return MirrorSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        config = self._config
        if config is None or not config.enabled:
            return []
        with self._lock:
            known = list(self._known_source)
        if not known:
            return []
        groups = assign_round_robin(known, max_tasks)
        return [config.task_config_for_topic_partitions(g, i) for i, g in enumerate(groups)]

    def config(self) -> ConfigDef:
        return SOURCE_CONNECTOR_CONFIG_DEF

    def validate(self, props: dict[str, str]) -> list[ConfigValue]:
        return add_errors(super().validate(props), validate_source_connector_props(props))

    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED if consumer_uses_read_committed(props) else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(
        self,
        connector_config: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        """Validate ``{cluster, topic, partition}`` -> ``{offset >= 0}``; tombstones always pass."""
        validate_alter_offsets(
            offsets,
            (
                SOURCE_CLUSTER_KEY,
                TOPIC_KEY,
            ),
            with_partition=True,
            only_offset_zero=False,
        )
        return True

    # -- state (for tests and the REST layer) ----------------------------------------------------

    @property
    def known_source_topic_partitions(self) -> list[TopicPartition]:
        return list(self._known_source)

    @property
    def known_target_topic_partitions(self) -> list[TopicPartition]:
        return list(self._known_target)

    # -- topic selection -------------------------------------------------------------------------

    def should_replicate_topic(self, topic: str) -> bool:
        config, tf, policy = self._config, self._topic_filter, self._policy
        assert config is not None and tf is not None and policy is not None
        return should_replicate_topic(
            topic, tf, policy, config.target_cluster_alias, config.heartbeats_replication_enabled
        )

    def _format_remote(self, topic: str) -> str:
        assert self._policy is not None and self._config is not None
        return self._policy.format_remote_topic(self._config.source_cluster_alias, topic)

    def find_source_topic_partitions(self) -> list[TopicPartition]:
        assert self._source_admin is not None
        listing = self._source_admin.topic_partition_counts()
        return expand({t: n for t, n in listing.items() if self.should_replicate_topic(t)})

    def find_target_topic_partitions(self) -> list[TopicPartition]:
        assert self._target_admin is not None and self._config is not None and self._policy is not None
        checkpoints = self._config.checkpoints_topic()
        source = self._config.source_cluster_alias
        listing = self._target_admin.topic_partition_counts()
        return expand({t: n for t, n in listing.items() if is_known_target_topic(t, self._policy, source, checkpoints)})

    # -- scheduled jobs ----------------------------------------------------------------------------

    def _create_offset_syncs_topic(self) -> None:
        config = self._config
        assert config is not None
        if not config.emit_offset_syncs_enabled:
            return
        on_source = config.offset_syncs_on_source
        alias = config.source_cluster_alias if on_source else config.target_cluster_alias
        admin = MirrorAdmin(config.offset_syncs_topic_admin_config(), alias, config.admin_timeout_s)
        admin.create_compacted_topic(config.offset_syncs_topic(), 1, config.offset_syncs_topic_replication_factor)
        admin.create_compacted_topic(config.offset_mappings_topic(), 1, config.offset_syncs_topic_replication_factor)

    def _load_topic_partitions(self) -> None:
        source = self.find_source_topic_partitions()
        target = self.find_target_topic_partitions()
        with self._lock:
            self._known_source = source
            self._known_target = target

    def _refresh_known_target_topics(self) -> None:
        target = self.find_target_topic_partitions()
        with self._lock:
            self._known_target = target

    def refresh_topic_partitions(self) -> None:
        """Re-list both clusters; on any change create what is missing and request reconfiguration."""
        assert self._policy is not None
        source = self.find_source_topic_partitions()
        target = self.find_target_topic_partitions()
        result = refresh_changes(self._known_source, source, target, self._policy.upstream_topic)
        with self._lock:
            self._known_target = target
        if not result.changed:
            return
        log.info(
            "Found %d new topic-partitions on %s. Found %d deleted topic-partitions on %s. "
            "Found %d topic-partitions missing on %s.",
            len(result.new),
            self._config_alias("source"),
            len(result.deleted),
            self._config_alias("source"),
            len(result.missing_in_target),
            self._config_alias("target"),
        )
        with self._lock:
            self._known_source = source
        self.compute_and_create_topic_partitions()
        context = getattr(self, "context", None)
        if context is not None:
            context.request_task_reconfiguration()

    def _config_alias(self, which: str) -> str:
        assert self._config is not None
        return self._config.source_cluster_alias if which == "source" else self._config.target_cluster_alias

    def compute_and_create_topic_partitions(self) -> None:
        """Create missing remote topics and grow remote topics with fewer partitions than the source."""
        config, source_admin, target_admin = self._config, self._source_admin, self._target_admin
        assert config is not None and source_admin is not None and target_admin is not None
        plan = plan_topic_changes(counts(self._known_source), counts(self._known_target), self._format_remote)
        if plan.create:
            remote_to_source = {self._format_remote(t): t for t in counts(self._known_source)}
            described = source_admin.describe_topic_configs(remote_to_source[r] for r in plan.create)
            assert self._config_filter is not None
            new_topics = {}
            for remote, partitions in plan.create.items():
                entries = target_config_entries(
                    described.get(remote_to_source[remote], []), self._config_filter, incremental=False
                )
                new_topics[remote] = (partitions, config.replication_factor, create_configs(entries))
            target_admin.create_topics(new_topics)
        if plan.grow:
            target_admin.create_partitions(plan.grow)

    def topics_being_replicated(self) -> set[str]:
        with self._lock:
            target_topics = {tp.topic for tp in self._known_target}
            source_topics = {tp.topic for tp in self._known_source}
        return {t for t in source_topics if self._format_remote(t) in target_topics}

    def sync_topic_configs(self) -> None:
        """Incrementally align each remote topic's configs with its source topic."""
        source_admin, target_admin, cfilter = self._source_admin, self._target_admin, self._config_filter
        assert source_admin is not None and target_admin is not None and cfilter is not None
        topics = self.topics_being_replicated()
        if not topics:
            return
        described = source_admin.describe_topic_configs(topics)
        ops = {
            self._format_remote(topic): config_alter_ops(
                target_config_entries(entries, cfilter, incremental=True), cfilter
            )
            for topic, entries in described.items()
        }
        ops = {t: o for t, o in ops.items() if o}
        try:
            target_admin.incremental_alter_topic_configs(ops)
        except ConnectError as e:
            log.error("Failed to sync topic configs to cluster %s: %s", target_admin.cluster_alias, e)
            context = getattr(self, "context", None)
            if context is not None:
                context.raise_error(e)
            raise

    def sync_topic_acls(self) -> None:
        """Copy LITERAL topic ACLs (never ALLOW WRITE; ALL becomes READ); nothing when there are none."""
        source_admin, target_admin = self._source_admin, self._target_admin
        assert source_admin is not None and target_admin is not None
        bindings = source_admin.describe_topic_acls()
        if bindings is None:
            if not self._no_acl_authorizer:
                self._no_acl_authorizer = True
                log.info(
                    "No ACL authorizer is configured on the source Kafka cluster, so no topic ACL syncing "
                    "will take place. Consider disabling topic ACL syncing by setting %s to 'false'.",
                    SYNC_TOPIC_ACLS_ENABLED,
                )
            return
        to_sync = acls_to_sync(bindings, self.should_replicate_topic, self._format_remote)
        if to_sync:
            target_admin.create_acls(to_sync)


__all__ = ["MirrorSourceConnector"]
