"""Rendering configs for logs, errors and REST without leaking secrets.

mm2.properties nests client configs under prefixes (``A.consumer.ssl.key.password``,
``target.cluster.sasl.jaas.config``), so a key is secret when it *is* a PASSWORD-typed name or
*ends with* ``.<name>`` of one - the same suffix rule ``values_with_prefix_override`` uses to apply
them. Kafka's own client secrets are known even without a definition (``guess=True``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from connect_core.config.configdef import HIDDEN, ConfigDef, Password

__all__ = ["HIDDEN", "KAFKA_CLIENT_SECRETS", "is_sensitive", "masked"]

# Kafka's PASSWORD-typed client configs (SslConfigs, SaslConfigs); librdkafka's own secret keys, which a
# config may carry next to them (confluent-kafka takes them as they are); Schema Registry's credentials
# (a PASSWORD in its serde configs, found under a converter prefix).
KAFKA_CLIENT_SECRETS = frozenset(
    {
        "sasl.jaas.config",
        "ssl.key.password",
        "ssl.keystore.password",
        "ssl.keystore.key",
        "ssl.keystore.certificate.chain",
        "ssl.truststore.password",
        "ssl.truststore.certificates",
        "sasl.password",
        "ssl.key.pem",
        "sasl.oauthbearer.client.secret",
        "basic.auth.user.info",
    }
)


def _as_list(definitions: ConfigDef | Iterable[ConfigDef] | None) -> list[ConfigDef]:
    if definitions is None:
        return []
    return [definitions] if isinstance(definitions, ConfigDef) else list(definitions)


def _secret_names(defs: list[ConfigDef], guess: bool) -> frozenset[str]:
    names = {n for d in defs for n, k in d.keys.items() if k.type.is_sensitive}
    if guess:
        names |= KAFKA_CLIENT_SECRETS
    return frozenset(names)


def _matches(name: str, secrets: frozenset[str]) -> bool:
    if name in secrets:
        return True
    dot = name.find(".")
    while dot != -1:  # try every suffix after a dot: "a.consumer.ssl.key.password" -> "ssl.key.password"
        if name[dot + 1 :] in secrets:
            return True
        dot = name.find(".", dot + 1)
    return False


def is_sensitive(name: str, definitions: ConfigDef | Iterable[ConfigDef] | None = None, *, guess: bool = True) -> bool:
    """True when ``name`` (possibly prefixed) is a PASSWORD-typed key."""
    return _matches(name, _secret_names(_as_list(definitions), guess))


def masked(
    props: Mapping[str, Any],
    definition: ConfigDef | Iterable[ConfigDef] | None = None,
    *,
    guess: bool = True,
) -> dict[str, Any]:
    """A copy of ``props`` with secret keys (and any :class:`Password` value) shown as ``[hidden]``.

    Secret keys are PASSWORD-typed keys of ``definition`` (one or several), plus Kafka's client
    secrets when ``guess``, each also under any prefix. ``None`` stays ``None`` so "unset" is visible.
    """
    secrets = _secret_names(_as_list(definition), guess)
    return {
        k: (HIDDEN if v is not None and (isinstance(v, Password) or _matches(k, secrets)) else v)
        for k, v in props.items()
    }
