"""``mm2 run MM2.properties [--clusters A ...] [--metrics-port P]``: the dedicated MirrorMaker driver.

Order matters: every check that can fail on a user mistake runs BEFORE anything is written to
any cluster or any port is bound — read and validate the file (unknown aliases, a cluster without
bootstrap servers, IdentityReplicationPolicy both ways, connector settings that do not parse,
unresolvable ``${...}`` references), then ask every cluster a herder will touch for its metadata
with a short timeout. Only then are metrics served and herders started. Each mistake is one
``mm2: error: ...`` line and a non-zero exit (2 configuration, 3 start failure, as Java's 3).

SIGTERM/SIGINT stop every herder gracefully (tasks stop, offsets flushed, group left) and exit 0;
a second signal exits at once. SIGHUP (and, with ``--watch-config``, a change of the file's content)
re-reads the file without a restart (:mod:`mirror.cli.run_reload`).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any

from connect_core.api.errors import ConfigError, ConfigIssue, ConnectError
from connect_core.config.properties import load_properties
from connect_core.config.providers import resolve_config_providers
from connect_core.kafka.clients import admin_config, client_props, create_admin, text_props
from connect_core.kafka.security import check_security
from mirror.cli.errors import StartupError
from mirror.cli.run_reload import WATCH_INTERVAL_S, FileWatch, Reloader, ReloadRequest, one_line
from mirror.cli.stop_request import StopRequest
from mirror.driver.driver import make_config
from mirror.driver.maker_config import (
    CHECKPOINT_CONNECTOR,
    HEARTBEAT_CONNECTOR,
    SOURCE_CONNECTOR,
    MirrorMakerConfig,
    SourceAndTarget,
)
from mirror.driver.metrics import Mm2Metrics

log = logging.getLogger(__name__)

REACHABILITY_TIMEOUT_S = float(os.environ.get("MM2_REACHABILITY_TIMEOUT_S", "5"))
STOP_TIMEOUT_S = float(os.environ.get("MM2_STOP_TIMEOUT_S", "60"))

# librdkafka's own connection-refused chatter must not pollute the one-line error of a failed check.
_QUIET = logging.getLogger("mirror.cli.reachability")
_QUIET.addHandler(logging.NullHandler())
_QUIET.propagate = False


def load_mm2_config(path: Path, clusters: Iterable[str] | None = None) -> MirrorMakerConfig:
    """Read and validate mm2.properties; ConfigError (one line, every issue) on any mistake."""
    config = make_config(load_properties(path), source=path)
    config.validate(list(clusters) if clusters else None)
    check_client_security(config)
    return config


def check_client_security(config: MirrorMakerConfig) -> None:
    """Read every cluster's stores and JAAS now, as its clients would: a wrong password, a missing
    store or an unsupported login module is one ConfigError naming the alias's key, before any
    cluster is touched (every command reads its file through here)."""
    issues: list[ConfigIssue] = []
    for alias in config.clusters():
        try:
            props = resolved_cluster_props(config, alias)
        except ConfigError:
            continue  # unresolvable references are reported where they are resolved
        for role in ("", "admin.", "producer.", "consumer."):
            try:
                check_security(text_props(client_props(props, role)))
            except ConfigError as e:
                issues.extend(ConfigIssue(f"{alias}.{role}{i.key}" if i.key else alias, i.message) for i in e.issues)
                break
    if issues:
        raise ConfigError(issues)


def _connector_config_class(name: str) -> Any:
    from mirror.connectors import config as mc

    return {
        SOURCE_CONNECTOR: mc.MirrorSourceConfig,
        CHECKPOINT_CONNECTOR: mc.MirrorCheckpointConfig,
        HEARTBEAT_CONNECTOR: mc.MirrorHeartbeatConfig,
    }[name]


def check_connector_configs(config: MirrorMakerConfig, pairs: Iterable[SourceAndTarget]) -> None:
    """Parse the connector configs each herder will write, so a bad value fails now, naming the flow."""
    issues: list[ConfigIssue] = []
    for pair in pairs:
        names = [HEARTBEAT_CONNECTOR]
        if config.flow_enabled(pair):
            names = [SOURCE_CONNECTOR, CHECKPOINT_CONNECTOR, HEARTBEAT_CONNECTOR]
        for name in names:
            raw = config.connector_base_config(pair, name)
            try:
                _connector_config_class(name)(resolve_config_providers(raw))
            except ConfigError as e:
                issues.extend(ConfigIssue(i.key, f"{i.message} (flow {pair}, {name})") for i in e.issues)
        issues.extend(_transform_problems(config, pair, config.connector_base_config(pair, names[0])))
    if issues:
        raise ConfigError(issues)


def _transform_problems(config: MirrorMakerConfig, pair: SourceAndTarget, raw: Mapping[str, str]) -> list[ConfigIssue]:
    """Build the flow's transformation chain (the same for its three connectors) once, so a bad
    ``A->B.transforms.*`` setting stops ``mm2 run`` naming the key the user wrote, instead of the
    herder rejecting the connector configs later."""
    from connect_core.transforms.chain import TransformationChain

    try:
        TransformationChain.from_config(resolve_config_providers(dict(raw))).close()
    except ConfigError as e:
        flow_key = f"{pair}."
        return [
            ConfigIssue(flow_key + i.key if flow_key + i.key in config.raw else i.key, f"{i.message} (flow {pair})")
            for i in e.issues
        ]
    return []


def resolved_cluster_props(config: MirrorMakerConfig, alias: str) -> dict[str, Any]:
    return resolve_config_providers(config.cluster_props(alias), config.raw)


def check_reachable(
    config: MirrorMakerConfig, aliases: Iterable[str], timeout_s: float = REACHABILITY_TIMEOUT_S
) -> None:
    """One metadata request per cluster (in parallel, no topic named, so nothing is created)."""

    def probe(alias: str) -> str | None:
        props = resolved_cluster_props(config, alias)
        admin_props = client_props(props, "admin.")
        servers = admin_props.get("bootstrap.servers", "")
        lines = _LineCollector(f"{_QUIET.name}.{alias}")
        try:
            admin = create_admin(admin_config(admin_props, {"logger": lines.logger}))
            admin.list_topics(timeout=timeout_s)
        except Exception as e:  # KafkaException, ConfigError from a bad client setting
            reason = " ".join(str(e).split()) or type(e).__name__
            if "timed out" in reason.lower() or "transport" in reason.lower():
                reason = (
                    _connection_failure(lines.lines, servers, text_props(admin_props))
                    or f"no answer within {timeout_s:g}s"
                )
            return f"cluster '{alias}' ({servers}) is unreachable: {reason}"
        return None

    wanted = list(dict.fromkeys(aliases))
    with ThreadPoolExecutor(max_workers=max(1, len(wanted))) as pool:
        problems = [p for p in pool.map(probe, wanted) if p]
    if problems:
        raise StartupError("; ".join(problems))


class _LineCollector(logging.Handler):
    """Keeps a probe's librdkafka lines (a failed TLS handshake is only said there), shows none."""

    def __init__(self, name: str) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []
        self.logger = logging.getLogger(name)
        self.logger.handlers[:] = [self]
        self.logger.propagate = False
        self.logger.setLevel(logging.DEBUG)

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def _connection_failure(lines: list[str], servers: str, props: dict[str, str]) -> str | None:
    """One sentence for a TLS/SASL failure seen in the probe's lines; the certificate check's own words."""
    from connect_core.kafka.connection_failures import explain, server_certificate_problem

    sentence = explain(list(lines))
    if sentence and "cluster's certificate was not accepted" in sentence:
        detail = server_certificate_problem(servers, props)
        if detail:
            return f"TLS handshake failed: the cluster's certificate was not accepted: {detail}"
    return sentence


def prepare(config_path: Path, clusters: list[str] | None) -> tuple[MirrorMakerConfig, list[SourceAndTarget]]:
    """Every pre-flight check of ``mm2 run``; returns the config and the pairs this node runs."""
    config, pairs = check_file(config_path, clusters)
    involved = [a for p in pairs for a in (p.source, p.target)]
    check_reachable(config, involved)
    return config, pairs


def check_file(config_path: Path, clusters: list[str] | None) -> tuple[MirrorMakerConfig, list[SourceAndTarget]]:
    """The pre-flight checks that touch no cluster (also what a reload's file must pass)."""
    config = load_mm2_config(config_path, clusters)
    pairs = config.herder_pairs(clusters or None)
    check_connector_configs(config, pairs)
    from mirror.jobs.verify.schedule import check_settings

    check_settings(config, pairs)
    for pair in pairs:  # worker configs resolve eagerly: an unresolvable reference fails now
        resolve_config_providers(config.worker_config(pair))
    if config.enable_internal_rest():  # listeners, TLS stores, credentials: read now, before any cluster
        from connect_core.rest.server import RestServerConfig

        RestServerConfig.from_props({k: str(v) for k, v in resolve_config_providers(config.raw).items()})
    return config, pairs


def start_metrics_server(port: int, metrics: Mm2Metrics) -> None:
    from mirror.cli.metrics_server import serve_metrics

    serve_metrics(port, metrics.registry)


class _Signals:
    """First SIGTERM/SIGINT asks for a graceful stop; a second one exits at once. SIGHUP asks for a reload."""

    def __init__(self) -> None:
        self.stop = StopRequest()  # set from the handler: no lock may be taken there
        self.reload = ReloadRequest()
        self._previous: dict[int, Any] = {}

    def install_reload(self) -> None:
        """Before the file is first read: a SIGHUP from then on is a reload served once mm2 runs, never an exit."""
        self._previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, lambda _s, _f: self.reload.set())

    def install(self) -> None:
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)

    def restore(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self.stop.close()

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.stop.is_set():
            sys.stderr.write("mm2: second signal, exiting without waiting\n")
            sys.stderr.flush()
            os._exit(130)
        log.info("Received %s, stopping", signal.Signals(signum).name)
        self.stop.set()


def run(
    config_path: Path,
    clusters: list[str] | None,
    metrics_port: int | None,
    herder: str | None = None,
    watch_config: bool = False,
) -> None:
    """The whole ``mm2 run``; returns normally after a clean stop (exit 0)."""
    from mirror.driver.driver import MirrorMaker
    from mirror.driver.herder_factory import default_factory
    from mirror.driver.lease_store import LeaseWatcher

    signals = _Signals()
    signals.install_reload()
    watch = FileWatch(config_path) if watch_config else None  # the content prepare() is about to read
    config, pairs = prepare(config_path, clusters)
    metrics = Mm2Metrics()
    signals.install()
    if metrics_port is not None:
        start_metrics_server(metrics_port, metrics)
    driver = MirrorMaker(
        config, default_factory(herder), clusters=clusters or None, metrics=metrics, leases=LeaseWatcher
    )
    from mirror.jobs.verify.schedule import ScheduledVerification

    verification = _Verification(ScheduledVerification, config, pairs, metrics)
    log.info("Running %d flow(s): %s", len(pairs), ", ".join(map(str, pairs)))
    try:
        driver.start(interrupted=signals.stop.is_set)
        verification.start()
    except ConnectError as e:
        verification.stop()
        driver.stop(STOP_TIMEOUT_S)
        raise StartupError(" ".join(str(e).split()) or type(e).__name__) from e
    except BaseException:
        verification.stop()
        driver.stop(STOP_TIMEOUT_S)
        raise
    reloader = Reloader(
        config_path,
        clusters,
        driver,
        check_file,
        check_reachable,
        on_applied=lambda plan: verification.follow(plan.config, driver.pairs),
    )
    if watch is not None:
        log.info("Watching %s for changes (every %gs)", config_path, WATCH_INTERVAL_S)
    while not signals.stop.wait(0.5):
        if signals.reload.take():
            if watch is not None:
                watch.seen()
            _reload(reloader, "SIGHUP")
        elif watch is not None and watch.changed():
            _reload(reloader, "the file changed")
    verification.stop()
    clean = driver.stop(STOP_TIMEOUT_S)
    signals.restore()
    _exit_watchdog(0 if clean else 1)
    if not clean:
        raise StartupError(f"herders did not stop within {STOP_TIMEOUT_S:g}s")


def _reload(reloader: Reloader, why: str) -> None:
    try:
        reloader.reload(why)
    except Exception as e:  # a flow that would not start: said once; mm2 keeps running what it runs
        log.error("Reload failed part way: %s", one_line(e))


class _Verification:
    """The scheduled verification of the running flows, rebuilt when a reload changes its flows or settings."""

    def __init__(
        self,
        make: Callable[[MirrorMakerConfig, list[SourceAndTarget], Mm2Metrics], Any],
        config: MirrorMakerConfig,
        pairs: list[SourceAndTarget],
        metrics: Mm2Metrics,
    ) -> None:
        self._make, self._metrics = make, metrics
        self._key = self._settings(config, pairs)
        self._current = make(config, pairs, metrics)

    @staticmethod
    def _settings(config: MirrorMakerConfig, pairs: list[SourceAndTarget]) -> list[Any]:
        from mirror.jobs.verify.schedule import verify_settings

        return [(p, verify_settings(config, p)) for p in pairs if config.flow_enabled(p)]

    def start(self) -> None:
        self._current.start()

    def stop(self) -> None:
        self._current.stop()

    def follow(self, config: MirrorMakerConfig, pairs: list[SourceAndTarget]) -> None:
        key = self._settings(config, pairs)
        if key == self._key:
            return
        self._current.stop()
        self._key = key
        self._current = self._make(config, pairs, self._metrics)
        self._current.start()


def _exit_watchdog(code: int, grace_s: float = 10.0) -> None:
    """A client thread that never ends must not keep a stopped mm2 alive."""
    timer = threading.Timer(grace_s, lambda: os._exit(code))
    timer.daemon = True
    timer.start()


def worker_props_for(config: MirrorMakerConfig, pair: SourceAndTarget) -> Mapping[str, Any]:
    """Resolved worker config of a flow (what its herder gets); for `mm2 status` and tests."""
    return resolve_config_providers(config.worker_config(pair))
