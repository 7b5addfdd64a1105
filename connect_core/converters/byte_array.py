"""Pass-through converter: the record's bytes are the Connect value (what MirrorMaker uses)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import DataError
from connect_core.api.schema import OPTIONAL_BYTES_SCHEMA, Schema, SchemaAndValue, SchemaType
from connect_core.converters.base import ConverterBase


class ByteArrayConverter(ConverterBase):
    """``org.apache.kafka.connect.converters.ByteArrayConverter``: bytes in, the same bytes out.

    Sits on the per-record hot path of MirrorSourceTask, so the common case (``bytes``) is one
    type check.
    """

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        """No settings."""

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if type(value) is bytes and (schema is None or schema.type is SchemaType.BYTES):
            return value
        if schema is not None and schema.type is not SchemaType.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type.name}")
        if value is None:
            return None
        if isinstance(value, bytes | bytearray | memoryview):
            return bytes(value)
        raise DataError(f"ByteArrayConverter is not compatible with objects of type {type(value).__name__}")

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, data)

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        # Header values set by transformations (InsertHeader) are text: write them as UTF-8, which is
        # what the same literal looks like under SimpleHeaderConverter.
        if type(value) is str and schema is None:
            return value.encode("utf-8")
        return self.from_connect(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        return self.to_connect(topic, data)
