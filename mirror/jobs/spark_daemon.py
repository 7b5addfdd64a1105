"""Spark's Python daemon for local executors, importing PySpark from its installed package.

Why it exists: Spark starts every executor's Python daemon (and so every worker it forks) with its own
``python/lib/pyspark.zip`` and py4j zip first on the path. Python compiles modules it imports from a zip
every time and never caches their bytecode, so each job's daemon spent about a CPU-second compiling PySpark
and each worker a fifth of one more before a task ran (measured: 1.3 s against 0.2-0.35 s for the daemon's
imports). Where those zips are the ones inside the installed ``pyspark`` package (a pip installation: the
same code, its bytecode cached) and hold what is installed, they are dropped from the path and PySpark's own
daemon runs unchanged; any other Spark installation keeps its zips. :func:`mirror.jobs.spark.session_conf`
selects this module only for local masters, whose executors run this interpreter with this project installed.
"""

from __future__ import annotations

import runpy
import sys
from importlib.machinery import PathFinder
from importlib.metadata import distributions
from pathlib import Path

#: the module Spark runs otherwise (``spark.python.daemon.module``'s default)
SPARK_DAEMON = "pyspark.daemon"


def _is_zip(entry: str) -> bool:
    return entry.endswith(".zip")


def installed_package(name: str, path: list[str]) -> Path | None:
    """The directory of package ``name`` found on ``path`` outside zip files (None: not there)."""
    spec = PathFinder.find_spec(name, [entry for entry in path if not _is_zip(entry)])
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).resolve()


def installed_version(distribution: str, path: list[str]) -> str | None:
    """The version of ``distribution`` installed on ``path`` outside zip files (None: not there)."""
    found = next(iter(distributions(name=distribution, path=[e for e in path if not _is_zip(e)])), None)
    return None if found is None else found.version


def without_bundled_zips(path: list[str]) -> list[str]:
    """``path`` without the zips of the installed ``pyspark`` package's ``python/lib`` directory whose code is
    installed too: PySpark's own (the package itself), py4j's when the installed py4j is the zip's version."""
    package = installed_package("pyspark", path)
    if package is None:
        return path
    bundled = (package / "python" / "lib").resolve()
    py4j = installed_version("py4j", path) if installed_package("py4j", path) is not None else None
    installed = {"pyspark.zip"} | ({f"py4j-{py4j}-src.zip"} if py4j else set())
    return [
        entry
        for entry in path
        if not (_is_zip(entry) and Path(entry).name in installed and Path(entry).resolve().parent == bundled)
    ]


def main() -> None:
    """Runs PySpark's daemon as Spark would (its worker module stays the argument Spark passed)."""
    sys.path[:] = without_bundled_zips(sys.path)
    runpy.run_module(SPARK_DAEMON, run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
