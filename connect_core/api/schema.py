"""A small model of Connect's data schemas (``org.apache.kafka.connect.data``).

Only what converters and Connect's internal topics need: the primitive and container types,
optional/default/name/version/doc/parameters, and :class:`Struct`. MirrorMaker itself moves raw
bytes (schema ``BYTES``) and never builds structs; the config and status topics do, through
:class:`~connect_core.converters.json.JsonConverter`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from connect_core.api.errors import DataError


class SchemaType(enum.Enum):
    """Connect schema types; the value is the name JsonConverter writes in ``"type"``."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float"
    FLOAT64 = "double"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (SchemaType.ARRAY, SchemaType.MAP, SchemaType.STRUCT)


@dataclass(frozen=True)
class Field:
    name: str
    index: int
    schema: Schema


class Schema:
    """An immutable Connect schema; equal schemas hash equal (used as cache keys)."""

    __slots__ = (
        "_by_name",
        "_hash",
        "default",
        "doc",
        "fields",
        "key_schema",
        "name",
        "optional",
        "parameters",
        "type",
        "value_schema",
        "version",
    )

    def __init__(
        self,
        type: SchemaType,
        optional: bool = False,
        default: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
        fields: Iterable[tuple[str, Schema]] = (),
    ) -> None:
        self.type = type
        self.optional = optional
        self.default = default
        self.name = name
        self.version = version
        self.doc = doc
        self.parameters = dict(parameters) if parameters is not None else None
        self.key_schema = key_schema
        self.value_schema = value_schema
        self.fields: tuple[Field, ...] = tuple(Field(n, i, s) for i, (n, s) in enumerate(fields))
        # field() by name without a scan; with duplicate names the first wins, as a scan would
        self._by_name: dict[str, Field] = {f.name: f for f in reversed(self.fields)}
        if type is SchemaType.MAP and (key_schema is None or value_schema is None):
            raise DataError("A map schema needs key and value schemas")
        if type is SchemaType.ARRAY and value_schema is None:
            raise DataError("An array schema needs a value schema")
        self._hash: int | None = None

    # ---- builders (SchemaBuilder's common uses)

    @staticmethod
    def struct(fields: Iterable[tuple[str, Schema]], *, optional: bool = False, name: str | None = None) -> Schema:
        return Schema(SchemaType.STRUCT, optional=optional, name=name, fields=fields)

    @staticmethod
    def map(key: Schema, value: Schema, *, optional: bool = False) -> Schema:
        return Schema(SchemaType.MAP, optional=optional, key_schema=key, value_schema=value)

    @staticmethod
    def array(value: Schema, *, optional: bool = False) -> Schema:
        return Schema(SchemaType.ARRAY, optional=optional, value_schema=value)

    def field(self, name: str) -> Field | None:
        return self._by_name.get(name)

    def _identity(self) -> tuple[Any, ...]:
        params = tuple(sorted(self.parameters.items())) if self.parameters is not None else None
        return (
            self.type,
            self.optional,
            _hashable(self.default),
            self.name,
            self.version,
            self.doc,
            params,
            self.key_schema,
            self.value_schema,
            self.fields,
        )

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        return isinstance(other, Schema) and self._identity() == other._identity()

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self._identity())
        return self._hash

    def __repr__(self) -> str:
        opt = "optional " if self.optional else ""
        label = f" {self.name}" if self.name else ""
        return f"Schema({opt}{self.type.name}{label})"


def _hashable(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((k, _hashable(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, Struct):
        return (value.schema, tuple(_hashable(v) for v in value.values()))
    return value


def _primitive(t: SchemaType, optional: bool = False) -> Schema:
    return Schema(t, optional=optional)


INT8_SCHEMA = _primitive(SchemaType.INT8)
INT16_SCHEMA = _primitive(SchemaType.INT16)
INT32_SCHEMA = _primitive(SchemaType.INT32)
INT64_SCHEMA = _primitive(SchemaType.INT64)
FLOAT32_SCHEMA = _primitive(SchemaType.FLOAT32)
FLOAT64_SCHEMA = _primitive(SchemaType.FLOAT64)
BOOLEAN_SCHEMA = _primitive(SchemaType.BOOLEAN)
STRING_SCHEMA = _primitive(SchemaType.STRING)
BYTES_SCHEMA = _primitive(SchemaType.BYTES)
OPTIONAL_INT8_SCHEMA = _primitive(SchemaType.INT8, True)
OPTIONAL_INT16_SCHEMA = _primitive(SchemaType.INT16, True)
OPTIONAL_INT32_SCHEMA = _primitive(SchemaType.INT32, True)
OPTIONAL_INT64_SCHEMA = _primitive(SchemaType.INT64, True)
OPTIONAL_FLOAT32_SCHEMA = _primitive(SchemaType.FLOAT32, True)
OPTIONAL_FLOAT64_SCHEMA = _primitive(SchemaType.FLOAT64, True)
OPTIONAL_BOOLEAN_SCHEMA = _primitive(SchemaType.BOOLEAN, True)
OPTIONAL_STRING_SCHEMA = _primitive(SchemaType.STRING, True)
OPTIONAL_BYTES_SCHEMA = _primitive(SchemaType.BYTES, True)

# Logical type names (the ``name`` of the schema) understood by JsonConverter.
DECIMAL_LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
DATE_LOGICAL_NAME = "org.apache.kafka.connect.data.Date"
TIME_LOGICAL_NAME = "org.apache.kafka.connect.data.Time"
TIMESTAMP_LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"


class Struct:
    """A structured value whose fields are described by a STRUCT schema."""

    __slots__ = ("_values", "schema")

    def __init__(self, schema: Schema, values: Mapping[str, Any] | None = None) -> None:
        if schema.type is not SchemaType.STRUCT:
            raise DataError(f"Struct requires a STRUCT schema, got {schema.type.name}")
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields)
        if values:
            for k, v in values.items():
                self.put(k, v)

    @classmethod
    def from_values(cls, schema: Schema, values: list[Any]) -> Struct:
        """A struct holding ``values`` in field order (no per-field lookups: transforms build many)."""
        if len(values) != len(schema.fields) or schema.type is not SchemaType.STRUCT:
            raise DataError(f"A STRUCT schema of {len(values)} fields needed, got {schema!r}")
        struct = cls.__new__(cls)
        struct.schema = schema
        struct._values = values
        return struct

    def put(self, name: str, value: Any) -> Struct:
        f = self.schema.field(name)
        if f is None:
            raise DataError(f"{name} is not a valid field name")
        self._values[f.index] = value
        return self

    def get(self, name: str) -> Any:
        """The field's value, or its schema default when unset (Java ``Struct.get``)."""
        f = self.schema.field(name)
        if f is None:
            raise DataError(f"{name} is not a valid field name")
        v = self._values[f.index]
        return f.schema.default if v is None else v

    def get_without_default(self, name: str) -> Any:
        f = self.schema.field(name)
        if f is None:
            raise DataError(f"{name} is not a valid field name")
        return self._values[f.index]

    def values(self) -> list[Any]:
        return list(self._values)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: self._values[f.index] for f in self.schema.fields}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Struct) and self.schema == other.schema and self._values == other._values

    def __hash__(self) -> int:
        return hash((self.schema, tuple(_hashable(v) for v in self._values)))

    def __repr__(self) -> str:
        inner = ",".join(f"{k}={v!r}" for k, v in self.as_dict().items())
        return f"Struct{{{inner}}}"

    def __str__(self) -> str:
        """Java's ``Struct.toString`` (what StringConverter and FileStreamSink write): set fields only."""
        inner = ",".join(f"{k}={_java_str(v)}" for k, v in self.as_dict().items() if v is not None)
        return f"Struct{{{inner}}}"


def _java_str(value: Any) -> str:
    """``String.valueOf`` of a value inside a Struct (lists ``[a, b]``, maps ``{k=v}``, ``true``/``null``)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_java_str(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{_java_str(k)}={_java_str(v)}" for k, v in value.items()) + "}"
    return str(value)


class SchemaAndValue(NamedTuple):
    """What a converter returns from bytes; unpacks as ``schema, value``."""

    schema: Schema | None
    value: Any


NULL_SCHEMA_AND_VALUE = SchemaAndValue(None, None)
