"""ruff (lint and format) and mypy are part of the suite, so the one test command also gates style and types."""

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


def test_one_formatter_ruff_format() -> None:
    """Every Python file is as ``ruff format`` writes it (run it before committing)."""
    result = _run("ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_import_contracts_kept() -> None:
    """pyproject.toml's [tool.importlinter] contracts: connect_core never imports mirror; mirror's layers
    (client <- connectors <- driver <- jobs <- cli) import only downward, so nothing imports the cli."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_no_two_modules_import_each_other() -> None:
    """No import cycles, also through ``if TYPE_CHECKING:`` imports: each module reads one way."""
    import grimp

    graph = grimp.build_graph("connect_core", "mirror")
    cycles = sorted(
        {
            tuple(sorted((module, imported)))
            for module in graph.modules
            for imported in graph.find_modules_directly_imported_by(module)
            if graph.find_shortest_chain(importer=imported, imported=module)
        }
    )
    assert cycles == []
