"""JSON converter, wire-compatible with ``org.apache.kafka.connect.json.JsonConverter``.

With ``schemas.enable=true`` each record is the envelope ``{"schema": ..., "payload": ...}``
with the schema written exactly as Java writes it (key order included); with ``false`` only the
payload is written and reading infers types (integers -> INT64, decimals -> FLOAT64, objects ->
MAP). Connect's internal topics (configs, offsets, status) use this converter with
``schemas.enable=false``. Output is compact (no spaces) and UTF-8, as Jackson writes it.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import json
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import DataError
from connect_core.api.schema import (
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    NULL_SCHEMA_AND_VALUE,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaAndValue,
    SchemaType,
    Struct,
)
from connect_core.config.configdef import ConfigDef, Importance, Range, Type, ValidString, Width
from connect_core.converters.base import ConverterBase

SCHEMAS_ENABLE_CONFIG = "schemas.enable"
SCHEMAS_CACHE_SIZE_CONFIG = "schemas.cache.size"
DECIMAL_FORMAT_CONFIG = "decimal.format"
REPLACE_NULL_WITH_DEFAULT_CONFIG = "replace.null.with.default"

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
_EPOCH_DATE = dt.date(1970, 1, 1)
_MS_PER_DAY = 86_400_000

_TYPE_BY_NAME = {t.value: t for t in SchemaType}

_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain '
    "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
    "in your converter configuration."
)


def dumps(node: Any) -> bytes:
    """Compact UTF-8 JSON, as Jackson's default ObjectMapper writes it."""
    return json.dumps(node, separators=(",", ":"), ensure_ascii=False, allow_nan=True).encode("utf-8")


def loads(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"Converting byte[] to Kafka Connect data failed due to serialization error: {e}") from e


# ------------------------------------------------------------------- decimal (BigDecimal bytes)


def _decimal_to_bytes(schema: Schema, value: decimal.Decimal) -> bytes:
    scale = int((schema.parameters or {}).get("scale", "0"))
    unscaled = int(value.scaleb(scale).to_integral_value())
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return unscaled.to_bytes(length, "big", signed=True)


def _decimal_from_bytes(schema: Schema, data: bytes) -> decimal.Decimal:
    scale = int((schema.parameters or {}).get("scale", "0"))
    return decimal.Decimal(int.from_bytes(data, "big", signed=True)).scaleb(-scale)


class JsonConverter(ConverterBase):
    """``org.apache.kafka.connect.json.JsonConverter`` (also a header converter)."""

    def __init__(self) -> None:
        self.schemas_enabled = True
        self.cache_size = 1000
        self.decimal_numeric = False
        self.replace_null_with_default = True
        self._schema_cache: dict[Schema, dict[str, Any]] = {}

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define(
                SCHEMAS_ENABLE_CONFIG,
                Type.BOOLEAN,
                True,
                importance=Importance.HIGH,
                documentation="Include schemas within each of the serialized values and keys.",
                group="Schemas",
                width=Width.MEDIUM,
                display_name="Enable Schemas",
            )
            .define(
                SCHEMAS_CACHE_SIZE_CONFIG,
                Type.INT,
                1000,
                Range.at_least(0),
                importance=Importance.HIGH,
                documentation="The maximum number of schemas that can be cached in this converter instance.",
                group="Schemas",
                width=Width.MEDIUM,
                display_name="Schema Cache Size",
            )
            .define(
                DECIMAL_FORMAT_CONFIG,
                Type.STRING,
                "BASE64",
                ValidString.in_("BASE64", "NUMERIC"),
                importance=Importance.LOW,
                documentation="How to serialize Decimal values: BASE64 (binary) or NUMERIC (JSON number).",
                group="Serialization",
                width=Width.MEDIUM,
                display_name="Decimal Format",
            )
            .define(
                REPLACE_NULL_WITH_DEFAULT_CONFIG,
                Type.BOOLEAN,
                True,
                importance=Importance.LOW,
                documentation="Whether to replace null fields that have a default value with that default.",
                group="Serialization",
                width=Width.MEDIUM,
                display_name="Replace null with default",
            )
        )

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        relevant = {k: v for k, v in configs.items() if k in self.config().names()}
        parsed = self.config().parse(relevant)
        self.schemas_enabled = bool(parsed[SCHEMAS_ENABLE_CONFIG])
        self.cache_size = int(parsed[SCHEMAS_CACHE_SIZE_CONFIG])
        self.decimal_numeric = str(parsed[DECIMAL_FORMAT_CONFIG]).upper() == "NUMERIC"
        self.replace_null_with_default = bool(parsed[REPLACE_NULL_WITH_DEFAULT_CONFIG])
        self._schema_cache.clear()

    # ------------------------------------------------------------------------- to bytes

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        payload = self.to_json(schema, value)
        if self.schemas_enabled:
            return dumps({"schema": self.as_json_schema(schema), "payload": payload})
        return dumps(payload)

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.from_connect(topic, schema, value)

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The JSON form of ``schema``, keys in the order Java writes them."""
        if schema is None:
            return None
        cached = self._schema_cache.get(schema)
        if cached is not None:
            return cached
        t = schema.type
        out: dict[str, Any] = {"type": t.value}
        if t is SchemaType.ARRAY:
            out["items"] = self.as_json_schema(schema.value_schema)
        elif t is SchemaType.MAP:
            out["keys"] = self.as_json_schema(schema.key_schema)
            out["values"] = self.as_json_schema(schema.value_schema)
        elif t is SchemaType.STRUCT:
            fields = []
            for f in schema.fields:
                fj = dict(self.as_json_schema(f.schema) or {})
                fj["field"] = f.name
                fields.append(fj)
            out["fields"] = fields
        out["optional"] = schema.optional
        if schema.name is not None:
            out["name"] = schema.name
        if schema.version is not None:
            out["version"] = schema.version
        if schema.doc is not None:
            out["doc"] = schema.doc
        if schema.parameters is not None:
            out["parameters"] = dict(schema.parameters)
        if schema.default is not None:
            out["default"] = self.to_json(schema, schema.default)
        if self.cache_size > 0:
            if len(self._schema_cache) >= self.cache_size:
                self._schema_cache.pop(next(iter(self._schema_cache)))
            self._schema_cache[schema] = out
        return out

    def to_json(self, schema: Schema | None, value: Any) -> Any:
        """Connect value -> JSON-ready Python value (``dict`` keeps field order)."""
        if value is None:
            if schema is None:
                return None
            if schema.default is not None and self.replace_null_with_default:
                return self.to_json(schema, schema.default)
            if schema.optional:
                return None
            raise DataError("Conversion error: null value for field that is required and has no default value")
        if schema is not None and schema.name is not None:
            logical = self._logical_to_json(schema, value)
            if logical is not _NOT_LOGICAL:
                return logical
        t = schema.type if schema is not None else _infer_type(value)
        try:
            return self._typed_to_json(t, schema, value)
        except (TypeError, ValueError, AttributeError) as e:
            label = t.name if schema is not None else "unknown schema"
            raise DataError(f"Invalid type for {label}: {type(value).__name__}") from e

    def _typed_to_json(self, t: SchemaType, schema: Schema | None, value: Any) -> Any:
        if t in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError
            return value
        if t in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError
            return float(value)
        if t is SchemaType.BOOLEAN:
            if not isinstance(value, bool):
                raise TypeError
            return value
        if t is SchemaType.STRING:
            if not isinstance(value, str):
                raise TypeError
            return value
        if t is SchemaType.BYTES:
            if not isinstance(value, bytes | bytearray | memoryview):
                raise DataError(f"Invalid type for bytes type: {type(value).__name__}")
            return base64.b64encode(bytes(value)).decode("ascii")
        if t is SchemaType.ARRAY:
            if not isinstance(value, list | tuple):
                raise TypeError
            elem = schema.value_schema if schema is not None else None
            return [self.to_json(elem, v) for v in value]
        if t is SchemaType.MAP:
            if not isinstance(value, Mapping):
                raise TypeError
            ks = schema.key_schema if schema is not None else None
            vs = schema.value_schema if schema is not None else None
            object_mode = ks.type is SchemaType.STRING if ks is not None else all(isinstance(k, str) for k in value)
            if object_mode:
                return {_as_text(self.to_json(ks, k)): self.to_json(vs, v) for k, v in value.items()}
            return [[self.to_json(ks, k), self.to_json(vs, v)] for k, v in value.items()]
        if t is SchemaType.STRUCT:
            if not isinstance(value, Struct):
                raise TypeError
            if schema is None or value.schema != schema:
                raise DataError("Mismatching schema.")
            return {f.name: self.to_json(f.schema, value.get_without_default(f.name)) for f in schema.fields}
        raise DataError(f"Couldn't convert {value!r} to JSON.")

    def _logical_to_json(self, schema: Schema, value: Any) -> Any:
        name = schema.name
        if name == DECIMAL_LOGICAL_NAME:
            if not isinstance(value, decimal.Decimal):
                raise DataError(f"Invalid type for Decimal, expected Decimal but was {type(value).__name__}")
            if self.decimal_numeric:
                return float(value)
            return base64.b64encode(_decimal_to_bytes(schema, value)).decode("ascii")
        if name == DATE_LOGICAL_NAME:
            if isinstance(value, dt.datetime):
                value = value.date()
            if not isinstance(value, dt.date):
                raise DataError(f"Invalid type for Date, expected date but was {type(value).__name__}")
            return (value - _EPOCH_DATE).days
        if name == TIME_LOGICAL_NAME:
            if not isinstance(value, dt.time):
                raise DataError(f"Invalid type for Time, expected time but was {type(value).__name__}")
            return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
        if name == TIMESTAMP_LOGICAL_NAME:
            if not isinstance(value, dt.datetime):
                raise DataError(f"Invalid type for Timestamp, expected datetime but was {type(value).__name__}")
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)
            delta = value - _EPOCH
            return delta.days * _MS_PER_DAY + delta.seconds * 1000 + delta.microseconds // 1000
        return _NOT_LOGICAL

    # ------------------------------------------------------------------------- from bytes

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return NULL_SCHEMA_AND_VALUE
        node = loads(data)
        if self.schemas_enabled:
            if not isinstance(node, dict) or len(node) != 2 or "schema" not in node or "payload" not in node:
                raise DataError(_ENVELOPE_ERROR)
            schema = self.as_connect_schema(node["schema"])
            return SchemaAndValue(schema, self.to_connect_value(schema, node["payload"]))
        return SchemaAndValue(None, self.to_connect_value(None, node))

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        return self.to_connect(topic, data)

    def as_connect_schema(self, node: Any) -> Schema | None:
        if node is None:
            return None
        if not isinstance(node, dict):
            raise DataError("Schema must contain 'type' field")
        type_name = node.get("type")
        if not isinstance(type_name, str):
            raise DataError("Schema must contain 'type' field")
        t = _TYPE_BY_NAME.get(type_name)
        if t is None:
            raise DataError(f"Unknown schema type: {type_name}")
        key_schema = value_schema = None
        fields: list[tuple[str, Schema]] = []
        if t is SchemaType.ARRAY:
            items = node.get("items")
            if items is None:
                raise DataError("Array schema did not specify the element type")
            value_schema = self.as_connect_schema(items)
        elif t is SchemaType.MAP:
            if "keys" not in node:
                raise DataError("Map schema did not specify the key type")
            if "values" not in node:
                raise DataError("Map schema did not specify the value type")
            key_schema = self.as_connect_schema(node["keys"])
            value_schema = self.as_connect_schema(node["values"])
        elif t is SchemaType.STRUCT:
            raw_fields = node.get("fields")
            if not isinstance(raw_fields, list):
                raise DataError('Struct schema\'s "fields" argument is not an array.')
            for f in raw_fields:
                fname = f.get("field") if isinstance(f, dict) else None
                if not isinstance(fname, str):
                    raise DataError("Struct schema's field name not specified properly")
                fs = self.as_connect_schema(f)
                assert fs is not None
                fields.append((fname, fs))
        params = node.get("parameters")
        if isinstance(params, dict):
            if not all(isinstance(v, str) for v in params.values()):
                raise DataError("Schema parameters must have string values.")
        else:
            params = None
        version = node.get("version")
        name = node.get("name")
        doc = node.get("doc")
        schema = Schema(
            t,
            optional=node.get("optional") is True,
            name=name if isinstance(name, str) else None,
            version=version if isinstance(version, int) and not isinstance(version, bool) else None,
            doc=doc if isinstance(doc, str) else None,
            parameters=params,
            key_schema=key_schema,
            value_schema=value_schema,
            fields=fields,
        )
        if "default" in node and node["default"] is not None:
            schema.default = self.to_connect_value(schema, node["default"])
        return schema

    def to_connect_value(self, schema: Schema | None, node: Any) -> Any:
        """JSON value -> Connect value under ``schema`` (or inferred when None)."""
        if schema is not None:
            if node is None:
                if schema.default is not None and self.replace_null_with_default:
                    return schema.default
                if schema.optional:
                    return None
                raise DataError(f"Invalid null value for required {schema.type.name} field")
            t = schema.type
            if schema.name is not None:
                logical = _logical_to_connect(schema, node)
                if logical is not _NOT_LOGICAL:
                    return logical
        else:
            if node is None:
                return None
            t = _infer_json_type(node)
        try:
            return self._typed_to_connect(t, schema, node)
        except (TypeError, ValueError, binascii.Error) as e:
            raise DataError(f"Invalid JSON for {t.name} value: {node!r}") from e

    def _typed_to_connect(self, t: SchemaType, schema: Schema | None, node: Any) -> Any:
        if t is SchemaType.BOOLEAN:
            if not isinstance(node, bool):
                raise TypeError
            return node
        if t in (SchemaType.INT8, SchemaType.INT16, SchemaType.INT32, SchemaType.INT64):
            if isinstance(node, bool) or not isinstance(node, int | float):
                raise TypeError
            return int(node)
        if t in (SchemaType.FLOAT32, SchemaType.FLOAT64):
            if isinstance(node, bool) or not isinstance(node, int | float):
                raise TypeError
            return float(node)
        if t is SchemaType.STRING:
            if not isinstance(node, str):
                raise TypeError
            return node
        if t is SchemaType.BYTES:
            if not isinstance(node, str):
                raise TypeError
            return base64.b64decode(node, validate=True)
        if t is SchemaType.ARRAY:
            if not isinstance(node, list):
                raise TypeError
            elem = schema.value_schema if schema is not None else None
            return [self.to_connect_value(elem, v) for v in node]
        if t is SchemaType.MAP:
            ks = schema.key_schema if schema is not None else None
            vs = schema.value_schema if schema is not None else None
            if ks is None or ks.type is SchemaType.STRING:
                if not isinstance(node, dict):
                    raise DataError(
                        f"Maps with string fields should be encoded as JSON objects, but found {_json_kind(node)}"
                    )
                return {k: self.to_connect_value(vs, v) for k, v in node.items()}
            if not isinstance(node, list):
                raise DataError(
                    "Maps with non-string fields should be encoded as JSON array of tuples, but found "
                    + _json_kind(node)
                )
            out: dict[Any, Any] = {}
            for entry in node:
                if not isinstance(entry, list):
                    raise DataError(f"Found invalid map entry instead of array tuple: {_json_kind(entry)}")
                if len(entry) != 2:
                    raise DataError(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
                key = self.to_connect_value(ks, entry[0])
                out[_hashable_key(key)] = self.to_connect_value(vs, entry[1])
            return out
        if t is SchemaType.STRUCT:
            if not isinstance(node, dict):
                raise DataError(f"Structs should be encoded as JSON objects, but found {_json_kind(node)}")
            assert schema is not None
            struct = Struct(schema)
            for f in schema.fields:
                struct.put(f.name, self.to_connect_value(f.schema, node.get(f.name)))
            return struct
        raise DataError(f"Unknown schema type: {t}")


_NOT_LOGICAL: Any = object()


def _logical_to_connect(schema: Schema, node: Any) -> Any:
    name = schema.name
    if name == DECIMAL_LOGICAL_NAME:
        if isinstance(node, int | float) and not isinstance(node, bool):
            return decimal.Decimal(str(node))
        if isinstance(node, str):
            try:
                return _decimal_from_bytes(schema, base64.b64decode(node, validate=True))
            except (binascii.Error, ValueError) as e:
                raise DataError("Invalid bytes for Decimal field") from e
        raise DataError(
            "Invalid type for Decimal, underlying representation should be numeric or bytes but was " + _json_kind(node)
        )
    if name == DATE_LOGICAL_NAME:
        if not isinstance(node, int) or isinstance(node, bool):
            raise DataError(
                "Invalid type for Date, underlying representation should be integer but was " + _json_kind(node)
            )
        return _EPOCH_DATE + dt.timedelta(days=node)
    if name == TIME_LOGICAL_NAME:
        if not isinstance(node, int) or isinstance(node, bool):
            raise DataError(
                "Invalid type for Time, underlying representation should be integer but was " + _json_kind(node)
            )
        if not 0 <= node < _MS_PER_DAY:
            raise DataError("Time values must be milliseconds within one day")
        return (dt.datetime.min + dt.timedelta(milliseconds=node)).time()
    if name == TIMESTAMP_LOGICAL_NAME:
        if not isinstance(node, int) or isinstance(node, bool):
            raise DataError(
                f"Invalid type for Timestamp, underlying representation should be integral but was {_json_kind(node)}"
            )
        return _EPOCH + dt.timedelta(milliseconds=node)
    return _NOT_LOGICAL


def _infer_type(value: Any) -> SchemaType:
    """Java ``ConnectSchema.schemaType(value.getClass())`` for Python values."""
    if isinstance(value, bool):
        return SchemaType.BOOLEAN
    if isinstance(value, int):
        return SchemaType.INT64
    if isinstance(value, float):
        return SchemaType.FLOAT64
    if isinstance(value, str):
        return SchemaType.STRING
    if isinstance(value, bytes | bytearray | memoryview):
        return SchemaType.BYTES
    if isinstance(value, list | tuple):
        return SchemaType.ARRAY
    if isinstance(value, Mapping):
        return SchemaType.MAP
    if isinstance(value, Struct):
        return SchemaType.STRUCT
    raise DataError(f"Python class {type(value).__name__} does not have corresponding schema type.")


def _infer_json_type(node: Any) -> SchemaType:
    if isinstance(node, bool):
        return SchemaType.BOOLEAN
    if isinstance(node, int):
        return SchemaType.INT64
    if isinstance(node, float):
        return SchemaType.FLOAT64
    if isinstance(node, str):
        return SchemaType.STRING
    if isinstance(node, list):
        return SchemaType.ARRAY
    if isinstance(node, dict):
        return SchemaType.MAP
    raise DataError(f"Unknown schema type: {type(node).__name__}")


def _json_kind(node: Any) -> str:
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, int | float):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    if isinstance(node, dict):
        return "OBJECT"
    return type(node).__name__


def _as_text(node: Any) -> str:
    """Jackson ``asText()`` of a map key node."""
    if isinstance(node, str):
        return node
    if isinstance(node, bool):
        return "true" if node else "false"
    if node is None:
        return "null"
    return str(node)


def _hashable_key(key: Any) -> Any:
    if isinstance(key, list):
        return tuple(_hashable_key(k) for k in key)
    if isinstance(key, dict):
        return tuple((k, _hashable_key(v)) for k, v in key.items())
    return key


__all__ = ["JsonConverter", "dumps", "loads"]
