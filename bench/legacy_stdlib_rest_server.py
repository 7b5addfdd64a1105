"""The HTTP shell around :class:`~connect_core.rest.resources.RestApp`: stdlib ``ThreadingHTTPServer``.

Binding follows Java's ``RestServer``: ``listeners`` (default ``http://:8083``) is a list of
``protocol://host:port``; an empty host binds every interface, port 0 an ephemeral port. The
advertised URL (``rest.advertised.host.name``/``.port``/``.listener``, else the listener's host
or this machine's address, and the bound port) ends in ``/`` like Java's and gives the worker id
``host:port``. The server binds before the herder exists (Connect needs the advertised URL to
name the worker) and answers 503 until :meth:`RestServer.attach` hands it the app.
"""

from __future__ import annotations

import json
import logging
import re
import socket
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.rest.errors import error_body
from connect_core.rest.resources import Response, RestApp

log = logging.getLogger(__name__)

DEFAULT_LISTENERS = "http://:8083"
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")
_MAX_BODY = 64 * 1024 * 1024


@dataclass(frozen=True)
class Listener:
    protocol: str
    host: str  # "" = every interface
    port: int  # 0 = ephemeral

    @classmethod
    def parse(cls, text: str) -> Listener:
        m = _LISTENER.match(text.strip())
        if not m:
            raise ConfigError(
                f"Listener doesn't have the right format (protocol://hostname:port): {text!r}", key="listeners"
            )
        protocol = m.group(1).lower()
        if protocol not in ("http", "https"):
            raise ConfigError('Listener protocol must be either "http" or "https".', key="listeners")
        if protocol == "https":
            raise ConfigError(
                f"https listeners are not supported by mm2 yet ({text.strip()}); use http behind a TLS proxy",
                key="listeners",
            )
        port = int(m.group(3))
        if not 0 <= port <= 65535:
            raise ConfigError(f"Listener port out of range: {text.strip()}", key="listeners")
        return cls(protocol, m.group(2), port)


@dataclass(frozen=True)
class RestServerConfig:
    """The REST keys of a worker (or MirrorMaker) config."""

    listeners: tuple[Listener, ...]
    advertised_host: str | None = None
    advertised_port: int | None = None
    advertised_listener: str | None = None

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> RestServerConfig:
        raw = props.get("listeners")
        if raw is None or not raw.strip():
            raw = DEFAULT_LISTENERS
        listeners = tuple(Listener.parse(item) for item in raw.split(",") if item.strip())
        if not listeners:
            raise ConfigError("listeners must name at least one listener", key="listeners")
        port_text = (props.get("rest.advertised.port") or "").strip()
        port: int | None = None
        if port_text:
            try:
                port = int(port_text)
            except ValueError:
                raise ConfigError(
                    f"Invalid value {port_text} for configuration rest.advertised.port: Not a number of type INT",
                    key="rest.advertised.port",
                ) from None
        adv_listener = (props.get("rest.advertised.listener") or "").strip().lower() or None
        if adv_listener not in (None, "http", "https"):
            raise ConfigError(
                f"Invalid value {adv_listener} for configuration rest.advertised.listener: "
                "String must be one of: http, https",
                key="rest.advertised.listener",
            )
        return cls(
            listeners=listeners,
            advertised_host=(props.get("rest.advertised.host.name") or "").strip() or None,
            advertised_port=port,
            advertised_listener=adv_listener,
        )


def _local_address() -> str:
    """What Jetty reports for a wildcard listener: this host's address."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _format_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def urllib_forwarder(
    url: str, method: str, body: bytes | None, headers: Mapping[str, str], timeout: float = 90.0
) -> tuple[int, bytes, Mapping[str, str]]:
    """Forward a request to another worker; its error answers pass through unchanged."""
    req = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return resp.status, resp.read(), dict(resp.headers.items())
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers.items()) if e.headers else {}
    except OSError as e:
        msg = f"IO Error trying to forward REST request: {e}"
        return 500, json.dumps(error_body(500, msg)).encode(), {}


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mm2-connect"
    disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall
    rest: RestServer  # set on the per-server subclass

    def _serve(self) -> None:
        split = urlsplit(self.path)
        query = parse_qs(split.query, keep_blank_values=True)
        body = self._read_body()
        if body is None:
            self._send(Response(400, error_body(400, "Invalid request body length")), close=True)
            return
        app = self.rest.app
        if app is None:
            response = Response(503, error_body(503, "Worker is still starting up."))
        else:
            host = self.headers.get("Host") or self.rest.advertised_url().split("://", 1)[1].rstrip("/")
            response = app.handle(
                self.command, split.path, query, body, {k: v for k, v in self.headers.items()}, f"http://{host}"
            )
        self._send(response)
        log.debug('"%s %s" %d', self.command, self.path, response.status)

    def _read_body(self) -> bytes | None:
        """The request entity (Content-Length or chunked); None when its framing is invalid."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks: list[bytes] = []
            total = 0
            while True:
                line = self.rfile.readline(1024)
                try:
                    size = int(line.split(b";", 1)[0].strip() or b"x", 16)
                except ValueError:
                    return None
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                total += size
                if total > _MAX_BODY:
                    return None
                chunks.append(self.rfile.read(size))
                self.rfile.readline(1024)
        length_text = self.headers.get("Content-Length")
        try:
            length = int(length_text) if length_text else 0
        except ValueError:
            return None
        if length < 0 or length > _MAX_BODY:
            return None
        return self.rfile.read(length) if length else b""

    def _send(self, response: Response, close: bool = False) -> None:
        payload = response.encoded()
        self.send_response(response.status)
        for k, v in response.headers.items():
            self.send_header(k, v)
        if payload or response.status >= 400 or response.status == 200:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        if close:
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        if payload and self.command != "HEAD":
            self.wfile.write(payload)

    do_GET = _serve
    do_POST = _serve
    do_PUT = _serve
    do_PATCH = _serve
    do_DELETE = _serve
    do_HEAD = _serve
    do_OPTIONS = _serve

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s - %s", self.address_string(), format % args)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that hangs up mid-response is not worth a traceback on stderr.
        log.debug("REST connection from %s failed", client_address, exc_info=True)


class RestServer:
    """One HTTP server per listener, each served by a background thread."""

    def __init__(self, config: RestServerConfig, app: RestApp | None = None) -> None:
        self.config = config
        self.app = app
        self._servers: list[tuple[Listener, _Server]] = []
        self._threads: list[threading.Thread] = []

    @classmethod
    def from_props(cls, props: Mapping[str, str], app: RestApp | None = None) -> RestServer:
        return cls(RestServerConfig.from_props(props), app)

    def attach(self, app: RestApp) -> None:
        """Start serving the API (requests before this get 503)."""
        self.app = app

    def start(self) -> None:
        """Bind every listener; raises ConnectError naming the listener when a port is taken."""
        handler_cls = type("BoundHandler", (_Handler,), {"rest": self})
        try:
            for listener in self.config.listeners:
                family = socket.AF_INET6 if ":" in listener.host else socket.AF_INET
                server_cls = type("BoundServer", (_Server,), {"address_family": family})
                try:
                    server = server_cls((listener.host, listener.port), handler_cls)
                except OSError as e:
                    raise ConnectError(
                        f"Unable to bind REST listener {listener.protocol}://{_format_host(listener.host)}:"
                        f"{listener.port}: {e.strerror or e}"
                    ) from e
                self._servers.append((listener, server))
        except BaseException:
            self.stop()
            raise
        for listener, server in self._servers:
            t = threading.Thread(
                target=server.serve_forever, kwargs={"poll_interval": 0.2},
                name=f"rest-{listener.host or '*'}:{server.server_address[1]}", daemon=True,
            )
            t.start()
            self._threads.append(t)
        log.info("REST server listening at %s, advertising URL %s", self.server_url(), self.advertised_url())

    def bound_port(self, index: int = 0) -> int:
        return int(self._servers[index][1].server_address[1])

    def server_url(self) -> str:
        listener, server = self._servers[0]
        host = listener.host or _local_address()
        return f"{listener.protocol}://{_format_host(host)}:{server.server_address[1]}/"

    def advertised_url(self) -> str:
        """Java's advertisedUrl(): configured host/port win, else the listener's, else the bound ones."""
        if not self._servers:
            raise ConnectError("REST server is not started")
        protocol = self.config.advertised_listener or "http"
        chosen = next(((lst, srv) for lst, srv in self._servers if lst.protocol == protocol), self._servers[0])
        listener, server = chosen
        host = self.config.advertised_host or listener.host or _local_address()
        if self.config.advertised_port is not None:
            port = self.config.advertised_port
        elif listener.port > 0:
            port = listener.port
        else:
            port = int(server.server_address[1])
        return f"{protocol}://{_format_host(host)}:{port}/"

    def worker_id(self) -> str:
        """``host:port`` of the advertised URL, the worker id Connect reports in statuses."""
        split = urlsplit(self.advertised_url())
        return f"{split.hostname}:{split.port}"

    def stop(self) -> None:
        if not self._servers:
            return
        serving = len(self._threads)
        for i, (_, server) in enumerate(self._servers):
            if i < serving:  # shutdown() waits for serve_forever, so only for started servers
                server.shutdown()
            server.server_close()
        for t in self._threads:
            t.join(timeout=5)
        self._servers.clear()
        self._threads.clear()
        log.info("REST server stopped")
