"""Java ``.properties`` files, read with ``java.util.Properties.load``'s exact rules.

mm2 must accept the very ``mm2.properties`` / ``connect-*.properties`` files operators already run
Java MirrorMaker with, so this mirrors the JDK's ``LineReader`` + ``loadConvert`` rather than any
"properties-like" approximation:

* A *natural line* ends at ``\\n``, ``\\r`` or ``\\r\\n``. Leading blanks (space, tab, form feed)
  are skipped; blank lines are ignored.
* A line whose first non-blank character is ``#`` or ``!`` is a comment (a trailing backslash does
  not continue a comment).
* A line ending in an odd number of backslashes continues on the next natural line, whose leading
  blanks are dropped. A continuation that is itself empty ends the logical line. A backslash
  continuing past end of input is dropped.
* The key ends at the first unescaped ``=``, ``:`` or blank; blanks after the key, then at most one
  ``=``/``:``, then more blanks are skipped; the rest is the value (trailing blanks kept).
* Escapes: ``\\t \\n \\r \\f``, ``\\uXXXX`` (exactly four hex digits, else :class:`PropertiesError`
  naming the line, like Java's "Malformed \\uxxxx encoding."), any other ``\\x`` is ``x``.
* Later duplicates win.

Files are decoded as UTF-8 (a BOM is ignored); a file that is not valid UTF-8 is decoded as
ISO-8859-1, which is what ``Properties.load(InputStream)`` - and hence Java Kafka - uses.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from connect_core.api.errors import ConfigError, ConfigIssue

__all__ = [
    "PropertiesError",
    "format_properties",
    "load_properties",
    "parse_properties",
]

_BLANKS = " \t\f"
_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
_HEX = frozenset("0123456789abcdefABCDEF")


class PropertiesError(ConfigError):
    """Malformed properties text; ``line`` is the 1-based physical line of the problem."""

    def __init__(self, message: str, *, line: int, source: str = "<string>") -> None:
        self.line = line
        self.source = source
        self.reason = message
        super().__init__([ConfigIssue("", f"{source}: line {line}: {message}")])


class _LogicalLine:
    """One logical line plus where each of its characters came from (for error line numbers)."""

    __slots__ = ("chars", "lines")

    def __init__(self) -> None:
        self.chars: list[str] = []
        self.lines: list[int] = []

    def append(self, c: str, line: int) -> None:
        self.chars.append(c)
        self.lines.append(line)

    def pop(self) -> None:
        self.chars.pop()
        self.lines.pop()


def _logical_lines(text: str) -> Iterator[_LogicalLine]:
    """The JDK 9+ ``Properties.LineReader`` state machine, one character at a time."""
    n = len(text)
    i = 0
    line_no = 1
    cur = _LogicalLine()
    skip_white = True
    appended_line_begin = False
    preceding_backslash = False
    while i < n:
        c = text[i]
        i += 1
        if skip_white:
            if c in _BLANKS:
                continue
            if not appended_line_begin and c in "\r\n":
                if c == "\n" or i >= n or text[i] != "\n":
                    line_no += 1
                continue
            skip_white = False
            appended_line_begin = False
        if not cur.chars and c in "#!":
            # A comment: only where a logical line (still empty) starts, even after a continuation.
            while i < n and text[i] not in "\r\n":
                i += 1
            if i < n:
                if text[i] == "\r" and i + 1 < n and text[i + 1] == "\n":
                    i += 1
                i += 1
                line_no += 1
            skip_white = True
            continue
        if c not in "\r\n":
            cur.append(c, line_no)
            preceding_backslash = (not preceding_backslash) if c == "\\" else False
            continue
        # end of a natural line
        at_end = i >= n  # checked before swallowing the \n of \r\n, exactly like Java
        if c == "\r" and i < n and text[i] == "\n":
            i += 1
        line_no += 1
        if not cur.chars:
            skip_white = True
            continue
        if at_end:  # the newline ends the input: Java returns the line, trailing backslash dropped
            break
        if preceding_backslash:
            cur.pop()
            skip_white = True
            appended_line_begin = True
            preceding_backslash = False
            continue
        yield cur
        cur = _LogicalLine()
        skip_white = True
    if cur.chars:
        if preceding_backslash:
            cur.pop()
        yield cur  # possibly empty: a lone trailing backslash defines the empty key, as in Java


def _convert(line: _LogicalLine, start: int, end: int, source: str) -> str:
    """Java ``loadConvert``: resolve escapes in ``line.chars[start:end]``."""
    chars = line.chars
    out: list[str] = []
    i = start
    surrogates = False
    while i < end:
        c = chars[i]
        i += 1
        if c != "\\":
            out.append(c)
            continue
        if i >= end:  # cannot happen with LineReader output, kept for safety
            break
        c = chars[i]
        i += 1
        if c == "u":
            digits = "".join(chars[i : i + 4]) if i + 4 <= end else ""
            if len(digits) != 4 or not all(d in _HEX for d in digits):
                raise PropertiesError("Malformed \\uxxxx encoding.", line=line.lines[i - 1], source=source)
            code = int(digits, 16)
            surrogates = surrogates or 0xD800 <= code <= 0xDFFF
            out.append(chr(code))
            i += 4
        else:
            out.append(_ESCAPES.get(c, c))
    result = "".join(out)
    if surrogates:  # \uD83D\uDE00 is one code point, as in Java's UTF-16 strings
        result = result.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
    return result


def parse_properties(text: str, *, source: str = "<string>") -> dict[str, str]:
    """Parse properties text; raises :class:`PropertiesError` (a ConfigError) with a line number."""
    result: dict[str, str] = {}
    for line in _logical_lines(text):
        chars = line.chars
        limit = len(chars)
        key_len = 0
        value_start = limit
        has_sep = False
        backslash = False
        while key_len < limit:
            c = chars[key_len]
            if c in "=:" and not backslash:
                value_start = key_len + 1
                has_sep = True
                break
            if c in _BLANKS and not backslash:
                value_start = key_len + 1
                break
            backslash = (not backslash) if c == "\\" else False
            key_len += 1
        while value_start < limit:
            c = chars[value_start]
            if c not in _BLANKS:
                if not has_sep and c in "=:":
                    has_sep = True
                else:
                    break
            value_start += 1
        key = _convert(line, 0, key_len, source)
        value = _convert(line, value_start, limit, source)
        result.pop(key, None)  # later duplicates win, and move to the end like a fresh put
        result[key] = value
    return result


def load_properties(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a properties file; every failure is one :class:`ConfigError` line naming ``path``."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise ConfigError(f"Properties file {p} does not exist") from None
    except IsADirectoryError:
        raise ConfigError(f"Properties file {p} is a directory, not a file") from None
    except PermissionError:
        raise ConfigError(f"Properties file {p} is not readable (permission denied)") from None
    except OSError as e:
        raise ConfigError(f"Properties file {p} could not be read: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        text = data.decode("iso-8859-1")
    return parse_properties(text, source=str(p))


# --------------------------------------------------------------------------- writing


def _escape(s: str, *, is_key: bool) -> str:
    """Java ``Properties.saveConvert`` (without \\u-escaping non-ASCII: we write UTF-8)."""
    out: list[str] = []
    for idx, c in enumerate(s):
        if c == " ":
            out.append("\\ " if idx == 0 or is_key else " ")
        elif c == "\\":
            out.append("\\\\")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7F:
            out.append(f"\\u{ord(c):04X}")
        else:
            out.append(c)
    return "".join(out)


def format_properties(props: Mapping[str, str], header: str | None = None) -> str:
    """Render ``props`` so that :func:`parse_properties` (and Java) read back the same mapping."""
    lines = [f"#{h}" for h in header.splitlines()] if header else []
    lines.extend(f"{_escape(k, is_key=True)}={_escape(v, is_key=False)}" for k, v in props.items())
    return "\n".join(lines) + ("\n" if lines else "")
