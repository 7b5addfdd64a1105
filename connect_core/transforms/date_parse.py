"""Parsing for :class:`~connect_core.transforms.date_format.SimpleDateFormat` patterns, the way
Java's lenient ``SimpleDateFormat.parse`` reads them in UTC: numeric fields take all their digits
(exactly ``count`` when the next field is numeric too), out-of-range values roll over (month 13 is
January next year), text after the last field is ignored, and a zone in the text shifts the result.
"""

from __future__ import annotations

import datetime as dt
import re

from connect_core.transforms.time_values import epoch_millis

_MONTHS = ["january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december"]  # fmt: skip
_DAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
_NUMERIC = frozenset("yYdDHkKhmsSuwWF")
_ZONE_RE = re.compile(r"(?:Z(?![A-Za-z])|(?:UTC|GMT)?([+-])(\d{1,2}):?(\d{2})?|UTC|GMT)")


def _is_numeric(letter: str, count: int) -> bool:
    return letter in _NUMERIC or (letter in "ML" and count <= 2)


def _name_index(text: str, pos: int, names: list[str]) -> tuple[int, int]:
    """Index of the full or three-letter name at ``pos`` (case-insensitive) and the position after it."""
    low = text[pos:].lower()
    for i, name in enumerate(names):
        if low.startswith(name):
            return i, pos + len(name)
    for i, name in enumerate(names):
        if low.startswith(name[:3]):
            return i, pos + 3
    raise ValueError(f"Unparseable date: {text!r}")


def _two_digit_year(year: int) -> int:
    """Java's default century: within 80 years before and 20 after now."""
    start = dt.datetime.now(dt.UTC).year - 80
    candidate = start - start % 100 + year
    return candidate + 100 if candidate < start else candidate


def parse_with(tokens: list[tuple[str, int | str]], text: str) -> int:
    """Epoch milliseconds of ``text`` read with ``tokens`` (see ``SimpleDateFormat.tokens``)."""
    values: dict[str, int] = {}
    pm: bool | None = None
    offset_ms = 0
    pos = 0
    for i, (letter, arg) in enumerate(tokens):
        if not letter:
            literal = str(arg)
            if not text.startswith(literal, pos):
                raise ValueError(f"Unparseable date: {text!r}")
            pos += len(literal)
            continue
        count = int(arg)
        if _is_numeric(letter, count):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else ("", "")
            abutting = bool(nxt[0]) and _is_numeric(nxt[0], int(nxt[1]))
            end = pos
            while end < len(text) and text[end].isdigit() and (not abutting or end - pos < count):
                end += 1
            if end == pos:
                raise ValueError(f"Unparseable date: {text!r}")
            number = int(text[pos:end])
            if letter in "yY" and count <= 2 and end - pos == 2:
                number = _two_digit_year(number)
            values[letter] = number
            pos = end
        elif letter in "ML":
            values["M"], pos = _name_index(text, pos, _MONTHS)
            values["M"] += 1
        elif letter == "E":
            _, pos = _name_index(text, pos, _DAYS)
        elif letter == "a":
            marker = text[pos : pos + 2].upper()
            if marker not in ("AM", "PM"):
                raise ValueError(f"Unparseable date: {text!r}")
            pm, pos = marker == "PM", pos + 2
        elif letter == "G":
            if text[pos : pos + 2].upper() != "AD":
                raise ValueError(f"Unparseable date: {text!r}")
            pos += 2
        elif letter in "zZX":
            m = _ZONE_RE.match(text, pos)
            if m is None:
                raise ValueError(f"Unparseable date: {text!r}")
            if m.group(1):
                sign = -1 if m.group(1) == "-" else 1
                offset_ms = sign * (int(m.group(2)) * 60 + int(m.group(3) or 0)) * 60_000
            pos = m.end()
        else:
            raise ValueError(f"Unparseable date: {text!r}")
    return _combine(values, pm) - offset_ms


def _combine(values: dict[str, int], pm: bool | None) -> int:
    """Lenient field arithmetic: every field past its range carries into the next larger one."""
    year = values.get("y", values.get("Y", 1970))
    months = year * 12 + values.get("M", 1) - 1
    start = dt.datetime(months // 12, months % 12 + 1, 1, tzinfo=dt.UTC)
    use_day_of_year = "D" in values and "d" not in values and "M" not in values
    days = values["D"] - 1 if use_day_of_year else values.get("d", 1) - 1
    if "H" in values:
        hour = values["H"]
    elif "k" in values:
        hour = values["k"] % 24
    else:
        hour = values.get("h", 0) % 12 if "h" in values else values.get("K", 0)
        if pm:
            hour += 12
    delta = dt.timedelta(days=days, hours=hour, minutes=values.get("m", 0), seconds=values.get("s", 0),
                         milliseconds=values.get("S", 0))  # fmt: skip
    return epoch_millis(start + delta)
