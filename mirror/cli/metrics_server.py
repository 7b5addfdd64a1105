"""The Prometheus endpoint of a long-running command (``mm2 run``, ``mm2 connect ... --metrics-port``).

One place for the bind and its one-line failure: a port in use is a user's mistake, not a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from prometheus_client import CollectorRegistry, start_http_server

from mirror.cli.errors import StartupError

log = logging.getLogger(__name__)


def serve_metrics(port: int, registry: CollectorRegistry) -> Callable[[], None]:
    """Serve ``registry`` at ``http://0.0.0.0:port/metrics``; returns what stops the server."""
    try:
        server, thread = start_http_server(port, registry=registry)
    except OSError as e:
        raise StartupError(f"cannot serve metrics on port {port}: {e.strerror or e}") from e
    log.info("Prometheus metrics at http://0.0.0.0:%d/metrics", port)

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join(5)

    return stop
