"""REST request rate: the legacy stdlib ThreadingHTTPServer shell vs uvicorn + Starlette, same run.

Both servers front the same :class:`RestApp` over an in-memory herder (so the figures measure the
HTTP layer, not a herder), on 127.0.0.1 with an ephemeral port. A few client processes loop over
``GET /connectors/{c}/status`` and ``PUT /connectors/{c}/config`` round trips for a fixed time, each
either on its own keep-alive connection or on a new connection per request (what urllib and
``requests`` without a session do); every answer's status is checked. Prints one ``name: value``
line per figure and the new/old ratios::

    python -m bench.rest_request_rate                  # 4 clients, 3 s per case
    python -m bench.rest_request_rate --clients 8 --seconds 5
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol

from bench.legacy_stdlib_rest_server import RestServer as LegacyRestServer
from connect_core.api.errors import NotFoundError
from connect_core.model import AbstractStatus, ConnectorInfo, ConnectorStateInfo, ConnectorTaskId, State
from connect_core.rest.resources import RestApp
from connect_core.rest.server import RestServer

CONNECTORS = 16
CLASS = "org.apache.kafka.connect.file.FileStreamSourceConnector"


class MemoryHerder:
    """Just what the two measured endpoints call, thread-safe, no I/O."""

    def __init__(self) -> None:
        self._configs: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()

    def _info(self, name: str, config: dict[str, str]) -> ConnectorInfo:
        return ConnectorInfo(name, dict(config), [ConnectorTaskId(name, 0)], "source")

    def connector_config(self, name: str) -> dict[str, str]:
        with self._lock:
            if name not in self._configs:
                raise NotFoundError(f"Connector {name} not found")
            return dict(self._configs[name])

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: Any = None
    ) -> tuple[bool, ConnectorInfo]:
        with self._lock:
            created = name not in self._configs
            self._configs[name] = dict(config)
        return created, self._info(name, config)

    def connector_status(self, name: str) -> ConnectorStateInfo:
        with self._lock:
            if name not in self._configs:
                raise NotFoundError(f"No status found for connector {name}")
        running = AbstractStatus(State.RUNNING, "bench:8083")
        return ConnectorStateInfo(name, running, {0: running}, "source")


class Server(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...
    def attach(self, app: RestApp) -> None: ...
    def bound_port(self, index: int = 0) -> int: ...


def _config(name: str, i: int) -> dict[str, str]:
    return {"connector.class": CLASS, "tasks.max": "1", "file": f"/tmp/{name}", "topic": "t", "batch.size": str(i)}


def _client(port: int, kind: str, fresh: bool, worker: int, start_at: float, seconds: float) -> tuple[int, str]:
    """One client (in its own process): round trips from ``start_at`` (wall clock) for ``seconds``."""
    time.sleep(max(0.0, start_at - time.time()))
    deadline = time.monotonic() + seconds
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    n = 0
    try:
        while time.monotonic() < deadline:
            if fresh:
                conn.close()
            name = f"c{(worker + n) % CONNECTORS}"
            if kind == "get_status":
                conn.request("GET", f"/connectors/{name}/status")
            else:
                conn.request("PUT", f"/connectors/{name}/config", body=json.dumps(_config(name, n)).encode(),
                             headers={"Content-Type": "application/json"})
            resp = conn.getresponse()
            resp.read()
            if resp.status != 200:
                return n, f"{kind} {name}: HTTP {resp.status}"
            n += 1
    except Exception as e:
        return n, f"{kind}: {e}"
    finally:
        conn.close()
    return n, ""


def _warm_up(seconds: float) -> None:
    """Held by each pool process in turn, so every one is started and has this module imported."""
    time.sleep(seconds)


def measure(make: Callable[[], Server], kind: str, fresh: bool, pool: ProcessPoolExecutor, clients: int,
            seconds: float) -> float:
    """Requests per second of ``kind`` on a fresh server, its clients in other processes as real ones are
    (client threads in the server's process would measure their share of its GIL too)."""
    server = make()
    server.start()
    try:
        herder = MemoryHerder()
        for i in range(CONNECTORS):
            herder.put_connector_config(f"c{i}", _config(f"c{i}", 0), True)
        server.attach(RestApp.for_herder(herder))
        port = server.bound_port()
        start_at = time.time() + 0.2  # every client process ready before the first request
        done = list(pool.map(_client, *zip(*[(port, kind, fresh, w, start_at, seconds) for w in range(clients)],
                                           strict=True)))
        errors = [error for _, error in done if error]
        if errors:
            raise RuntimeError(f"requests failed: {errors[:3]}")
        return sum(n for n, _ in done) / seconds
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--clients", type=int, default=4, help="client processes (default 4)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per case (default 3)")
    args = parser.parse_args(argv)
    props = {"listeners": "http://127.0.0.1:0"}
    servers: dict[str, Callable[[], Server]] = {
        "legacy_stdlib": lambda: LegacyRestServer.from_props(props),
        "uvicorn_starlette": lambda: RestServer.from_props(props),
    }
    print(f"clients: {args.clients}")
    with ProcessPoolExecutor(args.clients, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_warm_up, [0.5] * args.clients))
        for connection, fresh in (("keepalive", False), ("fresh", True)):
            for kind in ("get_status", "put_config"):
                case = f"{kind}_{connection}"
                rates = {name: measure(make, kind, fresh, pool, args.clients, args.seconds)
                         for name, make in servers.items()}
                for name, rate in rates.items():
                    print(f"{name}_{case}_req_per_s: {rate:.0f}")
                print(f"ratio_{case}_new_over_old: {rates['uvicorn_starlette'] / rates['legacy_stdlib']:.2f}")


if __name__ == "__main__":
    main()
