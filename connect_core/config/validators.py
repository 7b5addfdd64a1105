"""Validators for configuration values (Kafka ``ConfigDef.Validator`` and friends).

A validator is anything with ``ensure_valid(name, value)``, or a plain callable ``(name, value)``,
raising :class:`ConfigError` for that key. Deliberate difference from Kafka: the built-in validators
let ``None`` through (except :class:`NonNullValidator`), so an optional key with a ``None`` default
can still carry a validator instead of crashing at definition time.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol, runtime_checkable

from connect_core.config.valuetypes import invalid_value

__all__ = [
    "CaseInsensitiveValidString",
    "CompositeValidator",
    "LambdaValidator",
    "NonEmptyString",
    "NonNullValidator",
    "Range",
    "ValidList",
    "ValidString",
    "Validator",
    "ValidatorLike",
    "describe_validator",
    "run_validator",
]


@runtime_checkable
class Validator(Protocol):
    """Anything with ``ensure_valid(name, value)`` raising :class:`ConfigError`."""

    def ensure_valid(self, name: str, value: Any) -> None: ...


ValidatorLike = Validator | Callable[[str, Any], None]


def run_validator(validator: ValidatorLike, name: str, value: Any) -> None:
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
            raise invalid_value(name, value, "String must be one of (case insensitive): " + ", ".join(self.valid))

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
            raise invalid_value(name, value, f"Item(s) {', '.join(map(str, bad))} not in: " + ", ".join(self.valid))

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
            run_validator(v, name, value)

    def __str__(self) -> str:
        return ", ".join(describe_validator(v) for v in self.validators if describe_validator(v))


def describe_validator(v: ValidatorLike | None) -> str:
    if v is None:
        return ""
    if isinstance(v, _BaseValidator) or type(v).__str__ is not object.__str__:
        return str(v)
    return ""
