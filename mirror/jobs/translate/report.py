"""How ``mm2 translate-offsets`` shows its plans: a readable table, or one JSON document."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mirror.jobs.translate.logic import OLD_INCARNATION, STATUSES, GroupPlan

_COLUMNS = (
    "group",
    "topic",
    "partition",
    "source_offset",
    "target_topic",
    "target_offset",
    "target_end",
    "committed",
    "reread",
    "status",
    "applied",
)


def render_json(plans: Iterable[GroupPlan], applied: bool) -> dict[str, Any]:
    """``{"groups": [{"group", "target_state", "partitions": [...]}], "summary": {...}}``."""
    plans = list(plans)
    return {"apply": applied, "groups": [p.to_json() for p in plans], "summary": summary(plans)}


def summary(plans: Iterable[GroupPlan]) -> dict[str, int]:
    counts = Counter(row.status for p in plans for row in p.partitions)
    out = {status: counts.get(status, 0) for status in STATUSES}
    out["applied"] = sum(1 for p in plans for row in p.partitions if row.applied)
    out["failed"] = sum(1 for p in plans for row in p.partitions if row.error is not None)
    return out


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f}s"
    return f"{seconds / 60:.0f}m" if seconds < 7200 else f"{seconds / 3600:.1f}h"


def render_table(plans: Iterable[GroupPlan], applied: bool) -> str:
    """One row per group-partition; when the source was unreachable, a first line saying so and a
    ``checkpoint_age`` column (how long ago each group's offsets were read on the source)."""
    plans = list(plans)
    reasons = sorted({p.source_unreachable for p in plans if p.source_unreachable})
    columns = _COLUMNS + (("checkpoint_age",) if reasons else ())
    rows = []
    for p in plans:
        for r in p.partitions:
            cells = [
                _cell(v)
                for v in (
                    p.group,
                    r.topic,
                    r.partition,
                    r.source_offset,
                    r.target_topic,
                    r.target_offset,
                    r.target_end_offset,
                    r.target_committed,
                    r.reread,
                    r.status if r.error is None else f"{r.status} ({r.error})",
                    r.applied,
                )
            ]
            if reasons:
                cells.append(_age(r.checkpoint_age_s) if p.source_unreachable else "-")
            rows.append(cells)
    widths = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(columns)]
    lines = [
        f"{reason}: groups placed at their last checkpoints on the target; checkpoint_age is how long ago "
        "each group's offsets were read on the source (what it consumed since is read again)"
        for reason in reasons
    ]
    lines.append("  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True)).rstrip())
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    counts = summary(plans)
    totals = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s] or s != OLD_INCARNATION)
    mode = (
        f"applied to {counts['applied']} partitions, {counts['failed']} failed"
        if applied
        else "dry run: nothing written (add --apply)"
    )
    lines.append(f"{len(plans)} groups, {len(rows)} partitions: {totals}; {mode}")
    return "\n".join(lines) + "\n"


__all__ = ["render_json", "render_table", "summary"]
