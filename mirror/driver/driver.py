"""The dedicated MirrorMaker driver: one herder per flow, the leader writes the connector configs.

As Java's ``MirrorMaker``/``MirrorHerder``: for every pair of ``herder_pairs(--clusters)`` one
herder runs on the target cluster with ``worker_config(pair)`` and worker id ``"S->T"``; herders
start one after another; whenever a node becomes a flow's group leader it compares the three
desired connector configs (``connector_base_config(pair, name)``) with the stored ones and writes
those that differ. That is why a changed mm2.properties takes effect when an updated node
becomes leader (KAFKA-15372). A distributed herder's leader already does that comparison and those
writes while it assigns the generation it leads (the flow's ``desired_connectors``), so a fresh flow's
first generation assigns the connectors; the check after the rebalance then finds nothing to write.

Config writes go through a small background thread, never on the herder's callback thread: a
herder whose API queues requests onto its own loop would otherwise wait on itself.

REST (decision): the Connect REST API of every herder is served only when
``dedicated.mode.enable.internal.rest=true`` (Java's switch; its default is off so several mm2
processes can share a machine), on ``listeners`` (default ``http://:8083``). A flow is addressed
by the prefix ``/{source}/{target}``, URL-encoded, e.g. ``GET /A/B/connectors/MirrorSourceConnector/
status``; the whole Connect API is available there, which also carries KIP-710's internal
``/{source}/{target}/connectors/{name}/tasks`` forwarding.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import quote

from connect_core.api.errors import ConfigError, ConflictError, ConnectError, NotFoundError, NotLeaderError
from connect_core.config.providers import resolve_config_providers
from connect_core.herder.api import Herder
from connect_core.model import ConnectorInfo, TargetState
from mirror.driver.backfill_leases import Lease, with_lease
from mirror.driver.herder_factory import FlowHerder, HerderFactory, HerderSpec
from mirror.driver.maker_config import (
    CHECKPOINT_CONNECTOR,
    HEARTBEAT_CONNECTOR,
    SOURCE_CONNECTOR,
    MirrorMakerConfig,
    SourceAndTarget,
)
from mirror.driver.metrics import Mm2Metrics
from mirror.driver.reload_plan import ReloadPlan
from mirror.driver.secret_refs import with_provider, with_secret_references

log = logging.getLogger(__name__)

#: The order Java's MirrorHerder configures them in.
CONNECTOR_NAMES = (SOURCE_CONNECTOR, HEARTBEAT_CONNECTOR, CHECKPOINT_CONNECTOR)
DEFAULT_STOP_TIMEOUT_S = 60.0
_CONFLICT_RETRIES = 20
_CONFLICT_BACKOFF_S = 0.5


def make_config(props: Mapping[str, str], source: Path | None = None) -> MirrorMakerConfig:
    """A MirrorMakerConfig over a copy of raw (unresolved) properties, read from ``source`` if given."""
    return MirrorMakerConfig(dict(props), source=source)


def connectors_to_write(
    desired: Mapping[str, Mapping[str, str]], current: Mapping[str, Mapping[str, str] | None]
) -> list[str]:
    """Names whose desired config differs from the stored one (absent counts as different), in order."""
    return [name for name in CONNECTOR_NAMES if name in desired and differs(desired[name], current.get(name))]


def differs(desired: Mapping[str, str], current: Mapping[str, str] | None) -> bool:
    """Java compares the raw stored config map with equals(): any key or value change counts."""
    return current is None or dict(desired) != dict(current)


def desired_connector_configs(
    config: MirrorMakerConfig, pair: SourceAndTarget, lease: Lease | None = None
) -> dict[str, dict[str, str]]:
    """The three connector configs the leader of ``pair`` keeps in the config topic (unresolved ``${...}``).

    With a source file, literal secrets become ``${mm2:KEY}`` references (see :mod:`mirror.driver.secret_refs`).
    A backfill's ``lease`` excludes its topics from the MirrorSourceConnector: every node derives the same
    exclusion from the flow's leases topic, so no leader change or restart undoes it.
    """
    if config.source is not None:
        config = config.with_raw(with_secret_references(config.raw))
    desired = {name: config.connector_base_config(pair, name) for name in CONNECTOR_NAMES}
    desired[SOURCE_CONNECTOR] = with_lease(desired[SOURCE_CONNECTOR], lease)
    return desired


def rest_namespace(pair: SourceAndTarget) -> tuple[str, str]:
    return (pair.source, pair.target)


def rest_path(pair: SourceAndTarget) -> str:
    """``/{source}/{target}`` URL prefix of a flow (Java encodes a space as %20, so do we)."""
    return "/" + "/".join(quote(part, safe="") for part in rest_namespace(pair))


class ConnectorConfigs(Protocol):
    """The two Herder methods the leader's configuration needs (any Herder has them)."""

    def connector_config(self, name: str) -> dict[str, str]: ...

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]: ...


def _configure_one(
    herder: ConnectorConfigs, name: str, cfg: dict[str, str], pair: SourceAndTarget, should_continue: Callable[[], bool]
) -> bool:
    """Write one connector's config if it differs; True if written (see :func:`configure_connectors`)."""
    for attempt in range(_CONFLICT_RETRIES):
        if not should_continue():
            return False
        try:
            try:
                current: dict[str, str] | None = herder.connector_config(name)
            except NotFoundError:
                current = None
            if not differs(cfg, current):
                return False
            herder.put_connector_config(name, cfg, allow_replace=True)
            log.info("%s: wrote the %s config", pair, name)
            return True
        except NotLeaderError:
            log.info("%s: not the leader; the leader writes the %s config", pair, name)
            return False
        except ConflictError as e:
            log.debug("%s: cannot write %s yet (%s), attempt %d", pair, name, e, attempt + 1)
            time.sleep(_CONFLICT_BACKOFF_S)
        except ConfigError as e:
            log.error("%s: %s config rejected, leaving it unconfigured: %s", pair, name, e)
            return False
        except ConnectError as e:
            log.error("%s: writing the %s config failed: %s", pair, name, e)
            return False
    log.error("%s: gave up writing the %s config (herder busy rebalancing)", pair, name)
    return False


def configure_connectors(
    herder: ConnectorConfigs,
    desired: Mapping[str, Mapping[str, str]],
    pair: SourceAndTarget,
    should_continue: Callable[[], bool] = lambda: True,
) -> list[str]:
    """Write each desired config that differs from the herder's; returns the names written, in order.

    Mirrors MirrorHerder.configureConnectors: a NotLeaderError means another node leads now and
    its view wins; a rejected config (e.g. the checkpoint connector with emit.checkpoints.enabled
    =false) is logged and that connector left as it is. A rebalance in progress is retried.
    The three writes are issued together (Java's puts are asynchronous too): a distributed herder
    then applies them in one rebalance instead of one rebalance each.
    """
    names = [n for n in CONNECTOR_NAMES if n in desired]
    with ThreadPoolExecutor(max_workers=max(1, len(names)), thread_name_prefix=f"mm2-configure-{pair}") as pool:
        results = list(pool.map(lambda n: _configure_one(herder, n, dict(desired[n]), pair, should_continue), names))
    return [n for n, written in zip(names, results, strict=True) if written]


class LeaseView(Protocol):
    """A flow's backfill lease as this node sees it (:class:`mirror.driver.lease_store.LeaseWatcher`)."""

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def excluding(self) -> Lease | None: ...


#: ``(pair, worker_props, on_change) -> LeaseView``: how the driver follows a flow's backfill lease
LeaseViews = Callable[[SourceAndTarget, dict[str, str], Callable[[], None]], LeaseView]


class MirrorMaker:
    """Runs the herders of one mm2 process. ``start()`` then ``stop()``; both from one thread."""

    def __init__(
        self,
        config: MirrorMakerConfig,
        factory: HerderFactory,
        *,
        clusters: Iterable[str] | None = None,
        metrics: Mm2Metrics | None = None,
        resolve: Callable[[Mapping[str, Any]], dict[str, Any]] = resolve_config_providers,
        leases: LeaseViews | None = None,
    ) -> None:
        self.config = config
        self.pairs = config.herder_pairs(list(clusters) if clusters else None)
        self._factory = factory
        self._metrics = metrics
        self._resolve = resolve
        self._lease_views = leases
        self._leases: dict[SourceAndTarget, LeaseView] = {}
        self._herders: dict[SourceAndTarget, FlowHerder] = {}
        self._started: list[SourceAndTarget] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._requests: queue.Queue[SourceAndTarget | None] = queue.Queue()
        self._configurer: threading.Thread | None = None
        self._rest: Any = None
        self._rest_client: Any = None  # the REST server's client (top-level TLS keys), for task configs
        self._selector: Any = None
        self._flow_locks: dict[SourceAndTarget, threading.Lock] = {}
        self.configured: dict[SourceAndTarget, list[str]] = {}  # what each leadership wrote (for tests/logs)
        # leaderships handled per flow, written or not: proof that a "nothing to write" was decided, not skipped
        self.leaderships_handled: dict[SourceAndTarget, int] = {}

    # ----------------------------------------------------------------------------- lifecycle

    @property
    def rest_url(self) -> str | None:
        return None if self._rest is None else str(self._rest.advertised_url())

    def herder(self, pair: SourceAndTarget) -> Herder:
        return self._herders[pair].herder

    def start(self, interrupted: Callable[[], bool] = lambda: False) -> None:
        """Start REST (if enabled), then each herder in turn; ``interrupted()`` stops between herders."""
        self._configurer = threading.Thread(target=self._configure_loop, name="mm2-configurer", daemon=True)
        self._configurer.start()
        if self.config.enable_internal_rest():
            self._start_rest()
        for pair in self.pairs:
            if interrupted() or self._stopping.is_set():
                log.info("Interrupted while starting; %d of %d herders started", len(self._started), len(self.pairs))
                return
            self._start_flow(pair)
        log.info("MirrorMaker started %d herder(s): %s", len(self._started), ", ".join(map(str, self._started)))

    def _start_flow(self, pair: SourceAndTarget) -> None:
        """Build, start and register one flow's herder (and its backfill lease view)."""
        worker_props = self._worker_props(pair)
        if self._lease_views is not None:
            # read before the herder starts, so this node's first configuration already sees a backfill's lease
            view = self._lease_views(pair, worker_props, lambda p=pair: self._requests.put(p))  # type: ignore[misc]
            view.start()
            with self._lock:
                self._leases[pair] = view
        spec = HerderSpec(
            pair=pair,
            worker_props=worker_props,
            worker_id=str(pair),
            on_became_leader=lambda p=pair: self._requests.put(p),  # type: ignore[misc]
            metrics=self._metrics,
            rest_url=self.rest_url,
            rest_namespace=rest_namespace(pair),
            rest_client=self._rest_client,
            desired_connectors=lambda p=pair: self._desired(p),  # type: ignore[misc]
        )
        log.info("Starting herder for %s", pair)
        flow = self._factory(spec)
        with self._lock:
            self._herders[pair] = flow
        flow.start()
        with self._lock:
            self._started.append(pair)
        if self._selector is not None:
            self._selector.put(rest_namespace(pair), flow.herder)
        log.info("Herder for %s started", pair)

    def _worker_props(self, pair: SourceAndTarget) -> dict[str, str]:
        """Worker configs resolve ``${provider:...}`` eagerly (Java does too); connector configs stay raw."""
        resolved = {k: str(v) for k, v in self._resolve(self.config.worker_config(pair)).items()}
        # every node resolves the ${mm2:KEY} references of the connector configs from its own file
        return resolved if self.config.source is None else with_provider(resolved, self.config.source)

    def _start_rest(self) -> None:
        from connect_core.rest.internal_endpoints import install_internal_routes
        from connect_core.rest.resources import RestApp
        from connect_core.rest.routes import HerderSelector
        from connect_core.rest.server import RestServer

        rest_props = {k: str(v) for k, v in self._resolve(self.config.raw).items()}
        self._selector = HerderSelector(depth=2)
        self._rest = RestServer.from_props(rest_props)
        self._rest_client = self._rest.rest_client()
        self._rest.start()
        # Writes reaching a follower go to the leader; followers' connectors send their task configs to
        # the leader's /{source}/{target}/connectors/{name}/tasks (KIP-710's internal endpoints).
        self._rest.attach(install_internal_routes(RestApp(self._selector, forwarder=self._rest_client.forward)))
        log.info("REST API for %d flow(s) at %s{source}/{target}/...", len(self.pairs), self.rest_url)

    def stop(self, timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> bool:
        """Stop every started herder (in parallel) and REST; True if all stopped within ``timeout_s``."""
        self._stopping.set()
        self._requests.put(None)
        with self._lock:
            pairs = list(reversed(list(self._herders)))
        clean = self._stop_flows(pairs, timeout_s)
        with self._lock:
            views, self._leases = list(self._leases.values()), {}
        for view in views:  # a flow whose herder never got built
            try:
                view.stop()
            except Exception:
                log.exception("Stopping a backfill lease watcher failed")
        if self._rest is not None:
            try:
                self._rest.stop()
            except Exception:
                log.exception("Stopping the REST server failed")
        if self._configurer is not None:
            self._configurer.join(timeout=5)
        if not clean:
            log.error("MirrorMaker did not stop cleanly within %.0fs", timeout_s)
        else:
            log.info("MirrorMaker stopped")
        return clean

    def _stop_flows(self, pairs: list[SourceAndTarget], timeout_s: float) -> bool:
        """Stop these flows' herders in parallel (graceful: tasks stop, offsets flushed, group left), take them
        off REST and drop their lease views; True if all stopped within ``timeout_s`` without an error."""
        with self._lock:
            flows = [(p, self._herders[p]) for p in pairs if p in self._herders]
        errors: list[str] = []

        def stop_one(pair: SourceAndTarget, flow: FlowHerder) -> None:
            try:
                flow.stop()
                log.info("Herder for %s stopped", pair)
            except Exception as e:
                errors.append(f"{pair}: {e}")
                log.exception("Stopping the herder for %s failed", pair)

        threads = [threading.Thread(target=stop_one, args=(p, f), name=f"mm2-stop-{p}", daemon=True) for p, f in flows]
        for t in threads:
            t.start()
        deadline = time.monotonic() + timeout_s
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        clean = not any(t.is_alive() for t in threads) and not errors
        for pair, _ in flows:
            if self._selector is not None:
                self._selector.remove(rest_namespace(pair))
            with self._lock:
                view = self._leases.pop(pair, None)
            if view is not None:
                try:
                    view.stop()
                except Exception:
                    log.exception("Stopping a backfill lease watcher failed")
        return clean

    # ----------------------------------------------------------------------------- reload

    def reload(self, plan: ReloadPlan, timeout_s: float = DEFAULT_STOP_TIMEOUT_S) -> bool:
        """Apply a re-read file (from the thread that called ``start``): removed flows stop, added flows start,
        and every kept flow's leader writes the connector configs that changed (followers' writes are refused
        by their herders: their leader writes, as in Java). True if every removed flow stopped cleanly."""
        if plan.needs_restart:
            log.warning(
                "Reload: these settings change only when mm2 run restarts, they keep their running values: %s",
                ", ".join(plan.needs_restart),
            )
        self.config = plan.config
        clean = True
        if plan.removed:
            log.info("Reload: stopping flow(s) %s", ", ".join(map(str, plan.removed)))
            clean = self._stop_flows(plan.removed, timeout_s)
            with self._lock:
                for pair in plan.removed:
                    self._herders.pop(pair, None)
                    if pair in self._started:
                        self._started.remove(pair)
        self.pairs = [p for p in self.pairs if p not in plan.removed] + list(plan.added)
        for pair in plan.kept:
            changes = plan.connector_changes(pair)
            if changes:
                log.info("Reload: %s connector settings changed: %s", pair, ", ".join(changes))
            # every kept flow: its leader compares with the stored configs, so nodes converge whatever they ran
            self._requests.put(pair)
        for pair in plan.added:
            if self._stopping.is_set():
                break
            self._start_flow(pair)
        log.info("Reload applied: %d flow(s) running: %s", len(self._started), ", ".join(map(str, self._started)))
        return clean

    # ----------------------------------------------------------------------------- leadership

    def _configure_loop(self) -> None:
        while True:
            pair = self._requests.get()
            if pair is None or self._stopping.is_set():
                return
            flow = self._herders.get(pair)
            if flow is None:
                continue
            # one thread per request: flows are independent, and one flow's slow rebalance must not
            # delay another's configuration; a per-flow lock keeps one flow's runs in order
            threading.Thread(
                target=self._configure, args=(pair, flow), name=f"mm2-configure-{pair}", daemon=True
            ).start()

    def _desired(self, pair: SourceAndTarget) -> dict[str, dict[str, str]]:
        """The flow's three connector configs as this node's file (and the flow's backfill lease) says now."""
        view = self._leases.get(pair)
        return desired_connector_configs(self.config, pair, view.excluding() if view else None)

    def _configure(self, pair: SourceAndTarget, flow: FlowHerder) -> None:
        with self._flow_locks.setdefault(pair, threading.Lock()):
            if self._stopping.is_set():
                return
            try:
                desired = self._desired(pair)
                written = configure_connectors(flow.herder, desired, pair, lambda: not self._stopping.is_set())
                self.configured.setdefault(pair, []).extend(written)
            except Exception:
                log.exception("%s: configuring the connectors failed", pair)
            self.leaderships_handled[pair] = self.leaderships_handled.get(pair, 0) + 1
