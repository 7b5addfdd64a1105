"""Task configs a follower generated and its zombie-fencing requests, sent to the leader's signed internal endpoints.

Kept apart from the herder's loop: plain HTTP with the standard library, one call, errors mapped to
Connect's (the leader's status as a RestError, an I/O failure as a ConnectError).
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Mapping
from urllib.parse import quote

from connect_core.api.errors import ConnectError, RestError

FORWARD_TIMEOUT_S = 30.0


def http_post_task_configs(
    url: str, body: bytes, headers: Mapping[str, str], ssl_context: ssl.SSLContext | None = None
) -> None:
    """POST signed task configs to the leader; raise RestError with the leader's status on failure.

    ``ssl_context`` verifies an https leader (the REST client's truststore); None uses the system's CAs.
    """
    _send("POST", url, body, headers, ssl_context, "sending task configs to")


def http_put_fence(url: str, headers: Mapping[str, str], ssl_context: ssl.SSLContext | None = None) -> None:
    """PUT a signed zombie-fencing request (empty body) to the leader's ``/connectors/{name}/fence``."""
    _send("PUT", url, b"", headers, ssl_context, "sending a zombie fencing request to")


def _send(method: str, url: str, body: bytes, headers: Mapping[str, str], ssl_context: ssl.SSLContext | None,
          what: str) -> None:  # fmt: skip
    req = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=FORWARD_TIMEOUT_S, context=ssl_context) as resp:
            resp.read()
    except urllib.error.HTTPError as e:
        text = e.read().decode("utf-8", "replace")
        try:
            message = json.loads(text).get("message", text)
        except (ValueError, AttributeError):
            message = text
        raise RestError(e.code, f"Request to leader {url} failed: {message}") from None
    except OSError as e:
        raise ConnectError(f"IO error {what} leader {url}: {e}") from e


NO_INTERNAL_REST_MESSAGE = (
    "This worker is not able to communicate with the leader of the cluster, which is required for exactly-once "
    "source tasks. If running MirrorMaker 2 in dedicated mode, consider enabling inter-worker communication via "
    "the 'dedicated.mode.enable.internal.rest' property."
)


def no_internal_rest(url: str, headers: Mapping[str, str]) -> None:
    """The fence forwarder of a worker without a REST server (Java's error, word for word)."""
    raise ConnectError(NO_INTERNAL_REST_MESSAGE)


def quote_segment(s: str) -> str:
    """One URL path segment (a connector name may hold '/' or spaces)."""
    return quote(s, safe="")


def namespace_path(namespace: tuple[str, ...]) -> str:
    """The REST namespace prefix of a flow, e.g. ``/A/B`` (empty for a plain Connect worker)."""
    return "".join("/" + quote_segment(p) for p in namespace)
