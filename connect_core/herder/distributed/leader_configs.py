"""The leader writes the connector configs it keeps while it assigns, so that generation already runs them.

A host that owns the group's connector configs (MirrorMaker's dedicated mode: every node derives the same
three from its mm2.properties) used to write them once it learned it led, after the rebalance; each write
then asked for another rebalance to assign the new connectors: a fresh start paid one more group join.
The leader learns it leads between JoinGroup and SyncGroup, so this step writes the configs that differ
from the config topic right there (each write reads the topic to its end) and hands the assignor that
snapshot: the connectors are assigned in the same generation, whose offset covers the writes, so every
member reads them before it acts on the assignment. Only the leader writes, and only when it is becoming
leader (it did not lead the last generation it completed), as the host's own check after the rebalance;
a config equal to the stored one is never rewritten (a restart writes nothing). A config that fails
validation is left to the host, which reports it when it configures the connectors after the rebalance.
Installed as the coordinator's ``leader_config_step``; runs on the group client's thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor

from connect_core.herder import common
from connect_core.herder.distributed.assignor import ConfigSnapshot
from connect_core.herder.distributed.collaborators import DistributedConfigStore
from connect_core.model import ConfigInfos

log = logging.getLogger(__name__)

#: The connector configs (name -> config) the leader keeps in the config topic, computed when it assigns.
DesiredConfigs = Callable[[], Mapping[str, Mapping[str, str]]]


class LeaderConfigWrites:
    """The step: write what differs, then return the config topic's snapshot read to its end (None: no write)."""

    def __init__(
        self,
        store: DistributedConfigStore,
        desired: DesiredConfigs,
        validate: Callable[[dict[str, str]], ConfigInfos],
        becoming_leader: Callable[[], bool],
    ) -> None:
        self._store = store
        self._desired = desired
        self._validate = validate
        self._becoming_leader = becoming_leader

    def __call__(self, joined: ConfigSnapshot) -> ConfigSnapshot | None:
        if not self._becoming_leader():
            return None  # a leader re-elected keeps what it wrote (and what REST changed since), as before
        stored = self._store.snapshot().connector_configs  # at least as new as the join snapshot
        stale: dict[str, dict[str, str]] = {}
        for name, config in self._desired().items():
            if stored.get(name) == dict(config):
                continue
            if common.config_errors_message(self._validate(dict(config))) is not None:
                log.info("Leaving connector %s to be configured after the rebalance: its config is invalid", name)
                continue
            stale[name] = dict(config)
        if not stale:
            return None
        # Each write waits for its acknowledgement and then reads the topic to its end; issued together the
        # waits overlap (the whole step delays the group's SyncGroup). The last read covers every write.
        with ThreadPoolExecutor(max_workers=len(stale), thread_name_prefix="leader-configs") as pool:
            for done in [pool.submit(self._store.put_connector_config, n, c, None) for n, c in stale.items()]:
                done.result()
        fresh = self._store.snapshot()
        log.info("Leader wrote the config of connector(s) %s while assigning (config offset %d -> %d)",
                 ", ".join(stale), joined.offset, fresh.offset)  # fmt: skip
        return fresh
