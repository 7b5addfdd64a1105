"""Declarative configuration definitions, in the spirit of Kafka's ``ConfigDef``.

A :class:`ConfigDef` names every key a component accepts, with its type, default, validator and
documentation. One definition drives three things that must never disagree: parsing (``parse``,
which raises one :class:`ConfigError` listing *every* problem), the REST ``config/validate``
endpoint (``validate``, per-key :class:`ConfigValue` results) and the generated reference docs.

Parsing follows ``org.apache.kafka.common.config.ConfigDef.parseType``: string values are trimmed;
BOOLEAN accepts only ``true``/``false`` (any case); INT/SHORT/LONG use Java's integer grammar and
ranges; DOUBLE uses Java's ``Double.parseDouble`` grammar; LIST splits on ``\\s*,\\s*`` with the
empty string meaning ``[]``; CLASS is a dotted (Java or Python) name kept as a string; PASSWORD
wraps the text in :class:`Password` so it never leaks through ``str``/``repr``/error messages.

Deliberate difference from Kafka: the built-in validators let ``None`` through (except
:class:`NonNullValidator`), so ``define("x", Type.STRING, None, ValidString.in_("a", "b"))`` is an
optional key rather than a definition-time crash.
"""

from __future__ import annotations

import enum
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, Protocol, runtime_checkable

from connect_core.api.errors import ConfigError, ConfigIssue

__all__ = [
    "HIDDEN",
    "NO_DEFAULT",
    "AbstractConfig",
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "ConfigDef",
    "ConfigKey",
    "ConfigValue",
    "Importance",
    "LambdaValidator",
    "NonEmptyString",
    "NonNullValidator",
    "Password",
    "Range",
    "Recommender",
    "Type",
    "ValidList",
    "ValidString",
    "Validator",
    "Width",
    "convert_to_string",
    "invalid_value",
    "parse_type",
]

log = logging.getLogger(__name__)

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


def _render(value: Any, sensitive: bool = False) -> str:
    """Render a value for an error message; secrets never appear."""
    if sensitive or isinstance(value, Password):
        return HIDDEN
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(_render(v) for v in value)
    return str(value)


def invalid_value(name: str, value: Any, reason: str | None = None) -> ConfigError:
    """Build the error a validator raises for a bad value (Kafka's ``ConfigException(name, value, msg)``)."""
    msg = f"Invalid value {_render(value)}"
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


# --------------------------------------------------------------------------- validators


@runtime_checkable
class Validator(Protocol):
    """Anything with ``ensure_valid(name, value)`` raising :class:`ConfigError`."""

    def ensure_valid(self, name: str, value: Any) -> None: ...


ValidatorLike = Validator | Callable[[str, Any], None]


def _run_validator(validator: ValidatorLike, name: str, value: Any) -> None:
    if isinstance(validator, Validator):
        validator.ensure_valid(name, value)
    else:
        validator(name, value)


class _BaseValidator:
    """Makes validators usable as plain callables too."""

    def ensure_valid(self, name: str, value: Any) -> None:  # pragma: no cover - overridden
        raise NotImplementedError

    def __call__(self, name: str, value: Any) -> None:
        self.ensure_valid(name, value)


def _num(n: float) -> str:
    return str(int(n)) if isinstance(n, int) or (isinstance(n, float) and n.is_integer()) else str(n)


class Range(_BaseValidator):
    """Numeric bounds, inclusive; ``None`` bound means open."""

    def __init__(self, min_: float | None = None, max_: float | None = None) -> None:
        self.min = min_
        self.max = max_

    @classmethod
    def at_least(cls, min_: float) -> Range:
        return cls(min_, None)

    @classmethod
    def at_most(cls, max_: float) -> Range:
        return cls(None, max_)

    @classmethod
    def between(cls, min_: float, max_: float) -> Range:
        return cls(min_, max_)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise invalid_value(name, value, "Value must be a number")
        if self.min is not None and value < self.min:
            raise invalid_value(name, value, f"Value must be at least {_num(self.min)}")
        if self.max is not None and value > self.max:
            raise invalid_value(name, value, f"Value must be no more than {_num(self.max)}")

    def __str__(self) -> str:
        if self.min is None and self.max is None:
            return "[...]"
        if self.min is None:
            return f"[...,{_num(self.max)}]"  # type: ignore[arg-type]
        if self.max is None:
            return f"[{_num(self.min)},...]"
        return f"[{_num(self.min)},...,{_num(self.max)}]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Range) and (self.min, self.max) == (other.min, other.max)

    def __hash__(self) -> int:
        return hash((Range, self.min, self.max))


class ValidString(_BaseValidator):
    """The value must be exactly one of the listed strings."""

    def __init__(self, valid: Iterable[str]) -> None:
        self.valid = list(valid)

    @classmethod
    def in_(cls, *valid: str) -> ValidString:
        return cls(valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if value not in self.valid:
            raise invalid_value(name, value, "String must be one of: " + ", ".join(self.valid))

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.valid == self.valid  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), tuple(self.valid)))


class CaseInsensitiveValidString(ValidString):
    """Like :class:`ValidString`, ignoring case."""

    def __init__(self, valid: Iterable[str]) -> None:
        super().__init__(valid)
        self._upper = {v.upper() for v in self.valid}

    @classmethod
    def in_(cls, *valid: str) -> CaseInsensitiveValidString:
        return cls(valid)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, str) or value.upper() not in self._upper:
            raise invalid_value(
                name, value, "String must be one of (case insensitive): " + ", ".join(self.valid)
            )

    def __str__(self) -> str:
        return "(case insensitive) [" + ", ".join(self.valid) + "]"


class ValidList(_BaseValidator):
    """Every list element must be one of the listed strings; ``allow_empty`` permits ``[]``."""

    def __init__(self, valid: Iterable[str], allow_empty: bool = True) -> None:
        self.valid = list(valid)
        self.allow_empty = allow_empty

    @classmethod
    def in_(cls, *valid: str, allow_empty: bool = True) -> ValidList:
        return cls(valid, allow_empty)

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            return
        if not isinstance(value, list | tuple):
            raise invalid_value(name, value, "Expected a comma separated list.")
        if not value and not self.allow_empty:
            raise invalid_value(name, value, "Configuration must not be empty.")
        bad = [v for v in value if v not in self.valid]
        if bad:
            raise invalid_value(
                name, value, f"Item(s) {', '.join(map(str, bad))} not in: " + ", ".join(self.valid)
            )

    def __str__(self) -> str:
        return "[" + ", ".join(self.valid) + "]"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValidList) and (other.valid, other.allow_empty) == (
            self.valid,
            self.allow_empty,
        )

    def __hash__(self) -> int:
        return hash((ValidList, tuple(self.valid), self.allow_empty))


class NonEmptyString(_BaseValidator):
    """Rejects ``""`` (after trimming, since parsing trims)."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if isinstance(value, str) and not value:
            raise invalid_value(name, value, "String must be non-empty")

    def __str__(self) -> str:
        return "non-empty string"

    def __eq__(self, other: object) -> bool:
        return type(other) is NonEmptyString

    def __hash__(self) -> int:
        return hash(NonEmptyString)


class NonNullValidator(_BaseValidator):
    """Rejects ``None``; for keys whose default is ``None`` only to allow late binding."""

    def ensure_valid(self, name: str, value: Any) -> None:
        if value is None:
            raise invalid_value(name, "null", "entry must be non null")

    def __str__(self) -> str:
        return "non-null string"

    def __eq__(self, other: object) -> bool:
        return type(other) is NonNullValidator

    def __hash__(self) -> int:
        return hash(NonNullValidator)


class LambdaValidator(_BaseValidator):
    """A function validator with a description for the docs."""

    def __init__(self, fn: Callable[[str, Any], None], description: str = "") -> None:
        self.fn = fn
        self.description = description

    @classmethod
    def with_(cls, fn: Callable[[str, Any], None], description: str = "") -> LambdaValidator:
        return cls(fn, description)

    def ensure_valid(self, name: str, value: Any) -> None:
        self.fn(name, value)

    def __str__(self) -> str:
        return self.description


class CompositeValidator(_BaseValidator):
    """All validators must pass; the first failure is reported."""

    def __init__(self, *validators: ValidatorLike) -> None:
        self.validators = list(validators)

    @classmethod
    def of(cls, *validators: ValidatorLike) -> CompositeValidator:
        return cls(*validators)

    def ensure_valid(self, name: str, value: Any) -> None:
        for v in self.validators:
            _run_validator(v, name, value)

    def __str__(self) -> str:
        return ", ".join(_describe_validator(v) for v in self.validators if _describe_validator(v))


def _describe_validator(v: ValidatorLike | None) -> str:
    if v is None:
        return ""
    if isinstance(v, _BaseValidator) or type(v).__str__ is not object.__str__:
        return str(v)
    return ""


# --------------------------------------------------------------------------- keys and values


class Recommender(Protocol):
    """Suggests values and visibility for a key given the other parsed values (REST validate)."""

    def valid_values(self, name: str, parsed: Mapping[str, Any]) -> list[Any]: ...

    def visible(self, name: str, parsed: Mapping[str, Any]) -> bool: ...


@dataclass(frozen=True, eq=True)
class ConfigKey:
    """One defined key. ``default`` is already parsed to ``type`` (or :data:`NO_DEFAULT`)."""

    name: str
    type: Type
    default: Any = NO_DEFAULT
    validator: ValidatorLike | None = None
    importance: Importance = Importance.MEDIUM
    documentation: str = ""
    group: str | None = None
    order_in_group: int = -1
    width: Width = Width.NONE
    display_name: str = ""
    dependents: tuple[str, ...] = ()
    recommender: Recommender | None = field(default=None, compare=False)
    internal: bool = False

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def required(self) -> bool:
        return self.default is NO_DEFAULT

    @property
    def default_as_string(self) -> str | None:
        """Default rendered for docs/REST (``None`` when required or null)."""
        if not self.has_default:
            return None
        return convert_to_string(self.default, self.type)

    @property
    def valid_values_text(self) -> str:
        return _describe_validator(self.validator)


@dataclass
class ConfigValue:
    """Per-key result of :meth:`ConfigDef.validate` (Kafka ``ConfigValue``)."""

    name: str
    value: Any = None
    recommended_values: list[Any] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True

    def add_error(self, message: str) -> None:
        self.errors.append(message)

    def __repr__(self) -> str:
        return (
            f"ConfigValue(name={self.name!r}, value={_render(self.value) if self.value is not None else None!r}, "
            f"recommended_values={self.recommended_values!r}, errors={self.errors!r}, visible={self.visible})"
        )


# --------------------------------------------------------------------------- ConfigDef


def _missing(name: str) -> ConfigIssue:
    return ConfigIssue(name, f'Missing required configuration "{name}" which has no default value.')


def _scrub(issues: Iterable[ConfigIssue], key: ConfigKey, raw: Any) -> list[ConfigIssue]:
    """Belt and braces: remove a secret's text from messages a custom validator produced."""
    out = list(issues)
    if not key.type.is_sensitive:
        return out
    secrets = [s for s in (_secret_text(raw),) if s]
    if not secrets:
        return out
    cleaned = []
    for issue in out:
        msg = issue.message
        for s in secrets:
            msg = msg.replace(s, HIDDEN)
        cleaned.append(ConfigIssue(issue.key, msg))
    return cleaned


def _secret_text(raw: Any) -> str | None:
    if isinstance(raw, Password):
        return raw.value or None
    if isinstance(raw, str):
        return raw.strip() or None
    return None


class ConfigDef:
    """An ordered set of :class:`ConfigKey` definitions; ``define`` is chainable."""

    def __init__(self, base: ConfigDef | None = None) -> None:
        self._keys: dict[str, ConfigKey] = dict(base._keys) if base else {}
        self._groups: list[str] = list(base._groups) if base else []

    # ---- definition

    def define(
        self,
        name: str,
        type: Type,  # noqa: A002 - mirrors Kafka's signature
        default: Any = NO_DEFAULT,
        validator: ValidatorLike | None = None,
        importance: Importance = Importance.MEDIUM,
        documentation: str = "",
        group: str | None = None,
        order_in_group: int = -1,
        width: Width = Width.NONE,
        display_name: str | None = None,
        dependents: Iterable[str] = (),
        recommender: Recommender | None = None,
        internal: bool = False,
    ) -> ConfigDef:
        """Add a key; a bad default or a duplicate name is a programming error (``ValueError``)."""
        if name in self._keys:
            raise ValueError(f"Configuration {name} is defined twice.")
        if default is not NO_DEFAULT:
            try:
                default = parse_type(name, default, type)
                if validator is not None:
                    _run_validator(validator, name, default)
            except ConfigError as e:
                raise ValueError(f"Invalid default for configuration {name}: {e}") from None
        key = ConfigKey(
            name=name,
            type=type,
            default=default,
            validator=validator,
            importance=importance,
            documentation=documentation,
            group=group,
            order_in_group=order_in_group,
            width=width,
            display_name=display_name or name,
            dependents=tuple(dependents),
            recommender=recommender,
            internal=internal,
        )
        self.define_key(key)
        return self

    def define_key(self, key: ConfigKey) -> ConfigDef:
        if key.name in self._keys:
            raise ValueError(f"Configuration {key.name} is defined twice.")
        if key.group and key.group not in self._groups:
            self._groups.append(key.group)
        self._keys[key.name] = key
        return self

    def define_internal(
        self,
        name: str,
        type: Type,  # noqa: A002
        default: Any = NO_DEFAULT,
        validator: ValidatorLike | None = None,
        importance: Importance = Importance.LOW,
        documentation: str = "",
    ) -> ConfigDef:
        """A key that is accepted but left out of generated documentation."""
        return self.define(
            name, type, default, validator, importance, documentation, internal=True
        )

    def merge(self, other: ConfigDef, *, override: bool = False) -> ConfigDef:
        """A new definition with both key sets.

        The same key defined identically in both is fine (shared base definitions); conflicting
        definitions raise ``ValueError`` unless ``override`` lets ``other`` win.
        """
        merged = ConfigDef(self)
        for name, key in other._keys.items():
            mine = merged._keys.get(name)
            if mine is not None and mine != key and not override:
                raise ValueError(f"Configuration {name} is defined differently in the merged definitions.")
            if key.group and key.group not in merged._groups:
                merged._groups.append(key.group)
            merged._keys[name] = key
        return merged

    # ---- introspection

    @property
    def keys(self) -> dict[str, ConfigKey]:
        return dict(self._keys)

    def config_keys(self) -> dict[str, ConfigKey]:
        return dict(self._keys)

    def names(self) -> frozenset[str]:
        return frozenset(self._keys)

    def groups(self) -> list[str]:
        return list(self._groups)

    def __contains__(self, name: object) -> bool:
        return name in self._keys

    def __len__(self) -> int:
        return len(self._keys)

    def default_values(self) -> dict[str, Any]:
        return {n: k.default for n, k in self._keys.items() if k.has_default}

    # ---- parsing

    def _undefined_dependents(self) -> list[str]:
        return sorted({d for k in self._keys.values() for d in k.dependents if d not in self._keys})

    def parse_value(self, key: ConfigKey, value: Any, is_set: bool) -> Any:
        """Parse and validate one key; raises :class:`ConfigError` for that key."""
        if is_set:
            parsed = parse_type(key.name, value, key.type)
        elif key.required:
            raise ConfigError([_missing(key.name)])
        else:
            parsed = key.default
        if key.validator is not None:
            try:
                _run_validator(key.validator, key.name, parsed)
            except ConfigError as e:
                raise ConfigError(_scrub(e.issues, key, value)) from None
        return parsed

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values for every defined key; one :class:`ConfigError` lists every problem."""
        undefined = self._undefined_dependents()
        if undefined:
            raise ValueError("Configurations referred to as dependents but not defined: " + ",".join(undefined))
        values: dict[str, Any] = {}
        issues: list[ConfigIssue] = []
        for name, key in self._keys.items():
            try:
                values[name] = self.parse_value(key, props.get(name), name in props)
            except ConfigError as e:
                issues.extend(e.issues)
        if issues:
            raise ConfigError(issues)
        return values

    def validate_all(self, props: Mapping[str, Any]) -> dict[str, ConfigValue]:
        """Per-key results, never raising for bad values (REST ``config/validate``)."""
        results: dict[str, ConfigValue] = {name: ConfigValue(name) for name in self._keys}
        for missing in self._undefined_dependents():
            cv = ConfigValue(missing, visible=False)
            cv.add_error(f"{missing} is referred in the dependents, but not defined.")
            results[missing] = cv
        parsed: dict[str, Any] = {}
        for name, key in self._keys.items():
            cv = results[name]
            value: Any = None
            if name in props:
                try:
                    value = parse_type(name, props[name], key.type)
                except ConfigError as e:
                    cv.errors.extend(i.message for i in e.issues)
            elif key.required:
                cv.add_error(_missing(name).message)
            else:
                value = key.default
            if key.validator is not None and not cv.errors:
                try:
                    _run_validator(key.validator, name, value)
                except ConfigError as e:
                    cv.errors.extend(i.message for i in _scrub(e.issues, key, props.get(name)))
            cv.value = value
            parsed[name] = value
        for name, key in self._keys.items():
            if key.recommender is None:
                continue
            cv = results[name]
            try:
                cv.recommended_values = list(key.recommender.valid_values(name, parsed))
                cv.visible = bool(key.recommender.visible(name, parsed))
            except ConfigError as e:
                cv.errors.extend(i.message for i in e.issues)
        return results

    def validate(self, props: Mapping[str, Any]) -> list[ConfigValue]:
        return list(self.validate_all(props).values())

    # ---- documentation

    def to_markdown(self, title: str | None = None) -> str:
        """A markdown reference table; see :mod:`connect_core.config.docs`."""
        from connect_core.config.docs import to_markdown

        return to_markdown(self, title=title)

    def __repr__(self) -> str:
        return f"ConfigDef({list(self._keys)})"


# --------------------------------------------------------------------------- AbstractConfig


class AbstractConfig:
    """Parsed configuration plus the originals it came from.

    Unknown keys are kept (plugins read them through prefixes) and reported once, at construction,
    with one warning per key; keys under ``known_prefixes`` are expected and not reported.
    """

    def __init__(
        self,
        definition: ConfigDef,
        originals: Mapping[str, Any],
        log_unknown: bool = True,
        *,
        known_prefixes: Iterable[str] = (),
        logger: logging.Logger | None = None,
    ) -> None:
        for k in originals:
            if not isinstance(k, str):
                raise ConfigError(f"Key {k!r} must be a string.")
        self.definition = definition
        self._originals: dict[str, Any] = dict(originals)
        self._values = definition.parse(self._originals)
        self._used: set[str] = set()
        prefixes = tuple(known_prefixes)
        self._unknown = [
            k for k in self._originals if k not in definition and not (prefixes and k.startswith(prefixes))
        ]
        if log_unknown and self._unknown:
            lg = logger or log
            for k in self._unknown:
                lg.warning("The configuration '%s' was supplied but isn't a known config.", k)

    # ---- values

    def get(self, name: str) -> Any:
        if name not in self._values:
            raise ConfigError(f"Unknown configuration '{name}'", key=name)
        self._used.add(name)
        return self._values[name]

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def get_boolean(self, name: str) -> bool:
        return bool(self.get(name))

    def get_int(self, name: str) -> int:
        return int(self.get(name))

    get_short = get_int
    get_long = get_int

    def get_double(self, name: str) -> float:
        return float(self.get(name))

    def get_string(self, name: str) -> str:
        return self.get(name)  # type: ignore[no-any-return]

    def get_list(self, name: str) -> list[str]:
        return self.get(name)  # type: ignore[no-any-return]

    def get_password(self, name: str) -> Password | None:
        return self.get(name)  # type: ignore[no-any-return]

    def get_class(self, name: str) -> str | None:
        return self.get(name)  # type: ignore[no-any-return]

    def ignore(self, name: str) -> None:
        self._used.add(name)

    def values(self) -> dict[str, Any]:
        return dict(self._values)

    def unused(self) -> set[str]:
        return set(self._originals) - self._used

    def unknown_keys(self) -> list[str]:
        return list(self._unknown)

    # ---- originals

    def originals(self) -> dict[str, Any]:
        return dict(self._originals)

    def originals_strings(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for k, v in self._originals.items():
            if not isinstance(v, str):
                raise ConfigError(f"Non-string value found in original settings for key {k}", key=k)
            out[k] = v
        return out

    def originals_with_prefix(self, prefix: str, strip: bool = True) -> dict[str, Any]:
        n = len(prefix)
        return {
            (k[n:] if strip else k): v
            for k, v in self._originals.items()
            if k.startswith(prefix) and (not strip or len(k) > n)
        }

    def values_with_prefix_override(self, prefix: str) -> dict[str, Any]:
        """Parsed values where ``<prefix><key>`` originals override ``<key>`` (Kafka semantics).

        ``<prefix><mechanism>.<key>`` is also parsed with ``<key>``'s definition and kept under
        ``<mechanism>.<key>``.
        """
        result = dict(self._values)
        n = len(prefix)
        issues: list[ConfigIssue] = []
        for k, v in self._originals.items():
            if not k.startswith(prefix) or len(k) <= n:
                continue
            stripped = k[n:]
            key = self.definition.keys.get(stripped)
            if key is None:
                key = self.definition.keys.get(stripped[stripped.find(".") + 1 :])
            if key is None:
                continue
            try:
                result[stripped] = self.definition.parse_value(key, v, True)
            except ConfigError as e:
                issues.extend(ConfigIssue(k, i.message) for i in e.issues)
        if issues:
            raise ConfigError(issues)
        return result

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, AbstractConfig)
            and type(other) is type(self)
            and other._originals == self._originals
        )

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._originals)))

    def __repr__(self) -> str:
        shown = {k: _render(v) for k, v in self._values.items()}
        return f"{type(self).__name__}({shown})"
