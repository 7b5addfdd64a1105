"""The per-connector transformation chain, configured exactly as Connect configures it.

::

    transforms=route,tag
    transforms.route.type=RegexRouter            # any name Plugins accepts
    transforms.route.regex=(.*)
    transforms.route.replacement=copy-$1
    transforms.route.predicate=isFoo              # optional: apply only when the predicate holds
    transforms.route.negate=true                  # optional: ...or only when it does not
    predicates=isFoo
    predicates.isFoo.type=TopicNameMatches
    predicates.isFoo.pattern=foo.*

Every configuration problem is reported as a ConfigError whose key is the full connector key
(``transforms.route.regex``), so the REST validate endpoint and the CLI can point at it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connect_core.api.errors import ConfigError, ConfigIssue
from connect_core.api.records import SourceRecord
from connect_core.transforms.base import Predicate, Transformation

log = logging.getLogger(__name__)

TRANSFORMS_CONFIG = "transforms"
PREDICATES_CONFIG = "predicates"
PREDICATE_KEY = "predicate"
NEGATE_KEY = "negate"


class TransformationStage:
    """One transformation, optionally guarded by a (possibly negated) predicate."""

    __slots__ = ("alias", "negate", "predicate", "transformation")

    def __init__(
        self,
        transformation: Transformation,
        predicate: Predicate | None = None,
        negate: bool = False,
        alias: str = "",
    ) -> None:
        self.transformation = transformation
        self.predicate = predicate
        self.negate = negate
        self.alias = alias

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if self.predicate is None or self.negate ^ self.predicate.test(record):
            return self.transformation.apply(record)
        return record

    def close(self) -> None:
        for plugin in (self.transformation, self.predicate):
            if plugin is None:
                continue
            try:
                plugin.close()
            except Exception:  # closing must not stop the others from closing
                log.warning("Failed to close %r of transform %s", plugin, self.alias, exc_info=True)

    def __repr__(self) -> str:
        return (
            f"TransformationStage(alias={self.alias!r}, transformation={self.transformation!r}, "
            f"predicate={self.predicate!r}, negate={self.negate})"
        )


def parse_aliases(props: Mapping[str, Any], key: str) -> list[str]:
    """Connect's LIST parsing of ``transforms``/``predicates`` plus its duplicate-alias check."""
    raw = props.get(key)
    if raw is None:
        return []
    if isinstance(raw, list | tuple):
        aliases = [str(a).strip() for a in raw]
    else:
        text = str(raw).strip()
        aliases = [a.strip() for a in text.split(",")] if text else []
    if any(not a for a in aliases):
        raise ConfigError(f"Invalid value {raw}: empty alias", key=key)
    if len(set(aliases)) != len(aliases):
        raise ConfigError("Duplicate alias provided.", key=key)
    return aliases


def _with_prefix(props: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    n = len(prefix)
    return {k[n:]: v for k, v in props.items() if k.startswith(prefix)}


def _prefixed(error: ConfigError, prefix: str) -> ConfigError:
    return ConfigError([ConfigIssue(prefix + i.key if i.key else prefix.rstrip("."), i.message) for i in error.issues])


def _parse_bool(value: Any, key: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ConfigError(
        f"Invalid value {value} for configuration {key}: Expected value to be either true or false", key=key
    )


def _configure(kind: str, type_key: str, props: Mapping[str, Any], own: dict[str, Any]) -> Any:
    from connect_core.plugins import Plugins

    if type_key not in props or props[type_key] in (None, ""):
        raise ConfigError(f'Missing required configuration "{type_key}" which has no default value.', key=type_key)
    cls = Plugins.load(props[type_key], kind, key=type_key)
    plugin = cls()
    prefix = type_key[: -len("type")]
    try:
        plugin.configure(own)
    except ConfigError as e:
        raise _prefixed(e, prefix) from None
    return plugin


class TransformationChain:
    """The stages of one connector, applied in order; a dropped record stops the chain."""

    __slots__ = ("stages",)

    def __init__(self, stages: list[TransformationStage] | None = None) -> None:
        self.stages = stages or []

    @classmethod
    def from_config(cls, props: Mapping[str, Any]) -> TransformationChain:
        """Build and configure every stage from a connector config (raises ConfigError)."""
        aliases = parse_aliases(props, TRANSFORMS_CONFIG)
        predicate_aliases = parse_aliases(props, PREDICATES_CONFIG)
        stages: list[TransformationStage] = []
        try:
            for alias in aliases:
                prefix = f"{TRANSFORMS_CONFIG}.{alias}."
                own = _with_prefix(props, prefix)
                own.pop("type", None)
                predicate_alias = own.pop(PREDICATE_KEY, None)
                negate_raw = own.pop(NEGATE_KEY, None)
                if negate_raw is not None and predicate_alias is None:
                    raise ConfigError(
                        f"Config '{prefix}{NEGATE_KEY}' was provided but there is no config "
                        f"'{prefix}{PREDICATE_KEY}' defining a predicate to be negated.",
                        key=prefix + NEGATE_KEY,
                    )
                negate = _parse_bool(negate_raw, prefix + NEGATE_KEY) if negate_raw is not None else False
                transformation = _configure("transformation", prefix + "type", props, own)
                predicate = None
                if predicate_alias is not None and str(predicate_alias).strip():
                    p_alias = str(predicate_alias).strip()
                    if p_alias not in predicate_aliases:
                        transformation.close()
                        raise ConfigError(
                            f"Predicate '{p_alias}' is not listed in '{PREDICATES_CONFIG}'",
                            key=prefix + PREDICATE_KEY,
                        )
                    p_prefix = f"{PREDICATES_CONFIG}.{p_alias}."
                    p_own = _with_prefix(props, p_prefix)
                    p_own.pop("type", None)
                    try:
                        predicate = _configure("predicate", p_prefix + "type", props, p_own)
                    except BaseException:
                        transformation.close()
                        raise
                stages.append(TransformationStage(transformation, predicate, negate, alias))
        except BaseException:
            for stage in stages:
                stage.close()
            raise
        return cls(stages)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        for stage in self.stages:
            record_or_none = stage.apply(record)
            if record_or_none is None:
                return None
            record = record_or_none
        return record

    def close(self) -> None:
        for stage in self.stages:
            stage.close()

    def __len__(self) -> int:
        return len(self.stages)

    def __bool__(self) -> bool:
        return bool(self.stages)

    def __repr__(self) -> str:
        return f"TransformationChain({self.stages!r})"
