"""``mm2 demo [--duration S]``: two embedded clusters, sample traffic, MirrorMaker A->B, a checked result.

The terminal shows the demo's story only; every log line (driver, runtime, Kafka clients) goes to
``mm2.log`` in a fresh work directory whose path is printed. The last line is the checked result;
exit 0 when A and B hold the same records per partition, 1 when not.
"""

from __future__ import annotations

import signal
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType

import typer

from mirror.cli.errors import StartupError
from mirror.cli.logging_setup import log_to_file


def _self_command() -> str:
    """How the user ran mm2, so the printed ``status`` command can be pasted as is."""
    argv0 = sys.argv[0] if sys.argv else ""
    return argv0 if Path(argv0).name == "mm2" else f"{sys.executable} -m mirror"


def demo(duration: float | None) -> None:
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
