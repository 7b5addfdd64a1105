"""The worker's REST client: requests to other workers (forwarding to the leader, task configs).

As Java's ``RestClient``: an ``https`` URL is verified with the worker's REST TLS settings
(:mod:`connect_core.rest.tls`, so a worker trusts its peers through its truststore), and those
settings are only loaded when an ``https`` URL is first called (KAFKA-14816), then kept.
"""

from __future__ import annotations

import json
import logging
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping

from connect_core.herder.distributed.leader_forwarding import http_post_task_configs, http_put_fence
from connect_core.rest.errors import error_body
from connect_core.rest.tls import SslSettings

log = logging.getLogger(__name__)

FORWARD_TIMEOUT_S = 90.0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Java's client does not follow redirects; a 3xx goes back to the caller as it is."""

    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


class RestClient:
    """HTTP(S) calls to other workers; thread-safe."""

    def __init__(self, settings: SslSettings | None = None, timeout: float = FORWARD_TIMEOUT_S) -> None:
        self.settings = settings or SslSettings()
        self.timeout = timeout
        self._context: ssl.SSLContext | None = None
        self._lock = threading.Lock()

    @classmethod
    def from_props(cls, props: Mapping[str, object]) -> RestClient:
        return cls(SslSettings.from_props(props))

    def ssl_context(self, url: str) -> ssl.SSLContext | None:
        """The client TLS context for ``url`` (None for http); raises ConfigError on bad settings."""
        if not url.lower().startswith("https://"):
            return None
        with self._lock:
            if self._context is None:
                self._context = self.settings.client_context()
            return self._context

    def forward(
        self, url: str, method: str, body: bytes | None, headers: Mapping[str, str]
    ) -> tuple[int, bytes, Mapping[str, str]]:
        """A :class:`~connect_core.rest.resources.Forwarder`: the leader's answer, errors passed through."""
        try:
            opener = urllib.request.build_opener(
                _NoRedirect(), urllib.request.HTTPSHandler(context=self.ssl_context(url))
            )
            req = urllib.request.Request(url, data=body, method=method, headers=dict(headers))
            with opener.open(req, timeout=self.timeout) as resp:
                return resp.status, resp.read(), dict(resp.headers.items())
        except urllib.error.HTTPError as e:
            return e.code, e.read(), dict(e.headers.items()) if e.headers else {}
        except Exception as e:  # OSError, ssl.SSLError, ConfigError from the TLS settings
            msg = f"IO Error trying to forward REST request: {e}"
            return 500, json.dumps(error_body(500, msg)).encode(), {}

    def post_task_configs(self, url: str, body: bytes, headers: Mapping[str, str]) -> None:
        """A follower's signed task configs to the leader (the herder's TaskConfigForwarder)."""
        http_post_task_configs(url, body, headers, ssl_context=self.ssl_context(url))

    def put_fence(self, url: str, headers: Mapping[str, str]) -> None:
        """A follower's signed zombie-fencing request to the leader (the herder's FenceForwarder)."""
        http_put_fence(url, headers, ssl_context=self.ssl_context(url))
