"""``mm2 demo``: the whole story on two embedded clusters (backfill, live mirroring, verify, failover,
reload), each step checked; ``mm2 demo --live-only [--duration S]``: live mirroring with a live table.

The terminal shows the story only; every log line (driver, runtime, Kafka clients, Spark) goes to ``mm2.log``
in a fresh work directory whose path is printed. The last line is the checked result; exit 0 when every
check held, 1 when not.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

import typer

from mirror.cli.errors import StartupError
from mirror.cli.logging_setup import log_to_file


def _self_command() -> str:
    """How the user ran mm2, so the printed ``status`` command can be pasted as is."""
    argv0 = sys.argv[0] if sys.argv else ""
    return argv0 if Path(argv0).name == "mm2" else f"{sys.executable} -m mirror"


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """What child processes (Spark's JVM) and C libraries write on stderr goes to the log too."""
    sys.stderr.flush()
    saved = os.dup(2)
    with open(path, "ab") as log:
        os.dup2(log.fileno(), 2)
    try:
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)


def story() -> None:
    """The default demo: each step of mm2's story, checked."""
    from embedded_kafka import BrokerStartError
    from mirror.cli.demo_story import Story
    from mirror.jobs.spark import SparkUnavailableError, check_spark_runtime

    try:
        check_spark_runtime()
    except SparkUnavailableError as e:
        raise StartupError(
            f"{e} (the demo's backfill, verify and failover run on Spark; `mm2 demo --live-only` needs no Spark)"
        ) from None
    workdir = Path(tempfile.mkdtemp(prefix="mm2-demo-"))
    log_path = workdir / "mm2.log"
    log_to_file(log_path)

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    say(f"mm2's story on this machine, step by step (logs: {log_path}).")
    started = time.monotonic()
    try:
        with _stderr_to(log_path):
            outcome = Story(workdir, say).run()
    except BrokerStartError as e:
        raise StartupError(f"cannot start the embedded clusters: {e}") from e
    checked = ", ".join(step.name for step in outcome.steps if step.ok)
    if outcome.ok:
        say(
            f"Checked in {time.monotonic() - started:.0f} s: {checked}. B is an exact, verified copy of A and the "
            "consumer group resumes on B where it stopped on A."
        )
        return
    failed = next((step.name for step in outcome.steps if not step.ok), "the story")
    say(f"NOT checked: {failed} failed (see above and {log_path}).")
    raise typer.Exit(1)


def demo(duration: float | None) -> None:
    """``--live-only``: live mirroring with a table of records produced and mirrored per topic."""
    from embedded_kafka import BrokerStartError
    from mirror.cli.demo_view import make_view
    from mirror.driver.demo import run_demo

    if duration is not None and duration <= 0:
        raise StartupError("--duration must be a positive number of seconds")
    workdir = Path(tempfile.mkdtemp(prefix="mm2-demo-"))
    log_path = workdir / "mm2.log"
    log_to_file(log_path)
    view = make_view(_self_command(), str(log_path))
    stop = threading.Event()

    def handle(_signum: int, _frame: FrameType | None) -> None:
        # Only a flag: the demo notices it within half a second and tells what it does next (printing
        # from here could interrupt the live table in the middle of a redraw).
        if stop.is_set():
            sys.exit(130)
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        outcome = run_demo(duration, view, workdir, should_stop=stop.is_set)
    except BrokerStartError as e:
        raise StartupError(f"cannot start the embedded clusters: {e}") from e
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
    if outcome is None:
        view.note("Stopped before MirrorMaker started mirroring.")
        return
    if not outcome.ok:
        raise typer.Exit(1)
