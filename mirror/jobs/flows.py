"""Which flow a batch job works on: the ``--source``/``--target`` pair every job takes, checked once."""

from __future__ import annotations

from connect_core.api.errors import ConfigError
from mirror.connectors.config import MirrorCheckpointConfig, MirrorSourceConfig
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget


def checked_pair(config: MirrorMakerConfig, source: str, target: str) -> SourceAndTarget:
    """``source -> target`` when both are clusters of CONFIG and differ; else a ConfigError naming the option."""
    known = config.clusters()
    for alias, option in ((source, "--source"), (target, "--target")):
        if alias not in known:
            raise ConfigError(f"{option} {alias!r} is not a cluster of the config (clusters: {', '.join(known)})")
    if source == target:
        raise ConfigError("--source and --target must be different clusters")
    return SourceAndTarget(source, target)


def flow_configs(
    config: MirrorMakerConfig, source: str, target: str
) -> tuple[MirrorSourceConfig, MirrorCheckpointConfig]:
    """The flow's MirrorSource and MirrorCheckpoint configs, as ``mm2 run`` would derive them."""
    pair = checked_pair(config, source, target)
    return (
        MirrorSourceConfig(config.connector_base_config(pair, "MirrorSourceConnector")),
        MirrorCheckpointConfig(config.connector_base_config(pair, "MirrorCheckpointConnector")),
    )


__all__ = ["checked_pair", "flow_configs"]
