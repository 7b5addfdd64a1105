"""The ASGI application (Starlette) in front of :class:`~connect_core.rest.resources.RestApp`.

One catch-all endpoint hands every request to the pure router, which owns paths, methods, status
codes and error bodies; this layer only reads the body, authenticates, answers 503 until the app
is attached, and turns a :class:`Response` into HTTP. Herder calls block, so each request runs on
a worker thread of the server's pool and one slow call never holds up the others. The path is
taken percent-encoded (``raw_path``) because connector names may hold an encoded ``/``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import Response as HttpResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from connect_core.rest.auth import UNAUTHORIZED_MESSAGE, Authenticator, AuthRequest
from connect_core.rest.errors import RestError, error_body
from connect_core.rest.resources import Response, RestApp
from connect_core.rest.routes import split_path

log = logging.getLogger(__name__)

MAX_BODY_BYTES = 64 * 1024 * 1024
STARTING_MESSAGE = "Worker is still starting up."
BAD_LENGTH_MESSAGE = "Invalid request body length"
WWW_AUTHENTICATE = 'Basic realm="Kafka Connect", charset="UTF-8"'


@dataclass
class Exchange:
    """One request, decoded just enough for the router."""

    method: str
    raw_path: str
    query: dict[str, list[str]]
    body: bytes
    headers: dict[str, str]  # lower-case names, the last value of a repeated header
    host_url: str  # scheme://host[:port] the client used, for Location headers


def _is_internal(app: RestApp, method: str, raw_path: str) -> bool:
    """Whether the request goes to a worker-to-worker endpoint (they carry signatures instead)."""
    try:
        parts = split_path(raw_path)
        if len(parts) < app.selector.depth:
            return False
        return app.router.match(method, parts[app.selector.depth :]).route.internal
    except RestError:
        return False


def serve(exchange: Exchange, app: RestApp | None, authenticator: Authenticator | None) -> Response:
    """Authenticate and dispatch one request (runs on a worker thread; never raises)."""
    try:
        internal = app is not None and _is_internal(app, exchange.method, exchange.raw_path)
        if authenticator is not None and not internal:
            allowed = authenticator.authenticate(AuthRequest(exchange.method, exchange.raw_path, exchange.headers))
            if not allowed:
                log.debug("REST request %s %s failed authentication", exchange.method, exchange.raw_path)
                return Response(401, error_body(401, UNAUTHORIZED_MESSAGE), {"WWW-Authenticate": WWW_AUTHENTICATE})
    except Exception:
        log.exception("The REST authenticator failed; refusing the request")
        return Response(401, error_body(401, UNAUTHORIZED_MESSAGE), {"WWW-Authenticate": WWW_AUTHENTICATE})
    if app is None:
        return Response(503, error_body(503, STARTING_MESSAGE))
    return app.handle(
        exchange.method, exchange.raw_path, exchange.query, exchange.body, exchange.headers, exchange.host_url
    )


def to_http(response: Response, close: bool = False) -> HttpResponse:
    payload = response.encoded()
    headers = dict(response.headers)
    if payload or response.status >= 400 or response.status == 200:
        headers["Content-Type"] = "application/json"
    if response.status == 204:
        payload = b""
    headers["Content-Length"] = str(len(payload))
    if close:
        headers["Connection"] = "close"
    http = HttpResponse(payload, status_code=response.status)
    # Starlette lower-cases header names; Java (and clients reading a plain dict) see "Location" etc.
    http.raw_headers = [(k.encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]
    return http


class ConnectEndpoint:
    """The ASGI endpoint; ``app()``/``authenticator`` are read per request (attach happens later)."""

    def __init__(
        self,
        app: Callable[[], RestApp | None],
        executor: Callable[[], Executor],
        authenticator: Authenticator | None = None,
        max_body: int = MAX_BODY_BYTES,
    ) -> None:
        self._app = app
        self._executor = executor
        self.authenticator = authenticator
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = HttpRequest(scope, receive)
        body = await self._read_body(request)
        if body is None:
            await to_http(Response(400, error_body(400, BAD_LENGTH_MESSAGE)), close=True)(scope, receive, send)
            return
        exchange = Exchange(
            method=request.method,
            raw_path=(scope.get("raw_path") or scope["path"].encode()).decode("latin-1").split("?", 1)[0],
            query=parse_qs(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True),
            body=body,
            headers=_headers(scope),
            host_url=f"{scope.get('scheme', 'http')}://{request.headers.get('host') or _server_host(scope)}",
        )
        loop = asyncio.get_running_loop()
        response = await loop.run_in_executor(self._executor(), serve, exchange, self._app(), self.authenticator)
        await to_http(response)(scope, receive, send)
        log.debug('"%s %s" %d', exchange.method, exchange.raw_path, response.status)

    async def _read_body(self, request: HttpRequest) -> bytes | None:
        declared = request.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_body:
            return None
        chunks: list[bytes] = []
        total = 0
        async for chunk in request.stream():
            total += len(chunk)
            if total > self.max_body:
                return None
            chunks.append(chunk)
        return b"".join(chunks)


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


def _server_host(scope: Scope) -> str:
    server = scope.get("server") or ("localhost", None)
    host, port = server[0], server[1]
    host = f"[{host}]" if ":" in str(host) else str(host)
    return host if port is None else f"{host}:{port}"


def build_asgi_app(endpoint: ConnectEndpoint) -> Starlette:
    """Starlette around the endpoint: its error middleware is the last line of defence."""
    return Starlette(routes=[Route("/{path:path}", endpoint=endpoint)])
