"""Names and creation settings of a worker's internal topics, read from Java worker keys.

``offset.storage.topic`` / ``.partitions`` (25) / ``.replication.factor`` (3), likewise for
``status.storage`` (5 partitions) and ``config.storage`` (always 1 partition); any other
``<prefix>.<key>`` is a topic config for creation (Java's ``topicSettings``), and
``cleanup.policy=compact`` is forced, as Java refuses anything else for these topics.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.kafka.admin import NewTopicSpec
from connect_core.kafka.clients import client_props

OFFSET_STORAGE = "offset.storage"
STATUS_STORAGE = "status.storage"
CONFIG_STORAGE = "config.storage"

_DEFAULT_PARTITIONS = {OFFSET_STORAGE: 25, STATUS_STORAGE: 5, CONFIG_STORAGE: 1}
_DEFAULT_TOPICS = {
    OFFSET_STORAGE: "connect-offsets",
    STATUS_STORAGE: "connect-status",
    CONFIG_STORAGE: "connect-configs",
}
_RESERVED = {"topic", "partitions", "replication.factor", "file.filename"}


def _int(props: Mapping[str, Any], key: str, default: int) -> int:
    raw = props.get(key)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except (TypeError, ValueError):
        raise ConfigError(f"Invalid value {raw!r}: not an integer", key=key) from None
    if value == 0 or value < -1:
        raise ConfigError(f"Invalid value {value}: must be -1 (broker default) or at least 1", key=key)
    return value


def internal_topic_spec(worker_props: Mapping[str, Any], prefix: str) -> NewTopicSpec:
    """The compacted topic spec for ``prefix`` (``offset.storage``, ``status.storage``, ``config.storage``)."""
    topic = str(worker_props.get(f"{prefix}.topic") or _DEFAULT_TOPICS[prefix])
    partitions = (
        1 if prefix == CONFIG_STORAGE else _int(worker_props, f"{prefix}.partitions", _DEFAULT_PARTITIONS[prefix])
    )
    rf = _int(worker_props, f"{prefix}.replication.factor", 3)
    settings = {
        k[len(prefix) + 1 :]: str(v)
        for k, v in worker_props.items()
        if k.startswith(prefix + ".") and k[len(prefix) + 1 :] not in _RESERVED
    }
    policy = settings.get("cleanup.policy")
    if policy is not None and policy.strip() != "compact":
        raise ConfigError(
            f"Topic '{topic}' must use cleanup.policy=compact to keep Connect's internal state, not {policy!r}",
            key=f"{prefix}.cleanup.policy",
        )
    settings["cleanup.policy"] = "compact"
    return NewTopicSpec(topic, partitions, rf, settings)


def store_client_props(worker_props: Mapping[str, Any]) -> dict[str, Any]:
    """Client properties for the internal stores' own producer/consumer (the worker's top-level keys)."""
    return client_props(worker_props, "")
