"""``mm2 connect standalone WORKER.properties [CONNECTOR.properties|.json ...]`` (connect-standalone.sh).

Order as in Java's ``ConnectStandalone``: load the worker properties, bind the REST server (its
advertised URL names the worker, ``host:port``), build and start the StandaloneHerder, open the
REST API on it, create the connectors named on the command line, then run until SIGTERM/SIGINT
and stop cleanly (exit 0). Unlike Java, every connector file is parsed *before* anything starts,
so a typo in the third file does not leave the first two half-created.

Connector files are read as Java does, trying in turn: a JSON object of string values (a flat
config with a ``name`` key), a JSON ``{"name", "config", "initial_state"}`` create request,
then a Java properties file.

``--metrics-port P`` serves Prometheus metrics at ``http://0.0.0.0:P/metrics`` (both modes): connector
and task states, failures, restarts, offset commits, and Connect's sink-task metrics of every sink
task (``mm2_sink_*``), with empty ``source``/``target`` labels (there is no mirror flow here).
"""

from __future__ import annotations

import json
import logging
import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import FrameType
from typing import Any

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.config.properties import load_properties
from connect_core.herder.api import BuiltHerder
from connect_core.herder.standalone import build_standalone_herder
from connect_core.model import TargetState
from connect_core.rest.entities import create_connector_request, string_map
from connect_core.rest.resources import RestApp, RestSettings
from connect_core.rest.server import RestServer
from connect_core.runtime.metric_hooks import RuntimeMetrics
from mirror.cli.errors import StartupError, UsageError

log = logging.getLogger(__name__)

NAME_CONFIG = "name"


@dataclass(frozen=True)
class ConnectorRequest:
    """One connector to create at startup."""

    source: str  # the file it came from, for messages
    name: str
    config: dict[str, str]
    initial_state: TargetState | None = None


def _missing_name(path: str) -> UsageError:
    return UsageError(f"Connector configuration at '{path}' is missing the mandatory '{NAME_CONFIG}' configuration")


def _only_strings(path: str, config: Mapping[str, str | None]) -> dict[str, str]:
    nulls = sorted(k for k, v in config.items() if v is None)
    if nulls:
        raise UsageError(f"Connector configuration at '{path}' has null values for: {', '.join(nulls)}")
    return {k: v for k, v in config.items() if v is not None}


def parse_connector_file(path: str | Path) -> ConnectorRequest:
    """A connector config file as ConnectStandalone reads it (see the module docstring)."""
    shown = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"connector config file not found: {shown}") from None
    except IsADirectoryError:
        raise UsageError(f"connector config file is not a file: {shown}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"connector config file {shown} is not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        value: Any = json.loads(text)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict):
        # 1. a flat map of string values
        try:
            flat = string_map(value)
        except ConnectError:
            flat = None
        if flat is not None:
            if flat.get(NAME_CONFIG) is None:
                raise _missing_name(shown)
            return ConnectorRequest(shown, str(flat[NAME_CONFIG]), _only_strings(shown, flat))
        # 2. a create request; unknown top-level fields are ignored here, as Java does
        known = {k: v for k, v in value.items() if k in ("name", "config", "initial_state")}
        try:
            name, config, state = create_connector_request(known)
        except ConnectError as e:
            raise UsageError(f"Connector configuration at '{shown}' is not valid: {e}") from None
        if config is None:
            raise UsageError(f"Connector configuration at '{shown}' has a 'name' but no 'config' object")
        if NAME_CONFIG in config:
            if config[NAME_CONFIG] != name:
                raise UsageError(
                    f"Connector name configuration in 'config' doesn't match the one specified in 'name' at '{shown}'"
                )
        else:
            if name is None:
                raise _missing_name(shown)
            config[NAME_CONFIG] = name
        return ConnectorRequest(shown, str(config[NAME_CONFIG]), _only_strings(shown, config), state)
    if value is not None and not isinstance(value, str | int | float | bool):
        raise UsageError(f"Connector configuration at '{shown}' must be a JSON object, not {type(value).__name__}")
    # 3. Java properties
    props = load_properties(path)
    if NAME_CONFIG not in props:
        raise _missing_name(shown)
    return ConnectorRequest(shown, props[NAME_CONFIG], props)


#: Builds the (not yet started) herder from the worker properties and this worker's id (``host:port``
#: of the REST server's advertised URL, as Java's ConnectStandalone names a standalone worker).
HerderBuilder = Callable[[dict[str, str], str], BuiltHerder]


def build_herder(
    worker_props: dict[str, str], worker_id: str, runtime_metrics: RuntimeMetrics | None = None
) -> BuiltHerder:
    """The runtime's standalone herder (file offsets, memory config/status), not started yet."""
    return build_standalone_herder(worker_props, worker_id=worker_id, runtime_metrics=runtime_metrics)


def start_connect_metrics(port: int | None) -> tuple[Any, Callable[[], None]]:
    """``--metrics-port``: the runtime's metric hooks on a fresh registry, served on ``port``, and what
    stops the server; (None, no-op) without a port."""
    if port is None:
        return None, lambda: None
    from mirror.cli.metrics_server import serve_metrics
    from mirror.driver.metrics import Mm2Metrics
    from mirror.driver.metrics_bindings import RuntimeMetrics as PrometheusRuntimeMetrics

    metrics = Mm2Metrics()
    stop = serve_metrics(port, metrics.registry)
    return PrometheusRuntimeMetrics(metrics), stop


class StandaloneWorker:
    """The running pieces of ``connect standalone``; usable in-process by tests."""

    def __init__(self, worker_props: dict[str, str], herder_builder: HerderBuilder = build_herder) -> None:
        self.worker_props = worker_props
        self._herder_builder = herder_builder
        self.rest = RestServer.from_props(worker_props)
        self.settings = RestSettings.from_props(worker_props)
        self.herder: BuiltHerder | None = None

    def start(self) -> None:
        try:
            self.rest.start()
        except ConnectError as e:
            raise StartupError(str(e)) from e
        try:
            self.herder = self._herder_builder(self.worker_props, self.rest.worker_id())
            self.herder.start()
        except BaseException as e:
            self.stop()
            if isinstance(e, ConnectError) and not isinstance(e, ConfigError):
                # e.g. the cluster is unreachable: Java's "Failed to start Connect" (exit 3)
                raise StartupError(str(e)) from e
            raise
        self.rest.attach(RestApp.for_herder(self.herder, self.settings))
        log.info("Kafka Connect standalone worker started; REST API at %s", self.rest.advertised_url())

    def create(self, request: ConnectorRequest) -> None:
        if self.herder is None:
            raise StartupError(f"Failed to create connector for {request.source}: the worker has not started")
        try:
            _, info = self.herder.put_connector_config(request.name, request.config, False, request.initial_state)
        except ConnectError as e:
            raise StartupError(f"Failed to create connector for {request.source}: {e}") from e
        log.info("Created connector %s", info.name)

    def stop(self) -> None:
        try:
            self.rest.stop()
        finally:
            if self.herder is not None:
                self.herder.stop()
                self.herder = None


def _validate_worker_config(worker_props: dict[str, str]) -> None:
    """Every worker-config mistake at once, before a port is bound or a client is created."""
    from connect_core.runtime.worker_config import StandaloneConfig

    StandaloneConfig(dict(worker_props))
    RestServer.from_props(worker_props)
    RestSettings.from_props(worker_props)


def run_standalone(
    worker_config: Path,
    connector_configs: list[Path],
    *,
    stop: threading.Event | None = None,
    metrics_port: int | None = None,
) -> None:
    """The command body; returns after a clean stop (SIGTERM/SIGINT or ``stop`` set)."""
    worker_props = load_properties(worker_config)
    _validate_worker_config(worker_props)
    requests = [parse_connector_file(p) for p in connector_configs]
    runtime_metrics, stop_metrics = start_connect_metrics(metrics_port)
    stop = stop or threading.Event()
    previous = _install_signal_handlers(stop)
    worker = StandaloneWorker(worker_props, partial(build_herder, runtime_metrics=runtime_metrics))
    try:
        worker.start()
        for request in requests:
            worker.create(request)
        stop.wait()
        log.info("Kafka Connect stopping")
    finally:
        worker.stop()
        stop_metrics()
        _restore_signal_handlers(previous)
    log.info("Kafka Connect stopped")


_Handler = Callable[[int, FrameType | None], Any] | int | None


def _install_signal_handlers(stop: threading.Event) -> dict[int, _Handler]:
    previous: dict[int, _Handler] = {}
    if threading.current_thread() is not threading.main_thread():
        return previous

    def handler(signum: int, frame: FrameType | None) -> None:
        log.info("Received signal %s, shutting down", signal.Signals(signum).name)
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        previous[sig] = signal.signal(sig, handler)
    return previous


def _restore_signal_handlers(previous: dict[int, _Handler]) -> None:
    for sig, old in previous.items():
        signal.signal(sig, old)
