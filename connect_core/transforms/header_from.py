"""``HeaderFrom$Key``/``$Value``: copy or move fields of the key or value into headers, the i-th
field to the i-th header name. Header values are Connect values (the header converter writes them)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import Schema, Struct
from connect_core.config.configdef import NO_DEFAULT, ConfigDef, Importance, Type, ValidString
from connect_core.transforms.field_support import (
    KEY,
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    VALUE,
    FieldTransform,
    SchemaCache,
    field_value,
    non_empty_list,
    require_map,
    require_struct,
    struct_like,
)


class HeaderFrom(FieldTransform):
    """Shared logic of ``HeaderFrom$Key`` and ``HeaderFrom$Value`` (a null key or value is an error, as in Java)."""

    CONFIG_DEF = (
        ConfigDef()
        .define("fields", Type.LIST, NO_DEFAULT, non_empty_list, Importance.HIGH,
                "Field names in the record whose values are to be copied or moved to headers.")
        .define("headers", Type.LIST, NO_DEFAULT, non_empty_list, Importance.HIGH,
                "Header names, in the same order as the field names listed in the fields configuration property.")
        .define("operation", Type.STRING, NO_DEFAULT, ValidString.in_("move", "copy"), Importance.HIGH,
                "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), "
                "or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value).")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.fields: list[str] = parsed["fields"]
        self.headers: list[str] = parsed["headers"]
        if len(self.fields) != len(self.headers):
            raise ConfigError("'fields' config must have the same number of elements as 'headers' config.",
                              key="headers")  # fmt: skip
        self.move = parsed["operation"] == "move"
        self.purpose = "header " + parsed["operation"]
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[Schema] = SchemaCache()

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        schema = side.schema(record)
        headers = list(record.headers) if record.headers else []
        if schema is None:
            original = require_map(side.value(record), self.purpose)
            updated = dict(original)
            for name, header in zip(self.fields, self.headers, strict=True):
                if self.move:
                    updated.pop(name, None)
                headers.append((header, original.get(name)))
            return side.replace(record, None, updated, headers)
        struct = require_struct(side.value(record), self.purpose)
        for name, header in zip(self.fields, self.headers, strict=True):
            if schema.field(name) is None:
                raise DataError(f"Field does not exist: {name}")
            present = struct.schema.field(name) is not None
            headers.append((header, field_value(struct, name, self.with_default) if present else None))
        if not self.move:
            return side.replace(record, schema, struct, headers)
        moved = self.cache.get(schema) or self.cache.put(schema, self._moved_schema(schema))
        values = [field_value(struct, f.name, self.with_default) for f in moved.fields]
        return side.replace(record, moved, Struct.from_values(moved, values), headers)

    def _moved_schema(self, schema: Schema) -> Schema:
        return struct_like(schema, [(f.name, f.schema) for f in schema.fields if f.name not in self.fields])


class HeaderFromKey(HeaderFrom):
    SIDE = KEY


class HeaderFromValue(HeaderFrom):
    SIDE = VALUE
