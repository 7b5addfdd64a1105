"""How ``mm2 backfill`` shows its plan and its result: a readable table, or one JSON document."""

from __future__ import annotations

from typing import Any

from mirror.jobs.backfill.foreign import describe
from mirror.jobs.backfill.job import BackfillReport

_MB = 1024 * 1024


def render_json(report: BackfillReport) -> dict[str, Any]:
    """``{"dry_run", "partitions": [{"topic", "partition", "from", "until", "records"...}], "totals", "seconds"}``."""
    copied = {(r.topic, r.partition): r for r in report.results}
    partitions = []
    for unit in report.plan.units:
        row: dict[str, Any] = {
            "topic": unit.topic,
            "partition": unit.partition,
            "target_topic": unit.target_topic,
            "from": unit.start,
            "until": unit.end,
            "records_planned": unit.records,
        }
        result = copied.get((unit.topic, unit.partition))
        if not report.dry_run:
            row["records_copied"] = result.records if result is not None else 0
            row["resumed_from"] = result.resumed_from if result is not None else unit.start
        partitions.append(row)
    totals: dict[str, Any] = {
        "partitions": len(report.plan.units),
        "records_planned": report.plan.records,
        "estimated_bytes": report.plan.estimated_bytes,
    }
    if not report.dry_run:
        totals["records_copied"] = report.records_copied
        totals["bytes_copied"] = report.bytes_copied
        totals["chunks_committed"] = sum(r.chunks for r in report.results)
        totals["longest_transaction_seconds"] = round(report.longest_transaction_seconds, 3)
        totals["transaction_seconds_bound"] = round(report.transaction_seconds_bound, 3)
        totals["transaction_timeout_ms"] = report.transaction_timeout_ms
        totals["task_slots"] = report.task_slots
        totals["tasks"] = report.tasks
        totals["max_concurrent_tasks"] = report.max_concurrent_tasks
        totals["tasks_retried"] = report.tasks_retried
        totals["bytes_per_second"] = round(report.bytes_per_second)
        totals["throughput_limit_bytes_per_second"] = report.throughput_limit
    return {
        "source": report.plan.source,
        "target": report.plan.target,
        "dry_run": report.dry_run,
        "handed_off_from_live": report.handed_off,
        "live_tasks_abandoned": list(report.abandoned_live_tasks),
        "copy_path": report.copy_path,  # batch: the source's record batches as bytes; record: decoded and re-sent
        "partitions": partitions,
        "totals": totals,
        "foreign_partitions": [{"topic": t, "partition": p} for t, p in sorted(report.foreign)],
        "tasks": _task_rows(report),
        "seconds": round(report.seconds, 3),
        "spark_startup_seconds": round(report.spark_startup_seconds, 3),
        "copy_seconds": round(report.copy_seconds, 3),
    }


def _task_rows(report: BackfillReport) -> list[dict[str, Any]]:
    """One row per Spark task: partitions, attempt, and its start and end relative to the first task's start."""
    spans = report.task_spans
    if not spans:
        return []
    first = min(start for start, _ in spans.values())
    rows = []
    for task, (start, end) in sorted(spans.items()):
        mine = [r for r in report.results if r.task == task]
        rows.append(
            {
                "task": task,
                "partitions": len(mine),
                "attempt": max(r.attempt for r in mine) + 1,
                "started": round(start - first, 3),
                "finished": round(end - first, 3),
            }
        )
    return rows


def render_table(report: BackfillReport) -> str:
    plan = report.plan
    copied = {(r.topic, r.partition): r.records for r in report.results}
    header = ["topic", "partition", "from", "until", "records"] + ([] if report.dry_run else ["copied"])
    rows = [header]
    for unit in plan.units:
        row = [unit.topic, str(unit.partition), str(unit.start), str(unit.end), str(unit.records)]
        if not report.dry_run:
            row.append(str(copied.get((unit.topic, unit.partition), 0)))
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(r)).rstrip() for r in rows]
    if not plan.units:
        lines = [f"Nothing to backfill for {plan.source}->{plan.target}: every selected partition is mirrored."]
    elif report.dry_run:
        if report.foreign:
            lines.append(
                f"Target partition(s) {describe(report.foreign)} already hold records the flow did not "
                "copy: the backfill refuses them without --force."
            )
        lines.append(
            f"Plan for {plan.source}->{plan.target}: {len(plan.units)} partition(s), {plan.records} "
            f"records, about {plan.estimated_bytes / _MB:.1f} MB. Dry run: nothing written."
        )
    else:
        rate = report.records_copied / report.seconds if report.seconds > 0 else 0.0
        lines.append(
            f"Backfilled {report.records_copied} records ({report.bytes_copied / _MB:.1f} MB) of "
            f"{plan.source}->{plan.target} in {report.seconds:.1f} s ({rate:,.0f} rec/s); live tailing "
            "continues from there."
        )
        if report.abandoned_live_tasks:
            lines.append(
                f"Live task(s) {', '.join(map(str, report.abandoned_live_tasks))} were abandoned at the hand-off "
                "(they overran task.shutdown.graceful.timeout.ms): records they copied after their last committed "
                "offsets were copied again."
            )
        if report.throughput_limit is not None:
            lines.append(
                f"Throughput: {report.bytes_per_second / _MB:.2f} MB/s while copying, capped at "
                f"{report.throughput_limit / _MB:.2f} MB/s (--throughput-limit)."
            )
    return "\n".join(lines) + "\n"


__all__ = ["render_json", "render_table"]
