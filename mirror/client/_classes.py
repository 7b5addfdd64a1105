"""Resolve ``*.class`` settings (policy and filter classes) to Python classes.

Kafka configs name classes by their Java name; mm2 must accept the same files, so the well-known
Java names map to our implementations. Anything else is a Python path, ``pkg.mod.Class`` or
``pkg.mod:Class``. A bad name is a configuration mistake, reported against the key that held it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, cast

from connect_core.config.class_names import import_object
from mirror.client.errors import MirrorConfigError

T = TypeVar("T")


def resolve_class(
    key: str,
    value: Any,
    base: type[Any],
    aliases: Mapping[str, type[T]],
) -> type[T]:
    """Return the class that ``value`` (the setting ``key``) names; it must subclass ``base``."""
    if isinstance(value, type):
        cls: Any = value
    elif isinstance(value, str):
        name = value.strip()
        if not name:
            raise MirrorConfigError(f"expected a class name, got {value!r}", key=key)
        cls = aliases.get(name)
        if cls is None:
            cls = _import(key, name)
    else:
        raise MirrorConfigError(f"expected a class name, got {value!r}", key=key)
    if not isinstance(cls, type) or not issubclass(cls, base):
        raise MirrorConfigError(f"class {value!r} is not a {base.__name__}", key=key)
    return cast("type[T]", cls)


def _import(key: str, name: str) -> Any:
    try:
        return import_object(name)
    except ImportError as e:
        raise MirrorConfigError(
            f"class {name!r} not found (use a Java MM2 class name or pkg.module.Class): {e}", key=key
        ) from e
    except AttributeError as e:
        raise MirrorConfigError(f"class {name!r} not found: {e}", key=key) from e


def instantiate(key: str, cls: type[T]) -> T:
    """Construct ``cls`` with no arguments, as Kafka's ``getConfiguredInstance`` does."""
    try:
        return cls()
    except TypeError as e:
        raise MirrorConfigError(
            f"class {cls.__module__}.{cls.__qualname__} cannot be built without arguments: {e}", key=key
        ) from e


def java_bool(value: Any) -> bool:
    """Java ``Boolean.parseBoolean(value.toString())``: only a case-insensitive "true" is true."""
    if isinstance(value, bool):
        return value
    return str(value).strip().lower() == "true"
