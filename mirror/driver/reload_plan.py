"""What re-reading mm2.properties changes in a running ``mm2 run``: pure, so it is tested without a broker.

A running node keeps its herders' worker configs (they are fixed when a herder starts, as in Java) and
its process settings (REST listeners, config providers). So a reload splits the file's differences in two:

* settings a running flow can take now: flows added or removed, and connector settings (``topics``,
  ``tasks.max``, ``A->B.*``, a source cluster's consumer settings ...), which reach the flow as a connector
  config update written by its leader;
* settings that need a restart: any ``{target}.*`` key of a running flow (its herder's worker config:
  clients, ``offset.flush.interval.ms``, exactly-once ...), a running flow's source connection and security
  (``bootstrap.servers``, ``security.protocol``, ``ssl.*``, ``sasl.*``), top-level worker and process
  settings (``replication.policy.*``, ``config.providers``, ``listeners`` ...). They keep their running
  values: the plan's ``config`` is the new file with those keys put back as they were, and ``needs_restart``
  names them so the operator is told once.

A later per-flow setting that a flow can apply while it runs (a throughput cap, for example) is a connector
setting here: it reaches the flow through the same config update, and
:meth:`ReloadPlan.connector_changes` names it for code that applies it in place.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from mirror.driver.maker_config import (
    CLUSTERS,
    CONNECTOR_CLASSES,
    EMIT_HEARTBEATS_ENABLED,
    MirrorMakerConfig,
    SourceAndTarget,
    is_client_security_key,
)

#: Top-level keys a reload applies itself (pairs, scheduled verification) rather than through a connector.
_STRUCTURAL = (CLUSTERS, EMIT_HEARTBEATS_ENABLED)
_APPLIED_PREFIXES = ("verify.",)
_ROLES = ("consumer.", "producer.", "admin.")
_FLOW_KEY = re.compile(r"^(?P<source>[^.]+?)->(?P<target>[^.]+)\.(?P<key>.+)$")


def is_connection_key(key: str) -> bool:
    """A client's address or security setting, for any client role (``consumer.ssl.keystore.location`` too)."""
    for role in _ROLES:
        if key.startswith(role):
            key = key[len(role) :]
            break
    return is_client_security_key(key)


@dataclass(frozen=True)
class ReloadPlan:
    """The difference between the running config and a re-read file, and the config to run from now on."""

    previous: MirrorMakerConfig  # what ran until now
    config: MirrorMakerConfig  # the new file, restart-only settings of running flows kept at their running values
    added: list[SourceAndTarget]
    removed: list[SourceAndTarget]
    kept: list[SourceAndTarget]
    needs_restart: list[str]  # keys whose change waits for a restart, sorted
    changed_keys: frozenset[str]  # every key whose value differs between the running config and ``config``

    def connector_changes(self, pair: SourceAndTarget) -> list[str]:
        """Connector config keys of a kept flow whose value the reload changes (for its log line, and for a
        setting a flow applies in place, such as a future throughput cap)."""
        keys: set[str] = set()
        for name in CONNECTOR_CLASSES:
            before = self.previous.connector_base_config(pair, name)
            after = self.config.connector_base_config(pair, name)
            keys.update(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        return sorted(keys)

    @property
    def changes_anything(self) -> bool:
        """Something to apply, or at least something to tell (a setting that waits for a restart)."""
        return bool(self.added or self.removed or self.changed_keys or self.needs_restart)


def _needs_restart(
    key: str, kept: Iterable[SourceAndTarget], aliases: Iterable[str], connector_names: set[str]
) -> bool:
    """Whether a change of ``key`` reaches a running flow only through a restart of its herder."""
    if _FLOW_KEY.match(key):
        return False  # connector overrides of one flow ({pair}.enabled and heartbeats change the pairs)
    kept = list(kept)
    for alias in aliases:
        prefix = f"{alias}."
        if not key.startswith(prefix):
            continue
        rest = key[len(prefix) :]
        if any(p.target == alias for p in kept):
            return True  # the target's cluster settings are its herders' worker config
        return any(p.source == alias for p in kept) and is_connection_key(rest)
    if key in _STRUCTURAL or key.startswith(_APPLIED_PREFIXES):
        return False
    if not kept:
        return False
    if is_connection_key(key) or key.startswith(("replication.policy", "config.providers")):
        return True  # every client of every flow; the remote topics' names
    return key not in connector_names  # worker and process settings (listeners, internal REST, ...)


def plan_reload(
    running: MirrorMakerConfig,
    new: MirrorMakerConfig,
    clusters: list[str] | None,
    connector_names: Callable[[], set[str]] | None = None,
) -> ReloadPlan:
    """The plan that turns ``running`` (this node's flows under ``--clusters``) into ``new``.

    ``new`` must already have passed ``mm2 run``'s checks; the plan itself raises nothing but what
    ``herder_pairs`` raises for a file without flows for this node.
    """
    if connector_names is None:
        from mirror.connectors.config import all_connector_config_names

        names = set(all_connector_config_names())
    else:
        names = connector_names()
    running_pairs = running.herder_pairs(clusters)
    kept_guess = [p for p in new.herder_pairs(clusters) if p in running_pairs]
    aliases = sorted(set(running.clusters()) | set(new.clusters()), key=len, reverse=True)
    differing = {k for k in set(running.raw) | set(new.raw) if running.raw.get(k) != new.raw.get(k)}
    restart = sorted(k for k in differing if _needs_restart(k, kept_guess, aliases, names))
    effective = dict(new.raw)
    for key in restart:
        if key in running.raw:
            effective[key] = running.raw[key]
        else:
            effective.pop(key, None)
    config = new.with_raw(effective)
    new_pairs = config.herder_pairs(clusters)
    changed = frozenset(k for k in differing if running.raw.get(k) != effective.get(k))
    return ReloadPlan(
        previous=running,
        config=config,
        added=[p for p in new_pairs if p not in running_pairs],
        removed=[p for p in running_pairs if p not in new_pairs],
        kept=[p for p in new_pairs if p in running_pairs],
        needs_restart=restart,
        changed_keys=changed,
    )
