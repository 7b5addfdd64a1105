"""Config providers: ``${provider:[path:]key}`` references resolved at load time (Kafka KIP-297).

Syntax and pattern are Kafka's ``ConfigTransformer``: ``${env:NAME}``, ``${file:/path/x.properties:key}``,
``${directory:/run/secrets:name}``. Providers are configured the Kafka way::

    config.providers=env,file
    config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
    config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
    config.providers.file.param.allowed.paths=/etc/mm2/secrets

Kafka's own three providers are built in under their Java class names; any other ``.class`` is a
Python dotted path ``package.module.Class`` implementing :class:`ConfigProvider`.

Two deliberate differences from Kafka, both to turn silent misconfiguration into one clear error:

* Kafka leaves a reference it cannot resolve as literal text (so a broker later rejects a password
  like ``${env:PASS}``). Here an unknown provider, unknown env var, missing/unreadable file or
  missing key raises :class:`ConfigError` naming the config key and the reference
  (``strict=False`` restores Kafka's behaviour).
* Kafka resolves only providers declared in ``config.providers``. For convenience the names
  ``env`` and ``file`` work without a declaration (``builtin=True``, the default), bound to the
  Env/File providers with no parameters. A declaration of the same name always wins, so Kafka-style
  configs behave exactly as in Java; pass ``builtin=False`` for Kafka's strict behaviour.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from connect_core.api.errors import ConfigError, ConfigIssue
from connect_core.config.class_names import import_class
from connect_core.config.properties import load_properties

__all__ = [
    "BUILTIN_PROVIDER_CLASSES",
    "CONFIG_PROVIDERS_CONFIG",
    "REFERENCE_PATTERN",
    "ConfigProvider",
    "ConfigTransformer",
    "DirectoryConfigProvider",
    "EnvVarConfigProvider",
    "FileConfigProvider",
    "Reference",
    "find_references",
    "instantiate_providers",
    "resolve_config_providers",
]

CONFIG_PROVIDERS_CONFIG = "config.providers"
REFERENCE_PATTERN = re.compile(r"\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}")

_JAVA_PKG = "org.apache.kafka.common.config.provider."
ENV_PROVIDER_CLASS = _JAVA_PKG + "EnvVarConfigProvider"
FILE_PROVIDER_CLASS = _JAVA_PKG + "FileConfigProvider"
DIRECTORY_PROVIDER_CLASS = _JAVA_PKG + "DirectoryConfigProvider"
# Undeclared names usable for convenience when builtin=True.
_CONVENIENCE = {"env": ENV_PROVIDER_CLASS, "file": FILE_PROVIDER_CLASS}


@runtime_checkable
class ConfigProvider(Protocol):
    """Kafka's ``ConfigProvider``: ``get`` returns the subset of ``keys`` it knows under ``path``."""

    def configure(self, params: Mapping[str, str]) -> None: ...

    def get(self, path: str, keys: set[str]) -> dict[str, str]: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Reference:
    """One ``${provider:[path:]key}`` occurrence."""

    provider: str
    path: str
    key: str
    text: str


def find_references(value: str) -> list[Reference]:
    return [Reference(m.group(1), m.group(3) or "", m.group(4), m.group(0)) for m in REFERENCE_PATTERN.finditer(value)]


class _ProviderLookupError(Exception):
    """A provider could not answer at all (bad path, unreadable file): reported per reference."""


# --------------------------------------------------------------------------- allowed paths


def _allowed_paths(value: str | None) -> list[Path] | None:
    if not value:
        return None
    out = []
    for raw in value.split(","):
        p = Path(os.path.normpath(raw.strip()))
        if not p.is_absolute():
            raise ConfigError(f"Path {p} is not absolute", key="allowed.paths")
        if not p.exists():
            raise ConfigError(f"Path {p} does not exist", key="allowed.paths")
        out.append(p)
    return out


def _check_path(allowed: list[Path] | None, path: str) -> Path:
    p = Path(path)
    if allowed is None:
        return p
    norm = Path(os.path.normpath(path))
    if any(norm == a or a in norm.parents for a in allowed):
        return norm
    raise _ProviderLookupError(f"path {path} is not in allowed.paths")


# --------------------------------------------------------------------------- built-in providers


class EnvVarConfigProvider:
    """``${env:NAME}``; ``allowlist.pattern`` (full-match regex) limits which variables are visible."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self._environ = environ
        self._pattern: re.Pattern[str] | None = None

    def configure(self, params: Mapping[str, str]) -> None:
        pattern = params.get("allowlist.pattern")
        self._pattern = re.compile(pattern) if pattern is not None else None

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if path:
            raise _ProviderLookupError(f"path is not supported for the env provider, invalid value '{path}'")
        env = os.environ if self._environ is None else self._environ
        return {k: env[k] for k in keys if k in env and (self._pattern is None or self._pattern.fullmatch(k))}

    def close(self) -> None:
        pass


class FileConfigProvider:
    """``${file:/path/to/x.properties:key}``: a key of a properties file (``allowed.paths`` honoured)."""

    def __init__(self) -> None:
        self._allowed: list[Path] | None = None

    def configure(self, params: Mapping[str, str]) -> None:
        self._allowed = _allowed_paths(params.get("allowed.paths"))

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if not path:
            raise _ProviderLookupError("the file provider needs a path: ${file:/path/to/file:key}")
        p = _check_path(self._allowed, path)
        try:
            data = load_properties(p)
        except ConfigError as e:
            raise _ProviderLookupError(str(e)) from None
        return {k: data[k] for k in keys if k in data}

    def close(self) -> None:
        pass


class DirectoryConfigProvider:
    """``${directory:/run/secrets:name}``: the whole content of file ``name`` in a directory."""

    def __init__(self) -> None:
        self._allowed: list[Path] | None = None

    def configure(self, params: Mapping[str, str]) -> None:
        self._allowed = _allowed_paths(params.get("allowed.paths"))

    def get(self, path: str, keys: set[str]) -> dict[str, str]:
        if not path:
            raise _ProviderLookupError("the directory provider needs a path")
        d = _check_path(self._allowed, path)
        if not d.is_dir():
            raise _ProviderLookupError(f"{path} is not a directory")
        out: dict[str, str] = {}
        for k in keys:
            f = d / k
            if "/" in k or k in ("", ".", "..") or not f.is_file():
                continue
            try:
                out[k] = f.read_text(encoding="utf-8")
            except OSError as e:
                raise _ProviderLookupError(f"could not read {f}: {e.strerror or e}") from None
        return out

    def close(self) -> None:
        pass


BUILTIN_PROVIDER_CLASSES: dict[str, type] = {
    ENV_PROVIDER_CLASS: EnvVarConfigProvider,
    FILE_PROVIDER_CLASS: FileConfigProvider,
    DIRECTORY_PROVIDER_CLASS: DirectoryConfigProvider,
}


def _load_class(name: str) -> type:
    if name in BUILTIN_PROVIDER_CLASSES:
        return BUILTIN_PROVIDER_CLASSES[name]
    return import_class(name)


# --------------------------------------------------------------------------- instantiation


def instantiate_providers(
    props: Mapping[str, Any],
    *,
    builtin: bool = True,
    environ: Mapping[str, str] | None = None,
) -> dict[str, ConfigProvider]:
    """Providers named in ``config.providers`` (plus the convenience ``env``/``file`` if ``builtin``)."""
    providers: dict[str, ConfigProvider] = {}
    issues: list[ConfigIssue] = []
    declared = str(props.get(CONFIG_PROVIDERS_CONFIG) or "")
    for name in (n.strip() for n in declared.split(",")):
        if not name:
            continue
        class_key = f"{CONFIG_PROVIDERS_CONFIG}.{name}.class"
        class_name = props.get(class_key)
        if not class_name:
            issues.append(ConfigIssue(class_key, f"config provider '{name}' is declared but has no class"))
            continue
        class_name = str(class_name).strip()
        try:
            cls = _load_class(class_name)
        except (ImportError, AttributeError, ValueError):
            issues.append(ConfigIssue(class_key, f"Could not load config provider class {class_name}"))
            continue
        prefix = f"{CONFIG_PROVIDERS_CONFIG}.{name}.param."
        params = {k[len(prefix) :]: str(v) for k, v in props.items() if k.startswith(prefix) and len(k) > len(prefix)}
        try:
            provider = cls(environ) if cls is EnvVarConfigProvider else cls()
            provider.configure(params)
        except ConfigError as e:
            issues.extend(ConfigIssue(prefix + (i.key or "").lstrip("."), i.message) for i in e.issues)
            continue
        providers[name] = provider
    if builtin:
        for name, class_name in _CONVENIENCE.items():
            if name not in providers:
                cls = BUILTIN_PROVIDER_CLASSES[class_name]
                provider = cls(environ) if cls is EnvVarConfigProvider else cls()
                provider.configure({})
                providers[name] = provider
    if issues:
        raise ConfigError(issues)
    return providers


# --------------------------------------------------------------------------- transformation


class ConfigTransformer:
    """Replaces references in config values using a fixed set of providers.

    Each (provider, path) is asked once per :meth:`transform` call, with all keys wanted from it,
    so a secrets file is read once however many keys reference it.
    """

    def __init__(self, providers: Mapping[str, ConfigProvider], *, strict: bool = True) -> None:
        self.providers = dict(providers)
        self.strict = strict

    def transform(self, props: Mapping[str, Any]) -> dict[str, Any]:
        wanted: dict[tuple[str, str], set[str]] = {}
        refs_by_key: dict[str, list[Reference]] = {}
        for k, v in props.items():
            if isinstance(v, str) and "${" in v:
                refs = find_references(v)
                if refs:
                    refs_by_key[k] = refs
                    for r in refs:
                        wanted.setdefault((r.provider, r.path), set()).add(r.key)
        if not refs_by_key:
            return dict(props)

        found: dict[tuple[str, str], dict[str, str]] = {}
        failures: dict[tuple[str, str], str] = {}
        for (pname, path), keys in wanted.items():
            provider = self.providers.get(pname)
            if provider is None:
                failures[(pname, path)] = f"unknown config provider '{pname}' (declare it in config.providers)"
                continue
            try:
                found[(pname, path)] = provider.get(path, set(keys))
            except _ProviderLookupError as e:
                failures[(pname, path)] = str(e)
            except ConfigError as e:
                failures[(pname, path)] = e.describe()
            except OSError as e:
                failures[(pname, path)] = f"{e.strerror or e}"

        issues: list[ConfigIssue] = []
        out = dict(props)
        for k, refs in refs_by_key.items():
            value: str = props[k]
            for r in refs:
                data = found.get((r.provider, r.path))
                if data is not None and r.key in data:
                    continue
                if not self.strict:
                    continue
                reason = failures.get((r.provider, r.path)) or _missing_reason(r)
                issues.append(ConfigIssue(k, f"cannot resolve {r.text}: {reason}"))

            def repl(m: re.Match[str]) -> str:
                data = found.get((m.group(1), m.group(3) or ""))
                if data is None:
                    return m.group(0)
                return data.get(m.group(4), m.group(0))

            out[k] = REFERENCE_PATTERN.sub(repl, value)
        if issues:
            raise ConfigError(issues)
        return out


def _missing_reason(r: Reference) -> str:
    if r.provider == "env" and not r.path:
        return f"environment variable {r.key} is not set"
    if r.path:
        return f"key {r.key} not found in {r.path}"
    return f"key {r.key} not found"


def resolve_config_providers(
    props: Mapping[str, Any],
    provider_props: Mapping[str, Any] | None = None,
    *,
    builtin: bool = True,
    strict: bool = True,
    environ: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Resolve every ``${provider:[path:]key}`` in ``props``.

    Providers come from ``provider_props`` (e.g. the worker config when resolving a connector
    config), else from ``props`` itself. Raises one :class:`ConfigError` listing every reference
    that could not be resolved, each naming its config key; values are never included.
    """
    source = props if provider_props is None else provider_props
    providers = instantiate_providers(source, builtin=builtin, environ=environ)
    try:
        return ConfigTransformer(providers, strict=strict).transform(props)
    finally:
        for p in providers.values():
            try:
                p.close()
            except Exception:  # a provider failing to close must not hide the result
                pass
