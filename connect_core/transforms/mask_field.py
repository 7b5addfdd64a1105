"""``MaskField$Key``/``$Value``: replace fields by their type's empty value (0, false, "", empty
list or map, the epoch) or by ``replacement`` converted to the field's type (numbers and strings
only), as Java does it: the field's Java class decides, so a Struct int8 field masks to a wrapped
byte and a schemaless integer to a long."""

from __future__ import annotations

import datetime as dt
import decimal
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import DataError
from connect_core.api.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.config.configdef import NO_DEFAULT, ConfigDef, Importance, NonEmptyString, Type
from connect_core.transforms.field_support import (
    KEY,
    REPLACE_NULL_DOC,
    REPLACE_NULL_WITH_DEFAULT,
    VALUE,
    FieldTransform,
    field_values,
    non_empty_list,
    require_map,
    require_struct,
)
from connect_core.transforms.java_values import number_to_integral, parse_big_decimal, to_float32
from connect_core.transforms.time_values import timestamp_of

PURPOSE = "mask fields"
_T = SchemaType
_BY_TYPE = {
    _T.INT8: "java.lang.Byte", _T.INT16: "java.lang.Short", _T.INT32: "java.lang.Integer", _T.INT64: "java.lang.Long",
    _T.FLOAT32: "java.lang.Float", _T.FLOAT64: "java.lang.Double", _T.BOOLEAN: "java.lang.Boolean",
    _T.STRING: "java.lang.String", _T.BYTES: "[B", _T.ARRAY: "java.util.List", _T.MAP: "java.util.Map",
    _T.STRUCT: "org.apache.kafka.connect.data.Struct",
}  # fmt: skip
_DATES = (DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME)
_INT_BITS = {"java.lang.Byte": 8, "java.lang.Short": 16, "java.lang.Integer": 32, "java.lang.Long": 64}


def java_class(schema: Schema | None, value: Any) -> str:
    """The Java class Connect would hold the value as: from the field schema, else from the value."""
    if schema is not None:
        if schema.name == DECIMAL_LOGICAL_NAME:
            return "java.math.BigDecimal"
        if schema.name in _DATES:
            return "java.util.Date"
        return _BY_TYPE[schema.type]
    for kind, name in (
        (bool, "java.lang.Boolean"), (int, "java.lang.Long"), (float, "java.lang.Double"), (str, "java.lang.String"),
        (decimal.Decimal, "java.math.BigDecimal"), ((dt.date, dt.time), "java.util.Date"), (list, "java.util.List"),
        (Mapping, "java.util.Map"), (Struct, "org.apache.kafka.connect.data.Struct"),
    ):  # fmt: skip
        if isinstance(value, kind):  # type: ignore[arg-type]
            return name
    return "[B" if isinstance(value, bytes | bytearray | memoryview) else type(value).__qualname__


def _empty(java: str, value: Any) -> Any:
    if java == "java.lang.Boolean":
        return False
    if java in _INT_BITS:
        return 0
    if java in ("java.lang.Float", "java.lang.Double"):
        return 0.0
    if java == "java.math.BigDecimal":
        return decimal.Decimal(0)
    if java == "java.lang.String":
        return ""
    if java == "java.util.Date":  # new Date(0), in the value's own Python type
        epoch = timestamp_of(0)
        return epoch.date() if type(value) is dt.date else epoch.time() if isinstance(value, dt.time) else epoch
    if java == "java.util.List":
        return []
    if java == "java.util.Map":
        return {}
    raise DataError(f"Cannot mask value of type: class {java}")


def _as_long(replacement: str) -> int:
    """Java's ``Values.asLong`` of a string: ``new BigDecimal(s).longValue()``."""
    try:
        return number_to_integral(parse_big_decimal(replacement), 64)
    except ValueError:
        raise DataError(f"Unable to convert {replacement} (class java.lang.String) to a number") from None


def _replacement(java: str, replacement: str) -> Any:
    if java in _INT_BITS:
        return number_to_integral(_as_long(replacement), _INT_BITS[java])
    if java in ("java.lang.Float", "java.lang.Double"):
        try:
            d = float(parse_big_decimal(replacement))
        except ValueError:
            d = float(_as_long(replacement))  # raises Java's "Unable to convert" error
        return to_float32(d) if java == "java.lang.Float" else d
    if java == "java.lang.String":
        return replacement
    if java == "java.math.BigDecimal":
        try:
            return parse_big_decimal(replacement)
        except ValueError:
            raise DataError(f"Unable to convert {replacement} (class java.lang.String) to number") from None
    raise DataError(f"Cannot mask value of type class {java} with custom replacement.")


class MaskField(FieldTransform):
    """Shared logic of ``MaskField$Key`` and ``MaskField$Value`` (a null key or value is an error, as in Java)."""

    CONFIG_DEF = (
        ConfigDef()
        .define("fields", Type.LIST, NO_DEFAULT, non_empty_list, Importance.HIGH, "Names of fields to mask.")
        .define("replacement", Type.STRING, None, NonEmptyString(), Importance.LOW,
                "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string "
                "values only).")
        .define(REPLACE_NULL_WITH_DEFAULT, Type.BOOLEAN, True, None, Importance.MEDIUM, REPLACE_NULL_DOC)
    )  # fmt: skip

    def configure(self, props: Mapping[str, Any]) -> None:
        parsed = self.parse(props)
        self.fields = frozenset(parsed["fields"])
        self.replacement: str | None = parsed["replacement"]
        self.with_default: bool = parsed[REPLACE_NULL_WITH_DEFAULT]

    def _masked(self, schema: Schema | None, value: Any) -> Any:
        if value is None:
            return None
        java = java_class(schema, value)
        return _empty(java, value) if self.replacement is None else _replacement(java, self.replacement)

    def apply(self, record: Any) -> Any:
        side = self.SIDE
        schema = side.schema(record)
        if schema is None:
            original = require_map(side.value(record), PURPOSE)
            updated = dict(original)
            for name in self.fields:
                updated[name] = self._masked(None, original.get(name))
            return side.replace(record, None, updated)
        struct = require_struct(side.value(record), PURPOSE)
        values = field_values(struct, self.with_default)
        for f in struct.schema.fields:
            if f.name in self.fields:
                values[f.index] = self._masked(f.schema, values[f.index])
        return side.replace(record, schema, Struct.from_values(struct.schema, values))


class MaskFieldKey(MaskField):
    SIDE = KEY


class MaskFieldValue(MaskField):
    SIDE = VALUE
