"""REST request rate: the worker's REST server against a bare uvicorn server, same run.

The worker's server fronts :class:`RestApp` over an in-memory herder (so the figures measure the REST
layer, not a herder); the yardstick is uvicorn with an ASGI app that answers every request with a fixed
body after draining the request (the HTTP layer's ceiling on this machine). Both on 127.0.0.1, ephemeral
ports. A few client processes loop over ``GET /connectors/{c}/status`` and ``PUT /connectors/{c}/config``
round trips for a fixed time, each either on its own keep-alive connection or on a new connection per
request (what urllib and ``requests`` without a session do); every answer's status is checked. Prints one
``name: value`` line per figure and the ratios to the bare server::

    python -m bench.rest_request_rate                  # 4 clients, 3 s per case
    python -m bench.rest_request_rate --clients 8 --seconds 5
"""

from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import multiprocessing
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol

import uvicorn

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


class BareServer:
    """uvicorn and an ASGI app that drains the request and answers 200 with a fixed body: no routing, no JSON."""

    _BODY = b'{"ok":true}'

    def __init__(self) -> None:
        # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so (as the worker's server does)
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self._sock.bind(("127.0.0.1", 0))
        self._server = uvicorn.Server(
            uvicorn.Config(
                self._app, http="h11", lifespan="off", ws="none", interface="asgi3", log_config=None, access_log=False
            )
        )
        self._thread = threading.Thread(
            target=lambda: asyncio.run(self._server.serve(sockets=[self._sock])), daemon=True
        )

    async def _app(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        more = True
        while more:
            more = (await receive()).get("more_body", False)
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(self._BODY)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": self._BODY})

    def start(self) -> None:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("the bare uvicorn server did not start in 10 s")
            time.sleep(0.01)

    def stop(self) -> None:
        self._server.should_exit = True
        self._thread.join(10)
        self._sock.close()

    def attach(self, app: RestApp) -> None:
        """The bare server answers without an app."""

    def bound_port(self, index: int = 0) -> int:
        return int(self._sock.getsockname()[1])


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
                conn.request(
                    "PUT",
                    f"/connectors/{name}/config",
                    body=json.dumps(_config(name, n)).encode(),
                    headers={"Content-Type": "application/json"},
                )
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


def measure(
    make: Callable[[], Server], kind: str, fresh: bool, pool: ProcessPoolExecutor, clients: int, seconds: float
) -> float:
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
        done = list(
            pool.map(_client, *zip(*[(port, kind, fresh, w, start_at, seconds) for w in range(clients)], strict=True))
        )
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
        "bare_uvicorn": BareServer,
        "worker_rest": lambda: RestServer.from_props(props),
    }
    print(f"clients: {args.clients}")
    with ProcessPoolExecutor(args.clients, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_warm_up, [0.5] * args.clients))
        for connection, fresh in (("keepalive", False), ("fresh", True)):
            for kind in ("get_status", "put_config"):
                case = f"{kind}_{connection}"
                rates = {
                    name: measure(make, kind, fresh, pool, args.clients, args.seconds) for name, make in servers.items()
                }
                for name, rate in rates.items():
                    print(f"{name}_{case}_req_per_s: {rate:.0f}")
                print(f"ratio_{case}_worker_over_bare: {rates['worker_rest'] / rates['bare_uvicorn']:.2f}")


if __name__ == "__main__":
    main()
