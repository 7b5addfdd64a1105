"""Cast$Key/Cast$Value against Java's documented behaviour: schemaless maps, Structs, whole values."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pytest

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import (
    BYTES_SCHEMA,
    DECIMAL_LOGICAL_NAME,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    STRING_SCHEMA,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from tests.unit.connect_core.transforms.field_helpers import source, xform


def test_docs_example_schemaless_fields() -> None:
    # Java docs: spec=age:int32,score:float64 on a schemaless map (JSON numbers are Longs/strings)
    t = xform("Cast$Value", {"spec": "age:int32,score:float64,flag:boolean,name:string"})
    out = t.apply(source({"age": "42", "score": 7, "flag": 0, "name": 12.5, "other": "x"}))
    assert out.value == {"age": 42, "score": 7.0, "flag": False, "name": "12.5", "other": "x"}
    assert out.value_schema is None


def test_struct_fields_and_schema() -> None:
    fields = [("a", INT64_SCHEMA), ("b", OPTIONAL_INT32_SCHEMA), ("c", STRING_SCHEMA), ("d", BYTES_SCHEMA)]
    schema = Schema.struct(fields, name="com.example.Row")
    value = Struct(schema, {"a": 300, "b": None, "c": "true", "d": b"\x00\x01"})
    out = xform("Cast$Value", {"spec": "a:int8,b:string,c:boolean,d:string"}).apply(source(value, schema))
    s = out.value_schema
    assert s.name == "com.example.Row"
    assert [(f.name, f.schema.type, f.schema.optional) for f in s.fields] == [
        ("a", SchemaType.INT8, False), ("b", SchemaType.STRING, True), ("c", SchemaType.BOOLEAN, False),
        ("d", SchemaType.STRING, False),
    ]  # fmt: skip
    assert out.value.as_dict() == {"a": 44, "b": None, "c": True, "d": "AAE="}  # (byte)300 == 44, base64


def test_whole_value_and_key() -> None:
    out = xform("Cast$Value", {"spec": "int8"}).apply(source(1234, INT64_SCHEMA))
    assert (out.value, out.value_schema.type) == (-46, SchemaType.INT8)
    out = xform("Cast$Key", {"spec": "string"}).apply(source("v", STRING_SCHEMA, key=1e10, key_schema=None))
    assert (out.key, out.key_schema, out.value) == ("1.0E10", None, "v")
    out = xform("Cast$Value", {"spec": "float32"}).apply(source("3.14159265358979"))
    assert out.value == pytest.approx(3.1415927, abs=1e-7)
    out = xform("Cast$Value", {"spec": "string"}).apply(source(out.value, FLOAT32_SCHEMA))
    assert out.value == "3.1415927"  # Float.toString, not the double's digits


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [
        ("int8", 128, -128), ("int16", 70000, 4464), ("int32", 2.99, 2), ("int32", -2.99, -2),
        ("int64", 1e30, 2**63 - 1), ("int32", math.nan, 0), ("int8", True, 1), ("int64", "-17", -17),
        ("float64", "1e3", 1000.0), ("float64", False, 0.0), ("boolean", 0.5, False), ("boolean", "TRUE", True),
        ("boolean", "yes", False), ("string", True, "true"), ("string", 0.0001, "1.0E-4"), ("string", 1e7, "1.0E7"),
        ("string", 123.0, "123.0"),
    ],
)  # fmt: skip
def test_java_primitive_conversions(target: str, value: object, expected: object) -> None:
    out = xform("Cast$Value", {"spec": target}).apply(source(value))
    assert out.value == expected and type(out.value) is type(expected)


def test_decimal_field_casts_as_a_number() -> None:
    dec = Schema(SchemaType.BYTES, name=DECIMAL_LOGICAL_NAME, version=1, parameters={"scale": "1"})
    schema = Schema.struct([("d", dec)])
    out = xform("Cast$Value", {"spec": "d:int32"}).apply(source(Struct(schema, {"d": decimal.Decimal("12.9")}), schema))
    assert out.value.get("d") == 12


def test_timestamp_field_to_int64_and_string() -> None:
    ts_schema = Schema(SchemaType.INT64, name=TIMESTAMP_LOGICAL_NAME, version=1)
    schema = Schema.struct([("t", ts_schema), ("u", ts_schema)])
    when = dt.datetime(2017, 7, 14, 2, 40, 0, 123000, tzinfo=dt.UTC)
    out = xform("Cast$Value", {"spec": "t:int64,u:string"}).apply(
        source(Struct(schema, {"t": when, "u": when}), schema)
    )
    assert out.value.as_dict() == {"t": 1_500_000_000_123, "u": "2017-07-14T02:40:00.123Z"}


def test_whole_logical_value_becomes_a_plain_primitive_a_converter_can_write() -> None:
    ts_schema = Schema(SchemaType.INT64, name=TIMESTAMP_LOGICAL_NAME, version=1)
    when = dt.datetime(1970, 1, 2, 0, 0, 0, 1000, tzinfo=dt.UTC)  # a day and a millisecond: timestamp text
    out = xform("Cast$Value", {"spec": "string"}).apply(source(when, ts_schema))
    assert (out.value, out.value_schema) == ("1970-01-02T00:00:00.001Z", STRING_SCHEMA)
    from connect_core.converters.json import JsonConverter

    conv = JsonConverter()
    conv.configure({"schemas.enable": "false"}, False)
    assert conv.from_connect("t", out.value_schema, out.value) == b'"1970-01-02T00:00:00.001Z"'
    named = Schema(SchemaType.INT64, name="com.example.Amount", version=3)
    assert xform("Cast$Value", {"spec": "int32"}).apply(source(5, named)).value_schema.name == "com.example.Amount"


def test_null_value_passes_and_missing_schemaless_field_becomes_null() -> None:
    t = xform("Cast$Value", {"spec": "a:int32"})
    r = source(None)
    assert t.apply(r) is r
    assert t.apply(source({"b": 1})).value == {"b": 1, "a": None}  # Java puts the cast of null


def test_default_replacement_follows_replace_null_with_default() -> None:
    schema = Schema.struct([("a", Schema(SchemaType.INT32, optional=True, default=7))])
    value = Struct(schema)
    assert xform("Cast$Value", {"spec": "a:string"}).apply(source(value, schema)).value.get("a") == "7"
    out = xform("Cast$Value", {"spec": "a:string", "replace.null.with.default": "false"}).apply(source(value, schema))
    assert out.value.get_without_default("a") is None
    assert out.value_schema.field("a").schema.default == "7"  # the default is cast too


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("", "Must specify at least one field to cast."),
        ("a:int128", "Invalid type found in casting spec: int128"),
        ("a:bytes", "Cast transformation does not support casting to BYTES; supported types are [INT8, INT16, "
                    "INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING]"),
        ("int32,a:int8", "Cast transformations that specify a type to cast the entire value to may only specify "
                         "a single cast in their spec"),
        ("a:b:c", "Invalid cast mapping: a:b:c"),
    ],
)  # fmt: skip
def test_config_errors_name_the_key(spec: str, message: str) -> None:
    with pytest.raises(ConfigError) as e:
        xform("Cast$Value", {"spec": spec})
    assert [(i.key, i.message) for i in e.value.issues] == [("spec", message)]


@pytest.mark.parametrize(
    ("spec", "value", "schema", "message"),
    [
        ("int8", "300", None, "Value (300) was out of range for requested data type"),
        ("int32", "1.5", None, "Value (1.5) was out of range for requested data type"),
        ("int32", [1], None, "Cast transformation does not support casting from ARRAY; supported types are "
                             "[INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES]"),
        ("int32", b"x", BYTES_SCHEMA, "Unexpected type in Cast transformation: class [B"),
        ("a:int32", "x", STRING_SCHEMA, "Only Struct objects supported for [cast types], found: java.lang.String"),
        ("a:int32", "x", None, "Only Map objects supported in absence of schema for [cast types], found: "
                               "java.lang.String"),
        ("string", dt.datetime(2020, 1, 1), None, "Cast transformation was passed a value of type class "
                                                  "java.util.Date which is not supported by Connect's data API"),
    ],
)  # fmt: skip
def test_data_errors(spec: str, value: object, schema: Schema | None, message: str) -> None:
    with pytest.raises(DataError, match=r"^" + message.replace("[", r"\[").replace("]", r"\]").replace("(", r"\(")
                       .replace(")", r"\)").replace(".", r"\.") + "$"):  # fmt: skip
        xform("Cast$Value", {"spec": spec}).apply(source(value, schema))


def test_schema_cache_reuses_the_derived_schema() -> None:
    schema = Schema.struct([("a", INT8_SCHEMA), ("b", INT32_SCHEMA)])
    t = xform("Cast$Value", {"spec": "a:int64"})
    first = t.apply(source(Struct(schema, {"a": 1, "b": 2}), schema)).value_schema
    assert t.apply(source(Struct(schema, {"a": 3, "b": 4}), schema)).value_schema is first
