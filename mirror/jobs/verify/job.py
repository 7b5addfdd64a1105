"""``mm2 verify``: prove a mirror identical, record by record, as a PySpark job.

The Spark driver plans (:mod:`mirror.jobs.verify.plan`: the flow's state, chunks, pending records) and hands
the chunks to Spark; each task reads its chunks' source ranges and the target ranges the records were
copied to with its own consumers (executor to broker, never through the Spark driver), compares chunk hashes
and aligns record by record only where they differ (:mod:`mirror.jobs.verify.logic`).

:func:`execute_chunks` is the task body; ``mm2 run``'s scheduled verification calls it in-process
(:func:`run_local`: ``mm2 run`` should not need a JVM), the CLI on Spark (:func:`run_job`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.types import KafkaException
from mirror.driver.maker_config import MirrorMakerConfig
from mirror.jobs.spark import context_of, executor_logging, job_error
from mirror.jobs.spark_cluster import cluster_slots
from mirror.jobs.verify.logic import DEFAULT_CHUNK_RECORDS, ChunkResult, ChunkSpec, Verification, compare_chunk, merge
from mirror.jobs.verify.plan import DEFAULT_TIMEOUT_S, VerifyClients, VerifyPlan, plan_verification
from mirror.jobs.verify.reads import assign, drain, hash_range, verify_consumer

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

#: Target records read past an open-ended chunk's source records (extras may sit between copies).
_OPEN_END_SLACK = 1000
TASKS_PER_CORE = 2
Progress = Callable[[int, int], None]  # (chunks done, chunks in all)


def _compare_one(spec: ChunkSpec, source: Any, target: Any, timeout_s: float) -> ChunkResult:
    """One chunk on consumers already assigned to its start on both sides."""
    if spec.target_lo is not None:  # first pass: chunk hashes only
        src_hash, src_n, src_bytes = hash_range(
            source, spec.topic, spec.partition, spec.source_lo, spec.source_hi, None, timeout_s
        )
        tgt_hash, tgt_n, tgt_bytes = hash_range(
            target,
            spec.target_topic,
            spec.partition,
            spec.target_lo,
            spec.target_hi,
            src_n if spec.target_hi is None else None,
            timeout_s,
        )
        if src_n == tgt_n and src_hash == tgt_hash:
            return ChunkResult(
                spec.topic,
                spec.partition,
                spec.index,
                compared=src_n,
                hashed_equal=True,
                source_bytes=src_bytes,
                target_bytes=tgt_bytes,
                target_records=tgt_n,
            )
        # The hashes differ: read both sides again, record by record.
        assign(source, spec.topic, spec.partition, spec.source_lo)
        assign(target, spec.target_topic, spec.partition, spec.target_lo)
    limit = 2 * (spec.source_hi - spec.source_lo) + _OPEN_END_SLACK if spec.target_hi is None else None
    src, src_bytes = drain(source, spec.topic, spec.partition, spec.source_lo, spec.source_hi, None, timeout_s)
    tgt, tgt_bytes = drain(target, spec.target_topic, spec.partition, spec.target_lo, spec.target_hi, limit, timeout_s)
    result = compare_chunk(spec, src, tgt)
    result.source_bytes, result.target_bytes = src_bytes, tgt_bytes
    return result


def execute_chunks(chunks: Iterable[ChunkSpec], clients: VerifyClients) -> Iterator[ChunkResult]:
    """Compare chunks (a Spark task's body, or in-process).

    Two pairs of consumers (one per cluster each) take turns: while one pair reads a chunk, the other is
    already assigned to the next chunk's start on both sides, so the first fetch of every chunk (tens of
    milliseconds, more while a fetch at a partition's end is still parked at the broker) is hidden.
    """
    specs = list(chunks)
    pairs: list[tuple[Any, Any]] = []

    def start(k: int) -> tuple[Any, Any]:
        while len(pairs) <= k % 2:
            pairs.append((verify_consumer(clients.source_consumer), verify_consumer(clients.target_consumer)))
        source, target = pairs[k % 2]
        spec = specs[k]
        assign(source, spec.topic, spec.partition, spec.source_lo)
        assign(target, spec.target_topic, spec.partition, spec.target_lo)
        return source, target

    if not specs:
        return
    try:
        current = start(0)
        for k, spec in enumerate(specs):
            try:
                following = start(k + 1) if k + 1 < len(specs) else current
                result = _compare_one(spec, current[0], current[1], clients.timeout_s)
            except KafkaException as e:
                raise ConnectError(f"Cannot read chunk {spec.index} of {spec.topic}-{spec.partition}: {e}") from None
            current = following
            yield result
    finally:
        for pair in pairs:
            for consumer in pair:
                consumer.close()


# -- the job ---------------------------------------------------------------------------------------


def _order(chunks: list[ChunkSpec]) -> list[ChunkSpec]:
    """Chunk 0 of every partition first, so the partitions progress side by side."""
    return sorted(chunks, key=lambda c: (c.index, c.topic, c.partition))


def run_local(
    plan: VerifyPlan, progress: Progress | None = None, should_continue: Callable[[], bool] = lambda: True
) -> Verification | None:
    """The verification in this process, chunk after chunk (``mm2 run``'s scheduled verification);
    None when ``should_continue`` turned False between chunks."""
    results: list[ChunkResult] = []
    total = len(plan.chunks)
    for result in execute_chunks(_order(plan.chunks), plan.clients):
        results.append(result)
        if progress is not None:
            progress(len(results), total)
        if not should_continue():
            return None
    return merge(plan.reports, results)


def run_spark(sc: SparkContext, plan: VerifyPlan, progress: Progress | None = None) -> Verification:
    """The verification on Spark: the chunks spread over two tasks per core; executors read the records."""
    chunks = _order(plan.chunks)
    if not chunks:
        return merge(plan.reports, [])
    shared = sc.broadcast(plan.clients)
    done = sc.accumulator(0)

    def task(part: Iterable[ChunkSpec]) -> Iterator[ChunkResult]:
        executor_logging()  # a local executor's log lines go to the job's Spark log, not the terminal
        for result in execute_chunks(part, shared.value):
            done.add(1)
            yield result

    finished = threading.Event()
    watcher = None
    if progress is not None:

        def watch() -> None:
            last = -1
            while not finished.wait(0.5):
                if done.value != last:
                    last = done.value
                    progress(last, len(chunks))

        watcher = threading.Thread(target=watch, name="mm2-verify-progress", daemon=True)
        watcher.start()
    try:
        # Two tasks per core: a task reads its chunks one after the other with the next one prefetched.
        slices = min(len(chunks), cluster_slots(sc) * TASKS_PER_CORE)
        results = sc.parallelize(chunks, slices).mapPartitions(task).collect()
    except Exception as e:  # a Spark failure carries the executor's traceback: keep its last error line
        raise ConnectError(f"verify job failed: {job_error(e)}") from None
    finally:
        finished.set()
        if watcher is not None:
            watcher.join()
        shared.unpersist()
    if progress is not None:
        progress(len(chunks), len(chunks))
    return merge(plan.reports, results)


def run_job(
    config: MirrorMakerConfig,
    source: str,
    target: str,
    topics: str | None = None,
    master: str | None = None,
    spark: SparkSession | SparkContext | None = None,
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
    progress: Progress | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> Verification:
    """Plan on the Spark driver, compare in Spark tasks (``spark``: the caller's session or context, else our own)."""
    from mirror.jobs.spark import DEFAULT_MASTER, check_master_reachable, spark_context

    if spark is None:
        check_master_reachable(master or DEFAULT_MASTER)  # a wrong --master fails before any cluster is read
    plan = plan_verification(config, source, target, topics, chunk_records, timeout_s)
    if spark is not None or not plan.chunks:
        return run_spark(context_of(spark), plan, progress) if spark is not None else merge(plan.reports, [])
    with spark_context(f"mm2 verify {source}->{target}", master) as sc:
        return run_spark(sc, plan, progress)


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "VerifyClients",
    "VerifyPlan",
    "execute_chunks",
    "plan_verification",
    "run_job",
    "run_local",
    "run_spark",
]
