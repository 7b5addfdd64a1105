"""``mm2 connect distributed WORKER.properties`` (connect-distributed.sh).

Order as Java's ``ConnectDistributed``: load and check the worker properties (every bad or
missing key in one message, before anything starts), bind the REST server (its advertised URL
names the worker and is what other workers forward to), build and start the DistributedHerder,
open the REST API with the internal endpoints, then run until SIGTERM/SIGINT. ``--metrics-port`` serves
Prometheus metrics as in ``mm2 connect standalone`` (rebalances of the worker's group too). Stopping stops this
worker's connectors and tasks, flushes statuses and leaves the group at once, so the remaining
workers rebalance without waiting for a session timeout; exit status 0.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.config.properties import load_properties
from connect_core.rest.resources import RestApp, RestSettings
from connect_core.rest.server import RestServer
from mirror.cli.connect_cmd import _install_signal_handlers, _restore_signal_handlers, start_connect_metrics
from mirror.cli.errors import StartupError, UsageError

log = logging.getLogger(__name__)

STARTUP_TIMEOUT_S = 120.0


class DistributedWorker:
    """The running pieces of ``connect distributed``; usable in-process by tests."""

    def __init__(self, worker_props: dict[str, str], runtime_metrics: Any = None) -> None:
        from connect_core.runtime.distributed_config import DistributedConfig

        try:
            DistributedConfig(worker_props).check_supported()
        except ConfigError as e:
            raise UsageError(f"Invalid worker configuration: {e}") from None
        self.worker_props = worker_props
        self.rest = RestServer.from_props(worker_props)
        self.settings = RestSettings.from_props(worker_props)
        self.herder: Any = None
        self.runtime_metrics = runtime_metrics  # mirror.driver.metrics_bindings.RuntimeMetrics, or None

    def start(self) -> None:
        from connect_core.herder.distributed.builder import build_distributed_herder
        from connect_core.rest.internal_endpoints import install_internal_routes

        try:
            self.rest.start()
        except ConnectError as e:
            raise StartupError(str(e)) from e
        try:
            client = self.rest.rest_client()  # https peers verified with this worker's truststore
            self.herder = build_distributed_herder(
                self.worker_props,
                worker_id=self.rest.worker_id(),
                advertised_url=self.rest.advertised_url(),
                task_config_forwarder=client.post_task_configs,
                fence_forwarder=client.put_fence,
                runtime_metrics=self.runtime_metrics,
            )
            app = install_internal_routes(RestApp.for_herder(self.herder, self.settings, forwarder=client.forward))
            self.rest.attach(app)
            self.herder.start(timeout_s=STARTUP_TIMEOUT_S)
        except BaseException:
            self.stop()
            raise
        log.info("Kafka Connect distributed worker started; REST API at %s", self.rest.advertised_url())

    def stop(self) -> None:
        try:
            if self.herder is not None:
                self.herder.stop()  # leave the group first: the others rebalance right away
                self.herder = None
        finally:
            self.rest.stop()


def run_distributed(
    worker_config: Path, *, stop: threading.Event | None = None, metrics_port: int | None = None
) -> None:
    """The command body; returns after a clean stop (SIGTERM/SIGINT or ``stop`` set)."""
    worker_props = load_properties(worker_config)
    stop = stop or threading.Event()
    previous = _install_signal_handlers(stop)
    stop_metrics = None
    try:
        worker = DistributedWorker(worker_props)  # checks the worker config before the port is bound
        worker.runtime_metrics, stop_metrics = start_connect_metrics(metrics_port)
        try:
            worker.start()
            stop.wait()
            log.info("Kafka Connect stopping")
        finally:
            worker.stop()
    finally:
        if stop_metrics is not None:
            stop_metrics()
        _restore_signal_handlers(previous)
    log.info("Kafka Connect stopped")
