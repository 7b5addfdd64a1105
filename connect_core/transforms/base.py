"""Transformation and predicate SPIs (Kafka's ``Transformation``/``Predicate``), per record."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from connect_core.api.records import SourceRecord
from connect_core.config.configdef import ConfigDef


@runtime_checkable
class Transformation(Protocol):
    def configure(self, props: Mapping[str, Any]) -> None: ...

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        """The transformed record, or None to drop it."""
        ...

    def config(self) -> ConfigDef: ...

    def close(self) -> None: ...


@runtime_checkable
class Predicate(Protocol):
    def configure(self, props: Mapping[str, Any]) -> None: ...

    def test(self, record: SourceRecord) -> bool: ...

    def config(self) -> ConfigDef: ...

    def close(self) -> None: ...


class PluginBase:
    """Defaults shared by the bundled transformations and predicates."""

    CONFIG_DEF: ConfigDef = ConfigDef()

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def parse(self, props: Mapping[str, Any]) -> dict[str, Any]:
        """Typed values of this plugin's keys (raises ConfigError naming each bad key)."""
        return self.CONFIG_DEF.parse(props)

    def close(self) -> None:
        """Nothing to release by default."""

    def version(self) -> str:
        from connect_core import __version__

        return __version__
