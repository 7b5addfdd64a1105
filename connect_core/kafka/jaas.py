"""Java's ``sasl.jaas.config`` turned into librdkafka's SASL settings (pure logic, no I/O).

A JAAS entry is ``<LoginModule class> <flag> name=value ... ;``. librdkafka takes no JAAS: each
login module Kafka ships has a librdkafka equivalent, mapped here; any other module is a
configuration error (a client that starts and then fails every login helps nobody).

- PlainLoginModule, ScramLoginModule -> ``sasl.username``/``sasl.password``;
- OAuthBearerLoginModule: with ``sasl.oauthbearer.token.endpoint.url`` (Kafka's OIDC client
  credentials flow) -> librdkafka's ``sasl.oauthbearer.method=oidc`` and its ``client.id``,
  ``client.secret``, ``scope`` and ``extensions``; without it, Kafka's unsecured tokens
  (``unsecuredLogin*`` options) -> ``enable.sasl.oauthbearer.unsecure.jwt`` with
  ``sasl.oauthbearer.config``;
- Krb5LoginModule (GSSAPI) -> ``sasl.kerberos.keytab``/``sasl.kerberos.principal``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from connect_core.api.errors import ConfigError

KEY = "sasl.jaas.config"

_ENTRY = re.compile(r"^\s*([\w.$]+)\s+(required|requisite|sufficient|optional)\b(.*?);?\s*$", re.S)
_OPTION = re.compile(r'\s*([\w.\-]+)\s*=\s*("((?:[^"\\]|\\.)*)"|[^\s;"]+)')
_ESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True)
class JaasEntry:
    module: str  # the class's simple name
    options: dict[str, str]

    def __repr__(self) -> str:  # options hold passwords
        return f"JaasEntry({self.module}, options={sorted(self.options)})"


def parse(text: str) -> JaasEntry:
    """One JAAS entry; a ConfigError naming ``sasl.jaas.config`` (never echoing it) when malformed."""
    m = _ENTRY.match(text)
    if m is None:
        raise ConfigError("expected '<LoginModule class> required name=\"value\" ...;'", key=KEY)
    options: dict[str, str] = {}
    rest = m.group(3).strip().rstrip(";")
    pos = 0
    while pos < len(rest):
        om = _OPTION.match(rest, pos)
        if om is None:
            if rest[pos:].strip():
                raise ConfigError('cannot read its options (name="value" pairs)', key=KEY)
            break
        quoted = om.group(3)
        options[om.group(1)] = _ESCAPE.sub(r"\1", quoted) if quoted is not None else om.group(2)
        pos = om.end()
    return JaasEntry(m.group(1).rsplit(".", 1)[-1], options)


def translate(text: str, props: Mapping[str, str]) -> dict[str, str]:
    """librdkafka keys for a ``sasl.jaas.config`` (``props``: the other client keys, as strings)."""
    entry = parse(text)
    handler = _MODULES.get(entry.module)
    if handler is None:
        supported = ", ".join(sorted(_MODULES))
        raise ConfigError(f"login module {entry.module} is not supported (supported: {supported})", key=KEY)
    return handler(entry.options, props)


def _user_password(options: dict[str, str], _props: Mapping[str, str]) -> dict[str, str]:
    if "username" not in options:
        raise ConfigError('the login module needs username="..." and password="..."', key=KEY)
    return {"sasl.username": options["username"], "sasl.password": options.get("password", "")}


def _oauthbearer(options: dict[str, str], props: Mapping[str, str]) -> dict[str, str]:
    endpoint = props.get("sasl.oauthbearer.token.endpoint.url", "").strip()
    extensions = {k[len("extension_") :]: v for k, v in options.items() if k.startswith("extension_")}
    if endpoint:
        out = {"sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.token.endpoint.url": endpoint}
        for java, rd in (("clientId", "client.id"), ("clientSecret", "client.secret"), ("scope", "scope")):
            if options.get(java):
                out[f"sasl.oauthbearer.{rd}"] = options[java]
        if "sasl.oauthbearer.client.id" not in out:
            raise ConfigError('OAUTHBEARER with a token endpoint needs clientId="..." and clientSecret="..."', key=KEY)
        if extensions:
            out["sasl.oauthbearer.extensions"] = ",".join(f"{k}={v}" for k, v in extensions.items())
        return out
    # Kafka's unsecured tokens (development and tests): the claims become librdkafka's unsecured JWT.
    principal_claim = options.get("unsecuredLoginPrincipalClaimName", "sub")
    scope_claim = options.get("unsecuredLoginScopeClaimName", "scope")
    principal = options.get(f"unsecuredLoginStringClaim_{principal_claim}")
    if not principal:
        raise ConfigError(
            f"OAUTHBEARER without sasl.oauthbearer.token.endpoint.url needs "
            f'unsecuredLoginStringClaim_{principal_claim}="<principal>"',
            key=KEY,
        )
    parts = [f"principal={principal}"]
    scope = options.get(f"unsecuredLoginListClaim_{scope_claim}")
    if scope:  # Kafka: the value's first character is the delimiter
        parts.append("scope=" + ",".join(s for s in scope[1:].split(scope[0]) if s))
    if options.get("unsecuredLoginLifetimeSeconds"):
        parts.append(f"lifeSeconds={options['unsecuredLoginLifetimeSeconds']}")
    parts += [f"extension_{k}={v}" for k, v in extensions.items()]
    parts += [
        f"extension_{k[len('unsecuredLoginExtension_') :]}={v}"
        for k, v in options.items()
        if k.startswith("unsecuredLoginExtension_")
    ]
    return {"enable.sasl.oauthbearer.unsecure.jwt": "true", "sasl.oauthbearer.config": " ".join(parts)}


def _kerberos(options: dict[str, str], _props: Mapping[str, str]) -> dict[str, str]:
    out: dict[str, str] = {}
    if options.get("principal"):
        out["sasl.kerberos.principal"] = options["principal"]
    if options.get("useKeyTab", "false").lower() == "true":
        if not options.get("keyTab"):
            raise ConfigError('useKeyTab=true needs keyTab="<path>"', key=KEY)
        out["sasl.kerberos.keytab"] = options["keyTab"]
    return out


_MODULES = {
    "PlainLoginModule": _user_password,
    "ScramLoginModule": _user_password,
    "OAuthBearerLoginModule": _oauthbearer,
    "Krb5LoginModule": _kerberos,
}
