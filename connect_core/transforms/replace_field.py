"""``ReplaceField$Key``/``$Value``: keep only ``include`` fields (all when empty), drop ``exclude``
fields (exclude wins), and rename with ``renames`` (``old:new`` pairs)."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.api.schema import Schema, Struct
from connect_core.config.configdef import ConfigDef, Importance, LambdaValidator, Type
from connect_core.transforms.field_support import (
    KEY,
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    VALUE,
    FieldTransform,
    SchemaCache,
    check_unique,
    field_values,
    require_map,
    require_struct,
    struct_like,
)

PURPOSE = "field replacement"
log = logging.getLogger(__name__)


def parse_renames(mappings: list[str]) -> dict[str, str]:
    """``old:new`` pairs; anything else is Java's "Invalid rename mapping" (names are not trimmed)."""
    renames: dict[str, str] = {}
    for mapping in mappings:
        parts = mapping.split(":")
        while parts and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) != 2:
            raise ConfigError(
                f"Invalid value {','.join(mappings)} for configuration renames: Invalid rename mapping: {mapping}",
                key="renames",
            )
        renames[parts[0]] = parts[1]
    return renames


#: Kafka 2.7-3.x's deprecated names (KIP-629), still found in configs users bring; 4.0 dropped them.
_DEPRECATED = {"blacklist": "exclude", "whitelist": "include"}


def _with_deprecated_names(props: Mapping[str, Any]) -> Mapping[str, Any]:
    """``blacklist``/``whitelist`` stand for ``exclude``/``include`` when those are not set."""
    if not any(old in props for old in _DEPRECATED):
        return props
    out = dict(props)
    for old, new in _DEPRECATED.items():
        if old in out:
            value = out.pop(old)
            if new not in out:
                log.warning("ReplaceField: '%s' is deprecated, use '%s'", old, new)
                out[new] = value
    return out


def _validate_renames(name: str, value: Any) -> None:
    if value is not None:
        parse_renames(value)


class ReplaceField(FieldTransform):
    """Shared logic of ``ReplaceField$Key`` and ``ReplaceField$Value``; null values pass through."""

    CONFIG_DEF = (
        ConfigDef()
        .define("exclude", Type.LIST, [], None, Importance.MEDIUM,
                "Fields to exclude. This takes precedence over the fields to include.")
        .define("include", Type.LIST, [], None, Importance.MEDIUM,
                "Fields to include. If specified, only these fields will be used.")
        .define("renames", Type.LIST, [],
                LambdaValidator(_validate_renames, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
                Importance.MEDIUM, "Field rename mappings.")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(_with_deprecated_names(props))
        self.exclude = frozenset(parsed["exclude"])
        self.include = frozenset(parsed["include"])
        self.renames = parse_renames(parsed["renames"])
        self.reverse = {new: old for old, new in self.renames.items()}
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[tuple[Schema, list[int]]] = SchemaCache()

    def keeps(self, name: str) -> bool:
        return name not in self.exclude and (not self.include or name in self.include)

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        value = side.value(record)
        if value is None:
            return record
        if side.schema(record) is None:
            renames = self.renames
            updated = {renames.get(k, k): v for k, v in require_map(value, PURPOSE).items() if self.keeps(k)}
            return side.replace(record, None, updated)
        struct = require_struct(value, PURPOSE)
        new_schema, kept = self.cache.get(struct.schema) or self.cache.put(struct.schema, self._plan(struct.schema))
        values = field_values(struct, self.with_default)
        return side.replace(record, new_schema, Struct.from_values(new_schema, [values[i] for i in kept]))

    def _plan(self, schema: Schema) -> tuple[Schema, list[int]]:
        """The output schema and, per output field, the index of the input field it comes from."""
        kept = [f for f in schema.fields if self.keeps(f.name)]
        fields = [(self.renames.get(f.name, f.name), f.schema) for f in kept]
        return struct_like(schema, check_unique(fields)), [f.index for f in kept]


class ReplaceFieldKey(ReplaceField):
    SIDE = KEY


class ReplaceFieldValue(ReplaceField):
    SIDE = VALUE
