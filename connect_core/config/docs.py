"""Markdown reference tables generated from :class:`ConfigDef` s, so docs cannot drift from code."""

from __future__ import annotations

from collections.abc import Iterable

from connect_core.config.configdef import ConfigDef, ConfigKey, Importance

__all__ = ["to_markdown"]

_IMPORTANCE_ORDER = {Importance.HIGH: 0, Importance.MEDIUM: 1, Importance.LOW: 2}


def _cell(text: str) -> str:
    """Make text safe inside a markdown table cell."""
    return " ".join(text.replace("\\", "\\\\").replace("|", "\\|").split())


def _code(text: str) -> str:
    return f"`{text}`" if "`" not in text else f"`` {text} ``"


def _default(key: ConfigKey) -> str:
    if key.required:
        return "*(required)*"
    text = key.default_as_string
    if text is None:
        return "null"
    if text == "":
        return '""'
    return _code(text)


def _sort_key(key: ConfigKey) -> tuple[int, int, str]:
    """Kafka's doc order: required first, then by importance, then by name."""
    return (0 if key.required else 1, _IMPORTANCE_ORDER[key.importance], key.name)


def _table(keys: list[ConfigKey]) -> list[str]:
    lines = [
        "| Name | Type | Default | Valid values | Importance | Description |",
        "|------|------|---------|--------------|------------|-------------|",
    ]
    for k in keys:
        valid = k.valid_values_text
        lines.append(
            "| "
            + " | ".join(
                [
                    _code(k.name),
                    k.type.value.lower(),
                    _cell(_default(k)),
                    _cell(valid) if valid else "",
                    k.importance.value.lower(),
                    _cell(k.documentation),
                ]
            )
            + " |"
        )
    return lines


def _sections(definition: ConfigDef, level: int) -> list[str]:
    keys = [k for k in definition.keys.values() if not k.internal]
    grouped: dict[str | None, list[ConfigKey]] = {}
    for k in keys:
        grouped.setdefault(k.group, []).append(k)
    order: list[str | None] = [g for g in definition.groups() if g in grouped]
    if None in grouped:
        order.append(None)
    out: list[str] = []
    for group in order:
        members = grouped[group]
        if group is not None and any(k.order_in_group >= 0 for k in members):
            members = sorted(members, key=lambda k: (k.order_in_group < 0, k.order_in_group, k.name))
        else:
            members = sorted(members, key=_sort_key)
        if len(order) > 1 or group is not None:
            out.append(f"{'#' * level} {group or 'Other'}")
            out.append("")
        out.extend(_table(members))
        out.append("")
    return out


def to_markdown(
    definitions: ConfigDef | Iterable[tuple[str, ConfigDef]],
    *,
    title: str | None = None,
    level: int = 2,
) -> str:
    """Render one definition, or several ``(section title, definition)`` pairs, as markdown.

    Keys are grouped by their ``group`` (in definition order); within a group ``order_in_group``
    wins, otherwise required keys come first, then by importance and name. Internal keys are left out.
    """
    out: list[str] = []
    if title:
        out += [f"{'#' * (level - 1 if level > 1 else 1)} {title}", ""]
    if isinstance(definitions, ConfigDef):
        out += _sections(definitions, level)
    else:
        for section, d in definitions:
            out += [f"{'#' * level} {section}", ""]
            out += _sections(d, level + 1)
    return "\n".join(out).rstrip("\n") + "\n"
