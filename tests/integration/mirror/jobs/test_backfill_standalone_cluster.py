"""The same backfill on a real Spark standalone cluster: a master and one worker started from pyspark's
own classes (``spark-class ...Master`` / ``...Worker``), the job given ``--master spark://127.0.0.1:PORT``.
Executors are separate JVMs with their own Python workers: the project's code reaches them through the
job's own ``addPyFile``, not through this test's interpreter.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from connect_core.embedded import KafkaCluster, wait_for
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


class StandaloneCluster:
    """One master and one worker, both on loopback, logs in ``log_dir``."""

    def __init__(self, log_dir: Path) -> None:
        self.port, self.ui_port, self.worker_ui = free_port(), free_port(), free_port()
        self.url = f"spark://127.0.0.1:{self.port}"
        env = {**os.environ, "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
               "SPARK_LOG_DIR": str(log_dir), "PYSPARK_PYTHON": sys.executable}
        spark_class = str(spark_home() / "bin" / "spark-class")
        self.logs = [log_dir / "master.log", log_dir / "worker.log"]
        self.procs = [
            subprocess.Popen([spark_class, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                              "--port", str(self.port), "--webui-port", str(self.ui_port)],
                             env=env, stdout=self.logs[0].open("wb"), stderr=subprocess.STDOUT,
                             start_new_session=True),
        ]
        wait_for(self._master_up, 90, 0.5, "the Spark master to listen")
        self.procs.append(
            subprocess.Popen([spark_class, "org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                              "--cores", "2", "--memory", "1g", "--webui-port", str(self.worker_ui)],
                             env=env, stdout=self.logs[1].open("wb"), stderr=subprocess.STDOUT,
                             start_new_session=True))
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
    cluster = StandaloneCluster(tmp_path)
    try:
        yield cluster
    finally:
        cluster.stop()


def test_backfill_runs_on_a_standalone_spark_cluster(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, standalone: StandaloneCluster,
    tmp_path: Path
) -> None:
    a, b = two_clusters
    topic = unique_name("cluster-orders")
    a.create_topic(topic, partitions=4)
    produce_backlog(a, topic, 4, 5_000)
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"]))
    run = subprocess.run([sys.executable, "-m", "mirror", "backfill", str(config), "--source", "A", "--target", "B",
                          "--topics", topic, "--master", standalone.url, "--json"],
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr[-3000:] + standalone.log_tail()
    assert json.loads(run.stdout)["totals"]["records_copied"] == 20_000
    assert mirrored_identically(a, topic, b, f"A.{topic}")
