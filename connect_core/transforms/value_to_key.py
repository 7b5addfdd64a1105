"""``org.apache.kafka.connect.transforms.ValueToKey``: the key becomes a Struct (or Map) of the
listed fields of the value."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import DataError
from connect_core.api.schema import Schema, Struct
from connect_core.config.configdef import NO_DEFAULT, ConfigDef, Importance, Type
from connect_core.transforms.field_support import (
    KEY,
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    FieldTransform,
    SchemaCache,
    non_empty_list,
    require_map,
    require_struct,
)

PURPOSE = "copying fields from value to key"


class ValueToKey(FieldTransform):
    """Replace the key with selected value fields (a null value is an error, as in Java)."""

    CONFIG_DEF = (
        ConfigDef()
        .define("fields", Type.LIST, NO_DEFAULT, non_empty_list, Importance.HIGH,
                "Field names on the record value to extract as the record key.")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.fields: list[str] = parsed["fields"]
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        self.cache: SchemaCache[Schema] = SchemaCache()

    def apply(self, record: Any) -> Any:
        if record.value_schema is None:
            value = require_map(record.value, PURPOSE)
            return KEY.replace(record, None, {f: value.get(f) for f in self.fields})
        struct = require_struct(record.value, PURPOSE)
        key_schema = self.cache.get(struct.schema) or self.cache.put(struct.schema, self._key_schema(struct.schema))
        get = struct.get if self.with_default else struct.get_without_default
        return KEY.replace(record, key_schema, Struct.from_values(key_schema, [get(f) for f in self.fields]))

    def _key_schema(self, schema: Schema) -> Schema:
        fields = []
        for name in self.fields:
            f = schema.field(name)
            if f is None:
                raise DataError(f"Field does not exist: {name}")
            fields.append((name, f.schema))
        return Schema.struct(fields)
