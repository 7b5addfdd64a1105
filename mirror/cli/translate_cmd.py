"""``mm2 translate-offsets CONFIG --source A --target B``: failover offsets for many groups (a Spark job).

Dry run by default (nothing is written); ``--apply`` writes to groups with no active members on the
target, never backwards unless ``--force``. Exit code 1 when some write failed, else 0. With the source
unreachable the groups are placed from their last checkpoints on the target, and the report says so.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from connect_core.config.providers import resolve_config_providers
from mirror.cli.logging_setup import quiet_broker_warnings
from mirror.cli.run_cmd import load_mm2_config
from mirror.driver.driver import make_config
from mirror.jobs.translate.report import render_json, render_table, summary


def translate_offsets(
    config_path: Path,
    source: str,
    target: str,
    groups: str | None,
    apply: bool,
    force: bool,
    json_output: bool,
    master: str | None,
    timeout_s: float = 30.0,
) -> None:
    from mirror.jobs.translate.job import run_job

    quiet_broker_warnings()  # an unreachable source is said once, in the report
    raw = load_mm2_config(config_path)
    config = make_config({k: str(v) for k, v in resolve_config_providers(raw.raw).items()})
    plans = run_job(config, source, target, groups, apply=apply, force=force, master=master, timeout_s=timeout_s)
    if json_output:
        typer.echo(json.dumps(render_json(plans, apply), indent=2))
    else:
        typer.echo(render_table(plans, apply), nl=False)
    if summary(plans)["failed"]:
        raise typer.Exit(1)
