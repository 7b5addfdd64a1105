"""The distributed herder's internal REST endpoints (Java's ``InternalClusterResource``).

``POST /connectors/{connector}/tasks`` takes a follower's task configs (a JSON list of string
maps) and ``PUT /connectors/{connector}/fence`` runs a round of zombie fencing (KIP-618). Both verify
the request signature against the exact body bytes received. Task configs are not forwarded: a
follower that receives them answers 409 with the leader's URL, and the sender retries on the new
leader once it knows it. A fencing request is forwarded to the leader like Java's
(``completeOrForwardRequest``), with its signature: it signs the body under the session key all
workers share, so the leader can verify it too.
"""

from __future__ import annotations

from typing import Any

from connect_core.herder.distributed.session_key import (
    SIGNATURE_ALGORITHM_HEADER,
    SIGNATURE_HEADER,
    InternalRequestSignature,
)
from connect_core.rest import entities
from connect_core.rest.errors import deserialization_error
from connect_core.rest.exchange import Request, Response
from connect_core.rest.resources import RestApp
from connect_core.rest.routes import Doc, Param

_SIGNATURE = (
    Param(SIGNATURE_HEADER, {"type": "string"}, "The request body's signature (base64)", "header"),
    Param(SIGNATURE_ALGORITHM_HEADER, {"type": "string"}, "The signature's algorithm", "header"),
)


def _task_configs(raw: Any) -> list[dict[str, str]]:
    if not isinstance(raw, list):
        raise deserialization_error("Task configurations must be a JSON array of objects")
    out: list[dict[str, str]] = []
    for item in raw:
        config = entities.string_map(item)
        out.append({k: v for k, v in config.items() if v is not None})
    return out


def put_task_configs(req: Request) -> Response:
    configs = _task_configs(req.json())
    signature = InternalRequestSignature.from_headers(req.body, req.headers)
    req.herder.put_task_configs(req.params["connector"], configs, signature)
    return Response(204)


def fence_zombies(req: Request) -> Response:
    signature = InternalRequestSignature.from_headers(req.body, req.headers)
    req.herder.fence_zombies(req.params["connector"], signature)
    return Response(204)


def install_internal_routes(app: RestApp) -> RestApp:
    """Add the internal endpoints to ``app``'s routing table (idempotent per app)."""
    if not any(r.internal for r in app.router.routes):
        app.router.add(
            "POST",
            "/connectors/{connector}/tasks",
            put_task_configs,
            internal=True,
            body=True,
            doc=Doc(
                "A follower hands its task configs to the leader (signed)",
                {204: None},
                request="TaskConfigs",
                params=_SIGNATURE,
            ),
        )
        app.router.add(
            "PUT",
            "/connectors/{connector}/fence",
            fence_zombies,
            internal=True,
            body=True,
            forwardable=True,
            doc=Doc("Fence a connector's zombie tasks (signed)", {204: None}, params=_SIGNATURE),
        )
    return app
