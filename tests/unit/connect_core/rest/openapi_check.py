"""Check a real answer against what the OpenAPI document says of it (shared by unit and live tests)."""

from __future__ import annotations

from typing import Any

import jsonschema_rs


def response_schema(doc: dict[str, Any], method: str, path: str, status: int) -> dict[str, Any] | None:
    """The documented body schema of ``status`` (else the default) for ``method path``; None: no body."""
    responses = doc["paths"][path][method.lower()]["responses"]
    entry = responses.get(str(status)) or responses["default"]
    content = entry.get("content")
    if content is None:
        return None
    return dict(content["application/json"]["schema"])


def check_response(doc: dict[str, Any], method: str, path: str, status: int, body: Any) -> None:
    """AssertionError naming the first mismatch when ``body`` is not what the document promises."""
    documented = doc["paths"][path][method.lower()]["responses"]
    assert str(status) in documented or (status >= 400 and "default" in documented), (
        f"{method} {path}: status {status} is not documented ({sorted(documented)})"
    )
    schema = response_schema(doc, method, path, status)
    if schema is None:
        assert body is None, f"{method} {path} {status}: documented without a body, got {body!r}"
        return
    validator = jsonschema_rs.validator_for({**schema, "components": doc["components"]})
    errors = [f"{e.message} at {list(e.instance_path)}" for e in validator.iter_errors(body)]
    assert not errors, f"{method} {path} {status}: {errors[:3]} in {body!r}"[:2000]
