"""Declarative configuration definitions, in the spirit of Kafka's ``ConfigDef``.

A :class:`ConfigDef` names every key a component accepts, with its type, default, validator and
documentation. One definition drives three things that must never disagree: parsing (``parse``,
which raises one :class:`ConfigError` listing *every* problem), the REST ``config/validate``
endpoint (``validate``, per-key :class:`ConfigValue` results) and the generated reference docs.

Value types and their string parsing live in :mod:`connect_core.config.valuetypes`, validators in
:mod:`connect_core.config.validators`; both are re-exported here, the module other code imports.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_core.api.errors import ConfigError, ConfigIssue
from connect_core.config.validators import (
    CaseInsensitiveValidString,
    CompositeValidator,
    LambdaValidator,
    NonEmptyString,
    NonNullValidator,
    Range,
    Validator,
    ValidatorLike,
    ValidList,
    ValidString,
    describe_validator,
    run_validator,
)
from connect_core.config.valuetypes import (
    HIDDEN,
    NO_DEFAULT,
    Importance,
    Password,
    Type,
    Width,
    convert_to_string,
    invalid_value,
    parse_type,
    render_value,
)

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
        return describe_validator(self.validator)


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
        shown = HIDDEN if isinstance(self.value, Password) else repr(self.value)
        return (
            f"ConfigValue(name={self.name!r}, value={shown}, "
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
        type: Type,
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
                    run_validator(validator, name, default)
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
        type: Type,
        default: Any = NO_DEFAULT,
        validator: ValidatorLike | None = None,
        importance: Importance = Importance.LOW,
        documentation: str = "",
    ) -> ConfigDef:
        """A key that is accepted but left out of generated documentation."""
        return self.define(name, type, default, validator, importance, documentation, internal=True)

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
                run_validator(key.validator, key.name, parsed)
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
                    run_validator(key.validator, name, value)
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

    # Typed getters: no coercion, so a key whose default is None still reads as None (as in Kafka).
    def get_boolean(self, name: str) -> bool:
        return self.get(name)  # type: ignore[no-any-return]

    def get_int(self, name: str) -> int:
        return self.get(name)  # type: ignore[no-any-return]

    get_short = get_int
    get_long = get_int

    def get_double(self, name: str) -> float:
        return self.get(name)  # type: ignore[no-any-return]

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
        return isinstance(other, AbstractConfig) and type(other) is type(self) and other._originals == self._originals

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._originals)))

    def __repr__(self) -> str:
        shown = {k: render_value(v) for k, v in self._values.items()}
        return f"{type(self).__name__}({shown})"
