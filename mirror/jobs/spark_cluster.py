"""How many tasks a job's Spark cluster runs at once, asked once its executors are there.

Why: right after a session starts on a standalone cluster no executor has registered yet, and Spark's
``defaultParallelism`` then says 2 whatever the cluster's size: a job that sized its tasks at that
moment ran two tasks on any cluster. So the job first learns the cores the cluster gives it - the
cores the standalone master granted the application (its ``/json`` page, on ``spark.master.ui.port``,
8080 unless set), else ``spark.cores.max`` - and waits, at most Spark's own
``spark.scheduler.maxRegisteredResourcesWaitingTime`` (30 s), until executors with that many cores
have registered. Local masters know their threads at once.
"""

from __future__ import annotations

import json
import logging
import time
import urllib.request
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from mirror.jobs.spark import master_address

if TYPE_CHECKING:
    from pyspark import SparkContext

log = logging.getLogger(__name__)

DEFAULT_MASTER_UI_PORT = 8080
DEFAULT_WAIT = "30s"


def master_ui_urls(master: str, ui_port: int) -> list[str]:
    """The ``/json/`` page of each master of a ``spark://h1:p1,h2:p2`` URL (one for most clusters)."""
    if master_address(master) is None:
        return []
    hosts = [part.rsplit(":", 1)[0] for part in master[len("spark://") :].split(",") if part]
    return [f"http://{host}:{ui_port}/json/" for host in hosts]


def granted_cores(state: Mapping[str, Any], app_id: str) -> int | None:
    """Cores the master's state (its ``/json`` document) says it granted application ``app_id``."""
    for app in state.get("activeapps", []) or []:
        if isinstance(app, Mapping) and app.get("id") == app_id:
            try:
                return int(app.get("cores", 0))
            except (TypeError, ValueError):
                return None
    return None


def _master_state(url: str, timeout_s: float = 3.0) -> Mapping[str, Any] | None:
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as answer:
            state = json.load(answer)
    except (OSError, ValueError):
        return None
    return state if isinstance(state, Mapping) else None


def task_slots(sc: SparkContext) -> int:
    """Tasks the registered executors run at once (cores over ``spark.task.cpus``), as Spark counts
    them for barrier stages; ``defaultParallelism`` where that is not reachable."""
    try:
        jsc = sc._jsc.sc()  # type: ignore[union-attr]
        profile = jsc.resourceProfileManager().defaultResourceProfile()
        return int(jsc.maxNumConcurrentTasks(profile))
    except Exception:  # an internal API of Spark: fall back to its public, coarser figure
        return int(sc.defaultParallelism)


def expected_slots(sc: SparkContext) -> int | None:
    """Slots the cluster will give this application once its executors registered; None if unknown."""
    conf = sc.getConf()
    cpus = max(1, int(conf.get("spark.task.cpus", "1") or 1))
    port = int(conf.get("spark.master.ui.port", str(DEFAULT_MASTER_UI_PORT)) or DEFAULT_MASTER_UI_PORT)
    for url in master_ui_urls(sc.master or "", port):
        state = _master_state(url)
        if state is not None and state.get("status", "ALIVE") == "ALIVE":
            cores = granted_cores(state, sc.applicationId)
            if cores:
                return max(1, cores // cpus)
    cores_max = conf.get("spark.cores.max")
    if cores_max and cores_max.isdigit() and int(cores_max) > 0:
        return max(1, int(cores_max) // cpus)
    return None


def _wait_seconds(sc: SparkContext) -> float:
    try:
        return (
            float(
                sc._jsc.sc()
                .getConf()
                .getTimeAsMs(  # type: ignore[union-attr]
                    "spark.scheduler.maxRegisteredResourcesWaitingTime", DEFAULT_WAIT
                )
            )
            / 1000.0
        )
    except Exception:
        return 30.0


def cluster_slots(sc: SparkContext, poll_s: float = 0.2) -> int:
    """Task slots of the job's cluster, after waiting (bounded) for the executors it was granted."""
    if (sc.master or "").startswith("local"):
        return max(1, task_slots(sc))
    expected = expected_slots(sc)
    deadline = time.monotonic() + _wait_seconds(sc)
    slots = task_slots(sc)
    while time.monotonic() < deadline and (slots < (expected or 1)):
        time.sleep(poll_s)
        slots = task_slots(sc)
    if expected is not None and slots < expected:
        log.warning(
            "Only %d of the %d task slots granted to the job registered in time: sizing its tasks for %d",
            slots,
            expected,
            max(1, slots),
        )
    log.info("Spark cluster runs %d task(s) at once (expected %s)", slots, expected)
    return max(1, slots)


def stage_task_spans(sc: SparkContext, job_group: str) -> dict[int, tuple[float, float]]:
    """Launch and end (epoch seconds) of each task's successful attempt in the jobs of ``job_group``, by
    task index, as Spark's scheduler recorded them; empty where Spark's status store is not reachable."""
    spans: dict[int, tuple[float, float]] = {}
    try:
        tracker = sc.statusTracker()
        store = sc._jsc.sc().statusStore()  # type: ignore[union-attr]
        for job_id in tracker.getJobIdsForGroup(job_group):
            job = tracker.getJobInfo(job_id)
            for stage_id in job.stageIds if job is not None else []:
                stage = tracker.getStageInfo(stage_id)
                attempt = stage.currentAttemptId if stage is not None else 0
                tasks = store.taskList(stage_id, attempt, 1_000_000)
                for i in range(tasks.size()):
                    task = tasks.apply(i)
                    duration = task.duration()
                    if task.status() == "SUCCESS" and duration.isDefined():
                        start = task.launchTime().getTime() / 1000.0
                        spans[int(task.index())] = (start, start + int(duration.get()) / 1000.0)
    except Exception as e:  # an internal API of Spark: the job's own timings stand in
        log.debug("Spark's task times are not available: %s", e)
        return {}
    return spans


__all__ = ["cluster_slots", "expected_slots", "granted_cores", "master_ui_urls", "stage_task_spans", "task_slots"]
