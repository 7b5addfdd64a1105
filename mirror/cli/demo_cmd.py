"""``mm2 demo [--duration S]``: two embedded clusters, sample traffic, MirrorMaker A->B, live output."""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

import typer

from mirror.cli.errors import StartupError


def demo(duration: float | None) -> None:
    from connect_core.embedded import BrokerStartError
    from mirror.driver.demo import run_demo

    if duration is not None and duration <= 0:
        raise StartupError("--duration must be a positive number of seconds")
    stop = threading.Event()

    def handle(_signum: int, _frame: FrameType | None) -> None:
        if stop.is_set():
            sys.exit(130)
        typer.echo("Stopping the demo ...")
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        run_demo(duration, emit=lambda line: typer.echo(line), should_stop=stop.is_set)
    except BrokerStartError as e:
        raise StartupError(f"cannot start the embedded clusters: {e}") from e
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
