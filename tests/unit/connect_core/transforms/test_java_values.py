"""Java's number narrowing/printing, V2 field paths and ISO date text used by the field transforms."""

from __future__ import annotations

import datetime as dt
import math

import pytest

from connect_core.api.errors import ConfigError
from connect_core.transforms.field_path import parse_v2
from connect_core.transforms.java_values import (
    java_float_string,
    number_to_integral,
    parse_java_double,
    parse_java_integral,
    to_float32,
)
from connect_core.transforms.time_values import iso_text_for


@pytest.mark.parametrize(
    ("value", "expected"),
    [(1.0, "1.0"), (1e10, "1.0E10"), (0.001, "0.001"), (0.0001, "1.0E-4"), (1e7, "1.0E7"), (9999999.0, "9999999.0"),
     (-2.5, "-2.5"), (123456.789, "123456.789"), (-0.0, "-0.0"), (math.inf, "Infinity"), (math.nan, "NaN"),
     (1.2345678e-300, "1.2345678E-300")],
)  # fmt: skip
def test_double_to_string(value: float, expected: str) -> None:
    assert java_float_string(value) == expected


def test_float_to_string_uses_float_digits() -> None:
    assert java_float_string(to_float32(0.1), single=True) == "0.1"
    assert java_float_string(to_float32(123456.789), single=True) == "123456.79"
    assert to_float32(1e40) == math.inf


@pytest.mark.parametrize(
    ("value", "bits", "expected"),
    [(300, 8, 44), (-129, 8, 127), (2**31, 32, -(2**31)), (3.99, 8, 3), (1e20, 32, 2**31 - 1), (1e20, 8, -1),
     (-1e20, 64, -(2**63)), (math.nan, 16, 0)],
)  # fmt: skip
def test_narrowing(value: float, bits: int, expected: int) -> None:
    assert number_to_integral(value, bits) == expected


def test_parsing_follows_java_grammar() -> None:
    assert parse_java_integral("+12", 8) == 12
    for bad in ("128", " 1", "1.0", ""):
        with pytest.raises(ValueError):
            parse_java_integral(bad, 8)
    assert parse_java_double(" 1.5f ") == 1.5 and parse_java_double("-Infinity") == -math.inf
    with pytest.raises(ValueError):
        parse_java_double("inf")


@pytest.mark.parametrize(
    ("path", "steps"),
    [("a.b", ["a", "b"]), ("`a.b`.c", ["a.b", "c"]), ("a.", ["a", ""]), ("`a\\`.b`", ["a`.b"]), ("x", ["x"]),
     ("`a`b`.c", ["a`b", "c"])],
)  # fmt: skip
def test_v2_paths(path: str, steps: list[str]) -> None:
    assert parse_v2(path) == steps


def test_v2_incomplete_backticks() -> None:
    with pytest.raises(ConfigError, match="at position 2 to escape it"):
        parse_v2("a.`b")


def test_iso_text_like_values_date_format_for() -> None:
    assert iso_text_for(dt.date(2020, 1, 2)) == "2020-01-02"
    assert iso_text_for(dt.time(1, 2, 3, 4000)) == "01:02:03.004Z"
    assert iso_text_for(dt.datetime(2020, 1, 2, 3, 4, 5, 6000, tzinfo=dt.UTC)) == "2020-01-02T03:04:05.006Z"
    assert iso_text_for(dt.date(1970, 1, 1)) == "00:00:00.000Z"  # below one day: Java picks the time format
