"""OAUTHBEARER tokens for the kafka-python group client, from the same settings librdkafka gets.

librdkafka fetches and refreshes tokens itself; kafka-python (the distributed herder's group
membership) needs a token provider object. Both are built from the output of
:func:`connect_core.kafka.jaas.translate`, so the two clients log in the same way:

- ``sasl.oauthbearer.method=oidc``: the client credentials grant against the token endpoint, HTTP
  Basic authentication with the client id and secret (as Kafka's ``HttpAccessTokenRetriever``),
  the token reused until 80% of its lifetime (Kafka's default refresh window);
- ``enable.sasl.oauthbearer.unsecure.jwt``: an unsigned token (``alg: none``) with the principal,
  scope and lifetime, as Kafka's ``OAuthBearerUnsecuredLoginCallbackHandler`` makes.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Mapping
from typing import Any

from kafka.net.sasl.oauth import AbstractTokenProvider

from connect_core.api.errors import ConfigError

REFRESH_FACTOR = 0.8
DEFAULT_LIFETIME_S = 3600
HTTP_TIMEOUT_S = 10.0


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _pairs(text: str, sep: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in text.split(sep):
        key, eq, value = item.strip().partition("=")
        if eq and key:
            out[key] = value
    return out


class UnsecuredTokens(AbstractTokenProvider):  # type: ignore[misc]
    """Unsigned tokens (development and tests only, as in Kafka)."""

    def __init__(self, principal: str, scope: list[str], lifetime_s: int, extensions: Mapping[str, str]) -> None:
        super().__init__()
        self._principal, self._scope, self._lifetime_s = principal, scope, lifetime_s
        self._extensions = dict(extensions)

    def token(self) -> str:
        now = int(time.time())
        claims: dict[str, Any] = {"sub": self._principal, "iat": now, "exp": now + self._lifetime_s}
        if self._scope:
            claims["scope"] = self._scope
        return f"{_b64(json.dumps({'alg': 'none'}).encode())}.{_b64(json.dumps(claims).encode())}."

    def extensions(self) -> dict[str, str]:
        return dict(self._extensions)


class ClientCredentialsTokens(AbstractTokenProvider):  # type: ignore[misc]
    """Tokens from an OAuth 2 token endpoint (client credentials grant), reused until due for refresh."""

    def __init__(
        self, endpoint: str, client_id: str, client_secret: str, scope: str | None, extensions: Mapping[str, str]
    ) -> None:
        super().__init__()
        self._endpoint, self._client_id, self._client_secret, self._scope = endpoint, client_id, client_secret, scope
        self._extensions = dict(extensions)
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0

    def __repr__(self) -> str:  # never show the secret
        return f"ClientCredentialsTokens({self._endpoint!r}, client_id={self._client_id!r})"

    def token(self) -> str:
        with self._lock:
            if self._token is None or time.monotonic() >= self._refresh_at:
                self._token, lifetime_s = self._fetch()
                self._refresh_at = time.monotonic() + lifetime_s * REFRESH_FACTOR
            return self._token

    def extensions(self) -> dict[str, str]:
        return dict(self._extensions)

    def _fetch(self) -> tuple[str, float]:
        form = {"grant_type": "client_credentials", **({"scope": self._scope} if self._scope else {})}
        quote = urllib.parse.quote
        basic = base64.b64encode(f"{quote(self._client_id)}:{quote(self._client_secret)}".encode()).decode()
        request = urllib.request.Request(
            self._endpoint,
            data=urllib.parse.urlencode(form).encode(),
            method="POST",
            headers={
                "Authorization": f"Basic {basic}",
                "Content-Type": "application/x-www-form-urlencoded",
                "Accept": "application/json",
            },
        )
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT_S) as response:
            body = json.loads(response.read())
        token = body.get("access_token") if isinstance(body, dict) else None
        if not isinstance(token, str) or not token:
            raise ConfigError(
                f"the token endpoint {self._endpoint} answered without an access_token",
                key="sasl.oauthbearer.token.endpoint.url",
            )
        return token, float(body.get("expires_in") or DEFAULT_LIFETIME_S)


def token_provider(rd: Mapping[str, str]) -> AbstractTokenProvider:
    """The provider for librdkafka's OAUTHBEARER keys (what :func:`jaas.translate` gave)."""
    if rd.get("sasl.oauthbearer.method") == "oidc":
        return ClientCredentialsTokens(
            rd["sasl.oauthbearer.token.endpoint.url"],
            rd.get("sasl.oauthbearer.client.id", ""),
            rd.get("sasl.oauthbearer.client.secret", ""),
            rd.get("sasl.oauthbearer.scope"),
            _pairs(rd.get("sasl.oauthbearer.extensions", ""), ","),
        )
    config = _pairs(rd.get("sasl.oauthbearer.config", ""), " ")
    if not config.get("principal"):
        raise ConfigError("OAUTHBEARER needs a token endpoint or unsecuredLoginStringClaim_sub", key="sasl.jaas.config")
    extensions = {k[len("extension_") :]: v for k, v in config.items() if k.startswith("extension_")}
    scope = [s for s in config.get("scope", "").split(",") if s]
    return UnsecuredTokens(config["principal"], scope, int(config.get("lifeSeconds") or DEFAULT_LIFETIME_S), extensions)
