"""The one table from the :mod:`connect_core.api.errors` tree to HTTP status codes.

Java Connect answers every failure with ``{"error_code": <int>, "message": "..."}`` where
``error_code`` is the HTTP status (``ConnectExceptionMapper``); clients such as Strimzi and
Cruise Control parse that body, so we keep its shape and its status codes exactly, including
Java's quirks: an unknown ``connector.class`` on create/validate is a 500 (Java's
``Plugins.newConnector`` throws a plain ``ConnectException``).

The one place we leave Java's codes on purpose: a request body that cannot be read as the entity
(not UTF-8, not JSON, wrong JSON types, unknown fields), which Java answers 500 because Jackson's
exceptions reach its catch-all mapper, is a 400 here with the same body shape. It is the client's
mistake, and no client depends on a 500 for its own bad request.
"""

from __future__ import annotations

import logging
from typing import Any

from connect_core.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConfigError,
    ConflictError,
    ConnectError,
    NotFoundError,
    RestError,
)

log = logging.getLogger(__name__)


def _plugin_not_found_type() -> type[BaseException] | None:
    # Imported lazily: the plugin registry is optional for the REST layer's pure logic.
    try:
        from connect_core.plugins import PluginNotFoundError
    except ImportError:  # pragma: no cover - plugins module always ships
        return None
    return PluginNotFoundError


# ONE table, most specific first. PluginNotFoundError is both a ConfigError and a NotFoundError:
# in a connector config it is Java's ConnectException (500); plugin endpoints turn it into 404
# themselves before it reaches this table.
_TABLE: list[tuple[type[BaseException], int]] = [
    (NotFoundError, 404),
    (AlreadyExistsError, 409),
    (ConflictError, 409),  # includes NotLeaderError when it is not forwarded
    (ConfigError, 400),
    (BadRequestError, 400),
    (ConnectError, 500),
]


def status_for(exc: BaseException) -> int:
    """The HTTP status Java Connect would answer for ``exc``."""
    if isinstance(exc, RestError):
        return exc.status
    plugin_nf = _plugin_not_found_type()
    if plugin_nf is not None and isinstance(exc, plugin_nf):
        return 500
    for exc_type, status in _TABLE:
        if isinstance(exc, exc_type):
            return status
    return 500


def error_body(status: int, message: str | None) -> dict[str, Any]:
    """Java's ErrorMessage entity."""
    return {"error_code": status, "message": message}


def error_response(exc: BaseException) -> tuple[int, dict[str, Any]]:
    """(status, body) for an exception raised while serving a request."""
    status = status_for(exc)
    if isinstance(exc, RestError):
        return status, error_body(exc.error_code, exc.message)
    if status >= 500 and not isinstance(exc, ConnectError):
        log.error("Uncaught exception in REST call", exc_info=exc)
    message = str(exc) if str(exc) else None
    return status, error_body(status, message)


def not_found() -> RestError:
    """What Jersey answers for a path no resource matches."""
    return RestError(404, "HTTP 404 Not Found")


class MethodNotAllowed(RestError):
    """A 405 that knows the methods the path does answer (the ``Allow`` header RFC 9110 asks for)."""

    def __init__(self, allowed: tuple[str, ...] = ()) -> None:
        super().__init__(405, "HTTP 405 Method Not Allowed")
        self.allowed = allowed


def method_not_allowed(allowed: tuple[str, ...] = ()) -> MethodNotAllowed:
    return MethodNotAllowed(allowed)


def error_headers(exc: BaseException) -> dict[str, str]:
    """Headers an error answer carries besides its body."""
    if isinstance(exc, MethodNotAllowed) and exc.allowed:
        return {"Allow": ", ".join(exc.allowed)}
    return {}


def unsupported_media_type() -> RestError:
    return RestError(415, "HTTP 415 Unsupported Media Type")


def bad_request(message: str) -> RestError:
    return RestError(400, message)


def deserialization_error(message: str) -> RestError:
    """A body that does not map onto the entity: 400 (Java answers 500 here; see the module doc)."""
    return RestError(400, message)


def invalid_path_encoding() -> RestError:
    """A path whose percent-escapes are not UTF-8: the client's mistake, never a lookup."""
    return RestError(400, "Invalid UTF-8 in request path")
