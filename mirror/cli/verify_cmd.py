"""``mm2 verify CONFIG --source A --target B``: prove the mirror identical (a Spark job).

Exit 0 when every verified partition is equal, 1 when some differ, 2 on a usage or connection error
(one line on stderr: an unreachable cluster, ``--topics`` matching no mirrored topic), 3 when no record
was compared (everything still pending, or nothing mirrored yet: never a proof of equality). The report
goes to stdout; the progress bar to stderr.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from connect_core.api.errors import ConnectError
from connect_core.config.providers import resolve_config_providers
from mirror.cli.errors import fail
from mirror.cli.logging_setup import quiet_unless_debug
from mirror.cli.run_cmd import load_mm2_config
from mirror.driver.driver import make_config
from mirror.jobs.verify.logic import DIFFERENT, NOTHING_COMPARED
from mirror.jobs.verify.report import ProgressBar, render_json, render_table

#: Nothing was compared: not EQUAL, not DIFFERENT either.
EXIT_NOTHING_COMPARED = 3


def verify(
    config_path: Path,
    source: str,
    target: str,
    topics: str | None,
    json_output: bool,
    master: str | None,
    chunk_records: int,
    timeout_s: float,
) -> None:
    from mirror.jobs.spark import SparkUnavailableError
    from mirror.jobs.verify.job import run_job

    quiet_unless_debug()  # the report is the output; an error is one line
    raw = load_mm2_config(config_path)
    config = make_config({k: str(v) for k, v in resolve_config_providers(raw.raw).items()})
    bar = ProgressBar(sys.stderr)
    try:
        result = run_job(
            config,
            source,
            target,
            topics,
            master=master,
            chunk_records=chunk_records,
            progress=bar,
            timeout_s=timeout_s,
        )
    except (ConnectError, SparkUnavailableError) as e:
        bar.abort()
        fail(" ".join(str(e).split()), code=2)
    bar.close()
    if json_output:
        typer.echo(json.dumps(render_json(result), indent=2))
    else:
        typer.echo(render_table(result), nl=False)
    if result.outcome == DIFFERENT:
        raise typer.Exit(1)
    if result.outcome == NOTHING_COMPARED:
        raise typer.Exit(EXIT_NOTHING_COMPARED)
