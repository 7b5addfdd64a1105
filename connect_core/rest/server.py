"""The HTTP shell around :class:`~connect_core.rest.resources.RestApp`: uvicorn serving a Starlette app.

Binding follows Java's ``RestServer``: ``listeners`` (default ``http://:8083``) is a list of
``protocol://host:port`` with protocol ``http`` or ``https``; an empty host binds every interface,
port 0 an ephemeral port. The advertised URL (``rest.advertised.host.name``/``.port``/``.listener``,
else the listener's host or this machine's address, and the bound port) ends in ``/`` like Java's
and gives the worker id ``host:port``. The server binds before the herder exists (Connect needs the
advertised URL to name the worker) and answers 503 until :meth:`RestServer.attach` hands it the app.

Each listener's socket is bound by :meth:`RestServer.start` itself and handed to a uvicorn server;
all of them run on one event loop in one background thread, and requests run on a thread pool
(herder calls block). TLS (:mod:`connect_core.rest.tls`) and authentication
(:mod:`connect_core.rest.auth`) come from the same worker properties.
"""

from __future__ import annotations

import asyncio
import logging
import re
import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import uvicorn

try:  # uvloop's event loop serves 10-15 % more requests (bench/README.md); the `fast` extra installs it
    import uvloop

    _new_event_loop: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
except ImportError:  # pragma: no cover - depends on the install
    _new_event_loop = asyncio.new_event_loop

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.rest.asgi import ConnectEndpoint, build_asgi_app
from connect_core.rest.auth import Authenticator, load_authenticator
from connect_core.rest.client import RestClient
from connect_core.rest.resources import RestApp
from connect_core.rest.tls import SslSettings

log = logging.getLogger(__name__)

DEFAULT_LISTENERS = "http://:8083"
_LISTENER = re.compile(r"^(.*)://\[?([0-9a-zA-Z\-%._:]*)\]?:(-?[0-9]+)$")
HANDLER_THREADS = 32  # concurrent herder calls; more requests wait for a free thread
START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 30  # Jetty's idle timeout

# uvicorn reports its start and stop at INFO under "uvicorn.error": that is ours to say, once.
for _name in ("uvicorn", "uvicorn.error"):
    if logging.getLogger(_name).level == logging.NOTSET:
        logging.getLogger(_name).setLevel(logging.WARNING)


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
    tls: SslSettings = field(default_factory=SslSettings)
    server_ssl_context: ssl.SSLContext | None = field(default=None, compare=False, repr=False)
    authenticator: Authenticator | None = field(default=None, compare=False)

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> RestServerConfig:
        """Parse and check every REST key: TLS stores are loaded and the credentials read now, so a
        mistake is one ConfigError before anything binds."""
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
        settings = SslSettings.from_props(props)
        context = settings.server_context() if any(lst.protocol == "https" for lst in listeners) else None
        return cls(
            listeners=listeners,
            advertised_host=(props.get("rest.advertised.host.name") or "").strip() or None,
            advertised_port=port,
            advertised_listener=adv_listener,
            tls=settings,
            server_ssl_context=context,
            authenticator=load_authenticator(props),
        )

    def advertised_protocol(self) -> str:
        """Java's choice: ``rest.advertised.listener``, else http if any listener is http, else https."""
        if self.advertised_listener is not None:
            return self.advertised_listener
        protocols = {lst.protocol for lst in self.listeners}
        return "http" if "http" in protocols or not protocols else "https"


def _local_address() -> str:
    """What Jetty reports for a wildcard listener: this host's address."""
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"


def _format_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _bind(listener: Listener) -> socket.socket:
    family = socket.AF_INET6 if ":" in listener.host else socket.AF_INET
    # proto=IPPROTO_TCP: asyncio sets TCP_NODELAY only on sockets that say so; without it a response
    # written in two parts (headers, body) waits for the client's delayed ACK (~40 ms per request).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((listener.host, listener.port))
        sock.listen(2048)
        sock.setblocking(False)
    except OSError as e:
        sock.close()
        raise ConnectError(
            f"Unable to bind REST listener {listener.protocol}://{_format_host(listener.host)}:"
            f"{listener.port}: {e.strerror or e}"
        ) from e
    return sock


class RestServer:
    """Every listener served by uvicorn on one background event loop; handlers on a thread pool."""

    def __init__(self, config: RestServerConfig, app: RestApp | None = None) -> None:
        self.config = config
        self.app = app
        self._bound: list[tuple[Listener, socket.socket, int]] = []
        self._servers: list[uvicorn.Server] = []
        self._thread: threading.Thread | None = None
        self._executor: ThreadPoolExecutor | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None

    @classmethod
    def from_props(cls, props: Mapping[str, str], app: RestApp | None = None) -> RestServer:
        return cls(RestServerConfig.from_props(props), app)

    def attach(self, app: RestApp) -> None:
        """Start serving the API (requests before this get 503)."""
        self.app = app

    def rest_client(self) -> RestClient:
        """A client for requests to other workers, with this worker's TLS settings."""
        return RestClient(self.config.tls)

    def start(self) -> None:
        """Bind every listener, then serve; raises ConnectError naming the listener when a port is taken."""
        try:
            for listener in self.config.listeners:
                sock = _bind(listener)
                self._bound.append((listener, sock, int(sock.getsockname()[1])))
        except BaseException:
            self.stop()
            raise
        self._executor = ThreadPoolExecutor(max_workers=HANDLER_THREADS, thread_name_prefix="rest-handler")
        endpoint = ConnectEndpoint(lambda: self.app, self._current_executor, self.config.authenticator)
        asgi = build_asgi_app(endpoint)
        self._servers = [uvicorn.Server(self._uvicorn_config(asgi, listener)) for listener, _, _ in self._bound]
        first = self._bound[0]
        self._thread = threading.Thread(target=self._run, name=f"rest-{first[0].host or '*'}:{first[2]}", daemon=True)
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S) or self._failure is not None:
            reason = self._failure or "it did not start in time"
            self.stop()
            raise ConnectError(f"REST server failed to start: {reason}")
        log.info("REST server listening at %s, advertising URL %s", self.server_url(), self.advertised_url())

    def _current_executor(self) -> ThreadPoolExecutor:
        if self._executor is None:
            raise ConnectError("REST server is stopped")
        return self._executor

    def _uvicorn_config(self, asgi: Callable[..., object], listener: Listener) -> uvicorn.Config:
        context = self.config.server_ssl_context if listener.protocol == "https" else None
        return uvicorn.Config(
            asgi,
            http="h11",  # httptools lower-cases header names; Java (and dict-reading clients) send "Location"
            loop="asyncio",
            lifespan="off",
            ws="none",
            interface="asgi3",
            log_config=None,
            access_log=False,
            proxy_headers=False,
            server_header=False,
            headers=[("Server", "mm2-connect")],
            timeout_keep_alive=KEEP_ALIVE_S,
            timeout_graceful_shutdown=int(STOP_TIMEOUT_S / 2),
            ssl_context_factory=None if context is None else (lambda _config, _default: context),
        )

    def _run(self) -> None:
        try:
            with asyncio.Runner(loop_factory=_new_event_loop) as runner:
                runner.run(self._serve_all())
        except BaseException as e:  # SystemExit from a uvicorn start-up failure included
            self._failure = e
            log.error("REST server stopped unexpectedly: %s", e)
        finally:
            self._ready.set()

    async def _serve_all(self) -> None:
        tasks = [
            asyncio.create_task(server.serve(sockets=[sock]))
            for server, (_, sock, _) in zip(self._servers, self._bound, strict=True)
        ]
        while not all(server.started for server in self._servers) and not any(t.done() for t in tasks):
            await asyncio.sleep(0.002)
        self._ready.set()
        await asyncio.gather(*tasks)

    def bound_port(self, index: int = 0) -> int:
        return self._bound[index][2]

    def server_url(self) -> str:
        listener, _, port = self._bound[0]
        host = listener.host or _local_address()
        return f"{listener.protocol}://{_format_host(host)}:{port}/"

    def advertised_url(self) -> str:
        """Java's advertisedUrl(): configured host/port win, else the listener's, else the bound ones."""
        if not self._bound:
            raise ConnectError("REST server is not started")
        protocol = self.config.advertised_protocol()
        listener, _, bound_port = next((b for b in self._bound if b[0].protocol == protocol), self._bound[0])
        host = self.config.advertised_host or listener.host or _local_address()
        if self.config.advertised_port is not None:
            port = self.config.advertised_port
        elif listener.port > 0:
            port = listener.port
        else:
            port = bound_port
        return f"{protocol}://{_format_host(host)}:{port}/"

    def worker_id(self) -> str:
        """``host:port`` of the advertised URL, the worker id Connect reports in statuses."""
        split = urlsplit(self.advertised_url())
        return f"{split.hostname}:{split.port}"

    def stop(self) -> None:
        """Stop accepting, finish the requests in flight (a few seconds at most), free every socket."""
        if not self._bound and self._thread is None:
            return
        for server in self._servers:
            server.should_exit = True
        if self._thread is not None:
            self._thread.join(STOP_TIMEOUT_S)
            if self._thread.is_alive():
                for server in self._servers:
                    server.force_exit = True
                self._thread.join(STOP_TIMEOUT_S)
        for _, sock, _ in self._bound:
            sock.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        self._bound.clear()
        self._servers.clear()
        self._thread = None
        self._executor = None
        self._ready.clear()
        self._failure = None
        log.info("REST server stopped")
