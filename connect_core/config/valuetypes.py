"""Value types of configuration keys and their parsing from strings (Kafka ``ConfigDef.parseType``).

String values are trimmed; BOOLEAN accepts only ``true``/``false`` (any case); INT/SHORT/LONG use
Java's integer grammar and ranges; DOUBLE uses Java's ``Double.parseDouble`` grammar; LIST splits
on ``\\s*,\\s*`` with the empty string meaning ``[]``; CLASS is a dotted (Java or Python) name kept as
a string; PASSWORD wraps the text in :class:`Password` so it never leaks through ``str``/``repr`` or
error messages.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Final

from connect_core.api.errors import ConfigError, ConfigIssue

__all__ = [
    "HIDDEN",
    "NO_DEFAULT",
    "Importance",
    "Password",
    "Type",
    "Width",
    "convert_to_string",
    "invalid_value",
    "parse_type",
    "render_value",
]

HIDDEN: Final = "[hidden]"


class _NoDefault:
    """Sentinel type: the key is required (Kafka's ``NO_DEFAULT_VALUE``)."""

    _instance: _NoDefault | None = None

    def __new__(cls) -> _NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"

    def __reduce__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT: Final = _NoDefault()


class Password:
    """A secret value. ``str``/``repr`` never reveal it; read ``.value`` deliberately."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    @property
    def value(self) -> str:
        return self._value

    def __str__(self) -> str:
        return HIDDEN

    def __repr__(self) -> str:
        return HIDDEN

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


class Type(enum.Enum):
    """Value types a key may have (Kafka ``ConfigDef.Type``)."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"

    @property
    def is_sensitive(self) -> bool:
        return self is Type.PASSWORD


class Importance(enum.Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(enum.Enum):
    """UI hint for how wide an input box should be (Kafka ``ConfigDef.Width``)."""

    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


# --------------------------------------------------------------------------- value rendering


def render_value(value: Any, sensitive: bool = False) -> str:
    """Render a value for an error message; secrets never appear."""
    if sensitive or isinstance(value, Password):
        return HIDDEN
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(render_value(v) for v in value)
    return str(value)


def invalid_value(name: str, value: Any, reason: str | None = None) -> ConfigError:
    """Build the error a validator raises for a bad value (Kafka's ``ConfigException(name, value, msg)``)."""
    msg = f"Invalid value {render_value(value)} for configuration {name}"
    if reason:
        msg += f": {reason}"
    return ConfigError([ConfigIssue(name, msg)])


# --------------------------------------------------------------------------- type parsing

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
# Java Double.parseDouble: optional sign, NaN/Infinity, decimal with exponent and f/F/d/D suffix,
# or a hexadecimal float (0x1.8p3).
_DOUBLE_RE = re.compile(
    r"[+-]?(?:NaN|Infinity|"
    r"(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?[fFdD]?)|"
    r"(?:0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?[0-9]+[fFdD]?))\Z"
)
_LIST_SPLIT_RE = re.compile(r"\s*,\s*")
_CLASS_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*\Z")
_INT_BOUNDS: Final = {
    Type.SHORT: (-(2**15), 2**15 - 1, "16-bit integer (short)"),
    Type.INT: (-(2**31), 2**31 - 1, "32-bit integer"),
    Type.LONG: (-(2**63), 2**63 - 1, "64-bit integer (long)"),
}


def _parse_double(text: str) -> float:
    if not _DOUBLE_RE.match(text):
        raise ValueError(text)
    body = text.rstrip("fFdD") if not text.endswith("Infinity") else text
    if "x" in body or "X" in body:
        sign = -1.0 if body.startswith("-") else 1.0
        return sign * float.fromhex(body.lstrip("+-"))
    return float(body.replace("Infinity", "inf"))


def parse_type(name: str, value: Any, type_: Type, *, sensitive: bool | None = None) -> Any:
    """Convert ``value`` (a string or an already-typed Python value) to ``type_``.

    Raises :class:`ConfigError` naming ``name``; the value is shown unless the key is sensitive.
    """
    if value is None:
        return None
    hide = type_.is_sensitive if sensitive is None else sensitive
    shown = HIDDEN if hide else value

    def bad(reason: str) -> ConfigError:
        return invalid_value(name, shown, reason)

    trimmed = value.strip() if isinstance(value, str) else None
    if type_ is Type.BOOLEAN:
        if trimmed is not None:
            low = trimmed.lower()
            if low == "true":
                return True
            if low == "false":
                return False
        elif isinstance(value, bool):
            return value
        raise bad("Expected value to be either true or false")
    if type_ is Type.PASSWORD:
        if isinstance(value, Password):
            return value
        if trimmed is not None:
            return Password(trimmed)
        raise bad(f"Expected value to be a string, but it was a {type(value).__name__}")
    if type_ is Type.STRING:
        if trimmed is not None:
            return trimmed
        raise bad(f"Expected value to be a string, but it was a {type(value).__name__}")
    if type_ in _INT_BOUNDS:
        lo, hi, what = _INT_BOUNDS[type_]
        if trimmed is not None:
            if not _INT_RE.match(trimmed):
                raise bad(f"Not a number of type {type_.value}")
            number = int(trimmed)
            if not lo <= number <= hi:
                raise bad(f"Not a number of type {type_.value}")
            return number
        if isinstance(value, int) and not isinstance(value, bool):
            if not lo <= value <= hi:
                raise bad(f"Not a number of type {type_.value}")
            return value
        raise bad(f"Expected value to be a {what}, but it was a {type(value).__name__}")
    if type_ is Type.DOUBLE:
        if trimmed is not None:
            try:
                return _parse_double(trimmed)
            except ValueError:
                raise bad(f"Not a number of type {type_.value}") from None
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        raise bad(f"Expected value to be a double, but it was a {type(value).__name__}")
    if type_ is Type.LIST:
        if isinstance(value, list | tuple):
            return [v.strip() if isinstance(v, str) else v for v in value]
        if trimmed is not None:
            return [] if not trimmed else _LIST_SPLIT_RE.split(trimmed)
        raise bad("Expected a comma separated list.")
    if type_ is Type.CLASS:
        if isinstance(value, type):
            return f"{value.__module__}.{value.__qualname__}"
        if trimmed is not None:
            if _CLASS_RE.match(trimmed):
                return trimmed
            raise bad(f"Class {trimmed} could not be found.")
        raise bad("Expected a Class instance or class name.")
    raise AssertionError(f"unknown type {type_}")  # pragma: no cover


def convert_to_string(value: Any, type_: Type | None = None, *, reveal: bool = False) -> str | None:
    """Render a parsed value the way Kafka's ``ConfigDef.convertToString`` does.

    Passwords come out as ``[hidden]`` unless ``reveal`` is set (for writing configs back out).
    """
    if value is None:
        return None
    if isinstance(value, Password):
        return value.value if reveal else HIDDEN
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    if isinstance(value, float) and type_ in (None, Type.DOUBLE):
        return _java_double_str(value)
    return str(value)


def _java_double_str(value: float) -> str:
    if value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)
