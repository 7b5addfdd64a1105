"""Replay of the config topic into the cluster's configuration (pure; no Kafka client).

Feed records in log order to :meth:`ConfigState.apply`; :meth:`ConfigState.snapshot` returns the
:class:`~connect_core.storage.api.ClusterConfigState` a herder acts on. The rules are Java
``KafkaConfigBackingStore``'s, because a compacted config log can lose records:

* connector configs apply at once (a connector without a target state starts STARTED); a null
  value deletes the connector and its task configs, but not its target state;
* task configs are buffered per connector and applied together only when a ``commit-`` record
  arrives whose task count is covered by the buffered task ids 0..n-1 (extra ids are fine:
  compaction may leave stale ones). An incomplete set marks the connector *inconsistent*: its
  previous task configs stay, and :meth:`ClusterConfigState.tasks` returns none until a
  complete commit. Either way the buffer is cleared and the commit's count recorded;
* a commit for a connector with no config (deleted, then compacted) removes what is left of it;
* a target-state tombstone resets to STARTED while the connector still exists;
* ``tasks-fencing-`` and commit records track which connectors need zombie fencing (KIP-618).

The snapshot offset is that of the *next* record, like a consumer position.
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass, field
from typing import Any

from connect_core.model import ConnectorTaskId, RestartRequest, TargetState
from connect_core.storage.api import ClusterConfigState
from connect_core.storage.formats import ConfigRecord, decode_config_record

log = logging.getLogger(__name__)


@dataclass
class ConfigChange:
    """What one record changed, so a store can call its update listener.

    ``kind``: ``connector_config``, ``connector_removed``, ``tasks_committed``, ``target_state``,
    ``session_key``, ``restart``, ``task_count``, ``logger_level``, or ``none`` (buffered task
    config, ignored or invalid record). ``notify`` says whether Java would notify its listener
    (given the store has started).
    """

    kind: str
    connector: str | None = None
    tasks: list[ConnectorTaskId] = field(default_factory=list)
    restart: RestartRequest | None = None
    notify: bool = False
    record: ConfigRecord | None = None


class ConfigState:
    """The mutable replay state; single-threaded (the store's consumer thread owns it)."""

    def __init__(self) -> None:
        self.offset = -1
        self.connector_configs: dict[str, dict[str, str]] = {}
        self.target_states: dict[str, TargetState] = {}
        self.task_configs: dict[ConnectorTaskId, dict[str, str]] = {}
        self.task_counts: dict[str, int] = {}
        self.deferred: dict[str, dict[ConnectorTaskId, dict[str, str]]] = {}
        self.inconsistent: set[str] = set()
        self.session_key: dict[str, Any] | None = None
        self.task_count_records: dict[str, int] = {}
        self.task_config_generations: dict[str, int] = {}
        self.applied_connector_configs: dict[str, dict[str, str]] = {}
        self.pending_fencing: set[str] = set()

    # ---------------------------------------------------------------------------- replay

    def apply(self, key: str | bytes | None, value: bytes | None, offset: int | None = None) -> ConfigChange:
        """Apply the record at log ``offset`` (None: just after the previous one)."""
        self.offset = (offset + 1) if offset is not None else self.offset + 1 if self.offset >= 0 else 1
        record = decode_config_record(key, value)
        return self.apply_record(record)

    def apply_record(self, record: ConfigRecord) -> ConfigChange:
        handler = getattr(self, f"_on_{record.kind}", None)
        if handler is None:  # invalid record: Java logs and skips it
            log.error("Ignoring config topic record %r: %s", record.key, record.error)
            return ConfigChange("none", record.connector, record=record)
        change: ConfigChange = handler(record)
        change.record = record
        return change

    def _on_connector(self, r: ConfigRecord) -> ConfigChange:
        name = r.connector
        assert name is not None
        if r.deleted:
            self._remove_connector(name)
            return ConfigChange("connector_removed", name, notify=True)
        assert r.properties is not None
        self.connector_configs[name] = r.properties
        self.target_states.setdefault(name, TargetState.STARTED)
        return ConfigChange("connector_config", name, notify=True)

    def _on_task(self, r: ConfigRecord) -> ConfigChange:
        assert r.task is not None and r.properties is not None
        self.deferred.setdefault(r.task.connector, {})[r.task] = r.properties
        return ConfigChange("none", r.task.connector)

    def _on_commit(self, r: ConfigRecord) -> ConfigChange:
        name = r.connector
        assert name is not None and r.task_count is not None
        connector_config = self.connector_configs.get(name)
        if connector_config is None:
            # Deleted earlier and compaction removed the config and its tombstone: ignore.
            self._remove_connector(name)
            return ConfigChange("none", name)
        deferred = self.deferred.get(name)
        updated: list[ConnectorTaskId] = []
        ids = {t.task for t in deferred} if deferred else set()
        if all(i in ids for i in range(r.task_count)):
            if deferred:
                self.task_configs.update(deferred)
                updated = sorted(deferred)
                self.task_config_generations[name] = self.task_config_generations.get(name, -1) + 1
            self.inconsistent.discard(name)
            self.applied_connector_configs[name] = connector_config
        else:
            log.debug("Incomplete task configs for connector %r (probably compaction); marking it inconsistent", name)
            self.inconsistent.add(name)
        if deferred is not None:
            deferred.clear()
        self.task_counts[name] = r.task_count
        self.pending_fencing.add(name)
        return ConfigChange("tasks_committed", name, tasks=updated, notify=True)

    def _on_target_state(self, r: ConfigRecord) -> ConfigChange:
        name = r.connector
        assert name is not None
        if r.deleted:
            self.target_states.pop(name, None)
            if name in self.connector_configs:
                self.target_states[name] = TargetState.STARTED
            return ConfigChange("target_state", name, notify=False)
        assert r.target_state is not None
        previous = self.target_states.get(name)
        self.target_states[name] = r.target_state
        changed = previous != r.target_state
        return ConfigChange("target_state", name, notify=changed and name in self.connector_configs)

    def _on_task_count(self, r: ConfigRecord) -> ConfigChange:
        assert r.connector is not None and r.task_count is not None
        self.task_count_records[r.connector] = r.task_count
        self.pending_fencing.discard(r.connector)
        return ConfigChange("task_count", r.connector)

    def _on_session_key(self, r: ConfigRecord) -> ConfigChange:
        self.session_key = r.session_key
        return ConfigChange("session_key", notify=True)

    def _on_restart(self, r: ConfigRecord) -> ConfigChange:
        return ConfigChange("restart", r.connector, restart=r.restart, notify=True)

    def _on_logger_level(self, r: ConfigRecord) -> ConfigChange:
        return ConfigChange("logger_level", notify=True)

    def _remove_connector(self, name: str) -> None:
        self.connector_configs.pop(name, None)
        self.task_counts.pop(name, None)
        for task in [t for t in self.task_configs if t.connector == name]:
            del self.task_configs[task]
        self.deferred.pop(name, None)
        self.applied_connector_configs.pop(name, None)

    # ---------------------------------------------------------------------------- snapshot

    def snapshot(self) -> ClusterConfigState:
        """An independent copy: later records never change a snapshot already handed out."""
        return ClusterConfigState(
            offset=self.offset,
            connector_configs={k: dict(v) for k, v in self.connector_configs.items()},
            target_states=dict(self.target_states),
            task_configs={k: dict(v) for k, v in self.task_configs.items()},
            task_counts=dict(self.task_counts),
            inconsistent=set(self.inconsistent),
            session_key=copy.deepcopy(self.session_key),
            task_count_records=dict(self.task_count_records),
            task_config_generations=dict(self.task_config_generations),
            connectors_pending_fencing=set(self.pending_fencing),
        )

    def pending_task_configs(self, connector: str) -> dict[ConnectorTaskId, dict[str, str]]:
        """Buffered (not yet committed) task configs; mainly for diagnostics and tests."""
        return dict(self.deferred.get(connector, {}))
