"""The one place that starts Spark for mm2's batch jobs.

Why it exists: every job needs the same things from Spark on a small or a big cluster - executors that
run this interpreter (they import confluent-kafka), the project's own code shipped to executors without
a manual copy step, quiet JVM logs, loopback binding when the master is local, and a clear one-line
error when the master cannot be reached (Spark itself retries for a minute and then prints a stack).

The jobs use Spark's core only (``parallelize``/``mapPartitions``, broadcasts, accumulators), so a job starts a
SparkContext, not a SparkSession: the session's SQL side cost its JVM about 2.7 more CPU-seconds at every start
(measured: a local start and a four-task job, 4.1 against 6.9 JVM CPU-seconds). Callers of the jobs' Python API
may still hand in a SparkSession of their own (a notebook's): :func:`context_of` takes either.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import socket
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlparse

from connect_core.api.errors import ConnectError

if TYPE_CHECKING:  # pyspark is the 'spark' extra: imported only when a job really runs
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)
T = TypeVar("T")
R = TypeVar("R")
DEFAULT_MASTER = "local[*]"
TASK_MAX_FAILURES = 4
#: set by Spark when spark-submit launched this interpreter as an application's driver
SUBMITTED_MARKER = "PYSPARK_GATEWAY_PORT"
#: set (for local executors) to the file Spark's JVM logs go to: executor-side Python logs there too
SPARK_LOG_ENV = "MM2_SPARK_LOG"
_PACKAGES = ("connect_core", "mirror")
_LOG4J = Path(__file__).with_name("log4j2.properties")
#: the Python daemon local executors run (:mod:`mirror.jobs.spark_daemon` says why)
DAEMON_MODULE = "mirror.jobs.spark_daemon"
_log_file: Path | None = None


class SparkUnavailableError(ConnectError):
    """The Spark master cannot be reached or PySpark is missing: one line for the user."""


def master_address(master: str) -> tuple[str, int] | None:
    """(host, port) of a standalone master URL ``spark://host:port``; None for local masters and others."""
    if not master.startswith("spark://"):
        return None
    first = master[len("spark://") :].split(",")[0]
    parsed = urlparse(f"//{first}")
    if not parsed.hostname or parsed.port is None:
        raise SparkUnavailableError(f"Spark master URL {master!r} has no host:port")
    return parsed.hostname, parsed.port


def check_master_reachable(master: str, timeout_s: float = 5.0) -> None:
    """Fail fast with one line when a standalone master does not accept connections."""
    address = master_address(master)
    if address is None:
        return
    try:
        with socket.create_connection(address, timeout=timeout_s):
            pass
    except OSError as exc:
        raise SparkUnavailableError(f"Spark master {master} is unreachable: {exc.strerror or exc}") from None


def find_java(environ: Mapping[str, str] | None = None) -> str | None:
    """The java Spark's launcher would run: ``$JAVA_HOME/bin/java`` when JAVA_HOME is set, else ``java`` on PATH."""
    env = os.environ if environ is None else environ
    home = env.get("JAVA_HOME", "").strip()
    if home:
        candidate = Path(home) / "bin" / "java"
        return str(candidate) if candidate.is_file() and os.access(candidate, os.X_OK) else None
    return shutil.which("java", path=env.get("PATH", os.defpath))


def check_spark_runtime(environ: Mapping[str, str] | None = None) -> None:
    """PySpark importable and a java to start its JVM, checked before a job writes anything: without them
    Spark fails late, after topics were created, with a Java launcher error that reads as internal."""
    env = os.environ if environ is None else environ
    if SUBMITTED_MARKER in env:
        return  # spark-submit started this interpreter: its JVM is already up
    if importlib.util.find_spec("pyspark") is None:
        raise SparkUnavailableError("PySpark is not installed: pip install 'mm2[spark]'")
    if find_java(env) is None:
        home = env.get("JAVA_HOME", "").strip()
        where = f"JAVA_HOME={home} has no bin/java" if home else "no java on PATH and JAVA_HOME is not set"
        raise SparkUnavailableError(f"Spark needs Java (17 or later) to run the job: {where}")


def package_zip(directory: Path) -> Path:
    """Zip of ``connect_core`` and ``mirror`` as imported here, for ``addPyFile`` (executors on other hosts)."""
    target = directory / "mm2-code.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in _PACKAGES:
            package_dir = Path(__import__(name).__file__ or "").parent
            for path in sorted(package_dir.rglob("*")):
                if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                    archive.write(path, Path(name) / path.relative_to(package_dir))
    return target


def _local_master(master: str) -> bool:
    return master.startswith("local")


_LOCAL_THREADS = re.compile(r"^local(?:\[([^,\]]+)\])?$")


def with_task_retries(master: str, max_failures: int = TASK_MAX_FAILURES) -> str:
    """``local[N]`` as ``local[N,F]``: local mode ignores spark.task.maxFailures and never retries a task
    otherwise, yet a retried unit resuming from its last commit is what the jobs promise everywhere."""
    match = _LOCAL_THREADS.match(master.strip())
    if match is None:
        return master
    return f"local[{match.group(1) or 1},{max_failures}]"


def executor_python(environ: Mapping[str, str] | None = None) -> str:
    """The interpreter executors run: ``PYSPARK_PYTHON`` as Spark reads it, else this one."""
    env = os.environ if environ is None else environ
    return env.get("PYSPARK_PYTHON", "").strip() or sys.executable


def spark_log_path(app_name: str, directory: str | None = None) -> Path:
    """Where one job's Spark logs go: a file per run in the temp directory, named after the job."""
    slug = re.sub(r"[^A-Za-z0-9]+", "-", app_name).strip("-").lower() or "job"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(directory or tempfile.gettempdir()) / f"{slug}-{stamp}-{os.getpid()}.spark.log"


def spark_log_file() -> Path | None:
    """The running job's Spark log file (None outside a job, or under spark-submit's own logging)."""
    return _log_file


def executor_logging() -> None:
    """In a local executor's Python worker, log lines go to the job's Spark log file, not the terminal
    (the worker's stderr is the operator's): called at the start of each task."""
    path = os.environ.get(SPARK_LOG_ENV)
    root = logging.getLogger()
    if not path or any(getattr(h, "_mm2_spark_log", False) for h in root.handlers):
        return
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler._mm2_spark_log = True  # type: ignore[attr-defined]
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)


def session_conf(
    app_name: str, master: str, extra: Mapping[str, str] | None = None, log_file: Path | None = None
) -> dict[str, str]:
    """Spark settings every mm2 job runs with; ``extra`` (from the user) wins. The driver's JVM logs go to
    ``log_file`` (executors on other hosts log to ``mm2-spark.log`` in their work directory)."""
    # The JVM only schedules mm2's jobs (their data moves in the executors' Python workers), so C1's
    # quick compiles are enough: C2's bursts took 0.4 CPU-s of a 2 s backfill from the copiers.
    java_opts = f"-Dlog4j2.configurationFile={_LOG4J.as_uri()} -XX:TieredStopAtLevel=1"
    driver_opts = java_opts if log_file is None else f"{java_opts} -Dmm2.spark.log={log_file}"
    conf = {
        "spark.app.name": app_name,
        "spark.master": master,
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.pyspark.python": executor_python(),
        "spark.pyspark.driver.python": sys.executable,
        "spark.python.worker.reuse": "true",
        "spark.driver.extraJavaOptions": driver_opts,
        "spark.executor.extraJavaOptions": java_opts,
        # A partition is one work unit; failed ones are retried by Spark (attempt number in the task context).
        "spark.task.maxFailures": str(TASK_MAX_FAILURES),
        "spark.sql.shuffle.partitions": "8",
    }
    if _local_master(master) and executor_python() == sys.executable:
        # local executors run this interpreter: their PySpark comes from its installed, compiled package
        conf["spark.python.daemon.module"] = DAEMON_MODULE
    address = master_address(master)
    if _local_master(master) or (address is not None and address[0] in ("127.0.0.1", "localhost")):
        conf["spark.driver.host"] = "127.0.0.1"
        conf["spark.driver.bindAddress"] = "127.0.0.1"
    conf.update(extra or {})
    return conf


_ERROR_LINE = re.compile(r"^([A-Za-z_][\w.]*(?:Error|Exception)): (.+)$")


def job_error(exc: BaseException) -> str:
    """The innermost Python error line of a Spark job failure (else the first line of its text)."""
    text = str(exc)
    found = [m for line in text.splitlines() if (m := _ERROR_LINE.match(line.strip()))]
    python = [m for m in found if not m.group(1).startswith(("org.", "java.", "py4j."))]
    chosen = python or found
    if chosen:
        return f"{chosen[-1].group(1).rsplit('.', 1)[-1]}: {chosen[-1].group(2)}"
    return text.strip().splitlines()[0] if text.strip() else type(exc).__name__


def context_of(spark: SparkSession | SparkContext) -> SparkContext:
    """The SparkContext a job runs in, from a context or from a caller's session."""
    from pyspark import SparkContext

    return spark if isinstance(spark, SparkContext) else spark.sparkContext


def run_slices(sc: SparkContext, slices: list[T], task: Callable[[Iterable[T]], Iterator[R]], job: str) -> list[R]:
    """One Spark task per slice, results collected; a failure is one ConnectError line naming the job."""
    try:
        return sc.parallelize(slices, len(slices)).mapPartitions(task).collect()
    except Exception as e:  # a Spark failure carries the executor's traceback: keep its last error line
        where = f" (Spark's log: {_log_file})" if _log_file is not None else ""
        raise ConnectError(f"{job} job failed: {job_error(e)}{where}") from None


@contextmanager
def spark_context(
    app_name: str, master: str | None = None, extra_conf: Mapping[str, str] | None = None
) -> Iterator[SparkContext]:
    """A SparkContext for one job, stopped on exit; executors get this interpreter and the project's code."""
    submitted = master is None and SUBMITTED_MARKER in os.environ
    master = with_task_retries(master or DEFAULT_MASTER)
    if not submitted:
        check_master_reachable(master)
    try:
        from pyspark import SparkConf, SparkContext
    except ImportError:
        raise SparkUnavailableError("PySpark is not installed: pip install 'mm2[spark]'") from None
    global _log_file
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    # Under spark-submit the JVM (and its logging) is up already: its own log settings stay.
    log_file = None if submitted else spark_log_path(app_name)
    conf = SparkConf()  # under spark-submit it holds spark-submit's settings already
    for key, value in session_conf(app_name, master, extra_conf, log_file).items():
        if submitted and key in ("spark.master", "spark.driver.host", "spark.driver.bindAddress"):
            continue  # spark-submit's own --master and addresses win
        conf.set(key, value)
    if log_file is not None:
        os.environ[SPARK_LOG_ENV] = str(log_file)  # local executors' Python workers inherit it
        log.info("Spark's logs for this job: %s", log_file)
    sc = SparkContext.getOrCreate(conf)
    _log_file = log_file
    try:
        sc.setLogLevel("WARN")
        local = _local_master(sc.master or master)
        if not local or executor_python() != sys.executable:
            # executors on other hosts, or an interpreter without the project: ship it
            with tempfile.TemporaryDirectory(prefix="mm2-spark-") as tmp:
                sc.addPyFile(str(package_zip(Path(tmp))))
                yield sc
        else:
            yield sc
    finally:
        _log_file = None
        os.environ.pop(SPARK_LOG_ENV, None)
        sc.stop()
