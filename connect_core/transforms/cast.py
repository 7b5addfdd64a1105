"""``org.apache.kafka.connect.transforms.Cast$Key``/``$Value``: cast fields, or the whole key or
value, to another primitive type with Java's conversions (narrowing wraps, strings parse as
Java parses them, binary becomes base64 text, dates become ISO-8601 text)."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from collections.abc import Callable, Mapping
from typing import Any

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.config.configdef import NO_DEFAULT, ConfigDef, Importance, LambdaValidator, Type
from connect_core.transforms.field_support import (
    KEY,
    VALUE,
    FieldTransform,
    SchemaCache,
    field_values,
    infer_type,
    require_map,
    require_struct,
    struct_like,
)
from connect_core.transforms.java_values import (
    java_class_name,
    java_string,
    number_to_integral,
    parse_java_double,
    parse_java_integral,
    to_float32,
)
from connect_core.transforms.time_values import epoch_millis, iso_text_for

PURPOSE = "cast types"
_T = SchemaType
_INPUT_TYPES = (_T.INT8, _T.INT16, _T.INT32, _T.INT64, _T.FLOAT32, _T.FLOAT64, _T.BOOLEAN, _T.STRING, _T.BYTES)
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_WHOLE_VALUE: str | None = None  # the key of a whole-value cast in the parsed spec
_LOGICAL_NAMES = frozenset((DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME, DECIMAL_LOGICAL_NAME))


def _type_list(types: tuple[SchemaType, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _parse_type(text: str) -> SchemaType:
    name = text.strip().upper()
    if name not in SchemaType.__members__:
        raise ConfigError(f"Invalid type found in casting spec: {text.strip()}")
    t = SchemaType[name]
    if t not in _OUTPUT_TYPES:
        raise ConfigError(f"Cast transformation does not support casting to {t.name}; "
                          f"supported types are {_type_list(_OUTPUT_TYPES)}")  # fmt: skip
    return t


def parse_spec(mappings: list[str]) -> dict[str | None, SchemaType]:
    """``field:type`` pairs, or one bare type for the whole value (Java's ``parseFieldTypes``)."""
    casts: dict[str | None, SchemaType] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        while len(parts) > 1 and parts[-1] == "":  # Java's String.split drops trailing empty strings
            parts.pop()
        if len(parts) > 2:
            raise ConfigError(f"Invalid cast mapping: {mapping}")
        if len(parts) == 1:
            casts[_WHOLE_VALUE] = _parse_type(parts[0])
            whole = True
        else:
            casts[parts[0].strip()] = _parse_type(parts[1])
    if whole and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to may only specify a single cast "
            "in their spec"
        )
    return casts


def _validate_spec(name: str, value: Any) -> None:
    if not value:
        raise ConfigError("Must specify at least one field to cast.", key=name)
    try:
        parse_spec(value)
    except ConfigError as e:
        raise ConfigError(e.describe(), key=name) from None


def _encode_logical(schema: Schema, value: Any) -> Any:
    """Date/Time/Timestamp values as their int32/int64 representation (days, ms of day, epoch ms)."""
    if schema.name == DATE_LOGICAL_NAME and isinstance(value, dt.date):
        return epoch_millis(value) // 86_400_000
    if schema.name in (TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME) and isinstance(value, dt.date | dt.time):
        return epoch_millis(value)
    return value


def _unexpected(value: Any) -> DataError:
    return DataError(f"Unexpected type in Cast transformation: class {java_class_name(value)}")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _to_integral(value: Any, bits: int) -> int:
    if _is_number(value):
        return number_to_integral(value, bits)
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, str):
        return parse_java_integral(value, bits)
    raise _unexpected(value)


def _to_double(value: Any, single: bool) -> float:
    if _is_number(value):
        out = float(value)
    elif isinstance(value, bool):
        out = 1.0 if value else 0.0
    elif isinstance(value, str):
        out = parse_java_double(value)
    else:
        raise _unexpected(value)
    return to_float32(out) if single else out


def _to_boolean(value: Any) -> bool:
    if _is_number(value):
        return number_to_integral(value, 64) != 0  # Java: longValue() != 0, so 0.5 is false
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.lower() == "true"
    raise _unexpected(value)


def _to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, dt.date | dt.time):
        return iso_text_for(value)
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    return java_string(value, float32=schema is not None and schema.type is _T.FLOAT32)


_CONVERTERS: dict[SchemaType, Callable[[Any, Schema | None], Any]] = {
    _T.INT8: lambda v, _: _to_integral(v, 8),
    _T.INT16: lambda v, _: _to_integral(v, 16),
    _T.INT32: lambda v, _: _to_integral(v, 32),
    _T.INT64: lambda v, _: _to_integral(v, 64),
    _T.FLOAT32: lambda v, _: _to_double(v, True),
    _T.FLOAT64: lambda v, _: _to_double(v, False),
    _T.BOOLEAN: lambda v, _: _to_boolean(v),
    _T.STRING: _to_string,
}


def cast_value(schema: Schema | None, value: Any, target: SchemaType) -> Any:
    """Java's ``castValueToType``: ``value`` (described by ``schema``, or inferred) as ``target``."""
    if value is None:
        return None
    inferred = schema.type if schema is not None else infer_type(value)
    if inferred is None:
        raise DataError(f"Cast transformation was passed a value of type class {java_class_name(value)} "
                        "which is not supported by Connect's data API")  # fmt: skip
    if inferred not in _INPUT_TYPES:
        raise DataError(f"Cast transformation does not support casting from {inferred.name}; "
                        f"supported types are {_type_list(_INPUT_TYPES)}")  # fmt: skip
    if schema is not None and schema.name is not None and target is not _T.STRING:
        value = _encode_logical(schema, value)
    try:
        return _CONVERTERS[target](value, schema)
    except (ValueError, OverflowError):
        raise DataError(f"Value ({java_string(value)}) was out of range for requested data type") from None


class Cast(FieldTransform):
    """Shared logic of ``Cast$Key`` and ``Cast$Value``."""

    CONFIG_DEF = (
        ConfigDef()
        .define("spec", Type.LIST, NO_DEFAULT,
                LambdaValidator(_validate_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
                Importance.HIGH,
                "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of "
                "Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, "
                "int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.")
        .define("replace.null.with.default", Type.BOOLEAN, True, None, Importance.MEDIUM,
                "Whether to replace fields that have a default value and that are null to the default value. "
                "When set to true, the default value is used, otherwise null is used.")
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        casts = parse_spec(parsed["spec"])
        self.whole = casts.pop(_WHOLE_VALUE, None)
        self.casts: dict[str, SchemaType] = {k: v for k, v in casts.items() if k is not None}
        self.with_default: bool = parsed["replace.null.with.default"]
        self.cache: SchemaCache[Schema] = SchemaCache()

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        value = side.value(record)
        if value is None:
            return record
        schema = side.schema(record)
        if schema is None:
            if self.whole is not None:
                return side.replace(record, None, cast_value(None, value, self.whole))
            original = require_map(value, PURPOSE)
            updated = dict(original)
            for name, target in self.casts.items():
                updated[name] = cast_value(None, original.get(name), target)
            return side.replace(record, None, updated)
        new_schema = self.cache.get(schema) or self.cache.put(schema, self._build_schema(schema))
        if self.whole is not None:
            return side.replace(record, new_schema, cast_value(schema, value, self.whole))
        struct = require_struct(value, PURPOSE)
        values = field_values(struct, self.with_default)
        for f in struct.schema.fields:
            to = self.casts.get(f.name)
            if to is not None:
                values[f.index] = cast_value(f.schema, values[f.index], to)
        return side.replace(record, new_schema, Struct.from_values(new_schema, values))

    def _build_schema(self, schema: Schema) -> Schema:
        out_type = _T.STRUCT if self.whole is None else self.whole
        fields: list[tuple[str, Schema]] = []
        for f in schema.fields if self.whole is None else ():
            target = self.casts.get(f.name)
            if target is None:
                fields.append((f.name, f.schema))
                continue
            f_default = None if f.schema.default is None else cast_value(f.schema, f.schema.default, target)
            fields.append((f.name, Schema(target, optional=f.schema.optional, default=f_default)))
        default = None if schema.default is None else cast_value(schema, schema.default, out_type)
        if self.whole is not None and schema.name in _LOGICAL_NAMES:
            # Java copies a Date/Time/Timestamp/Decimal name onto the cast primitive too, which every
            # converter then rejects ("Invalid type for Timestamp"); the cast value is a plain primitive.
            return Schema(out_type, optional=schema.optional, default=default, doc=schema.doc)
        # Java copies the name, version, doc and parameters even onto a whole-value cast's primitive.
        basics = struct_like(schema, fields)
        return Schema(out_type, optional=schema.optional, default=default, name=basics.name, version=basics.version,
                      doc=basics.doc, parameters=basics.parameters, fields=fields)  # fmt: skip


class CastKey(Cast):
    SIDE = KEY


class CastValue(Cast):
    SIDE = VALUE
