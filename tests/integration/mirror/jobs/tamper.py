"""A transform that corrupts values, so a test can mirror records that differ from their source."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from connect_core.api.records import SourceRecord
from connect_core.config.configdef import ConfigDef
from connect_core.transforms.base import PluginBase


class TamperValue(PluginBase):
    """Replace the value with ``b"tampered"`` (use with a predicate to hit only some records)."""

    CONFIG_DEF = ConfigDef()

    def configure(self, props: Mapping[str, Any]) -> None:
        self.parse(props)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        return record.new_record(value=b"tampered")
