"""docs/configuration.md is generated from the ConfigDefs and must not drift from them."""

from __future__ import annotations

from pathlib import Path

from mirror.connectors.config import CHECKPOINT_CONNECTOR_CONFIG_DEF, SOURCE_CONNECTOR_CONFIG_DEF
from mirror.driver.config_reference import reference

DOC = Path(__file__).resolve().parents[4] / "docs" / "configuration.md"


def test_checked_in_reference_is_current() -> None:
    regenerate = "regenerate: python -m mirror.driver.config_reference > docs/configuration.md"
    assert DOC.read_text() == reference(), regenerate


def test_reference_names_every_mirror_key() -> None:
    text = reference()
    for name in SOURCE_CONNECTOR_CONFIG_DEF.names() | CHECKPOINT_CONNECTOR_CONFIG_DEF.names():
        if not SOURCE_CONNECTOR_CONFIG_DEF.keys.get(name, CHECKPOINT_CONNECTOR_CONFIG_DEF.keys.get(name)).internal:
            assert f"`{name}`" in text, name
    for name in ("offset.lag.max", "sync.group.offsets.enabled", "emit.heartbeats.interval.seconds", "clusters"):
        assert f"`{name}`" in text
