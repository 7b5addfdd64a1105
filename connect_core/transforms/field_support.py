"""What Java's field transforms share: the key/value side they work on, the type requirements
with Java's error texts, schema copying, and a small per-transform schema cache.

Each field transform is written once against a :class:`Side`; its ``$Key`` and ``$Value``
classes differ only in the side they use, as Java's nested ``Key``/``Value`` classes do.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Generic, TypeVar

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import Schema, SchemaType, Struct
from connect_core.transforms.base import PluginBase
from connect_core.transforms.java_values import java_class_name

R = TypeVar("R")
D = TypeVar("D")


class Side:
    """The record's key or its value: read it, and copy the record with it replaced."""

    __slots__ = ("is_key",)

    def __init__(self, is_key: bool) -> None:
        self.is_key = is_key

    def schema(self, record: Any) -> Schema | None:
        return record.key_schema if self.is_key else record.value_schema  # type: ignore[no-any-return]

    def value(self, record: Any) -> Any:
        return record.key if self.is_key else record.value

    def replace(self, record: R, schema: Schema | None, value: Any, headers: list[Any] | None = None) -> R:
        """A copy of ``record`` with this side set, None included (``new_record`` keeps None fields)."""
        copy: Any = record.new_record(headers=headers)  # type: ignore[attr-defined]
        if self.is_key:
            copy.key_schema, copy.key = schema, value
        else:
            copy.value_schema, copy.value = schema, value
        return copy  # type: ignore[no-any-return]


KEY = Side(True)
VALUE = Side(False)


class FieldTransform(PluginBase):
    """Base of the field transforms: ``SIDE`` is set by the ``$Key``/``$Value`` subclasses."""

    SIDE: Side = VALUE

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


_EXACT_TYPES: dict[type, SchemaType] = {
    bool: SchemaType.BOOLEAN, int: SchemaType.INT64, float: SchemaType.FLOAT64, str: SchemaType.STRING,
    bytes: SchemaType.BYTES, bytearray: SchemaType.BYTES, memoryview: SchemaType.BYTES, list: SchemaType.ARRAY,
    dict: SchemaType.MAP, Struct: SchemaType.STRUCT,
}  # fmt: skip


def infer_type(value: Any) -> SchemaType | None:
    """Java's ``ConnectSchema.schemaType(value.getClass())``: None for classes Connect does not know
    (dates and decimals among them: schemaless data has no logical types)."""
    found = _EXACT_TYPES.get(type(value))
    if found is not None:
        return found
    for kind, schema_type in _EXACT_TYPES.items():  # subclasses (an OrderedDict, an IntEnum ...)
        if isinstance(value, kind):
            return schema_type
    return SchemaType.MAP if isinstance(value, Mapping) else None


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {java_class_name(value)}"
        )
    return value  # type: ignore[return-value]


def require_map_or_null(value: Any, purpose: str) -> dict[str, Any] | None:
    return None if value is None else require_map(value, purpose)


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {java_class_name(value)}")
    return value


def require_struct_or_null(value: Any, purpose: str) -> Struct | None:
    return None if value is None else require_struct(value, purpose)


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_sink_record(record: Any, purpose: str) -> Any:
    from connect_core.api.sink import SinkRecord

    if not isinstance(record, SinkRecord):
        raise DataError(
            f"Only SinkRecord supported for [{purpose}], found: org.apache.kafka.connect.source.{type(record).__name__}"
        )
    return record


def field_value(struct: Struct, name: str, with_default: bool) -> Any:
    """A field's value, its schema default standing in for null when ``with_default`` (replace.null.with.default)."""
    return struct.get(name) if with_default else struct.get_without_default(name)


def field_values(struct: Struct, with_default: bool) -> list[Any]:
    """Every field's value in field order (a new list), defaults standing in for nulls when ``with_default``."""
    values = struct.values()
    if with_default:
        for f in struct.schema.fields:
            if values[f.index] is None:
                values[f.index] = f.schema.default
    return values


def struct_like(schema: Schema, fields: list[tuple[str, Schema]]) -> Schema:
    """A STRUCT schema with ``schema``'s name, version, doc and parameters (Java's ``copySchemaBasics``)
    and the given fields; optional/default are not copied, as Java leaves them to the caller."""
    return Schema(
        SchemaType.STRUCT,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        fields=fields,
    )


def with_options(schema: Schema, *, optional: bool | None = None, default: Any = None) -> Schema:
    """``schema`` with its optional flag and/or default replaced (None keeps them)."""
    return Schema(
        schema.type,
        optional=schema.optional if optional is None else optional,
        default=schema.default if default is None else default,
        name=schema.name,
        version=schema.version,
        doc=schema.doc,
        parameters=schema.parameters,
        key_schema=schema.key_schema,
        value_schema=schema.value_schema,
        fields=[(f.name, f.schema) for f in schema.fields],
    )


REPLACE_NULL_WITH_DEFAULT = "replace.null.with.default"
REPLACE_NULL_DOC = (
    "Whether to replace fields that have a default value and that are null to the default value. "
    "When set to true, the default value is used, otherwise null is used."
)


def non_empty_list(name: str, value: Any) -> None:
    """Java's ``NonEmptyListValidator``."""
    if value is not None and len(value) == 0:
        raise ConfigError(f"Invalid value {value} for configuration {name}: Empty list", key=name)


def check_unique(fields: list[tuple[str, Schema]]) -> list[tuple[str, Schema]]:
    """Java's SchemaBuilder refuses a struct with two fields of one name; so do we."""
    seen: set[str] = set()
    for name, _ in fields:
        if name in seen:
            raise DataError(f"Cannot create field because of field name duplication {name}")
        seen.add(name)
    return fields


class SchemaCache(Generic[D]):
    """What a transform derives from an input schema, bounded like Java's 16-entry LRU cache (schemas are few)."""

    __slots__ = ("_entries", "_limit")

    def __init__(self, limit: int = 16) -> None:
        self._entries: dict[Schema, D] = {}
        self._limit = limit

    def get(self, schema: Schema) -> D | None:
        return self._entries.get(schema)

    def put(self, schema: Schema, derived: D) -> D:
        if len(self._entries) >= self._limit:
            self._entries.pop(next(iter(self._entries)))
        self._entries[schema] = derived
        return derived
