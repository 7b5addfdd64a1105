"""The request and response values the REST handlers see, and the worker settings they consult.

Apart from the handlers (:mod:`connect_core.rest.resources`) so the router and the internal endpoints
name them without importing the handlers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_core import __version__
from connect_core.api.errors import ConfigError
from connect_core.rest import entities
from connect_core.rest.errors import unsupported_media_type

COMMIT_ID = "unknown"  # Java reports AppInfoParser.getCommitId(); "unknown" when not built from git


@dataclass(frozen=True)
class RestSettings:
    """Worker settings the resources consult (Java ``RestServerConfig``)."""

    topic_tracking_enabled: bool = True
    topic_tracking_reset_enabled: bool = True
    version: str = __version__
    commit: str = COMMIT_ID

    @classmethod
    def from_props(cls, props: Mapping[str, str]) -> RestSettings:
        def flag(key: str, default: bool) -> bool:
            raw = props.get(key)
            if raw is None:
                return default
            value = raw.strip().lower()
            if value not in ("true", "false"):
                raise ConfigError(
                    f"Invalid value {raw} for configuration {key}: Expected value to be either true or false", key=key
                )
            return value == "true"

        return cls(
            topic_tracking_enabled=flag("topic.tracking.enable", True),
            topic_tracking_reset_enabled=flag("topic.tracking.allow.reset", True),
        )


@dataclass
class Request:
    """One HTTP request as the handlers see it."""

    method: str
    path: str  # path inside the namespace, e.g. "/connectors/x/status"
    query: dict[str, list[str]] = field(default_factory=dict)
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    herder: Any = None
    params: dict[str, Any] = field(default_factory=dict)
    settings: RestSettings = field(default_factory=RestSettings)
    base_url: str = ""  # "http://host:port" + namespace prefix, for Location headers

    def query_one(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None

    def query_bool(self, name: str, default: bool) -> bool:
        raw = self.query_one(name)
        if raw is None:
            return default
        return raw.strip().lower() == "true"  # Java's Boolean.valueOf

    def json(self) -> Any:
        ctype = _header(self.headers, "content-type")
        if ctype is not None and not _is_json_media_type(ctype):
            raise unsupported_media_type()
        return entities.parse_json(self.body)


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-able; None with a 2xx means no entity
    headers: dict[str, str] = field(default_factory=dict)
    raw: bytes | None = None  # a forwarded response, passed through untouched

    def encoded(self) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.body is None and self.status < 400:
            return b""
        return entities.dumps(self.body)


def _header(headers: Mapping[str, str], name: str) -> str | None:
    for k, v in headers.items():
        if k.lower() == name:
            return v
    return None


def _is_json_media_type(ctype: str) -> bool:
    main = ctype.split(";", 1)[0].strip().lower()
    if main in ("", "*/*"):
        return True
    _, _, subtype = main.partition("/")
    return subtype == "json" or subtype.endswith("+json")
