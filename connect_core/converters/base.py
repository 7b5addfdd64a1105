"""Converter SPIs: Connect data <-> the bytes of a Kafka record key, value or header.

Same contracts as Kafka's ``Converter``/``HeaderConverter``; the runtime configures a converter
with the worker's (or connector's) ``key.converter.*``/``value.converter.*`` props stripped of
their prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from connect_core.api.schema import Schema, SchemaAndValue

if TYPE_CHECKING:
    from connect_core.config.configdef import ConfigDef


@runtime_checkable
class Converter(Protocol):
    def configure(self, configs: Mapping[str, Any], is_key: bool) -> None: ...

    def from_connect(self, topic: str, schema: Schema | None, value: Any) -> bytes | None:
        """Serialize; None means the record gets a null key/value (tombstone)."""
        ...

    def to_connect(self, topic: str, data: bytes | None) -> SchemaAndValue: ...


@runtime_checkable
class HeaderConverter(Protocol):
    def configure(self, configs: Mapping[str, Any]) -> None: ...

    def from_connect_header(self, topic: str, header_key: str, schema: Schema | None, value: Any) -> bytes | None: ...

    def to_connect_header(self, topic: str, header_key: str, data: bytes | None) -> SchemaAndValue: ...


class ConverterBase:
    """Shared no-op lifecycle bits (``config()``, ``close()``, ``version()``)."""

    def config(self) -> ConfigDef:
        from connect_core.config.configdef import ConfigDef

        return ConfigDef()

    def close(self) -> None:
        """Nothing to release by default."""

    def version(self) -> str:
        from connect_core import __version__

        return __version__
