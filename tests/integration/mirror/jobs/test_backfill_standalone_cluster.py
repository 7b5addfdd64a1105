"""The same backfill on a real Spark standalone cluster: a master and one worker started from pyspark's
own classes (``spark-class ...Master`` / ``...Worker``), the job given ``--master spark://127.0.0.1:PORT``.
Executors are separate JVMs whose Python workers run an interpreter that has the project's dependencies
but not the project (``python -S`` with only the environment's site-packages on its path, so the
editable install's ``.pth`` hook is never read): the code reaches them only through the job's own
``addPyFile``, and the test fails if that shipping breaks. The worker declares 4 cores: the job waits
for them (not 2 tasks from a cluster whose executors had not registered yet) and runs 4 tasks at once.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import sysconfig
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, wait_for
from tests.e2e.mm2_helpers import mirrored_identically, mm2_properties, write_properties
from tests.integration.mirror.jobs.test_backfill_job import produce_backlog

pytestmark = [pytest.mark.integration, pytest.mark.spark]

NameFn = Callable[[str], str]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent


def python_without_the_project(directory: Path) -> Path:
    """An interpreter with the test environment's packages (confluent-kafka, pyspark...) but not mm2 itself:
    ``-S`` skips the site module, so no ``.pth`` file (the editable install's hook) is read, and only the
    site-packages directory is put on the path. Checked both ways before it is used."""
    site_packages = sysconfig.get_paths()["purelib"]
    base = getattr(sys, "_base_executable", sys.executable)
    script = directory / "bare-python"
    script.write_text(f'#!/bin/sh\nPYTHONPATH="${{PYTHONPATH:+$PYTHONPATH:}}{site_packages}" exec {base} -S "$@"\n')
    script.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    has_deps = subprocess.run(
        [str(script), "-c", "import confluent_kafka, pyspark"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert has_deps.returncode == 0, has_deps.stderr
    lacks_project = subprocess.run(
        [str(script), "-c", "import mirror"], cwd=directory, env=env, capture_output=True, text=True, timeout=60
    )
    assert "No module named 'mirror'" in lacks_project.stderr, lacks_project.stderr
    return script


class StandaloneCluster:
    """One master and one worker of ``cores`` cores, both on loopback, logs in ``log_dir``; executors run
    ``python`` (their Python workers)."""

    def __init__(self, log_dir: Path, python: Path, cores: int = 4) -> None:
        self.port, self.ui_port, self.worker_ui = free_port(), free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        self.python = python
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": "127.0.0.1",
            "SPARK_LOG_DIR": str(log_dir),
            "PYSPARK_PYTHON": str(python),
        }
        spark_class = str(spark_home() / "bin" / "spark-class")
        self.logs = [log_dir / "master.log", log_dir / "worker.log"]
        self.procs = [
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.master.Master",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--webui-port",
                    str(self.ui_port),
                ],
                env=env,
                stdout=self.logs[0].open("wb"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            ),
        ]
        wait_for(self._master_up, 90, 0.5, "the Spark master to listen")
        self.procs.append(
            subprocess.Popen(
                [
                    spark_class,
                    "org.apache.spark.deploy.worker.Worker",
                    self.url,
                    "--host",
                    "127.0.0.1",
                    "--cores",
                    str(cores),
                    "--memory",
                    "1g",
                    "--webui-port",
                    str(self.worker_ui),
                ],
                env=env,
                stdout=self.logs[1].open("wb"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        )
        wait_for(self._worker_alive, 90, 0.5, "the Spark worker to register with the master")

    def _master_up(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def _worker_alive(self) -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.ui_port}/json/", timeout=2) as answer:
                state = json.load(answer)
        except OSError:
            return False
        return any(w.get("state") == "ALIVE" for w in state.get("workers", []))

    def stop(self) -> None:
        for proc in reversed(self.procs):
            proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)

    def log_tail(self) -> str:
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in self.logs if p.exists())


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[StandaloneCluster]:
    cluster = StandaloneCluster(tmp_path, python_without_the_project(tmp_path))
    try:
        yield cluster
    finally:
        cluster.stop()


def test_backfill_runs_on_a_standalone_spark_cluster(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, standalone: StandaloneCluster, tmp_path: Path
) -> None:
    """8 partitions on a worker of 4 cores: 4 tasks, all running at once, with code shipped by the job."""
    a, b = two_clusters
    topic = unique_name("cluster-orders")
    a.create_topic(topic, partitions=8)
    produce_backlog(a, topic, 8, 10_000)
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"]))
    conf_dir = tmp_path / "spark-conf"  # where the master's web UI is, as an operator's spark-defaults.conf says
    conf_dir.mkdir()
    (conf_dir / "spark-defaults.conf").write_text(f"spark.master.ui.port {standalone.ui_port}\n")
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
        "SPARK_CONF_DIR": str(conf_dir),
        "PYSPARK_PYTHON": str(standalone.python),
    }
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mirror",
            "backfill",
            str(config),
            "--source",
            "A",
            "--target",
            "B",
            "--topics",
            topic,
            "--master",
            standalone.url,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-3000:] + standalone.log_tail()
    report = json.loads(run.stdout)
    totals = report["totals"]
    assert totals["records_copied"] == 80_000
    assert (totals["task_slots"], totals["tasks"], totals["tasks_retried"]) == (4, 4, 0), totals
    assert totals["max_concurrent_tasks"] == 4, report["tasks"]
    assert mirrored_identically(a, topic, b, f"A.{topic}")
