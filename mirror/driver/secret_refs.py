"""Secrets in mm2.properties stay on the node: connector configs carry ``${mm2:KEY}`` references instead.

``mm2 run`` stores the connector configs it derives from mm2.properties in
``mm2-configs.<source>.internal`` on the target, readable by anyone allowed to read that topic. A
password written literally in mm2.properties (``A.ssl.key.password``, a ``sasl.jaas.config`` with
``password="..."``) would land there in clear, as it does with Java MirrorMaker. Instead, every
secret value is stored as ``${mm2:K}``, where ``K`` is the mm2.properties key the value was read
from (``${mm2:A.ssl.key.password}``, ``${mm2:A->B.target.cluster.sasl.jaas.config}``): the
reference names where the value lives, never the value. Every node registers the built-in provider
``mm2`` in its worker configs, bound to its own mm2.properties file, and its workers resolve the
references when a connector or task starts (:mod:`connect_core.runtime.config_references`).

Which keys are secret (suffix rule, so prefixed forms count too):

* the keys masked everywhere else (:data:`connect_core.config.masking.KAFKA_CLIENT_SECRETS`): Kafka's
  PASSWORD-typed client keys (``SslConfigs``/``SaslConfigs``: ``ssl.key.password``,
  ``ssl.keystore.password``, ``ssl.truststore.password``, ``ssl.keystore.key``,
  ``ssl.keystore.certificate.chain``, ``ssl.truststore.certificates``, ``sasl.jaas.config``),
  librdkafka's secret keys (``sasl.password``, ``ssl.key.pem``, ``sasl.oauthbearer.client.secret``)
  and Schema Registry's ``basic.auth.user.info``;
* any other key named ``password`` or ending in ``.password`` (a plugin's ``*.password``): nobody
  names a non-secret setting that way, and a reference costs nothing when the value is not secret.

A value that already contains a ``${provider:...}`` reference is left as it is: its secret part is
already outside the topic. The references depend only on the keys, so nodes whose files hold the
same keys compute the same configs (and no leader rewrites another's), whatever their values.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from connect_core.api.errors import ConfigError
from connect_core.config.masking import is_sensitive
from connect_core.config.properties import load_properties
from connect_core.config.providers import CONFIG_PROVIDERS_CONFIG, find_references, resolve_config_providers

log = logging.getLogger(__name__)

PROVIDER_NAME = "mm2"
PROVIDER_CLASS = "mirror.driver.secret_refs.Mm2PropertiesConfigProvider"
FILE_PARAM = "file"


def is_secret_key(key: str) -> bool:
    """True for a (possibly prefixed) key whose value must not be stored in a shared topic."""
    return key == "password" or key.endswith(".password") or is_sensitive(key)


def reference(raw_key: str) -> str:
    return "${" + PROVIDER_NAME + ":" + raw_key + "}"


def _referable(raw_key: str) -> bool:
    """A key the reference syntax can carry (``:`` and ``}`` would end it early)."""
    return bool(raw_key) and not any(c in raw_key for c in ":{}$")


def with_secret_references(raw: Mapping[str, str]) -> dict[str, str]:
    """mm2.properties with each literal secret value replaced by a reference to its own key.

    Connector configs derived from this copy carry, for every secret, exactly the key its value
    came from (values are copied verbatim and no setting depends on a password), so each node
    resolves it to its own value for that key, even when nodes' values differ.
    """
    out = dict(raw)
    for key, value in raw.items():
        if not is_secret_key(key) or not value or find_references(value):
            continue
        if _referable(key):
            out[key] = reference(key)
        else:
            log.warning("%s: a key with ':', '{', '}' or '$' cannot be referenced; its value is stored as it is", key)
    return out


def check_provider_name(raw: Mapping[str, str]) -> str | None:
    """A problem message if mm2.properties declares a provider under the reserved name."""
    declared = [n.strip() for n in str(raw.get(CONFIG_PROVIDERS_CONFIG, "")).split(",")]
    if PROVIDER_NAME in declared:
        return (
            f"the config provider name '{PROVIDER_NAME}' is reserved for mm2's built-in provider of "
            "mm2.properties values; choose another name"
        )
    return None


def with_provider(worker_props: Mapping[str, str], source: Path) -> dict[str, str]:
    """A worker config that also declares the ``mm2`` provider bound to ``source`` (this node's file)."""
    props = dict(worker_props)
    declared = [n.strip() for n in str(props.get(CONFIG_PROVIDERS_CONFIG, "")).split(",") if n.strip()]
    props[CONFIG_PROVIDERS_CONFIG] = ",".join([*declared, PROVIDER_NAME])
    props[f"{CONFIG_PROVIDERS_CONFIG}.{PROVIDER_NAME}.class"] = PROVIDER_CLASS
    props[f"{CONFIG_PROVIDERS_CONFIG}.{PROVIDER_NAME}.param.{FILE_PARAM}"] = str(source.resolve())
    return props


class Mm2PropertiesConfigProvider:
    """``${mm2:KEY}``: the value of ``KEY`` in this node's mm2.properties, its own references resolved.

    The file is read at each lookup (lookups happen when a connector or task starts), so a
    rotated password takes effect at the next task restart without touching the config topic.
    """

    def __init__(self) -> None:
        self._file: Path | None = None

    def configure(self, params: Mapping[str, str]) -> None:
        file = params.get(FILE_PARAM)
        if not file:
            raise ConfigError(f"the {PROVIDER_NAME} config provider needs the path of mm2.properties", key=FILE_PARAM)
        self._file = Path(file)

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if path:
            raise ConfigError(f"the {PROVIDER_NAME} config provider takes no path: ${{{PROVIDER_NAME}:KEY}}")
        if self._file is None:
            raise ConfigError(f"the {PROVIDER_NAME} config provider is not configured")
        props = load_properties(self._file)
        wanted = {k: props[k] for k in keys if k in props}
        return {k: str(v) for k, v in resolve_config_providers(wanted, props).items()}

    def close(self) -> None:
        pass
