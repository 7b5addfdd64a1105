"""The CLI shell: ``mm2 --help`` lists each subcommand as a command (not just somewhere in the
text), and user mistakes are one line on stderr with a non-zero exit, never a traceback."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

SUBCOMMANDS = {"run", "status", "demo", "backfill", "translate-offsets", "verify", "connect"}


def mm2(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1", "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "mirror", *args], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL, env=env)  # fmt: skip


def command_names(help_text: str) -> set[str]:
    """The first word of each row of the help's Commands section (rich box or plain layout)."""
    names: set[str] = set()
    in_commands = False
    for line in help_text.splitlines():
        stripped = line.strip().strip("│|").strip()
        if re.match(r"^[╭+\-─ ]*Commands", stripped) or stripped == "Commands:":
            in_commands = True
            continue
        if in_commands:
            if stripped.startswith(("╰", "╭")) or (not stripped and names):
                break
            m = re.match(r"^([a-z][a-z0-9-]*)\s{2,}\S", stripped)
            if m:
                names.add(m.group(1))
    return names


def test_help_lists_exactly_the_subcommands_as_commands() -> None:
    result = mm2("--help")
    assert result.returncode == 0, result.stderr
    assert command_names(result.stdout) == SUBCOMMANDS, result.stdout


@pytest.mark.parametrize(
    "args",
    [
        ("run", "/nonexistent.properties"),
        ("status", "/nonexistent.properties"),
        ("connect", "standalone", "/nonexistent.properties"),
        ("--log-level", "LOUD", "status", "/nonexistent.properties"),
    ],
)
def test_user_mistakes_are_one_line_and_non_zero(args: tuple[str, ...], tmp_path: Path) -> None:
    result = mm2(*args)
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert "Traceback" not in result.stderr
    assert len(lines) == 1, result.stderr
    assert ("--log-level" if "LOUD" in args else args[-1]) in lines[0]


def test_bad_value_in_mm2_properties_is_one_line_naming_the_key(tmp_path: Path) -> None:
    cfg = tmp_path / "mm2.properties"
    cfg.write_text("clusters = A, B\nA.bootstrap.servers = localhost:1\nB.bootstrap.servers = localhost:2\n"
                   "A->B.enabled = true\nA->B.replication.factor = lots\n")  # fmt: skip
    result = mm2("run", str(cfg))
    assert result.returncode != 0
    lines = [ln for ln in result.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
    assert "replication.factor" in lines[0] and "lots" in lines[0]
