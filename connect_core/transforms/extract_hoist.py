"""``ExtractField$Key``/``$Value`` (replace the key or value by one of its fields) and
``HoistField$Key``/``$Value`` (wrap the key or value in a one-field Struct or Map)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import Schema, Struct
from connect_core.config.configdef import NO_DEFAULT, ConfigDef, Importance, Type
from connect_core.transforms.field_path import FIELD_SYNTAX_VERSION_CONFIG, SingleFieldPath, with_syntax_version
from connect_core.transforms.field_support import (
    KEY,
    VALUE,
    FieldTransform,
    SchemaCache,
    require_map_or_null,
    require_struct_or_null,
)

_REPLACE_NULL_DOC = ("Whether to replace fields that have a default value and that are null to the default value. "
                     "When set to true, the default value is used, otherwise null is used.")  # fmt: skip


class ExtractField(FieldTransform):
    """Shared logic of ``ExtractField$Key`` and ``ExtractField$Value``; null values pass through."""

    CONFIG_DEF = with_syntax_version(
        ConfigDef()
        .define("field", Type.STRING, NO_DEFAULT, None, Importance.MEDIUM, "Field name to extract.")
        .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM, _REPLACE_NULL_DOC)
    )

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        try:
            self.path = SingleFieldPath(parsed["field"], parsed[FIELD_SYNTAX_VERSION_CONFIG])
        except ConfigError as e:
            raise ConfigError(e.describe(), key="field") from None
        self.with_default: bool = parsed["replace.null.with.default"]

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        schema = side.schema(record)
        if schema is None:
            value = require_map_or_null(side.value(record), "field extraction")
            return side.replace(record, None, None if value is None else self.path.value_from_map(value))
        struct = require_struct_or_null(side.value(record), "field extraction")
        field = self.path.field_from(schema)
        if field is None:
            raise DataError(f"Unknown field: {self.path.text}")
        extracted = None if struct is None else self.path.value_from_struct(struct, self.with_default)
        return side.replace(record, field.schema, extracted)


class ExtractFieldKey(ExtractField):
    SIDE = KEY


class ExtractFieldValue(ExtractField):
    SIDE = VALUE


class HoistField(FieldTransform):
    """Shared logic of ``HoistField$Key`` and ``HoistField$Value``."""

    CONFIG_DEF = ConfigDef().define(
        "field", Type.STRING, NO_DEFAULT, None, Importance.MEDIUM,
        "Field name for the single field that will be created in the resulting Struct or Map.",
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        self.field: str = self.parse(props)["field"]
        self.cache: SchemaCache[Schema] = SchemaCache()

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        schema = side.schema(record)
        value = side.value(record)
        if schema is None:
            return side.replace(record, None, {self.field: value})
        wrapped = self.cache.get(schema) or self.cache.put(schema, Schema.struct([(self.field, schema)]))
        if value is None and not schema.optional:  # Java's Struct.put validates the value
            raise DataError(
                f'Invalid value: null used for required field: "{self.field}", schema type: {schema.type.name}'
            )
        return side.replace(record, wrapped, Struct.from_values(wrapped, [value]))


class HoistFieldKey(HoistField):
    SIDE = KEY


class HoistFieldValue(HoistField):
    SIDE = VALUE
