"""A UTC formatter for ``java.text.SimpleDateFormat`` patterns (TimestampRouter's ``timestamp.format``).

Supported letters: G y Y M L d D H k K h m s S E u a z Z X, with quoted literals (``'...'``,
``''`` for a quote). Other letters raise ValueError at configure time, as Java's constructor
throws for unknown letters. Text fields use the English locale.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

_MONTHS = [
    "January", "February", "March", "April", "May", "June",
    "July", "August", "September", "October", "November", "December",
]  # fmt: skip
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]

_Field = Callable[[dt.datetime], str]


def _num(get: Callable[[dt.datetime], int], width: int) -> _Field:
    return lambda t: str(get(t)).zfill(width)


def _year(count: int) -> _Field:
    if count == 2:
        return lambda t: str(t.year % 100).zfill(2)
    return lambda t: str(t.year).zfill(count)


def _month(count: int) -> _Field:
    if count >= 4:
        return lambda t: _MONTHS[t.month - 1]
    if count == 3:
        return lambda t: _MONTHS[t.month - 1][:3]
    return _num(lambda t: t.month, count)


def _weekday(count: int) -> _Field:
    if count >= 4:
        return lambda t: _DAYS[t.weekday()]
    return lambda t: _DAYS[t.weekday()][:3]


def _hour_k(t: dt.datetime) -> int:
    return t.hour or 24


def _hour_h(t: dt.datetime) -> int:
    return t.hour % 12 or 12


def _zone_z(count: int) -> _Field:
    return lambda t: "Coordinated Universal Time" if count >= 4 else "UTC"


def _field(letter: str, count: int) -> _Field:
    if letter in "yY":
        return _year(count)
    if letter in "ML":
        return _month(count)
    simple: dict[str, Callable[[dt.datetime], int]] = {
        "d": lambda t: t.day,
        "D": lambda t: t.timetuple().tm_yday,
        "H": lambda t: t.hour,
        "k": _hour_k,
        "K": lambda t: t.hour % 12,
        "h": _hour_h,
        "m": lambda t: t.minute,
        "s": lambda t: t.second,
        "S": lambda t: t.microsecond // 1000,
        "u": lambda t: t.isoweekday(),
    }
    if letter in simple:
        return _num(simple[letter], count)
    if letter == "E":
        return _weekday(count)
    if letter == "a":
        return lambda t: "AM" if t.hour < 12 else "PM"
    if letter == "G":
        return lambda t: "AD"
    if letter == "z":
        return _zone_z(count)
    if letter == "Z":
        return lambda t: "+0000"
    if letter == "X":
        return lambda t: "Z"
    raise ValueError(f"Illegal pattern character '{letter}'")


class SimpleDateFormat:
    """Formats epoch milliseconds in UTC with a Java ``SimpleDateFormat`` pattern."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self._parts: list[str | _Field] = []
        #: The pattern as (letter, count) fields and ("", text) literals, for parsing.
        self.tokens: list[tuple[str, int | str]] = []
        i, n = 0, len(pattern)
        while i < n:
            c = pattern[i]
            if c == "'":
                if i + 1 < n and pattern[i + 1] == "'":
                    self._parts.append("'")
                    self.tokens.append(("", "'"))
                    i += 2
                    continue
                end = i + 1
                text: list[str] = []
                while True:
                    if end >= n:
                        raise ValueError("Unterminated quote")
                    if pattern[end] == "'":
                        if end + 1 < n and pattern[end + 1] == "'":
                            text.append("'")
                            end += 2
                            continue
                        break
                    text.append(pattern[end])
                    end += 1
                self._parts.append("".join(text))
                self.tokens.append(("", "".join(text)))
                i = end + 1
            elif c.isascii() and c.isalpha():
                j = i
                while j < n and pattern[j] == c:
                    j += 1
                self._parts.append(_field(c, j - i))
                self.tokens.append((c, j - i))
                i = j
            else:
                self._parts.append(c)
                self.tokens.append(("", c))
                i += 1

    def parse_millis(self, text: str) -> int:
        """Epoch ms of ``text`` read with this pattern in UTC, leniently as Java parses (ValueError if not)."""
        from connect_core.transforms.date_parse import parse_with

        return parse_with(self.tokens, text)

    def to_pattern(self) -> str:
        return self.pattern

    def format_millis(self, epoch_ms: int) -> str:
        t = dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=epoch_ms)
        return "".join(p if isinstance(p, str) else p(t) for p in self._parts)
