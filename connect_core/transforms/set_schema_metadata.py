"""``SetSchemaMetadata$Key``/``$Value``: set the name and/or version of the key or value schema
(a Struct is re-created against the renamed schema)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError
from connect_core.api.schema import Schema, SchemaType, Struct
from connect_core.config.configdef import ConfigDef, Importance, Type
from connect_core.transforms.field_support import (
    KEY,
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    VALUE,
    FieldTransform,
    SchemaCache,
    field_values,
    require_schema,
)


class SetSchemaMetadata(FieldTransform):
    """Shared logic of ``SetSchemaMetadata$Key`` and ``SetSchemaMetadata$Value``."""

    CONFIG_DEF = (
        ConfigDef()
        .define("schema.name", Type.STRING, None, None, Importance.HIGH, "Schema name to set.")
        .define("schema.version", Type.INT, None, None, Importance.HIGH, "Schema version to set.")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.schema_name: str | None = parsed["schema.name"]
        self.schema_version: int | None = parsed["schema.version"]
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        if self.schema_name is None and self.schema_version is None:
            raise ConfigError("Neither schema name nor version configured")
        self.cache: SchemaCache[Schema] = SchemaCache()

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        value = side.value(record)
        schema = side.schema(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        renamed = self.cache.get(schema) or self.cache.put(schema, self._renamed(schema))
        if isinstance(value, Struct):
            value = Struct.from_values(renamed, field_values(value, self.with_default))
        return side.replace(record, renamed, value)

    def _renamed(self, schema: Schema) -> Schema:
        return Schema(
            schema.type,
            optional=schema.optional,
            default=schema.default,
            name=self.schema_name if self.schema_name is not None else schema.name,
            version=self.schema_version if self.schema_version is not None else schema.version,
            doc=schema.doc,
            parameters=schema.parameters,
            key_schema=schema.key_schema if schema.type is SchemaType.MAP else None,
            value_schema=schema.value_schema if schema.type in (SchemaType.MAP, SchemaType.ARRAY) else None,
            fields=[(f.name, f.schema) for f in schema.fields],
        )


class SetSchemaMetadataKey(SetSchemaMetadata):
    SIDE = KEY


class SetSchemaMetadataValue(SetSchemaMetadata):
    SIDE = VALUE
