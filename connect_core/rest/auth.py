"""Who may call the REST API: HTTP basic auth as Java's BasicAuthSecurityRestExtension, or a plug-in.

Java enables basic auth with ``rest.extension.classes=org.apache.kafka.connect.rest.basic.auth.
extension.BasicAuthSecurityRestExtension`` and a JAAS file (``-Djava.security.auth.login.config``)
whose ``KafkaConnect`` entry names ``PropertyFileLoginModule`` with ``file="..."``, a properties file
of ``user=password`` lines. mm2 reads the same two files: the JAAS file from the worker key
``java.security.auth.login.config`` or, as Java, from ``-Djava.security.auth.login.config=`` in
``KAFKA_OPTS``; or, simpler, the credentials file straight from ``rest.basic.auth.credentials.file``.
As Java, an empty credentials file lets every request through (with a warning at start-up).

``rest.authenticator.class`` names another :class:`Authenticator` by import path
(``package.module.Class`` or ``package.module:Class``), built with the worker properties.

The internal worker-to-worker endpoints (followers' task configs, fencing) are not authenticated
here, exactly as Java's filter skips them: the herder checks their session-key signature instead.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import importlib
import logging
import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from connect_core.api.errors import ConfigError
from connect_core.config.properties import load_properties

log = logging.getLogger(__name__)

REST_EXTENSION_CLASSES = "rest.extension.classes"
BASIC_AUTH_EXTENSION = "org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension"
PROPERTY_FILE_LOGIN_MODULE = "org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule"
JAAS_LOGIN_CONFIG = "java.security.auth.login.config"
CREDENTIALS_FILE = "rest.basic.auth.credentials.file"
AUTHENTICATOR_CLASS = "rest.authenticator.class"
LOGIN_CONTEXT = "KafkaConnect"
UNAUTHORIZED_MESSAGE = "User cannot access the resource."


@dataclass(frozen=True)
class AuthRequest:
    """What an authenticator sees of a request (header names lower-case)."""

    method: str
    path: str
    headers: Mapping[str, str]

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@runtime_checkable
class Authenticator(Protocol):
    """Decides whether a request may reach the API; called from a worker thread, may block."""

    def authenticate(self, request: AuthRequest) -> bool: ...


def basic_credentials(header: str | None) -> tuple[str, str] | None:
    """(user, password) of a ``Basic`` Authorization header; None when absent or malformed."""
    if not header:
        return None
    scheme, sep, encoded = header.partition(" ")
    if not sep or not scheme or scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(encoded.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None
    user, sep, password = decoded.partition(":")
    if not sep or not user:
        return None
    return user, password


class BasicAuthenticator:
    """``user=password`` pairs from a properties file; compares in constant time."""

    def __init__(self, credentials: Mapping[str, str], source: str = "<credentials>") -> None:
        self._credentials = {u.encode(): p.encode() for u, p in credentials.items()}
        self.source = source

    def __repr__(self) -> str:  # never show the passwords
        return f"BasicAuthenticator({self.source}, {len(self._credentials)} user(s))"

    @classmethod
    def from_file(cls, path: str, key: str) -> BasicAuthenticator:
        p = Path(path)
        if not p.is_file():
            raise ConfigError(f"{key}: credentials file {p} does not exist", key=key)
        try:
            credentials = load_properties(p)
        except ConfigError as e:
            raise ConfigError(f"{key}: credentials file {p} could not be read: {e}", key=key) from None
        if not credentials:
            log.warning("Credentials file %s is empty: every REST request is let through (as Java does)", p)
        return cls(credentials, str(p))

    def authenticate(self, request: AuthRequest) -> bool:
        if not self._credentials:
            return True
        found = basic_credentials(request.header("authorization"))
        if found is None:
            return False
        expected = self._credentials.get(found[0].encode())
        # Compare against something even for an unknown user, so timing does not tell users apart.
        ok = hmac.compare_digest(found[1].encode(), expected if expected is not None else b"\0invalid")
        return ok and expected is not None


# ---------------------------------------------------------------------------------- JAAS


_JAAS_TOKEN = re.compile(r'\s+|//[^\n]*|/\*.*?\*/|"((?:[^"\\]|\\.)*)"|([{};=])|([^\s{};="]+)', re.S)


def parse_jaas(text: str, source: str) -> dict[str, list[tuple[str, str, dict[str, str]]]]:
    """JAAS login configuration: entry name -> [(login module class, flag, options)]."""
    tokens: list[tuple[str, str]] = []  # (kind, text): kind "q" quoted, "p" punctuation, "w" word
    pos = 0
    while pos < len(text):
        m = _JAAS_TOKEN.match(text, pos)
        if m is None:
            raise ConfigError(f"{source}: unexpected character {text[pos]!r} at offset {pos}", key=JAAS_LOGIN_CONFIG)
        pos = m.end()
        if m.group(1) is not None:
            tokens.append(("q", re.sub(r"\\(.)", r"\1", m.group(1))))
        elif m.group(2) is not None:
            tokens.append(("p", m.group(2)))
        elif m.group(3) is not None:
            tokens.append(("w", m.group(3)))

    def fail(what: str) -> ConfigError:
        return ConfigError(f"{source} is not a valid JAAS configuration: {what}", key=JAAS_LOGIN_CONFIG)

    entries: dict[str, list[tuple[str, str, dict[str, str]]]] = {}
    i = 0

    def take(kind: str | None = None, value: str | None = None) -> str:
        nonlocal i
        if i >= len(tokens):
            raise fail("it ends too early")
        k, v = tokens[i]
        if (kind is not None and k != kind) or (value is not None and v != value):
            raise fail(f"expected {value or 'a name'} but found {v!r}")
        i += 1
        return v

    while i < len(tokens):
        name = take("w")
        take("p", "{")
        modules: list[tuple[str, str, dict[str, str]]] = []
        while tokens[i : i + 1] != [("p", "}")]:
            module = take("w")
            flag = take("w")
            options: dict[str, str] = {}
            while tokens[i : i + 1] != [("p", ";")]:
                opt = take("w")
                take("p", "=")
                if i >= len(tokens) or tokens[i][0] == "p":
                    raise fail(f"option {opt} has no value")
                options[opt] = take()
            take("p", ";")
            modules.append((module, flag.lower(), options))
        take("p", "}")
        take("p", ";")
        entries[name] = modules
    return entries


def _jaas_file(props: Mapping[str, str], environ: Mapping[str, str]) -> str | None:
    configured = (props.get(JAAS_LOGIN_CONFIG) or "").strip()
    if configured:
        return configured
    prefix = f"-D{JAAS_LOGIN_CONFIG}="
    try:
        words = shlex.split(environ.get("KAFKA_OPTS", ""))
    except ValueError:
        words = []
    for word in words:
        if word.startswith(prefix):
            return word[len(prefix) :]
    return None


def credentials_file_from_jaas(path: str) -> str:
    """The ``file`` option of the ``KafkaConnect`` entry's PropertyFileLoginModule."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise ConfigError(
            f"{JAAS_LOGIN_CONFIG}: JAAS file {p} could not be read: {e.strerror or e}", key=JAAS_LOGIN_CONFIG
        ) from None
    entries = parse_jaas(text, str(p))
    modules = entries.get(LOGIN_CONTEXT)
    if not modules:
        raise ConfigError(f"{JAAS_LOGIN_CONFIG}: JAAS file {p} has no {LOGIN_CONTEXT} entry", key=JAAS_LOGIN_CONFIG)
    if len(modules) != 1 or modules[0][0] != PROPERTY_FILE_LOGIN_MODULE:
        raise ConfigError(
            f"{JAAS_LOGIN_CONFIG}: the {LOGIN_CONTEXT} entry of {p} must name exactly one login module, "
            f"{PROPERTY_FILE_LOGIN_MODULE} (found {', '.join(m[0] for m in modules)})",
            key=JAAS_LOGIN_CONFIG,
        )
    file = modules[0][2].get("file", "").strip()
    if not file:
        raise ConfigError(
            f"{JAAS_LOGIN_CONFIG}: Property Credentials file must be specified (the file option "
            f"of {PROPERTY_FILE_LOGIN_MODULE} in {p})",
            key=JAAS_LOGIN_CONFIG,
        )
    return file


# ---------------------------------------------------------------------------------- loading


def _load_class(name: str) -> type:
    module_name, sep, attr = name.partition(":")
    if not sep:
        module_name, _, attr = name.rpartition(".")
    try:
        found = getattr(importlib.import_module(module_name), attr) if module_name and attr else None
    except ImportError as e:
        raise ConfigError(
            f"Class {name} could not be imported for {AUTHENTICATOR_CLASS}: {e}", key=AUTHENTICATOR_CLASS
        ) from None
    except AttributeError:
        found = None
    if not isinstance(found, type):
        raise ConfigError(f"Class {name} could not be found for {AUTHENTICATOR_CLASS}", key=AUTHENTICATOR_CLASS)
    return found


def load_authenticator(props: Mapping[str, str], environ: Mapping[str, str] | None = None) -> Authenticator | None:
    """The authenticator these worker properties ask for; None when the API is open."""
    environ = os.environ if environ is None else environ
    extensions = [e.strip() for e in (props.get(REST_EXTENSION_CLASSES) or "").split(",") if e.strip()]
    for ext in extensions:
        if ext != BASIC_AUTH_EXTENSION:
            raise ConfigError(
                f"REST extension {ext} is not available in mm2: {REST_EXTENSION_CLASSES} accepts only "
                f"{BASIC_AUTH_EXTENSION}; plug in another authenticator with {AUTHENTICATOR_CLASS}",
                key=REST_EXTENSION_CLASSES,
            )
    custom = (props.get(AUTHENTICATOR_CLASS) or "").strip()
    credentials = (props.get(CREDENTIALS_FILE) or "").strip()
    basic = bool(extensions) or bool(credentials)
    if custom and basic:
        raise ConfigError(
            f"{AUTHENTICATOR_CLASS} and basic auth ({REST_EXTENSION_CLASSES} / {CREDENTIALS_FILE}) exclude each other",
            key=AUTHENTICATOR_CLASS,
        )
    if custom:
        cls = _load_class(custom)
        try:
            instance = cls(dict(props))
        except ConfigError:
            raise
        except Exception as e:
            raise ConfigError(f"{custom} could not be created: {e}", key=AUTHENTICATOR_CLASS) from None
        if not isinstance(instance, Authenticator):
            raise ConfigError(f"{custom} has no authenticate(request) method", key=AUTHENTICATOR_CLASS)
        return instance
    if not basic:
        return None
    if credentials:
        return BasicAuthenticator.from_file(credentials, CREDENTIALS_FILE)
    jaas = _jaas_file(props, environ)
    if jaas is None:
        raise ConfigError(
            f"{BASIC_AUTH_EXTENSION} needs a JAAS file: set {JAAS_LOGIN_CONFIG} (or -D{JAAS_LOGIN_CONFIG}=... in "
            f"KAFKA_OPTS), or point {CREDENTIALS_FILE} at the user=password file",
            key=REST_EXTENSION_CLASSES,
        )
    return BasicAuthenticator.from_file(credentials_file_from_jaas(jaas), JAAS_LOGIN_CONFIG)
