"""How ``mm2 demo`` tells its story on the terminal: a live table on a TTY, a line every few seconds otherwise.

Both views print the same introduction (clusters, topics, where to look while it runs) and the
same closing line; only the progress differs (rich's live table needs a terminal; in a pipe or a
log file a short line every :data:`PLAIN_EVERY_S` seconds reads better).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TextIO

from mirror.driver.demo import DemoOutcome, DemoSetup
from mirror.driver.demo_traffic import TopicRow

PLAIN_EVERY_S = 5.0


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f} ms"


def result_line(outcome: DemoOutcome) -> str:
    """The closing line: the checked counts, and what differs if anything does."""
    counts = f"{outcome.produced} produced, {outcome.mirrored} mirrored"
    if outcome.ok:
        return f"{counts}, identical per partition (key, value, headers, timestamp, order)."
    problems = list(outcome.differences)
    if not outcome.drained:
        problems.insert(0, "B did not receive every record in time")
    return f"{counts}: NOT identical: {'; '.join(problems)}"


class _Story:
    """The lines both views share."""

    def __init__(self, echo: Callable[[str], None], self_command: str, log_path: str) -> None:
        self.echo = echo
        self.self_command = self_command
        self.log_path = log_path

    def clusters_started(self, source: str, target: str) -> None:
        self.echo(f"Started two Kafka clusters on this machine: A (source) at {source}, B (target) at {target}.")

    def topics_created(self, topics: dict[str, int], group: str, rate: float) -> None:
        names = ", ".join(f"{t} ({n} partitions)" for t, n in topics.items())
        self.echo(
            f"Created topics on A: {names}; producing {rate:g} records/s to them; consumer group {group} "
            "commits its progress on A."
        )

    def mirroring(self, setup: DemoSetup) -> None:
        remotes = ", ".join(setup.remote_topics.values())
        self.echo(f"MirrorMaker is mirroring A->B: records into {remotes} on B, the group's offsets translated to B.")
        self.echo("While it runs, look at:")
        self.echo(f"  REST API  {setup.rest_url}")
        self.echo(f"  metrics   {setup.metrics_url}")
        self.echo(f"  status    {self.self_command} status {setup.config_path}")
        self.echo(f"  logs      {self.log_path}")

    def note(self, line: str) -> None:
        self.echo(line)

    def result(self, outcome: DemoOutcome) -> None:
        self.echo(result_line(outcome))


class PlainView(_Story):
    """Progress as one line every few seconds (pipes, CI logs, tests)."""

    def __init__(self, echo: Callable[[str], None], self_command: str, log_path: str) -> None:
        super().__init__(echo, self_command, log_path)
        self._next = PLAIN_EVERY_S

    def progress(self, elapsed_s: float, rows: list[TopicRow]) -> None:
        if elapsed_s < self._next:
            return
        self._next = elapsed_s + PLAIN_EVERY_S
        parts = [
            f"{r.topic} {r.mirrored}/{r.produced} mirrored (lag {r.lag}, latency p50 {_ms(r.latency_p50_ms)})"
            for r in rows
        ]
        self.echo(f"  {elapsed_s:4.0f}s  " + " | ".join(parts))


class LiveView(_Story):
    """Progress as a live table, redrawn in place (a terminal)."""

    def __init__(self, stream: TextIO, self_command: str, log_path: str) -> None:
        from rich.console import Console

        self._console = Console(file=stream, highlight=False)
        super().__init__(lambda line: self._console.print(line, markup=False, soft_wrap=True), self_command, log_path)
        self._live: Any = None

    def _table(self, elapsed_s: float, rows: list[TopicRow]) -> Any:
        from rich.table import Table

        table = Table(title=f"A->B after {elapsed_s:.0f} s", title_justify="left")
        for name in ("topic on A", "remote topic on B", "produced", "mirrored", "lag", "latency p50", "max"):
            table.add_column(name, justify="left" if "topic" in name else "right")
        for r in rows:
            table.add_row(
                r.topic,
                r.remote_topic,
                str(r.produced),
                str(r.mirrored),
                str(r.lag),
                _ms(r.latency_p50_ms),
                _ms(r.latency_max_ms),
            )
        return table

    def progress(self, elapsed_s: float, rows: list[TopicRow]) -> None:
        from rich.live import Live

        table = self._table(elapsed_s, rows)
        if self._live is None:
            self._live = Live(table, console=self._console, refresh_per_second=4, transient=False)
            self._live.start()
        else:
            self._live.update(table)

    def _end_live(self) -> None:
        if self._live is not None:
            self._live.stop()  # the last table stays on screen
            self._live = None

    def note(self, line: str) -> None:
        self._end_live()
        super().note(line)

    def result(self, outcome: DemoOutcome) -> None:
        self._end_live()
        super().result(outcome)


def make_view(self_command: str, log_path: str, stream: TextIO | None = None) -> PlainView | LiveView:
    """A live table on a terminal, plain lines anywhere else."""
    out = stream or sys.stdout
    if out.isatty():
        return LiveView(out, self_command, log_path)

    def echo(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    return PlainView(echo, self_command, log_path)
