"""Headers as text with type inference: Connect's default ``SimpleHeaderConverter``.

Writing renders the value as Connect's ``Values.convertToString`` does (booleans ``true``/
``false``, bytes as base64, lists/maps in Connect's bracket syntax); reading parses the text back
to the narrowest type (``true`` -> BOOLEAN, ``42`` and ``42.0`` -> INT8, ``3.5`` -> FLOAT32...), falling back to
STRING. This is a faithful subset of ``Values.parseString``: temporal literals and nested
bracket syntax with unquoted strings stay strings.
"""

from __future__ import annotations

import base64
import decimal
import json
import math
import re
import struct
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import DataError
from connect_core.api.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    DECIMAL_LOGICAL_NAME,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    NULL_SCHEMA_AND_VALUE,
    STRING_SCHEMA,
    Schema,
    SchemaAndValue,
    SchemaType,
    Struct,
)
from connect_core.converters.base import ConverterBase

_NUMBER_RE = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_FLOAT32_MAX = 3.4028234663852886e38


def _decimal_schema(scale: int) -> Schema:
    return Schema(SchemaType.BYTES, name=DECIMAL_LOGICAL_NAME, version=1, parameters={"scale": str(scale)})


def _parse_number(token: str) -> SchemaAndValue:
    """Values.parseAsNumber: integral values take the narrowest int type, others FLOAT32 when
    finite as a float (rounded, as Java's floatValue), then FLOAT64, else a Decimal."""
    d = decimal.Decimal(token)
    exponent = d.as_tuple().exponent
    scale = -exponent if isinstance(exponent, int) else 0
    if d == d.to_integral_value():
        n = int(d)
        for schema, bits in ((INT8_SCHEMA, 8), (INT16_SCHEMA, 16), (INT32_SCHEMA, 32), (INT64_SCHEMA, 64)):
            if -(1 << (bits - 1)) <= n < (1 << (bits - 1)):
                return SchemaAndValue(schema, n)
        if scale == 0:
            return SchemaAndValue(_decimal_schema(0), d)
    f = float(d)
    if scale != 0 and abs(f) <= _FLOAT32_MAX:
        return SchemaAndValue(FLOAT32_SCHEMA, struct.unpack("f", struct.pack("f", f))[0])
    if scale != 0 and not math.isinf(f):
        return SchemaAndValue(FLOAT64_SCHEMA, f)
    return SchemaAndValue(_decimal_schema(scale), d)


def convert_to_string(value: Any) -> str:
    """Connect ``Values.convertToString`` for the value kinds headers carry."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ",".join(_embedded(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_embedded(k)}:{_embedded(v)}" for k, v in value.items()) + "}"
    if isinstance(value, Struct):
        return "{" + ",".join(f'"{k}":{_embedded(v)}' for k, v in value.as_dict().items()) + "}"
    return str(value)


def _embedded(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return convert_to_string(value)


def parse_string(text: str) -> SchemaAndValue:
    """Infer a schema and value from header text (subset of Connect ``Values.parseString``)."""
    if text == "":
        return SchemaAndValue(STRING_SCHEMA, text)
    stripped = text.strip()
    low = stripped.lower()
    if low in ("true", "false"):
        return SchemaAndValue(BOOLEAN_SCHEMA, low == "true")
    if _NUMBER_RE.match(stripped):
        return _parse_number(stripped)
    if stripped[:1] in ("[", "{"):
        try:
            parsed = json.loads(stripped)
        except ValueError:
            return SchemaAndValue(STRING_SCHEMA, text)
        if isinstance(parsed, list):
            return SchemaAndValue(None, parsed)
        if isinstance(parsed, dict):
            return SchemaAndValue(None, parsed)
    return SchemaAndValue(STRING_SCHEMA, text)


class SimpleHeaderConverter(ConverterBase):
    """``org.apache.kafka.connect.storage.SimpleHeaderConverter``."""

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """No settings."""

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        return convert_to_string(value).encode("utf-8")

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        try:
            return parse_string(bytes(data).decode("utf-8"))
        except UnicodeDecodeError:
            return SchemaAndValue(BYTES_SCHEMA, bytes(data))
        except ValueError as e:
            raise DataError(f"Failed to deserialize value for header '{header_key}' on topic '{topic}'") from e
