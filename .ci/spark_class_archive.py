"""Writes a class-data-sharing archive of what a Spark job's JVM loads, for the suite's Spark JVMs to map.

About forty Spark JVMs start in one run of the suite, each loading and verifying the same ten thousand
classes: a third of each start's CPU, and the suite is CPU-bound on two cores. JDK 13+ can dump the classes
a JVM loaded when it exits (``-XX:ArchiveClassesAtExit``) and later JVMs map that archive
(``-XX:SharedArchiveFile``, which ``.ci/run`` passes through ``SPARK_SUBMIT_OPTS``). Nothing a job does
changes: a JVM that cannot use the archive (another JDK, another classpath) loads its classes as usual.

The archive is written under a temporary name and renamed once the JVM has exited, so a JVM starting
meanwhile finds either no archive or a whole one. Usage: ``python .ci/spark_class_archive.py ARCHIVE``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

QUIET = "-Xlog:cds=off -Xlog:cds+dynamic=off"  # a JVM that cannot use the archive says nothing of it


def _count(rows: Iterable[int]) -> Iterator[int]:
    yield sum(1 for _ in rows)


def main(archive: Path) -> int:
    partial = archive.with_name(f"{archive.name}.{os.getpid()}.partial")
    os.environ["SPARK_SUBMIT_OPTS"] = f"-XX:ArchiveClassesAtExit={partial} {QUIET}"
    from mirror.jobs.spark import run_slices, spark_context

    with spark_context("mm2-class-archive", "local[2]") as sc:
        gateway = sc._gateway
        assert gateway is not None  # a local context launched its JVM
        run_slices(sc, [0, 1], _count, "class archive")
    gateway.shutdown()
    proc = gateway.proc  # the JVM writes the archive as it exits, when its stdin closes
    if proc.stdin is not None:
        proc.stdin.close()
    proc.wait(120)
    if not partial.exists():
        return 1
    partial.replace(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
