"""``mm2 backfill``: a flow's existing partition backlogs copied by a PySpark job, exactly once per unit.

The Spark driver checks and plans (:mod:`mirror.jobs.backfill.flow`), creates the remote topics and the
flow's internal topics as ``mm2 run`` would, takes the topics from live tailing when the flow is
running (:mod:`mirror.jobs.backfill.handoff`), and runs one Spark task per source partition
(:mod:`mirror.jobs.backfill.copy`): records go executor to broker, never through the Spark driver.
Progress is read back from the flow's offsets topic, where every committed chunk leaves the unit's position.
"""

from __future__ import annotations

import logging
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.clients import consumer_config, create_consumer
from connect_core.kafka.types import ClientPartition
from mirror.driver.backfill_leases import DEFAULT_LEASE_TTL_S
from mirror.driver.maker_config import MirrorMakerConfig
from mirror.jobs.backfill.bounds import TIMEOUT_KEY
from mirror.jobs.backfill.copy import BackfillClients, UnitResult, decode_progress
from mirror.jobs.backfill.flow import (
    DEFAULT_TIMEOUT_S,
    PreparedBackfill,
    batch_copy_clients,
    create_internal_topics,
    create_target_topics,
    partition_counts,
    prepare,
)
from mirror.jobs.backfill.foreign import describe, foreign_partitions
from mirror.jobs.backfill.handoff import LiveHandoff
from mirror.jobs.backfill.lease import cancel_spark_jobs
from mirror.jobs.backfill.plan import DEFAULT_CHUNK_RECORDS, BackfillPlan, WorkUnit, partition_transactional_id
from mirror.jobs.backfill.task_ids import fence_earlier_runs
from mirror.jobs.backfill.tasks import run_tasks
from mirror.jobs.spark import context_of
from mirror.jobs.task_sizing import max_concurrency

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

#: ``progress(records_done, records_total)``, called from a background thread about once a second
Progress = Callable[[int, int], None]


@dataclass
class BackfillReport:
    plan: BackfillPlan
    dry_run: bool
    results: list[UnitResult] = field(default_factory=list)
    seconds: float = 0.0
    spark_startup_seconds: float = 0.0
    handed_off: bool = False
    #: live tasks abandoned instead of stopped at the hand-off: what they copied last may be copied twice
    abandoned_live_tasks: list[int] = field(default_factory=list)
    #: target partitions (remote topic, partition) already holding records the flow did not copy
    foreign: list[tuple[str, int]] = field(default_factory=list)
    #: the transactions' bounds this run copied with (age in seconds, the producer's timeout)
    transaction_seconds_bound: float = 0.0
    transaction_timeout_ms: int = 0
    #: tasks the Spark cluster ran at once when the job sized its tasks (its executors registered)
    task_slots: int = 0
    #: the job's --throughput-limit (bytes per second), None: none
    throughput_limit: float | None = None
    #: ``batch`` (the source's record batches copied as bytes) or ``record`` (decoded and produced again)
    copy_path: str = "record"

    @property
    def tasks(self) -> int:
        return len({r.task for r in self.results})

    @property
    def tasks_retried(self) -> int:
        """Tasks that succeeded only on a later attempt (an earlier one failed)."""
        return len({r.task for r in self.results if r.attempt > 0})

    @property
    def task_spans(self) -> dict[int, tuple[float, float]]:
        """Each task's start and end (epoch seconds, its last attempt)."""
        return {r.task: (r.task_started_at, r.task_finished_at) for r in self.results if r.task_finished_at > 0}

    @property
    def max_concurrent_tasks(self) -> int:
        """The most tasks that ran at once, from their start and end times."""
        return max_concurrency(self.task_spans.values())

    @property
    def longest_transaction_seconds(self) -> float:
        """The longest any transaction of the (successful) attempts stayed open, begin to committed."""
        return max((r.longest_transaction_s for r in self.results), default=0.0)

    @property
    def records_copied(self) -> int:
        return sum(r.records for r in self.results)

    @property
    def bytes_copied(self) -> int:
        return sum(r.bytes for r in self.results)

    @property
    def bytes_per_second(self) -> float:
        """Record bytes copied per second of the copy itself (see :attr:`copy_seconds`)."""
        seconds = self.copy_seconds
        return self.bytes_copied / seconds if seconds > 0 else 0.0

    @property
    def copy_seconds(self) -> float:
        """From the first task's first fetch to the last one's last commit: the copy itself, timed as a live
        task is from its first poll (no planning, topic creation, Spark scheduling or client start-up)."""
        timed = [r for r in self.results if r.finished_at > 0]
        if not timed:
            return 0.0
        return max(r.finished_at for r in timed) - min(r.started_at for r in timed)


class ProgressWatcher:
    """Reads the units' committed positions from the offsets topic (what is really done) in a thread."""

    def __init__(self, clients: BackfillClients, units: Iterable[WorkUnit], progress: Progress) -> None:
        self.units = {(u.topic, u.partition): u for u in units}
        self.total = sum(u.records for u in self.units.values())
        self.progress = progress
        self.clients = clients
        self.done: dict[tuple[str, int], int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mm2-backfill-progress", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)

    def _run(self) -> None:
        consumer = create_consumer(
            consumer_config(
                self.clients.target_consumer,
                {
                    "group.id": f"mm2-backfill-progress-{uuid.uuid4().hex[:8]}",
                    "enable.auto.commit": False,
                    "auto.offset.reset": "earliest",
                },
            )
        )
        try:
            meta = consumer.list_topics(timeout=10).topics.get(self.clients.offsets_topic)
            if meta is None:
                return
            consumer.assign([ClientPartition(self.clients.offsets_topic, p, 0) for p in meta.partitions])
            while not self._stop.is_set():
                for msg in consumer.consume(500, 0.5):
                    if msg.error() is None:
                        self._on_record(msg.key(), msg.value())
                self.progress(sum(self.done.values()), self.total)
        except Exception as e:  # progress is a courtesy: never fail the job over it
            log.debug("Backfill progress watcher stopped: %s", e)
        finally:
            consumer.close()

    def _on_record(self, key: bytes | None, value: bytes | None) -> None:
        decoded = decode_progress(key, value)
        if decoded is None:
            return
        unit = self.units.get(decoded[0])
        if unit is not None and decoded[1] >= unit.start:
            self.done[decoded[0]] = min(unit.records, decoded[1] + 1 - unit.start)


def run_job(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    pattern: str | None = None,
    *,
    master: str | None = None,
    dry_run: bool = False,
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
    progress: Progress | None = None,
    spark: SparkSession | SparkContext | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    fail_first_attempt: tuple[str, int] | None = None,
    on_plan: Callable[[BackfillPlan], None] | None = None,
    force: bool = False,
    lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
    throughput_limit: float | None = None,
) -> BackfillReport:
    """Plan, check and (unless ``dry_run``) copy; ``fail_first_attempt`` is a test seam (unit name, chunks).
    ``force`` copies into target partitions that hold records the flow did not copy (else a ConfigError).
    ``lease_ttl_s``: how long the topics stay excluded from live tailing after the job stops renewing its lease.
    ``throughput_limit``: bytes per second the whole job may fetch (divided between the tasks running at once)."""
    prepared = prepare(config, source, target, pattern, chunk_records, timeout_s)
    foreign = foreign_partitions(prepared)
    if foreign and not dry_run and not force:
        raise ConfigError(
            f"target partition(s) {describe(foreign)} on '{target}' already hold records the flow "
            f"{prepared.flow.pair} did not copy (no position in its offsets topic): a backfill would "
            "copy them again behind those; run with --force to copy anyway"
        )
    if spark is None and not dry_run:
        from mirror.jobs.spark import DEFAULT_MASTER, check_master_reachable, check_spark_runtime

        check_spark_runtime()  # before anything is written
        check_master_reachable(master or DEFAULT_MASTER)
    report = BackfillReport(prepared.plan, dry_run, foreign=foreign, throughput_limit=throughput_limit)
    report.copy_path = "batch" if prepared.clients.batch_copy else "record"
    log.info("Backfill %s->%s copy path: %s", source, target, report.copy_path)
    if on_plan is not None:
        on_plan(prepared.plan)
    if dry_run or not prepared.plan.units:
        return report
    started = time.perf_counter()
    create_target_topics(prepared.flow, prepared.missing_topics, prepared.source_counts)
    create_internal_topics(prepared.flow)
    handoff = LiveHandoff(prepared.flow, lease_ttl_s=lease_ttl_s, on_lost=cancel_spark_jobs)
    try:
        ids = [partition_transactional_id(source, target, *tp) for tp in prepared.partitions]
        report.handed_off = handoff.take(prepared.plan.topics, ids)
        report.abandoned_live_tasks = handoff.abandoned
        if report.handed_off:
            # the live tasks flushed their last positions on release: plan again from them
            prepared = replace(prepared, plan=prepare(config, source, target, pattern, chunk_records, timeout_s).plan)
            report.plan = prepared.plan
        clients = replace(prepared.clients, fail_first_attempt=fail_first_attempt)
        report.transaction_seconds_bound = clients.chunk_seconds
        report.transaction_timeout_ms = int(clients.target_producer[TIMEOUT_KEY])
        fence_earlier_runs(clients)
        report.results = _copy(prepared, clients, master, spark, progress, report)
    except Exception as e:
        if handoff.lost is None:
            raise
        log.debug("The copy stopped once the lease was lost: %s", e)  # the one line is the lost lease's, below
    finally:
        handoff.give_back()
    if handoff.lost is not None:
        raise ConnectError(
            f"the backfill lease of {prepared.flow.pair} was {handoff.lost} while the job ran: "
            "live tailing may have taken its topics back; run the backfill again"
        )
    report.seconds = time.perf_counter() - started
    return report


def _copy(
    prepared: PreparedBackfill,
    clients: BackfillClients,
    master: str | None,
    spark: SparkSession | SparkContext | None,
    progress: Progress | None,
    report: BackfillReport,
) -> list[UnitResult]:
    units = list(prepared.plan.units)
    if not units:
        return []
    offsets_partitions = partition_counts(prepared.flow, "target").get(clients.offsets_topic, 0)
    if offsets_partitions <= 0:
        raise ConnectError(
            f"The flow's offsets topic {clients.offsets_topic} is missing on cluster '{prepared.plan.target}'"
        )
    clients = batch_copy_clients(prepared.flow, clients, units, offsets_partitions)
    watcher = ProgressWatcher(clients, units, progress) if progress is not None else None
    if watcher is not None:
        watcher.start()
    try:
        if spark is not None:
            results, report.task_slots = run_tasks(
                context_of(spark), prepared.plan, units, clients, offsets_partitions, report.throughput_limit
            )
        else:
            from mirror.jobs.spark import spark_context

            t0 = time.perf_counter()
            with spark_context(f"mm2 backfill {prepared.plan.source}->{prepared.plan.target}", master) as sc:
                report.spark_startup_seconds = time.perf_counter() - t0
                results, report.task_slots = run_tasks(
                    sc, prepared.plan, units, clients, offsets_partitions, report.throughput_limit
                )
    finally:
        if watcher is not None:
            watcher.stop()
    if progress is not None and watcher is not None:
        progress(watcher.total, watcher.total)  # every unit committed its end: the bar ends full
    return results


__all__ = ["BackfillReport", "ProgressWatcher", "run_job"]
