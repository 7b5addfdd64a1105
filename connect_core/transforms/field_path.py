"""KIP-821 field paths (``field.syntax.version``): ``V1`` names a top-level field, ``V2`` a dotted
path to a nested one, with backticks around names that contain dots (```a.b`.c``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.api.schema import Field, Schema, Struct
from connect_core.config.configdef import CaseInsensitiveValidString, ConfigDef, Importance, Type
from connect_core.transforms.field_support import require_map_or_null, require_struct_or_null

FIELD_SYNTAX_VERSION_CONFIG = "field.syntax.version"
_DOC = (
    "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to access "
    "the elements at the root level of the struct or map. If set to `V2`, the syntax will support accessing nested "
    "elements. To access nested elements, dotted notation is used. If dots are already included in the field name, "
    "then backtick pairs can be used to wrap field names containing dots. E.g. to access the subfield `baz` from a "
    'field named "foo.bar" in a struct/map the following format can be used to access its elements: '
    '"`foo.bar`.baz".'
)
_NESTED = "nested field access"


def with_syntax_version(config: ConfigDef) -> ConfigDef:
    """``config`` plus the ``field.syntax.version`` key (V1 by default)."""
    return config.define(
        FIELD_SYNTAX_VERSION_CONFIG, Type.STRING, "V1", CaseInsensitiveValidString.in_("V1", "V2"), Importance.HIGH,
        _DOC,
    )  # fmt: skip


def _incomplete(path: str, at: int) -> ConfigError:
    return ConfigError(f"Incomplete backtick pair in path: [{path}], consider adding a backslash before backtick "
                       f"at position {at} to escape it")  # fmt: skip


def parse_v2(path: str) -> list[str]:
    """The steps of a V2 path: split on dots outside backtick pairs; ``\\``` escapes a backtick before a dot."""
    steps: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] != "`":
            dot = path.find(".", i)
            if dot < 0:
                steps.append(path[i:])
                i = n
            else:
                steps.append(path[i:dot])
                i = dot + 1
            continue
        opened = i
        i += 1
        start = i
        name: list[str] = []
        while True:
            close = path.find("`", i)
            if close < 0:
                raise _incomplete(path, opened)
            escaped = path[close - 1] == "\\"
            if close >= n - 1:  # the closing backtick ends the path
                if escaped:
                    raise _incomplete(path, opened)
                name.append(path[start:close])
                steps.append("".join(name))
                i = close + 1
                break
            if path[close + 1] != ".":  # a backtick inside the name
                i = close + 1
                continue
            if escaped:  # \` before a dot: a literal backtick, the name goes on
                name.append(path[start : close - 1] + "`")
                i = start = close + 1
                continue
            name.append(path[start:close])
            steps.append("".join(name))
            i = close + 2
            break
    if path.endswith("."):
        steps.append("")
    return steps


class SingleFieldPath:
    """One field, top-level (V1) or nested (V2), read from a schema, a Struct or a Map."""

    __slots__ = ("steps", "text")

    def __init__(self, text: str, version: str) -> None:
        self.text = text
        self.steps = parse_v2(text) if version.upper() == "V2" else [text]

    def field_from(self, schema: Schema | None) -> Field | None:
        if schema is None:
            return None
        current = schema
        for step in self.steps[:-1]:
            f = current.field(step)
            if f is None:
                return None
            current = f.schema
        return current.field(self.steps[-1])

    def value_from_struct(self, struct: Struct | None, with_default: bool = True) -> Any:
        current = struct
        for step in self.steps[:-1]:
            if current is None or current.schema.field(step) is None:
                return None
            current = require_struct_or_null(current.get(step), _NESTED)
        if current is None or current.schema.field(self.steps[-1]) is None:
            return None
        last = self.steps[-1]
        return current.get(last) if with_default else current.get_without_default(last)

    def value_from_map(self, value: Mapping[str, Any] | None) -> Any:
        current = value
        for step in self.steps[:-1]:
            if current is None:
                return None
            current = require_map_or_null(current.get(step), _NESTED)
        return None if current is None else current.get(self.steps[-1])
