"""Loopback port helpers (no Kafka client here).

Brokers are started on ports chosen at run time so that parallel test runs and several helpers on one
machine never collide; an explicitly requested port is checked before the broker is spawned so that
"port taken" is reported as such instead of as a broker that never answers.
"""

from __future__ import annotations

import socket

LOOPBACK = "127.0.0.1"


def free_port(host: str = LOOPBACK) -> int:
    """A port that was free on ``host`` a moment ago (the OS picks it; bind-then-release)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


def port_is_free(port: int, host: str = LOOPBACK) -> bool:
    """True when a listener could bind ``host:port`` now.

    SO_REUSEADDR is deliberately NOT set: we want the same answer the broker's own bind would get
    (a port held by a listener, or in use by any socket, is reported as taken).
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
        return True


def accepts_connections(port: int, host: str = LOOPBACK, timeout: float = 0.2) -> bool:
    """True when something accepts TCP connections on ``host:port``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False
