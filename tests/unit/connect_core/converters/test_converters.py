"""Converters: pass-through bytes, strings, and JSON wire-compatible with Kafka's JsonConverter."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_BYTES_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.converters import (
    ByteArrayConverter,
    Converter,
    HeaderConverter,
    JsonConverter,
    SimpleHeaderConverter,
    StringConverter,
)


def json_converter(schemas: bool) -> JsonConverter:
    c = JsonConverter()
    c.configure({"schemas.enable": "true" if schemas else "false"}, False)
    return c


def test_protocols_are_satisfied() -> None:
    for cls in (ByteArrayConverter, StringConverter, JsonConverter):
        assert isinstance(cls(), Converter)
        assert isinstance(cls(), HeaderConverter)
    assert isinstance(SimpleHeaderConverter(), HeaderConverter)


def test_byte_array_converter() -> None:
    c = ByteArrayConverter()
    c.configure({}, False)
    data = b"\x00\xffraw"
    assert c.from_connect("t", None, data) is data
    assert c.from_connect("t", BYTES_SCHEMA, bytearray(b"x")) == b"x"
    assert c.from_connect("t", None, None) is None
    assert c.to_connect("t", data) == (OPTIONAL_BYTES_SCHEMA, data)
    assert c.to_connect("t", None) == (OPTIONAL_BYTES_SCHEMA, None)
    with pytest.raises(DataError, match="not compatible"):
        c.from_connect("t", None, "text")
    with pytest.raises(DataError, match="Invalid schema type"):
        c.from_connect("t", STRING_SCHEMA, b"x")


def test_string_converter_encodings() -> None:
    c = StringConverter()
    c.configure({}, False)
    assert c.from_connect("t", STRING_SCHEMA, "héllo") == "héllo".encode()
    assert c.from_connect("t", None, True) == b"true"
    assert c.from_connect("t", None, 42) == b"42"
    assert c.from_connect("t", None, None) is None
    assert c.to_connect("t", "héllo".encode()) == (OPTIONAL_STRING_SCHEMA, "héllo")
    c.configure({"converter.encoding": "ISO-8859-1"}, True)
    assert c.from_connect("t", None, "é") == b"\xe9"
    assert c.to_connect("t", b"\xe9").value == "é"
    with pytest.raises(ConfigError) as e:
        c.configure({"converter.encoding": "no-such-charset"}, False)
    assert e.value.issues[0].key == "converter.encoding"
    c.configure({"converter.encoding": "US-ASCII"}, False)
    with pytest.raises(DataError):
        c.from_connect("t", None, "é")


# ---- JsonConverter against literals from Kafka's JsonConverterTest / wire format


def test_json_envelope_literals() -> None:
    c = json_converter(True)
    assert c.from_connect("t", BOOLEAN_SCHEMA, True) == b'{"schema":{"type":"boolean","optional":false},"payload":true}'
    assert c.from_connect("t", INT8_SCHEMA, 12) == b'{"schema":{"type":"int8","optional":false},"payload":12}'
    assert c.from_connect("t", FLOAT64_SCHEMA, 12.5) == b'{"schema":{"type":"double","optional":false},"payload":12.5}'
    assert c.from_connect("t", BYTES_SCHEMA, b"test-string") == (
        b'{"schema":{"type":"bytes","optional":false},"payload":"dGVzdC1zdHJpbmc="}'
    )
    assert c.from_connect("t", None, None) is None
    assert c.from_connect("t", None, "x") == b'{"schema":null,"payload":"x"}'
    named = Schema(SchemaType.BOOLEAN, name="bool", version=2, doc="the documentation", parameters={"foo": "bar"})
    assert c.from_connect("t", named, True) == (
        b'{"schema":{"type":"boolean","optional":false,"name":"bool","version":2,"doc":"the documentation",'
        b'"parameters":{"foo":"bar"}},"payload":true}'
    )


def test_json_struct_schema_field_key_comes_last() -> None:
    c = json_converter(True)
    schema = Schema.struct([("field1", BOOLEAN_SCHEMA), ("field2", OPTIONAL_STRING_SCHEMA)])
    out = c.from_connect("t", schema, Struct(schema, {"field1": True}))
    assert out == (
        b'{"schema":{"type":"struct","fields":[{"type":"boolean","optional":false,"field":"field1"},'
        b'{"type":"string","optional":true,"field":"field2"}],"optional":false},'
        b'"payload":{"field1":true,"field2":null}}'
    )
    assert c.to_connect("t", out) == (schema, Struct(schema, {"field1": True}))


def test_json_reads_kafka_test_messages() -> None:
    c = json_converter(True)
    assert c.to_connect("t", b'{ "schema": { "type": "boolean" }, "payload": true }') == (BOOLEAN_SCHEMA, True)
    sv = c.to_connect("t", b'{ "schema": { "type": "boolean", "default": true }, "payload": null }')
    assert sv.value is True
    sv = c.to_connect("t", b'{ "schema": { "type": "int64" }, "payload": 4398046511104 }')
    assert sv == (INT64_SCHEMA, 4398046511104)
    sv = c.to_connect("t", b'{ "schema": { "type": "bytes" }, "payload": "dGVzdC1zdHJpbmc=" }')
    assert sv.value == b"test-string"
    sv = c.to_connect("t", b'{ "schema": { "type": "array", "items": { "type" : "int32" } }, "payload": [1, 2, 3] }')
    assert sv == (Schema.array(INT32_SCHEMA), [1, 2, 3])
    sv = c.to_connect(
        "t",
        b'{ "schema": { "type": "map", "keys": { "type" : "int32" }, "values": { "type" : "int32" } },'
        b' "payload": [ [1, 12], [2, 15] ] }',
    )
    assert sv.value == {1: 12, 2: 15}
    sv = c.to_connect("t", b'{ "schema": null, "payload": { "field1": 1, "field2": 2} }')
    assert sv == (None, {"field1": 1, "field2": 2})
    sv = c.to_connect(
        "t",
        b'{ "schema": { "type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,'
        b' "parameters": { "scale": "2" } }, "payload": "AJw=" }',
    )
    assert sv.value == decimal.Decimal("1.56")
    sv = c.to_connect(
        "t",
        b'{ "schema": { "type": "int32", "name": "org.apache.kafka.connect.data.Date", "version": 1 },'
        b' "payload": 10000 }',
    )
    assert sv.value == dt.date(1997, 5, 19)


def test_json_envelope_required_when_schemas_enabled() -> None:
    c = json_converter(True)
    with pytest.raises(DataError, match='requires "schema" and "payload"'):
        c.to_connect("t", b'{"a":1}')
    with pytest.raises(DataError, match="serialization error"):
        c.to_connect("t", b"{not json")
    with pytest.raises(DataError, match="Invalid null value for required INT32"):
        c.to_connect("t", b'{"schema":{"type":"int32"},"payload":null}')
    with pytest.raises(DataError, match="Unknown schema type"):
        c.to_connect("t", b'{"schema":{"type":"wat"},"payload":1}')


def test_json_schemaless() -> None:
    c = json_converter(False)
    assert c.from_connect("t", None, ["conn", {"a": 1}]) == b'["conn",{"a":1}]'
    assert c.from_connect("t", None, {1: "x"}) == b'[[1,"x"]]'
    assert c.from_connect("t", None, b"\x01") == b'"AQ=="'
    assert c.from_connect("t", OPTIONAL_STRING_SCHEMA, None) == b"null"
    assert c.to_connect("t", b'{"offset":7,"f":1.5,"ok":true,"l":[1]}').value == {
        "offset": 7,
        "f": 1.5,
        "ok": True,
        "l": [1],
    }
    assert c.to_connect("t", None) == (None, None)


def test_json_round_trips_logical_types_and_nested_values() -> None:
    c = json_converter(True)
    ts = Schema(SchemaType.INT64, name=TIMESTAMP_LOGICAL_NAME, version=1)
    dec = Schema(SchemaType.BYTES, name=DECIMAL_LOGICAL_NAME, version=1, parameters={"scale": "2"})
    date = Schema(SchemaType.INT32, name=DATE_LOGICAL_NAME, version=1)
    inner = Schema.struct([("d", dec), ("when", ts)], optional=True)
    schema = Schema.struct(
        [("m", Schema.map(STRING_SCHEMA, Schema.array(INT64_SCHEMA))), ("inner", inner), ("day", date)]
    )
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 678000, tzinfo=dt.UTC)
    value = Struct(
        schema,
        {
            "m": {"a": [1, 2], "b": []},
            "inner": Struct(inner, {"d": decimal.Decimal("-12.34"), "when": when}),
            "day": dt.date(2024, 1, 2),
        },
    )
    raw = c.from_connect("t", schema, value)
    back = c.to_connect("t", raw)
    assert back.schema == schema
    assert back.value == value


def test_json_type_errors_are_data_errors() -> None:
    c = json_converter(False)
    with pytest.raises(DataError):
        c.from_connect("t", INT32_SCHEMA, "nope")
    with pytest.raises(DataError, match="null value for field that is required"):
        c.from_connect("t", INT32_SCHEMA, None)
    schema = Schema.struct([("a", INT32_SCHEMA)])
    other = Schema.struct([("b", INT32_SCHEMA)])
    with pytest.raises(DataError, match="Mismatching schema"):
        c.from_connect("t", schema, Struct(other, {"b": 1}))


def test_json_config_is_validated() -> None:
    c = JsonConverter()
    with pytest.raises(ConfigError) as e:
        c.configure({"schemas.enable": "maybe"}, False)
    assert e.value.issues[0].key == "schemas.enable"
    c.configure({"schemas.enable": False, "unrelated.key": "x"}, True)
    assert c.schemas_enabled is False


def test_simple_header_converter() -> None:
    c = SimpleHeaderConverter()
    c.configure({})
    assert c.from_connect_header("t", "h", None, "hello") == b"hello"
    assert c.from_connect_header("t", "h", None, True) == b"true"
    assert c.from_connect_header("t", "h", None, 42) == b"42"
    assert c.from_connect_header("t", "h", None, b"\x01\x02") == b"AQI="
    assert c.from_connect_header("t", "h", None, None) is None
    assert c.to_connect_header("t", "h", b"hello") == (STRING_SCHEMA, "hello")
    assert c.to_connect_header("t", "h", b"true") == (BOOLEAN_SCHEMA, True)
    assert c.to_connect_header("t", "h", b"42") == (INT8_SCHEMA, 42)
    assert c.to_connect_header("t", "h", b"70000").schema == INT32_SCHEMA
    assert c.to_connect_header("t", "h", b"1.5").schema.type is SchemaType.FLOAT32  # type: ignore[union-attr]
    # Like Java's Values.parseString: non-integral numbers become (rounded) FLOAT32, integral ones ints.
    sv = c.to_connect_header("t", "h", b"0.1")
    assert sv.schema == FLOAT32_SCHEMA and sv.value == pytest.approx(0.1) and sv.value != 0.1
    assert c.to_connect_header("t", "h", b"2.0") == (INT8_SCHEMA, 2)
    assert c.to_connect_header("t", "h", b"1e300").schema.type is SchemaType.FLOAT64  # type: ignore[union-attr]
    big = c.to_connect_header("t", "h", b"123456789012345678901234567890")
    assert big.schema is not None and big.schema.name == DECIMAL_LOGICAL_NAME
    assert c.to_connect_header("t", "h", b"\xff\xfe") == (BYTES_SCHEMA, b"\xff\xfe")
    assert c.to_connect_header("t", "h", None) == (None, None)
