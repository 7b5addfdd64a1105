"""``TimestampConverter$Key``/``$Value``: convert a timestamp field, or the whole key or value,
between Unix time (``unix.precision``), text (``format``, a SimpleDateFormat pattern, UTC) and
Connect's Date, Time and Timestamp types."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import (
    DATE_LOGICAL_NAME,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.config.configdef import NO_DEFAULT, ConfigDef, Importance, Type, ValidString
from connect_core.transforms.date_format import SimpleDateFormat
from connect_core.transforms.field_support import (
    KEY,
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    VALUE,
    FieldTransform,
    SchemaCache,
    field_values,
    require_map,
    require_struct_or_null,
    struct_like,
)
from connect_core.transforms.java_values import java_class_name
from connect_core.transforms.time_values import date_of, epoch_millis, time_of, timestamp_of

PURPOSE = "converting timestamp formats"
STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
_PRECISION_UNITS = {"seconds": 1000, "milliseconds": 1, "microseconds": 1000, "nanoseconds": 1_000_000}


def _logical(type_: SchemaType, name: str, optional: bool) -> Schema:
    return Schema(type_, optional=optional, name=name, version=1)


_SCHEMAS: dict[str, tuple[Schema, Schema]] = {  # (required, optional)
    STRING: (STRING_SCHEMA, OPTIONAL_STRING_SCHEMA),
    UNIX: (INT64_SCHEMA, OPTIONAL_INT64_SCHEMA),
    DATE: (_logical(SchemaType.INT32, DATE_LOGICAL_NAME, False), _logical(SchemaType.INT32, DATE_LOGICAL_NAME, True)),
    TIME: (_logical(SchemaType.INT32, TIME_LOGICAL_NAME, False), _logical(SchemaType.INT32, TIME_LOGICAL_NAME, True)),
    TIMESTAMP: (_logical(SchemaType.INT64, TIMESTAMP_LOGICAL_NAME, False),
                _logical(SchemaType.INT64, TIMESTAMP_LOGICAL_NAME, True)),
}  # fmt: skip
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


def _saturated(n: int) -> int:
    """Java's TimeUnit conversions clamp to the long range instead of overflowing."""
    return max(_LONG_MIN, min(_LONG_MAX, n))


def _truncating_div(n: int, d: int) -> int:
    """Java's integer division (towards zero), which TimeUnit uses for coarser units."""
    q = abs(n) // d
    return q if n >= 0 else -q


class TimestampConverter(FieldTransform):
    """Shared logic of ``TimestampConverter$Key`` and ``TimestampConverter$Value``."""

    CONFIG_DEF = (
        ConfigDef()
        .define("field", Type.STRING, "", None, Importance.HIGH,
                "The field containing the timestamp, or empty if the entire value is a timestamp")
        .define("target.type", Type.STRING, NO_DEFAULT, ValidString.in_(STRING, UNIX, DATE, TIME, TIMESTAMP),
                Importance.HIGH, "The desired timestamp representation: string, unix, Date, Time, or Timestamp")
        .define("format", Type.STRING, "", None, Importance.MEDIUM,
                "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when "
                "type=string or used to parse the input if the input is a string.")
        .define("unix.precision", Type.STRING, "milliseconds",
                ValidString.in_("nanoseconds", "microseconds", "milliseconds", "seconds"), Importance.LOW,
                "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. "
                "Used to generate the output when type=unix or used to parse the input if the input is a Long."
                "Note: This SMT will cause precision loss during conversions from, and to, values with "
                "sub-millisecond components.")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.field: str = parsed["field"]
        self.target: str = parsed["target.type"]
        self.precision: str = parsed["unix.precision"]
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]
        pattern: str = parsed["format"]
        if self.target == STRING and not pattern.strip():
            raise ConfigError("TimestampConverter requires format option to be specified when using string "
                              "timestamps", key="format")  # fmt: skip
        self.format: SimpleDateFormat | None = None
        if pattern.strip():
            try:
                self.format = SimpleDateFormat(pattern)
            except ValueError:
                raise ConfigError("TimestampConverter requires a SimpleDateFormat-compatible pattern for string "
                                  f"timestamps: {pattern}", key="format") from None  # fmt: skip
        self.cache: SchemaCache[Schema] = SchemaCache()
        self._to_type: Callable[[int], Any] = getattr(self, "_to_" + self.target.lower())

    # ---- source representation -> epoch ms

    def _raw(self, value: Any, kind: str) -> int:
        if kind == STRING:
            if not isinstance(value, str):
                raise DataError(f"Expected string timestamp to be a String, but found class {java_class_name(value)}")
            if self.format is None:
                raise DataError("TimestampConverter requires format option to be specified when using string "
                                "timestamps")  # fmt: skip
            try:
                return self.format.parse_millis(value)
            except (ValueError, OverflowError):
                raise DataError(f"Could not parse timestamp: value ({value}) does not match pattern "
                                f"({self.format.to_pattern()})") from None  # fmt: skip
        if kind == UNIX:
            if not isinstance(value, int) or isinstance(value, bool):
                raise DataError(f"Expected Unix timestamp to be a Long, but found class {java_class_name(value)}")
            unit = _PRECISION_UNITS[self.precision]
            if self.precision == "seconds":
                return _saturated(value * unit)
            return _truncating_div(value, unit)
        if not isinstance(value, dt.date | dt.time):
            raise DataError(f"Expected {kind} to be a java.util.Date, but found class {java_class_name(value)}")
        return epoch_millis(value)

    # ---- epoch ms -> target representation

    def _to_string(self, millis: int) -> str:
        assert self.format is not None
        return self.format.format_millis(millis)

    def _to_unix(self, millis: int) -> int:
        unit = _PRECISION_UNITS[self.precision]
        if self.precision == "seconds":
            return _truncating_div(millis, unit)
        return _saturated(millis * unit)

    def _to_date(self, millis: int) -> dt.date:
        return date_of(millis)

    def _to_time(self, millis: int) -> dt.time:
        return time_of(millis)

    def _to_timestamp(self, millis: int) -> dt.datetime:
        return timestamp_of(millis)

    def convert(self, value: Any, kind: str | None = None) -> Any:
        """``value`` (of ``kind``, or inferred from its Python type) as the target type."""
        if value is None:
            return None
        if kind is None:
            kind = _infer_kind(value)
        millis = self._raw(value, kind)
        try:
            return self._to_type(millis)
        except (OverflowError, ValueError):  # Java's Date spans more than Python's years 1-9999
            raise DataError(f"Timestamp {millis} ms is outside the years 1-9999 this runtime represents") from None

    # ---- records

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        schema = side.schema(record)
        value = side.value(record)
        if schema is None:
            if value is None or not self.field:
                return side.replace(record, None, self.convert(value))
            updated = dict(require_map(value, PURPOSE))
            updated[self.field] = self.convert(updated.get(self.field))
            return side.replace(record, None, updated)
        if not self.field:
            target_schema = _SCHEMAS[self.target][1 if schema.optional else 0]
            return side.replace(record, target_schema, self.convert(value, _kind_of(schema)))
        struct = require_struct_or_null(value, PURPOSE)
        new_schema = self.cache.get(schema) or self.cache.put(schema, self._struct_schema(schema))
        return side.replace(record, new_schema, self._convert_struct(struct, new_schema))

    def _struct_schema(self, schema: Schema) -> Schema:
        fields = [(f.name, _SCHEMAS[self.target][1 if f.schema.optional else 0] if f.name == self.field else f.schema)
                  for f in schema.fields]  # fmt: skip
        plain = struct_like(schema, fields)
        default = self._convert_struct(schema.default, plain) if isinstance(schema.default, Struct) else None
        return Schema(SchemaType.STRUCT, optional=schema.optional, default=default, name=plain.name,
                      version=plain.version, doc=plain.doc, parameters=plain.parameters, fields=fields)  # fmt: skip

    def _convert_struct(self, struct: Struct | None, new_schema: Schema) -> Struct | None:
        if struct is None:
            return None
        values = field_values(struct, self.with_default)
        f = struct.schema.field(self.field)
        if f is not None:
            values[f.index] = self.convert(values[f.index], _kind_of(f.schema))
        return Struct.from_values(new_schema, values)


def _kind_of(schema: Schema) -> str:
    """The timestamp representation a schema declares (Java's ``timestampTypeFromSchema``)."""
    if schema.name == TIMESTAMP_LOGICAL_NAME:
        return TIMESTAMP
    if schema.name == DATE_LOGICAL_NAME:
        return DATE
    if schema.name == TIME_LOGICAL_NAME:
        return TIME
    if schema.type is SchemaType.STRING:
        return STRING
    if schema.type is SchemaType.INT64:
        return UNIX
    raise DataError(f"Schema {schema!r} does not correspond to a known timestamp type format")


def _infer_kind(value: Any) -> str:
    """The representation of a schemaless value: a date/time is a Timestamp, an int Unix time, text a string."""
    if isinstance(value, dt.date | dt.time):
        return TIMESTAMP
    if isinstance(value, int) and not isinstance(value, bool):
        return UNIX
    if isinstance(value, str):
        return STRING
    raise DataError(f"TimestampConverter does not support class {java_class_name(value)} objects as timestamps")


class TimestampConverterKey(TimestampConverter):
    SIDE = KEY


class TimestampConverterValue(TimestampConverter):
    SIDE = VALUE
