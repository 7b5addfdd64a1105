"""``InsertField$Key``/``$Value``: add the record's topic, partition, offset (sink records only),
timestamp and/or a static string as fields of the key or value. A field name ending in ``!`` is
required in the new schema, ``?`` (the default) optional."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from connect_core.api.errors import ConfigError
from connect_core.api.schema import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.config.configdef import ConfigDef, Importance, Type
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
    require_sink_record,
    require_struct,
    struct_like,
)
from connect_core.transforms.time_values import timestamp_of

PURPOSE = "field insertion"
_OPTIONALITY = (
    "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."
)
TIMESTAMP_SCHEMA = Schema(SchemaType.INT64, name=TIMESTAMP_LOGICAL_NAME, version=1)
OPTIONAL_TIMESTAMP_SCHEMA = Schema(SchemaType.INT64, optional=True, name=TIMESTAMP_LOGICAL_NAME, version=1)


class InsertionSpec(NamedTuple):
    name: str
    optional: bool

    @staticmethod
    def parse(spec: str | None) -> InsertionSpec | None:
        if spec is None:
            return None
        if spec.endswith("?"):
            return InsertionSpec(spec[:-1], True)
        if spec.endswith("!"):
            return InsertionSpec(spec[:-1], False)
        return InsertionSpec(spec, True)


class InsertField(FieldTransform):
    """Shared logic of ``InsertField$Key`` and ``InsertField$Value``; null values pass through."""

    CONFIG_DEF = (
        ConfigDef()
        .define("topic.field", Type.STRING, None, None, Importance.MEDIUM,
                "Field name for Kafka topic. " + _OPTIONALITY)
        .define("partition.field", Type.STRING, None, None, Importance.MEDIUM,
                "Field name for Kafka partition. " + _OPTIONALITY)
        .define("offset.field", Type.STRING, None, None, Importance.MEDIUM,
                "Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY)
        .define("timestamp.field", Type.STRING, None, None, Importance.MEDIUM,
                "Field name for record timestamp. " + _OPTIONALITY)
        .define("static.field", Type.STRING, None, None, Importance.MEDIUM,
                "Field name for static data field. " + _OPTIONALITY)
        .define("static.value", Type.STRING, None, None, Importance.MEDIUM,
                "Static field value, if field name configured.")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.topic_field = InsertionSpec.parse(parsed["topic.field"])
        self.partition_field = InsertionSpec.parse(parsed["partition.field"])
        self.offset_field = InsertionSpec.parse(parsed["offset.field"])
        self.timestamp_field = InsertionSpec.parse(parsed["timestamp.field"])
        self.static_field = InsertionSpec.parse(parsed["static.field"])
        self.static_value: str | None = parsed["static.value"]
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        specs = (self.topic_field, self.partition_field, self.offset_field, self.timestamp_field, self.static_field)
        if all(s is None for s in specs):
            raise ConfigError("No field insertion configured")
        if self.static_field is not None and self.static_value is None:
            raise ConfigError(
                f"Invalid value null for configuration static.value: No value specified for static field: "
                f"{self.static_field.name}",
                key="static.value",
            )
        self.cache: SchemaCache[Schema] = SchemaCache()

    def _inserted(self, record: Any, schemaless: bool) -> list[tuple[str, Any]]:
        """The (name, value) pairs to add, in Java's order, skipping a missing partition or timestamp."""
        out: list[tuple[str, Any]] = []
        if self.topic_field is not None:
            out.append((self.topic_field.name, record.topic))
        if self.partition_field is not None and record.kafka_partition is not None:
            out.append((self.partition_field.name, record.kafka_partition))
        if self.offset_field is not None:
            out.append((self.offset_field.name, require_sink_record(record, PURPOSE).kafka_offset))
        if self.timestamp_field is not None and record.timestamp is not None:
            ts = record.timestamp if schemaless else timestamp_of(record.timestamp)
            out.append((self.timestamp_field.name, ts))
        if self.static_field is not None and self.static_value is not None:
            out.append((self.static_field.name, self.static_value))
        return out

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        value = side.value(record)
        if value is None:
            return record
        if side.schema(record) is None:
            updated = dict(require_map(value, PURPOSE))
            updated.update(self._inserted(record, True))
            return side.replace(record, None, updated)
        struct = require_struct(value, PURPOSE)
        new_schema = self.cache.get(struct.schema) or self.cache.put(struct.schema, self._schema(struct.schema))
        values = field_values(struct, self.with_default)
        inserted = dict(self._inserted(record, False))  # the new fields follow the struct's own
        added = new_schema.fields[len(values) :]
        values.extend(inserted.get(f.name) for f in added)
        return side.replace(record, new_schema, Struct.from_values(new_schema, values))

    def _schema(self, schema: Schema) -> Schema:
        fields = [(f.name, f.schema) for f in schema.fields]
        choices = (
            (self.topic_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
            (self.partition_field, OPTIONAL_INT32_SCHEMA, INT32_SCHEMA),
            (self.offset_field, OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
            (self.timestamp_field, OPTIONAL_TIMESTAMP_SCHEMA, TIMESTAMP_SCHEMA),
            (self.static_field, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
        )
        for spec, optional, required in choices:
            if spec is not None:
                fields.append((spec.name, optional if spec.optional else required))
        return struct_like(schema, check_unique(fields))


class InsertFieldKey(InsertField):
    SIDE = KEY


class InsertFieldValue(InsertField):
    SIDE = VALUE
