"""``${provider:[path:]key}`` references in connector and task configs, resolved by the worker at run time.

As Kafka's ``WorkerConfigTransformer``: a connector config is stored with its references (so the
config topic and the REST API never hold what they point at) and each worker resolves them with
the providers declared in *its own* worker config just before a connector or task gets its config.
Task configs a connector generates from resolved values are turned back into references before
they are stored (Kafka's ``reverseTransform``): a key whose stored connector value holds a
reference gets that stored value back in every task config.

An unresolvable reference stays as text, as in Kafka (the connector or its client then fails on
it); a warning names the key and the reference, never a value.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.config.providers import ConfigProvider, ConfigTransformer, find_references, instantiate_providers

log = logging.getLogger(__name__)


def has_references(props: Mapping[str, Any]) -> bool:
    return any(isinstance(v, str) and "${" in v and find_references(v) for v in props.values())


class WorkerConfigTransformer:
    """Resolves references with the providers of one worker config (instantiated once, on first use)."""

    def __init__(self, worker_props: Mapping[str, Any]) -> None:
        self._worker_props = dict(worker_props)
        self._providers: dict[str, ConfigProvider] | None = None
        self._lock = threading.Lock()

    def _get_providers(self) -> dict[str, ConfigProvider]:
        with self._lock:
            if self._providers is None:
                self._providers = instantiate_providers(self._worker_props)
            return self._providers

    def transform(self, props: Mapping[str, str], what: str = "config") -> dict[str, str]:
        """``props`` with every reference this worker can resolve replaced by its value."""
        if not has_references(props):
            return dict(props)
        providers = self._get_providers()
        try:
            resolved = ConfigTransformer(providers, strict=True).transform(props)
        except ConfigError as e:
            log.warning("Some references in the %s stay unresolved: %s", what, e.describe())
            resolved = ConfigTransformer(providers, strict=False).transform(props)
        out: dict[str, str] = dict(resolved)  # same keys and value types as props
        return out

    def close(self) -> None:
        with self._lock:
            providers, self._providers = self._providers or {}, None
        for p in providers.values():
            try:
                p.close()
            except Exception:  # a provider failing to close must not stop the worker's shutdown
                log.debug("Closing a config provider failed", exc_info=True)


def reverse_transform(
    raw_connector_config: Mapping[str, str], task_configs: list[dict[str, str]]
) -> list[dict[str, str]]:
    """Task configs with every key that is a reference in the stored connector config set back to it."""
    refs = {k: v for k, v in raw_connector_config.items() if isinstance(v, str) and "${" in v and find_references(v)}
    if not refs:
        return task_configs
    return [{k: refs.get(k, v) for k, v in tc.items()} for tc in task_configs]
