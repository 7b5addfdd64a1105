"""Schemathesis hooks for the REST fuzz test (loaded through ``SCHEMATHESIS_HOOKS``).

``no_server_error`` replaces schemathesis' own 5xx check: every 5xx fails, except the one 500 we
keep for Java's clients on purpose, a ``connector.class`` that names no installed connector
(Java's ``Plugins.newConnector`` fails with a plain ConnectException), which the OpenAPI
document declares on exactly the operations that take a connector config.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis

UNKNOWN_CLASS = "connector.class: "  # the plugin lookup's error for that key (unknown or empty name)


def _is_unknown_connector_class(response: Any, case: Any) -> bool:
    if response.status_code != 500 or "500" not in case.operation.definition.raw.get("responses", {}):
        return False
    try:
        body = json.loads(response.content)
    except ValueError:
        return False
    message = body.get("message") if isinstance(body, dict) else None
    return body.get("error_code") == 500 and isinstance(message, str) and message.startswith(UNKNOWN_CLASS)


@schemathesis.check
def no_server_error(ctx: Any, response: Any, case: Any) -> None:
    """No 5xx, but the documented unknown-connector-class 500."""
    if response.status_code >= 500 and not _is_unknown_connector_class(response, case):
        raise AssertionError(
            f"{case.method} {case.formatted_path} answered {response.status_code}: {response.content[:500]!r}"
        )
