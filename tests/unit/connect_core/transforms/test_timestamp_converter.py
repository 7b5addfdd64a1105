"""TimestampConverter$Key/$Value against Java's test values: 1970-01-02T00:00:01.234Z in every form."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import (
    DATE_LOGICAL_NAME,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    STRING_SCHEMA,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    Schema,
    SchemaType,
    Struct,
)
from connect_core.transforms.date_format import SimpleDateFormat
from tests.unit.connect_core.transforms.field_helpers import source, xform

FMT = "yyyy MM dd HH mm ss SSS z"
UNIX = 86_401_234  # 1970-01-02T00:00:01.234Z, Java's DATE_PLUS_TIME
TEXT = "1970 01 02 00 00 01 234 UTC"
STAMP = dt.datetime(1970, 1, 2, 0, 0, 1, 234000, tzinfo=dt.UTC)
TS_SCHEMA = Schema(SchemaType.INT64, name=TIMESTAMP_LOGICAL_NAME, version=1)
DATE_SCHEMA = Schema(SchemaType.INT32, name=DATE_LOGICAL_NAME, version=1)
TIME_SCHEMA = Schema(SchemaType.INT32, name=TIME_LOGICAL_NAME, version=1)


def conv(target: str, **extra: str) -> Any:
    return xform("TimestampConverter$Value", {"target.type": target, "format": FMT, **extra})


@pytest.mark.parametrize(
    ("target", "value", "expected"),
    [
        ("Timestamp", UNIX, STAMP), ("Timestamp", TEXT, STAMP), ("unix", TEXT, UNIX), ("string", UNIX, TEXT),
        ("string", STAMP, TEXT), ("Date", UNIX, dt.date(1970, 1, 2)), ("Time", TEXT, dt.time(0, 0, 1, 234000)),
        ("unix", STAMP, UNIX),
    ],
)  # fmt: skip
def test_schemaless_whole_value(target: str, value: object, expected: object) -> None:
    out = conv(target).apply(source(value))
    assert out.value == expected and out.value_schema is None


@pytest.mark.parametrize(
    ("target", "schema", "value", "out_schema", "expected"),
    [
        ("Timestamp", INT64_SCHEMA, UNIX, TS_SCHEMA, STAMP),
        ("unix", STRING_SCHEMA, TEXT, INT64_SCHEMA, UNIX),
        ("string", TS_SCHEMA, STAMP, STRING_SCHEMA, TEXT),
        ("Date", TS_SCHEMA, STAMP, DATE_SCHEMA, dt.date(1970, 1, 2)),
        ("Time", TS_SCHEMA, STAMP, TIME_SCHEMA, dt.time(0, 0, 1, 234000)),
        ("Timestamp", DATE_SCHEMA, dt.date(1970, 1, 2), TS_SCHEMA, dt.datetime(1970, 1, 2, tzinfo=dt.UTC)),
        ("unix", OPTIONAL_INT64_SCHEMA, None, OPTIONAL_INT64_SCHEMA, None),
    ],
)  # fmt: skip
def test_with_schema_whole_value(target: str, schema: Schema, value: object, out_schema: Schema,
                                 expected: object) -> None:  # fmt: skip
    out = conv(target).apply(source(value, schema))
    assert (out.value_schema, out.value) == (out_schema, expected)


def test_field_in_struct_and_map() -> None:
    schema = Schema.struct([("id", INT32_SCHEMA), ("ts", INT64_SCHEMA)], name="ev")
    t = conv("string", field="ts")
    out = t.apply(source(Struct(schema, {"id": 1, "ts": UNIX}), schema))
    assert out.value_schema.name == "ev" and out.value_schema.field("ts").schema == STRING_SCHEMA
    assert out.value.as_dict() == {"id": 1, "ts": TEXT}
    assert t.apply(source({"id": 1, "ts": UNIX})).value == {"id": 1, "ts": TEXT}
    key = xform("TimestampConverter$Key", {"target.type": "unix", "field": "ts"}).apply(source("v", key={"ts": STAMP}))
    assert key.key == {"ts": UNIX} and key.value == "v"


@pytest.mark.parametrize(
    ("precision", "unix_in", "ms"),
    [("seconds", 86_401, 86_401_000), ("microseconds", 86_401_234_567, UNIX), ("nanoseconds", 86_401_234_567_891, UNIX),
     ("microseconds", -1500, -1)],
)  # fmt: skip
def test_unix_precision(precision: str, unix_in: int, ms: int) -> None:
    out = xform("TimestampConverter$Value", {"target.type": "Timestamp", "unix.precision": precision}).apply(
        source(unix_in)
    )
    assert out.value == dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=ms)
    back = xform("TimestampConverter$Value", {"target.type": "unix", "unix.precision": precision}).apply(source(STAMP))
    assert back.value == {"seconds": 86_401, "microseconds": 86_401_234_000, "nanoseconds": 86_401_234_000_000}[
        precision]  # fmt: skip


def test_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"requires format option to be specified when using string timestamps") as e:
        xform("TimestampConverter$Value", {"target.type": "string"})
    assert e.value.issues[0].key == "format"
    with pytest.raises(ConfigError) as e:
        xform("TimestampConverter$Value", {"target.type": "date"})
    assert e.value.issues[0].key == "target.type"
    assert "String must be one of: string, unix, Date, Time, Timestamp" in e.value.issues[0].message
    with pytest.raises(ConfigError, match=r"SimpleDateFormat-compatible pattern for string timestamps: yyyy-qq"):
        xform("TimestampConverter$Value", {"target.type": "string", "format": "yyyy-qq"})
    with pytest.raises(ConfigError) as e:
        xform("TimestampConverter$Value", {"target.type": "unix", "unix.precision": "minutes"})
    assert e.value.issues[0].key == "unix.precision"


def test_data_errors() -> None:
    with pytest.raises(DataError, match=r"^Could not parse timestamp: value \(yesterday\) does not match pattern"):
        conv("unix").apply(source("yesterday"))
    with pytest.raises(DataError, match=r"does not correspond to a known timestamp type format"):
        conv("unix").apply(source(5, INT32_SCHEMA))
    with pytest.raises(DataError, match=r"^TimestampConverter does not support class java.lang.Boolean objects"):
        conv("unix").apply(source(True))
    with pytest.raises(DataError, match=r"^Timestamp 9223372036854775807 ms is outside the years 1-9999"):
        conv("Timestamp").apply(source(2**63 - 1))
    with pytest.raises(DataError, match=r"^Expected Unix timestamp to be a Long, but found class java.lang.String$"):
        conv("string").apply(source("x", INT64_SCHEMA))


@pytest.mark.parametrize(
    ("pattern", "text", "iso"),
    [
        ("yyyy-MM-dd", "2024-02-30", "2024-03-01T00:00:00"),  # lenient roll-over, as Java's default
        ("yyyyMMddHHmmss", "20240102030405", "2024-01-02T03:04:05"),  # abutting fields take their width
        ("dd MMM yyyy hh:mm a", "05 Jan 2024 01:30 PM", "2024-01-05T13:30:00"),
        ("yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2024-01-05T10:00:00.500+02:00", "2024-01-05T08:00:00.500000"),
        ("yyyy-MM-dd", "2024-01-05 trailing text", "2024-01-05T00:00:00"),
    ],
)  # fmt: skip
def test_simple_date_format_parsing(pattern: str, text: str, iso: str) -> None:
    ms = SimpleDateFormat(pattern).parse_millis(text)
    assert dt.datetime(1970, 1, 1) + dt.timedelta(milliseconds=ms) == dt.datetime.fromisoformat(iso)
