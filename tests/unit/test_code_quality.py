"""ruff and mypy are part of the suite, so the one test command also gates style and types."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_clean() -> None:
    result = _run("ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_connect_core_does_not_import_mirror() -> None:
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "connect_core").rglob("*.py")
        if any(
            line.lstrip().startswith(("import mirror", "from mirror"))
            for line in p.read_text(encoding="utf-8").splitlines()
        )
    ]
    assert offenders == [], f"connect_core must not import mirror: {offenders}"
