"""Records and configured transforms for the field-transform tests."""

from __future__ import annotations

from typing import Any

from connect_core.api.records import SourceRecord
from connect_core.api.schema import Schema
from connect_core.api.sink import SinkRecord
from connect_core.plugins import Plugins

PKG = "org.apache.kafka.connect.transforms."


def xform(java_name: str, props: dict[str, str]) -> Any:
    """The transform Java class name ``java_name`` configures to, resolved as a connector config would."""
    t = Plugins.load(PKG + java_name, "transformation")()
    t.configure(props)
    return t


def source(value: Any, schema: Schema | None = None, key: Any = None, key_schema: Schema | None = None,
           timestamp: int | None = 1_500_000_000_000, headers: list[Any] | None = None) -> SourceRecord:  # fmt: skip
    return SourceRecord({"file": "f"}, {"pos": 1}, "orders", 0, key, value, headers, timestamp, key_schema, schema)


def sink(value: Any, schema: Schema | None = None, offset: int = 42) -> SinkRecord:
    return SinkRecord("orders", 3, None, None, schema, value, offset, timestamp=1_500_000_000_000)
