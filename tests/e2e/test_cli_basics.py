"""The ``mm2`` command's shell: help, version, and one-line errors for user mistakes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUBCOMMANDS = ("run", "status", "demo", "backfill", "translate-offsets", "connect")


def mm2(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mirror", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_help_lists_every_subcommand() -> None:
    result = mm2("--help")
    assert result.returncode == 0, result.stderr
    for name in SUBCOMMANDS:
        assert name in result.stdout, f"{name} missing from mm2 --help"


def test_connect_help_lists_both_modes() -> None:
    result = mm2("connect", "--help")
    assert result.returncode == 0
    assert "standalone" in result.stdout and "distributed" in result.stdout


def test_version() -> None:
    result = mm2("--version")
    assert result.returncode == 0
    assert result.stdout.startswith("mm2 ")


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one line, got: {result.stderr!r}"
    assert "Traceback" not in result.stderr
    return lines[0]


def test_run_with_missing_file_prints_one_line() -> None:
    line = one_line_error(mm2("run", "/nonexistent.properties"))
    assert "/nonexistent.properties" in line


def test_status_with_missing_file_prints_one_line() -> None:
    line = one_line_error(mm2("status", "/nonexistent.properties"))
    assert "/nonexistent.properties" in line


def test_bad_log_level_prints_one_line(tmp_path: Path) -> None:
    line = one_line_error(mm2("--log-level", "LOUD", "run", "/nonexistent.properties"))
    assert "--log-level" in line


def test_malformed_properties_named_with_line(tmp_path: Path) -> None:
    bad = tmp_path / "mm2.properties"
    bad.write_text("clusters = A, B\nA.bootstrap.servers = \\u12G4\n")
    line = one_line_error(mm2("run", str(bad)))
    assert "line 2" in line and "mm2.properties" in line


def test_missing_clusters_key_named(tmp_path: Path) -> None:
    cfg = tmp_path / "mm2.properties"
    cfg.write_text("A.bootstrap.servers = localhost:1\n")
    line = one_line_error(mm2("run", str(cfg)))
    assert "clusters" in line


def test_usage_mistakes_print_one_line_naming_the_problem() -> None:
    missing = mm2("run")
    assert missing.returncode == 2
    assert one_line_error(missing) == "mm2 run: Missing argument 'config'. (see 'mm2 run --help')"
    assert "--bogus" in one_line_error(mm2("run", "--bogus", "x.properties"))
    assert "'nonsense'" in one_line_error(mm2("nonsense"))
    assert "'worker_config'" in one_line_error(mm2("connect", "standalone"))
