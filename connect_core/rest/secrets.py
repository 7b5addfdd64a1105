"""Secrets in REST answers: shown as ``[hidden]``, and a ``[hidden]`` sent back keeps the stored value.

Password-typed keys of the connector's own ConfigDef (and Kafka's client secrets under any prefix)
are masked wherever a config is rendered. Config-provider references (``${file:...}``) are not
secrets and stay visible, which is how secrets should be configured anyway. So that clients that
GET a config, change one key and PUT it back keep working, a ``[hidden]`` value for a secret key is
replaced by the value already stored.
"""

from __future__ import annotations

import functools
import logging
import re
from collections.abc import Mapping

from connect_core.config.configdef import HIDDEN, ConfigDef
from connect_core.config.masking import is_sensitive
from connect_core.plugins import Plugins

log = logging.getLogger(__name__)
_REFERENCE = re.compile(r"^\$\{[^}]*\}$")


@functools.lru_cache(maxsize=128)
def _connector_definition(connector_class: str) -> ConfigDef | None:
    try:
        definition = Plugins.new_instance(connector_class).config()
    except Exception:  # unknown or broken plugin: fall back to Kafka's client secrets only
        log.debug("No ConfigDef for %s; masking known client secrets only", connector_class, exc_info=True)
        return None
    return definition if isinstance(definition, ConfigDef) else None


def _secret(key: str, value: str | None, definition: ConfigDef | None) -> bool:
    return value is not None and not _REFERENCE.match(value) and is_sensitive(key, definition)


def mask_config(config: Mapping[str, str], connector_class: str | None = None) -> dict[str, str]:
    cls = connector_class or config.get("connector.class")
    definition = _connector_definition(cls) if cls else None
    return {k: (HIDDEN if _secret(k, v, definition) else v) for k, v in config.items()}


def restore_hidden(new: Mapping[str, str | None], stored: Mapping[str, str] | None) -> dict[str, str | None]:
    """``new`` with every ``[hidden]`` placeholder replaced by the stored value of that key."""
    if not stored:
        return dict(new)
    return {k: (stored[k] if v == HIDDEN and k in stored else v) for k, v in new.items()}
