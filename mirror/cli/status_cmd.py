"""``mm2 status MM2.properties [--json]``: per flow, connector/task states, lag per partition, checkpoints.

Read-only: everything comes from the clusters (see :mod:`mirror.driver.status`), so it works whether or
not mm2 is running and from any machine that reaches the clusters. A flow whose clusters cannot
be read is shown with its error; the exit code is then 1 (0 when every flow was read), or 2 with one
line on stderr naming the cluster(s) when a cluster could not be reached at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from connect_core.config.providers import resolve_config_providers
from mirror.cli.errors import fail
from mirror.cli.logging_setup import quiet_unless_debug
from mirror.cli.run_cmd import load_mm2_config
from mirror.driver.driver import make_config
from mirror.driver.status import DEFAULT_TIMEOUT_S, collect_status
from mirror.driver.status_report import FlowStatus, render_json, render_table


def gather(config_path: Path, timeout_s: float = DEFAULT_TIMEOUT_S) -> list[FlowStatus]:
    raw = load_mm2_config(config_path)
    # Read-only, so references can be resolved eagerly (clients need the real bootstrap/credentials).
    config = make_config({k: str(v) for k, v in resolve_config_providers(raw.raw).items()})
    return collect_status(config, timeout_s=timeout_s)


def status(config_path: Path, json_output: bool) -> None:
    quiet_unless_debug()  # the report is the output; a flow's failure is in it, not in log lines
    flows = gather(config_path)
    if json_output:
        typer.echo(json.dumps(render_json(flows), indent=2, sort_keys=False))
    else:
        typer.echo(render_table(flows), nl=False)
    unreachable: dict[str, str] = {}  # alias -> the first flow's error about it
    for f in flows:
        if f.unreachable and f.error:
            unreachable.setdefault(f.unreachable, f.error)
    if unreachable:
        fail("; ".join(unreachable.values()))
    if any(f.error for f in flows):
        raise typer.Exit(1)
