"""How ``mm2 verify`` shows its result: a readable table, one JSON document, and a progress bar."""

from __future__ import annotations

from typing import Any, TextIO

from mirror.jobs.verify.logic import EQUAL, NOTHING_COMPARED, Verification

_COLUMNS = (
    "topic",
    "partition",
    "target_topic",
    "compared",
    "missing",
    "extra",
    "mismatched",
    "pending",
    "first_difference",
    "result",
    "known_gap",
)


def render_json(result: Verification) -> dict[str, Any]:
    """``{"equal": bool, "result": "equal"|"different"|"nothing_compared", "partitions": [{"topic", ...}]}``."""
    return result.to_json()


def render_table(result: Verification) -> str:
    rows = [
        [
            str(v)
            for v in (
                r.topic,
                r.partition,
                r.target_topic,
                r.compared,
                r.missing,
                r.extra,
                r.mismatched,
                r.pending,
                "-" if r.first_difference is None else r.first_difference,
                "equal" if r.equal else "DIFFERENT",
                r.known_gap or "-",
            )
        ]
        for r in result.partitions
    ]
    widths = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(_COLUMNS)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(_COLUMNS, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    t = result.totals()
    differing = sum(1 for r in result.partitions if not r.equal)
    verdict = {EQUAL: "EQUAL", NOTHING_COMPARED: "NOTHING COMPARED (not yet replicated, or nothing to compare)"}.get(
        result.outcome, f"DIFFERENT in {differing} partition(s)"
    )
    lines.append(
        f"{verdict}: {len(result.partitions)} partitions, {t['compared']} records compared, "
        f"{t['missing']} missing, {t['extra']} extra, {t['mismatched']} mismatched, {t['pending']} pending"
    )
    recreated = sum(1 for r in result.partitions if r.source_recreated)
    if t["lost_on_source"] or recreated:
        lines.append(
            f"Known gaps (not differences): {t['lost_on_source']} records deleted on the source before "
            f"they were mirrored, {recreated} partition(s) of a recreated source topic (its earlier "
            "records on the target are not compared); see mm2 status"
        )
    return "\n".join(lines) + "\n"


class ProgressBar:
    """``verify [#####.....] 12/40 chunks`` redrawn in place on a terminal; one final line otherwise."""

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.tty = stream.isatty()
        self.total = 0
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        if self.tty:
            filled = self.width * done // total if total else self.width
            self.stream.write(f"\rverify [{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} chunks")
            self.stream.flush()

    def abort(self) -> None:
        """The job failed: end the bar's line so the error shows on a line of its own."""
        if self.tty and self.total:
            self.stream.write("\n")
            self.stream.flush()

    def close(self) -> None:
        if self.tty and self.total:
            self.stream.write("\n")
        elif self.total:
            self.stream.write(f"verify: {self.done}/{self.total} chunks compared\n")
        self.stream.flush()


__all__ = ["ProgressBar", "render_json", "render_table"]
