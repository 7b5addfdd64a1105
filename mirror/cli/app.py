"""``mm2``: run MirrorMaker 2 flows, Connect workers and batch jobs.

Each subcommand lives in its own module and registers itself here; this module only wires
them together and sets up logging.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from connect_core import __version__
from mirror.cli.errors import excepthook_to_stderr, fail, guarded
from mirror.cli.logging_setup import configure_logging
from mirror.driver.backfill_leases import DEFAULT_LEASE_TTL_S

app = typer.Typer(
    name="mm2",
    help="MirrorMaker 2 for Kafka, in Python: mirror topics, configs and consumer-group offsets.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
connect_app = typer.Typer(help="Run a Kafka Connect worker (as connect-standalone.sh / connect-distributed.sh).")
app.add_typer(connect_app, name="connect")

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mm2 {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    log_level: Annotated[
        str, typer.Option("--log-level", help="DEBUG, INFO, WARNING or ERROR.", envvar="MM2_LOG_LEVEL")
    ] = "INFO",
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    level = log_level.upper()
    if level not in LOG_LEVELS:
        fail(f"--log-level must be one of {', '.join(LOG_LEVELS)}, not {log_level!r}")
    configure_logging(level)


def require_file(path: Path, what: str) -> Path:
    """Reject a missing config file with one line before anything starts."""
    if not path.exists():
        fail(f"{what} not found: {path}")
    if not path.is_file():
        fail(f"{what} is not a file: {path}")
    return path


@app.command()
@guarded
def run(
    config: Annotated[Path, typer.Argument(help="MirrorMaker 2 properties file (mm2.properties).")],
    clusters: Annotated[
        list[str] | None, typer.Option("--clusters", help="Run only the flows whose target is one of these.")
    ] = None,
    metrics_port: Annotated[
        int | None, typer.Option("--metrics-port", help="Serve Prometheus metrics on this port.")
    ] = None,
    watch_config: Annotated[
        bool, typer.Option("--watch-config", help="Re-read CONFIG when its content changes (as on SIGHUP).")
    ] = False,
) -> None:
    """Run the dedicated MirrorMaker driver for every enabled flow in CONFIG (SIGHUP re-reads CONFIG)."""
    require_file(config, "MirrorMaker config file")
    from mirror.cli import run_cmd

    run_cmd.run(config, clusters, metrics_port, watch_config=watch_config)


@app.command()
@guarded
def status(
    config: Annotated[Path, typer.Argument(help="MirrorMaker 2 properties file (mm2.properties).")],
    json_output: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Show connector/task states, replication lag and checkpoints per flow."""
    require_file(config, "MirrorMaker config file")
    from mirror.cli import status_cmd

    status_cmd.status(config, json_output)


@app.command()
@guarded
def demo(
    live_only: Annotated[
        bool, typer.Option("--live-only", help="Only live mirroring, with a live table (no Spark needed).")
    ] = False,
    duration: Annotated[
        float | None,
        typer.Option("--duration", help="With --live-only: stop after this many seconds (default: until Ctrl-C)."),
    ] = None,
) -> None:
    """The story of mm2 on two embedded clusters: backfill, live mirroring, verify, failover, reload; checked."""
    from mirror.cli import demo_cmd
    from mirror.cli.errors import StartupError

    if not live_only:
        if duration is not None:
            raise StartupError("--duration goes with --live-only (the story runs its steps to their end)")
        demo_cmd.story()
        return
    demo_cmd.demo(duration)


@app.command()
@guarded
def backfill(
    config: Annotated[Path, typer.Argument(help="MirrorMaker 2 properties file (mm2.properties).")],
    source: Annotated[str, typer.Option("--source", help="Cluster alias to copy from.")],
    target: Annotated[str, typer.Option("--target", help="Cluster alias to copy to.")],
    topics: Annotated[
        str | None, typer.Option("--topics", help="Only source topics that fully match this regex.")
    ] = None,
    master: Annotated[str | None, typer.Option("--master", help="Spark master URL (default local[*]).")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan (partitions, offset ranges, size); write nothing.")
    ] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON summary instead of a table.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Copy into target partitions that hold records the flow did not copy.")
    ] = False,
    release: Annotated[
        bool,
        typer.Option(
            "--release",
            help="Release the flow's backfill lease now (fencing its job): live tailing "
            "takes the topics back. Copies nothing.",
        ),
    ] = False,
    lease_ttl: Annotated[
        float,
        typer.Option(
            "--lease-ttl",
            min=3.0,
            help="Seconds the topics stay excluded from live tailing after "
            "the job stops renewing its lease (killed job).",
        ),
    ] = DEFAULT_LEASE_TTL_S,
    throughput_limit: Annotated[
        str | None,
        typer.Option(
            "--throughput-limit",
            help="Most bytes per second the job copies (record keys and "
            "values; 10MB, 512K...), divided between the Spark tasks running at once.",
        ),
    ] = None,
) -> None:
    """Bulk-copy a flow's existing partition backlogs with Spark, exactly once, handing over to live tailing."""
    require_file(config, "MirrorMaker config file")
    from mirror.cli import backfill_cmd
    from mirror.cli.errors import StartupError
    from mirror.connectors.throughput_cap import parse_bytes_per_second

    if release:
        backfill_cmd.release(config, source, target)
        return
    try:
        limit = parse_bytes_per_second(throughput_limit) if throughput_limit is not None else None
    except ValueError as e:
        raise StartupError(f"--throughput-limit: {e}") from None
    backfill_cmd.backfill(config, source, target, topics, master, dry_run, json_output, force, lease_ttl, limit)


@app.command("translate-offsets")
@guarded
def translate_offsets(
    config: Annotated[Path, typer.Argument(help="MirrorMaker 2 properties file (mm2.properties).")],
    source: Annotated[str, typer.Option("--source", help="Cluster alias the groups consumed from.")],
    target: Annotated[str, typer.Option("--target", help="Cluster alias the groups move to.")],
    groups: Annotated[
        str | None, typer.Option("--groups", help="Only groups whose id fully matches this regex.")
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Write the offsets (only to groups with no active members there).")
    ] = False,
    force: Annotated[bool, typer.Option("--force", help="With --apply, also move target groups backwards.")] = False,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document instead of a table.")] = False,
    master: Annotated[str | None, typer.Option("--master", help="Spark master URL (default local[*]).")] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds to wait for a cluster; a source that does not "
            "answer in time is failed over from its checkpoints on the target.",
        ),
    ] = 30.0,
) -> None:
    """Translate many consumer groups' offsets at once with Spark (failover); a dry run unless --apply."""
    require_file(config, "MirrorMaker config file")
    if force and not apply:
        fail("--force only makes sense with --apply")
    from mirror.cli import translate_cmd

    translate_cmd.translate_offsets(config, source, target, groups, apply, force, json_output, master, timeout)


@app.command()
@guarded
def verify(
    config: Annotated[Path, typer.Argument(help="MirrorMaker 2 properties file (mm2.properties).")],
    source: Annotated[str, typer.Option("--source", help="Cluster alias the flow copies from.")],
    target: Annotated[str, typer.Option("--target", help="Cluster alias the flow copies to.")],
    topics: Annotated[
        str | None, typer.Option("--topics", help="Only source topics whose name fully matches this regex.")
    ] = None,
    json_output: Annotated[bool, typer.Option("--json", help="Print one JSON document instead of a table.")] = False,
    master: Annotated[str | None, typer.Option("--master", help="Spark master URL (default local[*]).")] = None,
    chunk_records: Annotated[
        int, typer.Option("--chunk-records", min=1, help="Source records per Spark task.")
    ] = 100000,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="Seconds to wait for a cluster before giving up.")
    ] = 30.0,
) -> None:
    """Prove source and target hold the same records (Spark); exit 0 equal, 1 different, 2 error, 3 nothing compared."""
    require_file(config, "MirrorMaker config file")
    from mirror.cli import verify_cmd

    verify_cmd.verify(config, source, target, topics, json_output, master, chunk_records, timeout)


@connect_app.command("standalone")
@guarded
def connect_standalone(
    worker_config: Annotated[Path, typer.Argument(help="Worker properties file.")],
    connector_configs: Annotated[
        list[Path] | None, typer.Argument(help="Connector .properties or .json files.")
    ] = None,
    metrics_port: Annotated[
        int | None, typer.Option("--metrics-port", help="Serve Prometheus metrics on this port.")
    ] = None,
) -> None:
    """Run a standalone Connect worker (as connect-standalone.sh)."""
    require_file(worker_config, "worker config file")
    from mirror.cli.connect_cmd import run_standalone

    run_standalone(worker_config, list(connector_configs or []), metrics_port=metrics_port)


@connect_app.command("distributed")
@guarded
def connect_distributed(
    worker_config: Annotated[Path, typer.Argument(help="Worker properties file.")],
    metrics_port: Annotated[
        int | None, typer.Option("--metrics-port", help="Serve Prometheus metrics on this port.")
    ] = None,
) -> None:
    """Run a distributed Connect worker (as connect-distributed.sh)."""
    require_file(worker_config, "worker config file")
    from mirror.cli.distributed_cmd import run_distributed

    run_distributed(worker_config, metrics_port=metrics_port)


def main(argv: list[str] | None = None) -> None:
    """The ``mm2`` console script: typer's parsing, but a usage mistake is one line, not a box."""
    excepthook_to_stderr()
    try:
        result = app(args=argv, prog_name="mm2", standalone_mode=False)
    except typer.Abort:
        print("mm2: aborted", file=sys.stderr)
        sys.exit(1)
    except typer.TyperException as e:  # usage errors: missing argument, unknown option or command...
        format_message = getattr(e, "format_message", None)
        if format_message is None:
            raise
        ctx = getattr(e, "ctx", None)
        command = ctx.command_path if ctx is not None else "mm2"
        print(f"{command}: {format_message()} (see '{command} --help')", file=sys.stderr)
        sys.exit(e.exit_code)
    sys.exit(result if isinstance(result, int) else 0)


if __name__ == "__main__":
    main()
