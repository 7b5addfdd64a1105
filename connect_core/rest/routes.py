"""Method + path routing for the Connect REST API, with a herder-selecting namespace prefix.

A :class:`Router` is a table of :class:`Route` values (``"GET /connectors/{connector}/status"``).
Path parameters are URL-decoded segments; ``{task:int}`` only matches an integer (as Jersey's
``Integer`` path parameter: anything else is a 404). Nothing here does I/O, so the table is
tested without a socket.

Extension points, for herders that need more than standalone does:

* **Extra endpoints.** ``router.add("POST", "/connectors/{connector}/tasks", handler,
  internal=True)`` adds e.g. the distributed herder's internal task-config and fencing endpoints
  (Java's ``InternalConnectResource``) to the same table.
* **Forwarding to the leader.** A route declared ``forwardable=True`` (writes that only the
  leader may perform) is retried on the leader when the herder raises ``NotLeaderError(leader_url)``;
  the server does the HTTP call through a pluggable ``Forwarder`` (see ``resources.dispatch``).
* **Documentation.** ``doc=Doc(...)`` on a route gives its summary, request-body and response
  schemas (names of component schemas in :mod:`connect_core.rest.openapi`) and query parameters,
  written beside the declaration so the OpenAPI document is generated from this same table.
* **Several herders behind one server** (MirrorMaker dedicated mode, KIP-710). A
  :class:`HerderSelector` with ``depth=2`` takes the first two path segments as the namespace
  ``/{source}/{target}/...``, picks that flow's herder, and routes the rest of the path through
  the same table: ``/A/B/connectors`` is ``GET /connectors`` on the A->B herder. ``depth=0``
  (standalone, distributed) uses the whole path and the single herder. An unknown namespace is a 404.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar
from urllib.parse import unquote

from connect_core.rest.errors import invalid_path_encoding, method_not_allowed, not_found

if TYPE_CHECKING:
    from connect_core.rest.exchange import Request, Response

Handler = Callable[["Request"], "Response"]
H = TypeVar("H")

_PARAM = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_]*)(?::(int))?\}$")
_INT = re.compile(r"^-?[0-9]+$")


@dataclass(frozen=True)
class _Segment:
    literal: str | None = None
    param: str | None = None
    integer: bool = False

    def match(self, raw: str) -> tuple[bool, Any]:
        if self.literal is not None:
            return raw == self.literal, None
        value = decode_segment(raw)
        if self.integer:
            if not _INT.match(value):
                return False, None
            return True, int(value)
        return True, value


@dataclass(frozen=True)
class Param:
    """A documented query or header parameter (``schema`` is a JSON Schema)."""

    name: str
    schema: Mapping[str, Any]
    description: str = ""
    location: str = "query"  # or "header"


@dataclass(frozen=True)
class Doc:
    """What the OpenAPI document says of a route; schema names refer to its components.

    ``responses`` maps each success status to the schema of its body (None: no body); every error
    answers Connect's ErrorMessage, documented once as the default response; ``errors`` adds
    statuses whose body is something else (``/health``'s 503).
    """

    summary: str
    responses: Mapping[int, str | None]
    request: str | None = None
    params: tuple[Param, ...] = ()
    errors: Mapping[int, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Route:
    """One endpoint: method, path template, handler and how it behaves under a leader."""

    method: str
    template: str
    handler: Handler
    forwardable: bool = False  # retried on the leader when the herder raises NotLeaderError
    internal: bool = False  # worker-to-worker endpoint (distributed herder)
    body: bool = False  # consumes a JSON request body
    segments: tuple[_Segment, ...] = field(default=(), compare=False)
    doc: Doc | None = field(default=None, compare=False)

    def match(self, parts: list[str]) -> dict[str, Any] | None:
        if len(parts) != len(self.segments):
            return None
        params: dict[str, Any] = {}
        for seg, raw in zip(self.segments, parts, strict=True):
            ok, value = seg.match(raw)
            if not ok:
                return None
            if seg.param is not None:
                params[seg.param] = value
        return params


def split_path(path: str) -> list[str]:
    """Raw (still percent-encoded) segments; one trailing slash is ignored, as Jersey does."""
    path = path.split("?", 1)[0]
    parts = path.strip("/").split("/") if path.strip("/") else []
    return parts


def decode_segment(raw: str) -> str:
    """One path segment percent-decoded as strict UTF-8; 400 when the escapes are not UTF-8
    (a lenient decode would turn them into U+FFFD and look up a name nobody created)."""
    try:
        return unquote(raw, errors="strict")
    except UnicodeDecodeError:
        raise invalid_path_encoding() from None


def check_segments(parts: list[str]) -> None:
    """400 for a path any segment of which is not valid percent-encoded UTF-8."""
    for part in parts:
        if "%" in part:
            decode_segment(part)


def _compile(template: str) -> tuple[_Segment, ...]:
    out: list[_Segment] = []
    for part in split_path(template):
        m = _PARAM.match(part)
        if m:
            out.append(_Segment(param=m.group(1), integer=m.group(2) == "int"))
        else:
            out.append(_Segment(literal=part))
    return tuple(out)


def _shape(route: Route) -> tuple[tuple[str | None, bool], ...]:
    # Two templates that differ only in parameter names match the same requests.
    return tuple((s.literal, s.integer) for s in route.segments)


@dataclass(frozen=True)
class Match:
    route: Route
    params: dict[str, Any]


class Router:
    """The routing table. Lookup is by method after path match, so a known path with the
    wrong method is a 405, an unknown one a 404 (Jersey's behaviour)."""

    def __init__(self) -> None:
        self._routes: list[Route] = []
        self._lock = threading.Lock()

    def add(
        self,
        method: str,
        template: str,
        handler: Handler,
        *,
        forwardable: bool = False,
        internal: bool = False,
        body: bool = False,
        doc: Doc | None = None,
    ) -> Router:
        route = Route(
            method.upper(),
            template,
            handler,
            forwardable=forwardable,
            internal=internal,
            body=body,
            segments=_compile(template),
            doc=doc,
        )
        with self._lock:
            for existing in self._routes:
                if existing.method == route.method and _shape(existing) == _shape(route):
                    raise ValueError(f"route {route.method} {template} is already defined")
            self._routes.append(route)
        return self

    @property
    def routes(self) -> list[Route]:
        return list(self._routes)

    def match(self, method: str, parts: list[str]) -> Match:
        """The route for ``method`` and path ``parts``; RestError 404/405 otherwise.

        Literal segments win over parameters at the same position (``/connectors/x/tasks`` vs
        ``/connectors/{connector}/{...}``), as JAX-RS prefers the most literal template.
        """
        allowed: set[str] = set()
        best: tuple[int, Route, dict[str, Any]] | None = None
        for route in self._routes:
            params = route.match(parts)
            if params is None:
                continue
            allowed.add(route.method)
            if route.method != method.upper():
                continue
            literals = sum(1 for s in route.segments if s.literal is not None)
            if best is None or literals > best[0]:
                best = (literals, route, params)
        if best is not None:
            return Match(best[1], best[2])
        if allowed:
            raise method_not_allowed(tuple(sorted(allowed)))
        raise not_found()


class HerderSelector(Generic[H]):
    """Picks the herder a request is for from a namespace prefix of ``depth`` segments.

    ``depth=0``: one herder for the whole server (key ``()``). ``depth=2``: MirrorMaker's
    ``/{source}/{target}`` flows, keys ``(source, target)`` (URL-decoded). Herders can be added
    and removed while serving (flows start at different times).
    """

    def __init__(self, depth: int = 0, herders: Mapping[tuple[str, ...], H] | None = None) -> None:
        if depth < 0:
            raise ValueError("depth must be >= 0")
        self.depth = depth
        self._herders: dict[tuple[str, ...], H] = dict(herders or {})
        self._lock = threading.Lock()

    @classmethod
    def single(cls, herder: H) -> HerderSelector[H]:
        return cls(0, {(): herder})

    def put(self, key: tuple[str, ...], herder: H) -> None:
        if len(key) != self.depth:
            raise ValueError(f"namespace key must have {self.depth} parts, got {key!r}")
        with self._lock:
            self._herders[key] = herder

    def remove(self, key: tuple[str, ...]) -> None:
        with self._lock:
            self._herders.pop(key, None)

    def keys(self) -> list[tuple[str, ...]]:
        with self._lock:
            return list(self._herders)

    def select(self, parts: list[str]) -> tuple[H, tuple[str, ...], list[str]]:
        """(herder, namespace key, remaining raw path segments); 404 for an unknown namespace."""
        if len(parts) < self.depth:
            raise not_found()
        key = tuple(decode_segment(p) for p in parts[: self.depth])
        with self._lock:
            herder = self._herders.get(key)
        if herder is None:
            raise not_found()
        return herder, key, parts[self.depth :]

    @staticmethod
    def namespace_path(key: tuple[str, ...]) -> str:
        """URL path prefix for a namespace key (``("A", "B")`` -> ``/A/B``), percent-encoded."""
        from urllib.parse import quote

        return "".join("/" + quote(k, safe="") for k in key)
