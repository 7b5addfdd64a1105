"""A local job's Python workers import PySpark and py4j from their installed packages, not from the zips Spark
puts first on their path (whose modules Python compiles again in every daemon and worker), and run tasks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest

from mirror.jobs.spark import run_slices, spark_context

pytestmark = [pytest.mark.integration, pytest.mark.spark]


def test_local_workers_run_pyspark_from_its_installed_package() -> None:
    import py4j
    import pyspark

    def where(numbers: Iterable[int]) -> Iterator[tuple[int, str, str, bool]]:
        import sys

        import py4j
        import pyspark

        zips = any(entry.endswith(("pyspark.zip", "-src.zip")) for entry in sys.path)
        yield sum(numbers), pyspark.__file__ or "", py4j.__file__ or "", zips

    with spark_context("mm2-daemon-test", "local[2]") as sc:
        assert sc.getConf().get("spark.python.daemon.module") == "mirror.jobs.spark_daemon"
        results = run_slices(sc, [1, 2, 3], where, "probe")
    assert sorted(total for total, *_ in results) == [1, 2, 3], "every task ran"
    for _, spark_file, py4j_file, zips in results:
        assert (spark_file, py4j_file) == (pyspark.__file__, py4j.__file__), "the driver's installed packages"
        assert not zips, "the bundled zips are off the workers' path"
