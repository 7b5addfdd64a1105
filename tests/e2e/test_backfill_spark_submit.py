"""``spark-submit`` runs ``mm2 backfill`` exactly as the README documents it.

``$SPARK_HOME/bin/spark-submit`` (SPARK_HOME: the pyspark package's folder, which carries Spark's
launcher) is given the file ``python -m mirror.cli.spark_submit --path`` prints and mm2's own command
line; the master is spark-submit's (local mode here), not mm2's default.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster
from tests.e2e.mm2_helpers import mirrored_identically, mm2_properties, write_properties
from tests.integration.mirror.jobs.test_backfill_job import produce_backlog


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


@pytest.mark.e2e
@pytest.mark.spark
def test_spark_submit_as_the_readme_documents_it_runs_the_backfill(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path
) -> None:
    a, b = two_clusters
    a.create_topic("submitted", partitions=3)
    produce_backlog(a, "submitted", 3, 2_000)
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics="submitted")
    )
    entry = subprocess.run(
        [sys.executable, "-m", "mirror.cli.spark_submit", "--path"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.strip()
    env = {**os.environ, "SPARK_HOME": str(spark_home()), "PYSPARK_PYTHON": sys.executable, "MM2_LOG_LEVEL": "WARNING"}
    run = subprocess.run(
        [
            str(spark_home() / "bin" / "spark-submit"),
            "--master",
            "local[3]",
            entry,
            "backfill",
            str(config),
            "--source",
            "A",
            "--target",
            "B",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    totals = json.loads(run.stdout)["totals"]
    assert (totals["records_copied"], totals["tasks_retried"]) == (6_000, 0), totals
    assert totals["task_slots"] == 3  # spark-submit's --master local[3], not mm2's default local[*]
    assert mirrored_identically(a, "submitted", b, "A.submitted")
