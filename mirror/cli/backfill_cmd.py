"""``mm2 backfill CONFIG --source A --target B``: bulk backfill of a flow's backlogs (a Spark job).

A progress bar on stderr while it copies (records and MB of the total, rate, ETA), fed from the
units' committed positions; the plan or the result as a table, or one JSON document, on stdout.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer

from connect_core.config.providers import resolve_config_providers
from mirror.cli.logging_setup import quiet_broker_warnings
from mirror.cli.run_cmd import load_mm2_config
from mirror.driver.backfill_leases import DEFAULT_LEASE_TTL_S
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig
from mirror.jobs.backfill.plan import BackfillPlan

_MB = 1024 * 1024


class ProgressBar:
    """rich's progress bar on stderr; silent when stderr is not a terminal (logs, pipes, tests)."""

    def __init__(self) -> None:
        self._progress: Any = None
        self._task: Any = None
        self._avg = 0.0

    def on_plan(self, plan: BackfillPlan) -> None:
        if not sys.stderr.isatty() or not plan.units:
            return
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            Progress,
            TaskProgressColumn,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._avg = plan.avg_record_bytes or 1.0
        self._progress = Progress(
            TextColumn("backfill"),
            BarColumn(),
            TaskProgressColumn(),
            TextColumn("{task.fields[records]}"),
            TransferSpeedColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._progress.add_task("copy", total=max(1, plan.estimated_bytes), records="")
        self._progress.start()

    def __call__(self, done: int, total: int) -> None:
        if self._progress is None:
            return
        self._progress.update(
            self._task,
            completed=int(done * self._avg),
            records=f"{done:,}/{total:,} rec {done * self._avg / _MB:,.0f}/{total * self._avg / _MB:,.0f} MB",
        )

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()


def _config(config_path: Path) -> MirrorMakerConfig:
    raw = load_mm2_config(config_path)
    return make_config({k: str(v) for k, v in resolve_config_providers(raw.raw).items()})


def release(config_path: Path, source: str, target: str) -> None:
    """``--release``: the flow's lease deleted after its holder's transactions are fenced; one line says which."""
    from mirror.jobs.backfill.flow import resolve_flow
    from mirror.jobs.backfill.lease import release_lease

    quiet_broker_warnings()
    flow = resolve_flow(_config(config_path), source, target)
    lease = release_lease(flow)
    if lease is None:
        typer.echo(f"No backfill lease on {flow.pair}: nothing to release.")
    else:
        typer.echo(
            f"Released the backfill lease of job {lease.job_id} on {flow.pair} ({', '.join(lease.topics)}): "
            "live tailing takes the topics back from what the job committed."
        )


def backfill(
    config_path: Path,
    source: str,
    target: str,
    topics: str | None,
    master: str | None,
    dry_run: bool,
    json_output: bool,
    force: bool = False,
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
    throughput_limit: float | None = None,
) -> None:
    from mirror.jobs.backfill.job import run_job
    from mirror.jobs.backfill.report import render_json, render_table

    quiet_broker_warnings()  # an unreachable cluster is the job's one error line, not log lines before it
    config = _config(config_path)
    bar = ProgressBar()
    try:
        report = run_job(
            config,
            source,
            target,
            topics,
            master=master,
            dry_run=dry_run,
            progress=bar,
            on_plan=None if dry_run else bar.on_plan,
            force=force,
            lease_ttl_s=lease_ttl_s,
            throughput_limit=throughput_limit,
        )
    finally:
        bar.close()
    if json_output:
        typer.echo(json.dumps(render_json(report), indent=2))
    else:
        typer.echo(render_table(report), nl=False)
