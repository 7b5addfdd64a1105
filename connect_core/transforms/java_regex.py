"""Java ``java.util.regex`` compatibility: pattern syntax and ``Matcher`` replacement strings.

Users copy regexes and replacements from Java Connect configs, so ``(?<name>...)`` named groups,
``\\Q...\\E`` quoting and ``$1``/``${name}`` replacement references must work as in Java.
"""

from __future__ import annotations

import re

from connect_core.api.errors import ConfigError

_QUOTE_RE = re.compile(r"\\Q(.*?)(?:\\E|\Z)", re.S)
_NAMED_GROUP_RE = re.compile(r"(?<!\\)\(\?<(?![=!])")


def compile_java_regex(pattern: str, key: str = "regex") -> re.Pattern[str]:
    """Compile a Java regex with Python's engine; ConfigError naming ``key`` if invalid."""
    translated = _QUOTE_RE.sub(lambda m: re.escape(m.group(1)), pattern)
    translated = _NAMED_GROUP_RE.sub("(?P<", translated)
    try:
        return re.compile(translated)
    except re.error as e:
        raise ConfigError(
            f"Invalid value {pattern}: entry must be a Java-compatible regular expression: {e}", key=key
        ) from None


def expand_java_replacement(match: re.Match[str], replacement: str) -> str:
    """What Java's ``Matcher.appendReplacement`` produces for ``replacement`` at ``match``.

    ``$n`` takes as many digits as still name an existing group, ``${name}`` a named group,
    and a backslash quotes the next character.
    """
    out: list[str] = []
    i = 0
    n = len(replacement)
    group_count = match.re.groups
    while i < n:
        c = replacement[i]
        if c == "\\":
            i += 1
            if i >= n:
                raise ValueError("character to be escaped is missing")
            out.append(replacement[i])
            i += 1
        elif c == "$":
            i += 1
            if i >= n:
                raise ValueError("Illegal group reference: group index is missing")
            if replacement[i] == "{":
                end = replacement.find("}", i)
                if end < 0:
                    raise ValueError("named capturing group is missing trailing '}'")
                name = replacement[i + 1 : end]
                if name not in match.re.groupindex:
                    raise ValueError(f"No group with name {{{name}}}")
                out.append(match.group(name) or "")
                i = end + 1
            else:
                if not replacement[i].isdigit():
                    raise ValueError("Illegal group reference")
                ref = int(replacement[i])
                i += 1
                while i < n and replacement[i].isdigit():
                    candidate = ref * 10 + int(replacement[i])
                    if candidate > group_count:
                        break
                    ref = candidate
                    i += 1
                if ref > group_count:
                    raise IndexError(f"No group {ref}")
                out.append(match.group(ref) or "")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def validate_java_replacement(replacement: str, key: str = "replacement") -> None:
    """Reject a replacement with a dangling ``\\`` or ``$`` (group numbers are checked at use)."""
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\":
            if i + 1 >= len(replacement):
                raise ConfigError(f"Invalid value {replacement}: character to be escaped is missing", key=key)
            i += 2
            continue
        if c == "$" and (i + 1 >= len(replacement) or not (replacement[i + 1].isdigit() or replacement[i + 1] == "{")):
            raise ConfigError(f"Invalid value {replacement}: illegal group reference", key=key)
        i += 1
