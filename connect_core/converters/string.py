"""Values as text in a configurable character set (``converter.encoding``, default UTF-8)."""

from __future__ import annotations

import codecs
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError, DataError
from connect_core.api.schema import OPTIONAL_STRING_SCHEMA, Schema, SchemaAndValue
from connect_core.config.configdef import ConfigDef, Importance, Type, Width
from connect_core.converters.base import ConverterBase

ENCODING_CONFIG = "converter.encoding"
ENCODING_DEFAULT = "UTF-8"


def java_text(value: Any) -> str:
    """``String.valueOf`` for the values a task may hand over (booleans print as Java does)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class StringConverter(ConverterBase):
    """``org.apache.kafka.connect.storage.StringConverter``."""

    def __init__(self) -> None:
        self.encoding = "utf-8"

    def config(self) -> ConfigDef:
        return ConfigDef().define(
            ENCODING_CONFIG,
            Type.STRING,
            ENCODING_DEFAULT,
            importance=Importance.HIGH,
            documentation="The name of the character set to use for encoding strings as byte arrays.",
            width=Width.MEDIUM,
            display_name="Encoding",
        )

    def configure(self, configs: Mapping[str, Any], is_key: bool = False) -> None:
        name = str(configs.get(ENCODING_CONFIG) or ENCODING_DEFAULT)
        try:
            self.encoding = codecs.lookup(name).name
        except LookupError:
            raise ConfigError(f"Invalid value {name}: unknown character set", key=ENCODING_CONFIG) from None

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        if isinstance(value, bytes):
            return value
        try:
            return java_text(value).encode(self.encoding)
        except UnicodeError as e:
            raise DataError(f"Failed to serialize to a string: {e}") from e

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue:
        if data is None:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None)
        try:
            return SchemaAndValue(OPTIONAL_STRING_SCHEMA, bytes(data).decode(self.encoding))
        except UnicodeError as e:
            raise DataError(f"Failed to deserialize string: {e}") from e

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None:
        return self.from_connect(topic, schema, value)

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue:
        return self.to_connect(topic, data)
