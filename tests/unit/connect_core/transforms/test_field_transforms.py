"""ExtractField, HoistField, Flatten, InsertField, MaskField, ReplaceField, ValueToKey, HeaderFrom and
SetSchemaMetadata against Java's documented examples, schemaless and with Structs."""

from __future__ import annotations

import datetime as dt
import decimal

import pytest

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    FLOAT32_SCHEMA,
    INT8_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.transforms.chain import TransformationChain
from tests.unit.connect_core.transforms.field_helpers import PKG, sink, source, xform

NAME = Schema.struct([("first", STRING_SCHEMA), ("last", OPTIONAL_STRING_SCHEMA)], optional=True)
PERSON = Schema.struct([("id", INT64_SCHEMA), ("name", NAME)], name="com.example.Person", optional=False)


def person(first: str = "David", last: str | None = "Wong") -> Struct:
    return Struct(PERSON, {"id": 42, "name": Struct(NAME, {"first": first, "last": last})})


# ------------------------------------------------------------------------------------------ ExtractField


def test_extract_field_schemaless_and_struct() -> None:
    t = xform("ExtractField$Value", {"field": "id"})
    assert t.apply(source({"id": 42, "x": 1})).value == 42
    out = t.apply(source(person(), PERSON))
    assert (out.value, out.value_schema) == (42, INT64_SCHEMA)
    key = xform("ExtractField$Key", {"field": "name"}).apply(source("v", key=person(), key_schema=PERSON))
    assert (key.key.get("first"), key.key_schema, key.value) == ("David", NAME, "v")


def test_extract_field_nulls_missing_and_nested_paths() -> None:
    t = xform("ExtractField$Value", {"field": "missing"})
    assert t.apply(source({"id": 1})).value is None  # a missing map key extracts null
    assert t.apply(source(None)).value is None
    with pytest.raises(DataError, match=r"^Unknown field: missing$"):
        t.apply(source(person(), PERSON))
    v2 = xform("ExtractField$Value", {"field": "name.first", "field.syntax.version": "v2"})
    assert v2.apply(source(person(), PERSON)).value == "David"
    assert v2.apply(source({"name": {"first": "Ann"}})).value == "Ann"
    dotted = xform("ExtractField$Value", {"field": "`a.b`.c", "field.syntax.version": "V2"})
    assert dotted.apply(source({"a.b": {"c": 3}})).value == 3
    v1 = xform("ExtractField$Value", {"field": "name.first"})  # V1: the dotted name is one field
    assert v1.apply(source({"name.first": "lit", "name": {"first": "no"}})).value == "lit"


def test_extract_field_config_errors() -> None:
    with pytest.raises(ConfigError) as e:
        xform("ExtractField$Value", {})
    assert e.value.issues[0].key == "field"
    with pytest.raises(ConfigError) as e:
        xform("ExtractField$Value", {"field": "a", "field.syntax.version": "V3"})
    assert e.value.issues[0].key == "field.syntax.version"
    assert "String must be one of (case insensitive): V1, V2" in e.value.issues[0].message
    with pytest.raises(ConfigError, match=r"Incomplete backtick pair in path: \[`a.b\]") as e:
        xform("ExtractField$Value", {"field": "`a.b", "field.syntax.version": "V2"})
    assert e.value.issues[0].key == "field"


# -------------------------------------------------------------------------------------------- HoistField


def test_hoist_field() -> None:
    t = xform("HoistField$Value", {"field": "line"})
    assert t.apply(source("hello")).value == {"line": "hello"}
    out = t.apply(source("hello", STRING_SCHEMA))
    assert out.value_schema == Schema.struct([("line", STRING_SCHEMA)])
    assert out.value.as_dict() == {"line": "hello"}
    key = xform("HoistField$Key", {"field": "k"}).apply(source("v", key=7, key_schema=INT32_SCHEMA))
    assert key.key.as_dict() == {"k": 7} and key.value == "v"
    with pytest.raises(DataError, match='null used for required field: "line"'):
        t.apply(source(None, STRING_SCHEMA))


# ----------------------------------------------------------------------------------------------- Flatten


def test_flatten_docs_example_schemaless() -> None:
    value = {"content": {"id": 42, "name": {"first": "David", "middle": None, "last": "Wong"}}, "tags": [1, 2]}
    out = xform("Flatten$Value", {}).apply(source(value))
    assert out.value == {"content.id": 42, "content.name.first": "David", "content.name.middle": None,
                         "content.name.last": "Wong", "tags": [1, 2]}  # fmt: skip
    under = xform("Flatten$Value", {"delimiter": "_"}).apply(source(value))
    assert list(under.value) == ["content_id", "content_name_first", "content_name_middle", "content_name_last", "tags"]


def test_flatten_struct_optionality_and_defaults_from_parents() -> None:
    inner_default = Struct(Schema.struct([("x", INT32_SCHEMA)]), {"x": 5})
    inner = Schema(SchemaType.STRUCT, optional=True, default=inner_default, fields=[("x", INT32_SCHEMA)])
    schema = Schema.struct([("a", inner), ("b", Schema.array(INT8_SCHEMA)), ("c", BOOLEAN_SCHEMA)], name="R")
    value = Struct(schema, {"a": Struct(inner, {"x": 1}), "b": [1, 2], "c": True})
    out = xform("Flatten$Value", {}).apply(source(value, schema))
    s = out.value_schema
    assert s.name == "R"
    assert [(f.name, f.schema.type, f.schema.optional, f.schema.default) for f in s.fields] == [
        ("a.x", SchemaType.INT32, True, 5),
        ("b", SchemaType.ARRAY, False, None),
        ("c", SchemaType.BOOLEAN, False, None),
    ]
    assert out.value.as_dict() == {"a.x": 1, "b": [1, 2], "c": True}
    nulled = xform("Flatten$Value", {}).apply(source(Struct(schema, {"b": [], "c": False}), schema))
    assert nulled.value.get("a.x") == 5  # the parent's default stands in


def test_flatten_errors_and_null() -> None:
    t = xform("Flatten$Key", {})
    r = source("v", key=None)
    assert t.apply(r) is r
    with pytest.raises(DataError, match=r"does not support MAP for record with schemas \(for field m\)"):
        s = Schema.struct([("m", Schema.map(STRING_SCHEMA, STRING_SCHEMA))])
        xform("Flatten$Value", {}).apply(source(Struct(s, {"m": {}}), s))
    with pytest.raises(DataError, match=r"field name duplication a.b"):
        s = Schema.struct([("a", Schema.struct([("b", INT32_SCHEMA)])), ("a.b", INT32_SCHEMA)])
        xform("Flatten$Value", {}).apply(source(Struct(s, {"a.b": 1}), s))
    with pytest.raises(DataError, match=r"type class java.math.BigDecimal which is not supported"):
        xform("Flatten$Value", {}).apply(source({"d": decimal.Decimal(1)}))


# ------------------------------------------------------------------------------------------- InsertField


def test_insert_field_docs_example() -> None:
    t = xform("InsertField$Value", {"topic.field": "kafka_topic!", "partition.field": "part",
                                    "timestamp.field": "ts", "static.field": "MessageSource",
                                    "static.value": "Kafka Connect framework"})  # fmt: skip
    out = t.apply(source({"id": 1}))
    assert out.value == {"id": 1, "kafka_topic": "orders", "part": 0, "ts": 1_500_000_000_000,
                         "MessageSource": "Kafka Connect framework"}  # fmt: skip
    schema = Schema.struct([("id", INT64_SCHEMA)], name="row")
    out = t.apply(source(Struct(schema, {"id": 1}), schema))
    fields = {f.name: f.schema for f in out.value_schema.fields}
    assert out.value_schema.name == "row"
    assert (fields["kafka_topic"], fields["part"], fields["MessageSource"]) == (
        STRING_SCHEMA, OPTIONAL_INT32_SCHEMA, OPTIONAL_STRING_SCHEMA)  # fmt: skip
    assert fields["ts"] == Schema(SchemaType.INT64, optional=True, name=TIMESTAMP_LOGICAL_NAME, version=1)
    assert out.value.get("ts") == dt.datetime(2017, 7, 14, 2, 40, tzinfo=dt.UTC)
    assert out.value.get("kafka_topic") == "orders" and out.value.get("id") == 1


def test_insert_field_offset_needs_a_sink_record() -> None:
    t = xform("InsertField$Value", {"offset.field": "off"})
    out = t.apply(sink({"a": 1}))
    assert out.value == {"a": 1, "off": 42} and out.kafka_offset == 42
    with pytest.raises(DataError, match=r"^Only SinkRecord supported for \[field insertion\]"):
        t.apply(source({"a": 1}))
    r = source(None)
    assert t.apply(r) is r  # null values pass through


def test_insert_field_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"^No field insertion configured$"):
        xform("InsertField$Value", {})
    with pytest.raises(ConfigError, match=r"No value specified for static field: s") as e:
        xform("InsertField$Value", {"static.field": "s"})
    assert e.value.issues[0].key == "static.value"


# --------------------------------------------------------------------------------------------- MaskField


def test_mask_field_schemaless_empty_values_and_replacement() -> None:
    value = {"s": "secret", "n": 12, "f": 1.5, "b": True, "l": [1], "m": {"a": 1}, "d": decimal.Decimal("2.5"),
             "keep": "x", "null": None}  # fmt: skip
    out = xform("MaskField$Value", {"fields": "s,n,f,b,l,m,d,null"}).apply(source(value))
    assert out.value == {"s": "", "n": 0, "f": 0.0, "b": False, "l": [], "m": {}, "d": decimal.Decimal(0),
                         "keep": "x", "null": None}  # fmt: skip
    out = xform("MaskField$Value", {"fields": "s,n,f", "replacement": "1234"}).apply(source(value))
    assert (out.value["s"], out.value["n"], out.value["f"]) == ("1234", 1234, 1234.0)


def test_mask_field_struct_uses_the_field_type() -> None:
    schema = Schema.struct([("i8", INT8_SCHEMA), ("f32", FLOAT32_SCHEMA), ("s", STRING_SCHEMA), ("k", INT64_SCHEMA)])
    value = Struct(schema, {"i8": 5, "f32": 2.5, "s": "abc", "k": 9})
    out = xform("MaskField$Value", {"fields": "i8,f32,s", "replacement": "300.7"}).apply(source(value, schema))
    assert out.value_schema is schema
    assert out.value.as_dict() == {"i8": 44, "f32": pytest.approx(300.7, abs=1e-4), "s": "300.7", "k": 9}
    out = xform("MaskField$Value", {"fields": "i8,s"}).apply(source(value, schema))
    assert out.value.as_dict() == {"i8": 0, "f32": 2.5, "s": "", "k": 9}


def test_mask_field_errors() -> None:
    with pytest.raises(
        DataError, match=r"^Cannot mask value of type class java.lang.Boolean with custom replacement.$"
    ):
        xform("MaskField$Value", {"fields": "b", "replacement": "x"}).apply(source({"b": True}))
    with pytest.raises(DataError, match=r"^Unable to convert abc \(class java.lang.String\) to a number$"):
        xform("MaskField$Value", {"fields": "n", "replacement": "abc"}).apply(source({"n": 1}))
    s = Schema.struct([("b", BYTES_SCHEMA)])
    with pytest.raises(DataError, match=r"^Cannot mask value of type: class \[B$"):
        xform("MaskField$Value", {"fields": "b"}).apply(source(Struct(s, {"b": b"x"}), s))
    with pytest.raises(
        DataError, match=r"Only Map objects supported in absence of schema for \[mask fields\], found: null"
    ):
        xform("MaskField$Value", {"fields": "b"}).apply(source(None))
    with pytest.raises(ConfigError) as e:
        xform("MaskField$Value", {"fields": "", "replacement": ""})
    assert sorted(i.key for i in e.value.issues) == ["fields", "replacement"]
    assert any("Empty list" in i.message for i in e.value.issues)
    assert any("String must be non-empty" in i.message for i in e.value.issues)


# ------------------------------------------------------------------------------------------ ReplaceField


def test_replace_field_exclude_include_renames() -> None:
    value = {"dont": "x", "abc": 42, "foo": True, "etc": "etc"}
    out = xform("ReplaceField$Value", {"exclude": "dont", "renames": "abc:xyz,foo:bar"}).apply(source(value))
    assert out.value == {"xyz": 42, "bar": True, "etc": "etc"}
    out = xform("ReplaceField$Value", {"include": "abc,foo,dont", "exclude": "dont"}).apply(source(value))
    assert out.value == {"abc": 42, "foo": True}
    schema = Schema.struct([("dont", STRING_SCHEMA), ("abc", INT32_SCHEMA), ("foo", BOOLEAN_SCHEMA)], name="n")
    s_out = xform("ReplaceField$Key", {"exclude": "dont", "renames": "abc:xyz"}).apply(
        source("v", key=Struct(schema, {"dont": "x", "abc": 1, "foo": False}), key_schema=schema)
    )
    assert [f.name for f in s_out.key_schema.fields] == ["xyz", "foo"] and s_out.key_schema.name == "n"
    assert s_out.key.as_dict() == {"xyz": 1, "foo": False}


def test_replace_field_takes_kafka_3_deprecated_names() -> None:
    value = {"a": 1, "b": 2, "c": 3}
    assert xform("ReplaceField$Value", {"blacklist": "a"}).apply(source(value)).value == {"b": 2, "c": 3}
    assert xform("ReplaceField$Value", {"whitelist": "a,b"}).apply(source(value)).value == {"a": 1, "b": 2}
    assert xform("ReplaceField$Value", {"blacklist": "a", "exclude": "b"}).apply(source(value)).value == {
        "a": 1, "c": 3}  # fmt: skip


def test_replace_field_bad_rename() -> None:
    with pytest.raises(ConfigError, match=r"Invalid rename mapping: a:b:c") as e:
        xform("ReplaceField$Value", {"renames": "x:y,a:b:c"})
    assert e.value.issues[0].key == "renames"


# -------------------------------------------------------------------------------------------- ValueToKey


def test_value_to_key() -> None:
    t = xform("ValueToKey", {"fields": "userId,city"})
    out = t.apply(source({"userId": 7, "city": "Oslo", "x": 1}))
    assert (out.key, out.key_schema) == ({"userId": 7, "city": "Oslo"}, None)
    schema = Schema.struct([("userId", INT64_SCHEMA), ("city", STRING_SCHEMA), ("x", INT32_SCHEMA)])
    out = t.apply(source(Struct(schema, {"userId": 7, "city": "Oslo", "x": 1}), schema))
    assert out.key_schema == Schema.struct([("userId", INT64_SCHEMA), ("city", STRING_SCHEMA)])
    assert out.key.as_dict() == {"userId": 7, "city": "Oslo"}
    with pytest.raises(DataError, match=r"^Field does not exist: nope$"):
        xform("ValueToKey", {"fields": "nope"}).apply(source(Struct(schema, {}), schema))
    with pytest.raises(ConfigError, match=r"Empty list"):
        xform("ValueToKey", {"fields": ""})


# -------------------------------------------------------------------------------------------- HeaderFrom


def test_header_from_move_and_copy() -> None:
    value = {"id": 1, "ts": 99, "body": "b"}
    out = xform("HeaderFrom$Value", {"fields": "id,ts", "headers": "record_id,timestamp", "operation": "move"}).apply(
        source(value, headers=[("h", b"1")])
    )
    assert out.value == {"body": "b"}
    assert out.headers == [("h", b"1"), ("record_id", 1), ("timestamp", 99)]
    schema = Schema.struct([("id", INT64_SCHEMA), ("body", STRING_SCHEMA)], name="n")
    struct = Struct(schema, {"id": 1, "body": "b"})
    copied = xform("HeaderFrom$Value", {"fields": "id", "headers": "rid", "operation": "copy"}).apply(
        source(struct, schema)
    )
    assert copied.value is struct and copied.headers == [("rid", 1)]
    moved = xform("HeaderFrom$Key", {"fields": "id", "headers": "rid", "operation": "move"}).apply(
        source("v", key=struct, key_schema=schema)
    )
    assert [f.name for f in moved.key_schema.fields] == ["body"] and moved.key_schema.name == "n"
    assert moved.key.as_dict() == {"body": "b"} and moved.headers == [("rid", 1)]


def test_header_from_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"'fields' config must have the same number of elements as 'headers'"):
        xform("HeaderFrom$Value", {"fields": "a,b", "headers": "x", "operation": "move"})
    with pytest.raises(ConfigError) as e:
        xform("HeaderFrom$Value", {"fields": "a", "headers": "x", "operation": "cut"})
    assert e.value.issues[0].key == "operation" and "String must be one of: move, copy" in e.value.issues[0].message


# ------------------------------------------------------------------------------------- SetSchemaMetadata


def test_set_schema_metadata() -> None:
    schema = Schema.struct([("a", INT32_SCHEMA)], name="old")
    out = xform("SetSchemaMetadata$Value", {"schema.name": "order-value", "schema.version": "2"}).apply(
        source(Struct(schema, {"a": 1}), schema)
    )
    assert (out.value_schema.name, out.value_schema.version) == ("order-value", 2)
    assert out.value.schema is out.value_schema and out.value.get("a") == 1
    key = xform("SetSchemaMetadata$Key", {"schema.version": "3"}).apply(source("v", key="k", key_schema=STRING_SCHEMA))
    assert (key.key_schema.type, key.key_schema.version, key.key) == (SchemaType.STRING, 3, "k")
    r = source(None)
    assert xform("SetSchemaMetadata$Value", {"schema.name": "x"}).apply(r) is r
    with pytest.raises(DataError, match=r"^Schema required for \[updating schema metadata\]$"):
        xform("SetSchemaMetadata$Value", {"schema.name": "x"}).apply(source({"a": 1}))
    with pytest.raises(ConfigError, match=r"^Neither schema name nor version configured$"):
        xform("SetSchemaMetadata$Value", {})
    with pytest.raises(ConfigError) as e:
        xform("SetSchemaMetadata$Value", {"schema.version": "two"})
    assert e.value.issues[0].key == "schema.version"


# ----------------------------------------------------------------------- configured through a connector


def test_chain_of_java_class_names_and_prefixed_errors() -> None:
    props = {
        "transforms": "hoist,insert,rename,mask,cast",
        "transforms.hoist.type": PKG + "HoistField$Value", "transforms.hoist.field": "line",
        "transforms.insert.type": PKG + "InsertField$Value", "transforms.insert.static.field": "src",
        "transforms.insert.static.value": "file",
        "transforms.rename.type": PKG + "ReplaceField$Value", "transforms.rename.renames": "line:text",
        "transforms.mask.type": PKG + "MaskField$Value", "transforms.mask.fields": "src",
        "transforms.mask.replacement": "***",
        "transforms.cast.type": PKG + "Cast$Key", "transforms.cast.spec": "string",
    }  # fmt: skip
    chain = TransformationChain.from_config(props)
    out = chain.apply(source("hello", STRING_SCHEMA, key=5, key_schema=INT32_SCHEMA))
    assert out is not None
    assert out.value.as_dict() == {"text": "hello", "src": "***"} and out.key == "5"
    with pytest.raises(ConfigError) as e:
        TransformationChain.from_config({**props, "transforms.cast.spec": "a:uuid"})
    assert [(i.key, i.message) for i in e.value.issues] == [
        ("transforms.cast.spec", "Invalid type found in casting spec: uuid")]  # fmt: skip


def test_docs_example_chain_runs_as_described() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parents[4] / "docs" / "connect.md").read_text()
    section = readme.split("## Transformations (SMTs) and predicates", 1)[1]
    block = section.split("```properties\n", 1)[1].split("```", 1)[0]
    props = dict(line.split("=", 1) for line in block.splitlines() if line and not line.startswith("#"))
    out = TransformationChain.from_config(props).apply(source("10", STRING_SCHEMA))
    assert out is not None
    assert out.value.as_dict() == {"amount": "10", "src_topic": "orders", "origin": "file"}
