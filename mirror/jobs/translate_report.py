"""How ``mm2 translate-offsets`` shows its plans: a readable table, or one JSON document."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from mirror.jobs.translate_logic import STATUSES, GroupPlan

_COLUMNS = ("group", "topic", "partition", "source_offset", "target_topic", "target_offset", "target_end",
            "committed", "reread", "status", "applied")


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


def render_table(plans: Iterable[GroupPlan], applied: bool) -> str:
    plans = list(plans)
    rows = [[_cell(v) for v in (p.group, r.topic, r.partition, r.source_offset, r.target_topic, r.target_offset,
                                r.target_end_offset, r.target_committed, r.reread,
                                r.status if r.error is None else f"{r.status} ({r.error})", r.applied)]
            for p in plans for r in p.partitions]
    widths = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(_COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    counts = summary(plans)
    totals = ", ".join(f"{counts[s]} {s}" for s in STATUSES)
    mode = f"applied to {counts['applied']} partitions, {counts['failed']} failed" if applied else \
        "dry run: nothing written (add --apply)"
    lines.append(f"{len(plans)} groups, {len(rows)} partitions: {totals}; {mode}")
    return "\n".join(lines) + "\n"


__all__ = ["render_json", "render_table", "summary"]
