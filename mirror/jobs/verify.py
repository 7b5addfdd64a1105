"""``mm2 verify``: prove a mirror identical, record by record, as a PySpark job.

The driver reads only the flow's small state, never records: the committed MirrorSource offsets
(``mm2-offsets.<source>.internal`` on the target: the last source offset copied per partition), the
flow's offset mappings and offset syncs (where each copied record went), and the source partitions'
log-start and end offsets. It cuts every verified range ``[log start, last copied + 1)`` into chunks
(:func:`mirror.jobs.verify_logic.plan_chunks`) and hands them to Spark, one chunk per task; each task
reads its source range and the target range the records were copied to with its own consumers
(executor to broker), digests both sides and compares them (chunk hash, then record alignment only
where the hashes differ). Records after the committed position are ``pending``.

:func:`execute_chunks` is the task body; ``mm2 run``'s scheduled verification calls it in-process (a
replication driver should not need a JVM), the CLI runs it on Spark.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from hashlib import sha256
from typing import TYPE_CHECKING, Any

from connect_core.api.errors import ConfigError, ConnectError
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.clients import admin_config, consumer_config, create_admin, create_consumer
from connect_core.kafka.types import OFFSET_BEGINNING, KafkaError, KafkaException, OffsetSpec
from connect_core.kafka.types import TopicPartition as KTopicPartition
from connect_core.kafka.watermarks import high_watermarks
from connect_core.storage.internal_topics import store_client_props
from mirror.client.errors import RecordFormatError
from mirror.client.filters import should_replicate_topic
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.connectors.config import MirrorSourceConfig
from mirror.connectors.offset_mapping_index import OffsetMappingIndex
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget
from mirror.driver.status import OffsetFold
from mirror.jobs.translate_offsets import flow_configs, job_error
from mirror.jobs.verify_logic import (
    DEFAULT_CHUNK_RECORDS,
    RECORD_HEAD,
    ChunkResult,
    ChunkSpec,
    Digest,
    PartitionReport,
    Verification,
    compare_chunk,
    headers_bytes,
    merge,
    plan_chunks,
    record_digest,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
_ROLE = "verify"
#: Target records read past an open-ended chunk's source records (extras may sit between copies).
_OPEN_END_SLACK = 1000

TASKS_PER_CORE = 2
Progress = Callable[[int, int], None]  # (chunks done, chunks in all)


@dataclass(frozen=True)
class VerifyClients:
    """What a task needs to read both clusters (picklable: plain dicts)."""

    source_consumer: dict[str, Any]
    target_consumer: dict[str, Any]
    timeout_s: float


@dataclass
class VerifyPlan:
    """The driver's part: one report per verified partition (pending known), and the chunks to compare."""

    reports: list[PartitionReport]
    chunks: list[ChunkSpec]
    clients: VerifyClients


# -- driver side ---------------------------------------------------------------------------------


def _compile(pattern: str | None) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern) if pattern else None
    except re.error as e:
        raise ConfigError(f"--topics {pattern!r} is not a valid regular expression: {e}") from None


def _topics(admin: TopicAdmin, alias: str, timeout_s: float) -> set[str]:
    try:
        return admin.list_topics(timeout_s)
    except (ConnectError, KafkaException) as e:
        raise ConnectError(f"cluster '{alias}' is unreachable: {' '.join(str(e).split())}") from None


class FlowEvidence:
    """Where the flow wrote each source record: mm2's offset mappings, then Kafka's offset syncs."""

    def __init__(self) -> None:
        self.mappings = OffsetMappingIndex()
        self.syncs: dict[TopicPartition, dict[int, int]] = {}

    def on_sync(self, key: bytes | None, value: bytes | None, _ts: int | None = None) -> None:
        try:
            sync = OffsetSync.decode(key, value)
        except RecordFormatError as e:
            log.debug("Ignored invalid offset sync: %s", e)
            return
        self.syncs.setdefault(sync.topic_partition, {})[sync.upstream_offset] = sync.downstream_offset

    def on_mapping(self, key: bytes | None, value: bytes | None, _ts: int | None = None) -> None:
        try:
            self.mappings.on_record(key, value)
        except RecordFormatError as e:
            log.debug("Ignored invalid offset mapping: %s", e)

    def translator(self, tp: TopicPartition) -> Callable[[int], int | None]:
        syncs = self.syncs.get(tp, {})

        def translate(offset: int) -> int | None:
            down = self.mappings.translate(tp, offset)
            return down if down is not None else syncs.get(offset)

        return translate


def read_state_topic(props: dict[str, Any], admin: TopicAdmin, topic: str,
                     apply: Callable[[bytes | None, bytes | None, int | None], None], timeout_s: float) -> None:
    """Feed every record of a small state topic to ``apply`` (log order per partition), up to its end now.

    :func:`mirror.driver.status.read_topic` does the same through a KafkaBasedLog, whose start from
    OFFSET_BEGINNING costs a ListOffsets round per read (~0.4 s on Tansu); verification reads three such
    topics before any record is compared, so it assigns offset 0 (below a raised log start, the consumer
    resets to the earliest) and stops at each partition's end-of-partition event.
    """
    count = admin.partition_counts([topic], timeout_s).get(topic, 0)
    if not count:
        return
    consumer = _consumer(props)
    try:
        consumer.assign([KTopicPartition(topic, p, 0) for p in range(count)])
        ended: set[int] = set()
        deadline = time.monotonic() + timeout_s
        while len(ended) < count:
            if time.monotonic() > deadline:
                raise ConnectError(f"Could not read {topic} to its end within {timeout_s:g}s")
            for msg in consumer.consume(5000, 0.01):  # a small topic never fills a batch: poll often
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise ConnectError(f"Cannot read {topic}: {err.str()}")
                    ended.add(msg.partition())
                elif msg.partition() not in ended:
                    ts = msg.timestamp()[1]
                    apply(msg.key(), msg.value(), ts if ts > 0 else None)
    except KafkaException as e:
        raise ConnectError(f"Cannot read {topic}: {e}") from None
    finally:
        consumer.close()


def _read_evidence(cfg: MirrorSourceConfig, source_topics: set[str], target_topics: set[str],
                   timeout_s: float) -> FlowEvidence:
    evidence = FlowEvidence()
    on_source = cfg.offset_syncs_on_source
    props = cfg.source_consumer_config(_ROLE) if on_source else cfg.target_consumer_config(_ROLE)
    admin = TopicAdmin(cfg.offset_syncs_topic_admin_config(), timeout_s=timeout_s)
    present = source_topics if on_source else target_topics
    for topic, apply in ((cfg.offset_syncs_topic(), evidence.on_sync),
                         (cfg.offset_mappings_topic(), evidence.on_mapping)):
        if topic in present:
            read_state_topic(props, admin, topic, apply, timeout_s)
    return evidence


def _log_starts(admin_props: dict[str, Any], partitions: Iterable[tuple[str, int]],
                timeout_s: float) -> dict[tuple[str, int], int]:
    wanted = sorted(set(partitions))
    if not wanted:
        return {}
    admin = create_admin(admin_config(admin_props))
    futures = admin.list_offsets({KTopicPartition(t, p): OffsetSpec.earliest() for t, p in wanted},
                                 request_timeout=timeout_s)
    out: dict[tuple[str, int], int] = {}
    for ktp, future in futures.items():
        try:
            out[(ktp.topic, ktp.partition)] = max(0, int(future.result(timeout=timeout_s).offset))
        except (KafkaException, TimeoutError) as e:
            raise ConnectError(f"Cannot list the log start of {ktp.topic}-{ktp.partition}: {e}") from None
    return out


def _first_records(consumer_props: dict[str, Any], positions: dict[tuple[str, int], int],
                   timeout_s: float) -> dict[tuple[str, int], int | None]:
    """Per partition, the offset of the first record at or after ``positions[tp]`` (below the end), or None
    when only offsets without records (transaction markers) are left: those are not pending records."""
    if not positions:
        return {}
    consumer = _consumer(consumer_props, {"max.partition.fetch.bytes": 1024, "queued.min.messages": 1})
    out: dict[tuple[str, int], int | None] = {}
    try:
        consumer.assign([KTopicPartition(t, p, o) for (t, p), o in positions.items()])
        deadline = time.monotonic() + timeout_s
        while len(out) < len(positions):
            if time.monotonic() > deadline:
                missing = sorted(f"{t}-{p}" for t, p in set(positions) - set(out))
                raise ConnectError(f"No fetch response for {', '.join(missing)} within {timeout_s:g}s")
            for msg in consumer.consume(500, 0.01):
                tp = (msg.topic(), msg.partition())
                if tp in out:
                    continue
                err = msg.error()
                if err is None:
                    out[tp] = msg.offset()
                elif err.code() == KafkaError._PARTITION_EOF:
                    out[tp] = None
                else:
                    raise ConnectError(f"Cannot read {tp[0]}-{tp[1]}: {err.str()}")
    except KafkaException as e:
        raise ConnectError(f"Cannot read the source partitions' tails: {e}") from None
    finally:
        consumer.close()
    return out


def plan_verification(config: MirrorMakerConfig, source: str, target: str, topics: str | None = None,
                      chunk_records: int = DEFAULT_CHUNK_RECORDS,
                      timeout_s: float = DEFAULT_TIMEOUT_S) -> VerifyPlan:
    """Read the flow's state and plan the chunks (no records are read here)."""
    regex = _compile(topics)
    cfg, _ = flow_configs(config, source, target)
    pair = SourceAndTarget(source, target)
    worker = config.worker_config(pair)
    target_props = store_client_props(worker)
    target_admin = TopicAdmin(target_props, timeout_s=timeout_s)
    target_topics = _topics(target_admin, target, timeout_s)
    source_admin_props = cfg.source_admin_config(_ROLE)
    source_admin = TopicAdmin(source_admin_props, timeout_s=timeout_s)
    source_topics = _topics(source_admin, source, timeout_s)

    policy = cfg.replication_policy()
    accepted = {t for t in source_topics
                if should_replicate_topic(t, cfg.topic_filter(), policy, target, cfg.heartbeats_replication_enabled)}
    if regex is not None:
        accepted = {t for t in accepted if regex.fullmatch(t)}
    source_consumer = cfg.source_consumer_config(_ROLE)

    def positions(topics: Iterable[str]) -> tuple[dict[tuple[str, int], int], dict[tuple[str, int], int]]:
        """Log start and end offsets of every partition of ``topics`` on the source."""
        counts = source_admin.partition_counts(topics, timeout_s)
        parts = [(t, p) for t, n in counts.items() for p in range(n)]
        starts = _log_starts(source_admin_props, parts, timeout_s)
        ends = high_watermarks(source_consumer, starts, timeout_s) if parts else {}
        return starts, ends

    committed = OffsetFold(source)
    offsets_topic = str(worker["offset.storage.topic"])
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="mm2-verify-plan") as pool:
        # Independent reads, side by side: where records went (syncs/mappings), the source partitions'
        # positions, and the flow's committed offsets.
        found = pool.submit(_read_evidence, cfg, source_topics, target_topics, timeout_s)
        placed = pool.submit(positions, accepted)
        if offsets_topic in target_topics:
            read_state_topic(target_props, target_admin, offsets_topic, committed.apply, timeout_s)
        evidence = found.result()
        starts, ends = placed.result()
    # Topics the flow copied but its filter no longer selects: still verified.
    others = {t for t, _ in committed.offsets if t in source_topics and t not in accepted
              and (regex is None or regex.fullmatch(t))}
    if others:
        more_starts, more_ends = positions(others)
        starts.update(more_starts)
        ends.update(more_ends)
    partitions = sorted(starts)

    replicated_at = {tp: min(ends[tp], max(starts[tp], committed.offsets.get(tp, -1) + 1)) for tp in partitions}
    tails = _first_records(source_consumer, {tp: o for tp, o in replicated_at.items() if ends[tp] > o}, timeout_s)

    reports: list[PartitionReport] = []
    chunks: list[ChunkSpec] = []
    for topic, partition in partitions:
        tp = TopicPartition(topic, partition)
        remote = policy.format_remote_topic(source, topic)
        start, end = starts[(topic, partition)], ends[(topic, partition)]
        replicated = replicated_at[(topic, partition)]
        first_pending = tails.get((topic, partition))  # offsets before it hold no record (commit markers)
        report = PartitionReport(topic, partition, remote, source_lo=start, replicated=replicated,
                                 pending=0 if first_pending is None else max(0, end - first_pending))
        reports.append(report)
        if replicated > start and remote not in target_topics:
            report.missing = replicated - start  # copied per the flow, but the remote topic is gone
            report.compared = report.missing
            report.first_difference = start
            continue
        chunks.extend(plan_chunks(topic, partition, remote, start, replicated, evidence.translator(tp),
                                  evidence.syncs.get(tp, {}), chunk_records))
    clients = VerifyClients(source_consumer, cfg.target_consumer_config(_ROLE), timeout_s)
    log.info("verify %s->%s: %d partitions, %d chunks, %d records pending", source, target, len(reports),
             len(chunks), sum(r.pending for r in reports))
    return VerifyPlan(reports, chunks, clients)


# -- executor side -------------------------------------------------------------------------------


def _consumer(props: dict[str, Any], overrides: dict[str, Any] | None = None) -> Any:
    return create_consumer(consumer_config(props, {
        "group.id": f"mm2-verify-{uuid.uuid4().hex[:8]}",  # assign() only: never joins, never commits
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "auto.offset.reset": "earliest",
        "fetch.wait.max.ms": 100,
        "queued.min.messages": 50000,
        "max.partition.fetch.bytes": 8 * 1024 * 1024,  # one partition at a time: few, big fetches
        "fetch.max.bytes": 64 * 1024 * 1024,
        "queued.max.messages.kbytes": 16 * 1024,  # what a consumer prefetches (four per task)
        "fetch.queue.backoff.ms": 10,  # a full prefetch queue otherwise pauses fetching for a second
        **(overrides or {}),
    }))


_BATCH = 5000


def _batch(next_offset: int, hi: int | None, count: int, limit: int | None) -> int:
    """How many messages to ask ``consume`` for: it returns early only when it has that many, so near the
    end of a range ask for no more than the range can still hold (else each range ends with a wait)."""
    wanted = _BATCH
    if hi is not None and next_offset >= 0:
        wanted = min(wanted, hi - next_offset)
    if limit is not None:
        wanted = min(wanted, limit - count)
    return max(1, wanted)


def _assign(consumer: Any, topic: str, partition: int, lo: int | None) -> None:
    """Start fetching ``topic-partition`` at ``lo`` (None: the log start) in the client's background."""
    consumer.assign([KTopicPartition(topic, partition, OFFSET_BEGINNING if lo is None else lo)])


def _drain(consumer: Any, topic: str, partition: int, lo: int | None, hi: int | None, limit: int | None,
           timeout_s: float) -> tuple[list[Digest], int]:
    """Digests of the assigned partition's records in ``[lo, hi)`` (``hi`` None: up to ``limit`` records or
    the end), and their key+value bytes; unassigns at the end."""
    out: list[Digest] = []
    append = out.append
    size = 0
    floor = -1 if lo is None else lo
    last = None if hi is None else hi - 1
    eof = KafkaError._PARTITION_EOF
    deadline = time.monotonic() + timeout_s
    try:
        if hi is not None and lo is not None and hi <= lo:
            return out, size
        next_offset = floor
        while True:
            msgs = consumer.consume(_batch(next_offset, hi, len(out), limit), 0.05)
            if not msgs:
                if time.monotonic() > deadline:
                    raise ConnectError(f"No records from {topic}-{partition} within {timeout_s:g}s "
                                       f"(reading [{lo}, {hi}))")
                continue
            deadline = time.monotonic() + timeout_s
            next_offset = msgs[-1].offset() + 1
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == eof:
                        return out, size
                    raise ConnectError(f"Cannot read {topic}-{partition}: {err.str()}")
                offset = msg.offset()
                if offset < floor:
                    continue  # left over from the previous assignment
                if hi is not None and offset >= hi:
                    return out, size
                key, value = msg.key(), msg.value()
                append(Digest(offset, record_digest(key, value, msg.headers(), msg.timestamp()[1])))
                size += (len(key) if key else 0) + (len(value) if value else 0)
                if offset == last or (limit is not None and len(out) >= limit):
                    return out, size
    finally:
        consumer.unassign()


def _hash_range(consumer: Any, topic: str, partition: int, lo: int, hi: int | None, limit: int | None,
                timeout_s: float) -> tuple[bytes, int, int]:
    """The first pass over an assigned range: one streaming hash of every record's content (no per-record
    objects), the record count and the key+value bytes; unassigns at the end. Same range rules as
    :func:`_drain`; the same content on both sides gives the same hash."""
    h = sha256()
    update, pack = h.update, RECORD_HEAD.pack
    count = size = 0
    last = None if hi is None else hi - 1
    eof = KafkaError._PARTITION_EOF
    deadline = time.monotonic() + timeout_s
    try:
        if hi is not None and hi <= lo:
            return h.digest(), count, size
        next_offset = lo
        while True:
            msgs = consumer.consume(_batch(next_offset, hi, count, limit), 0.05)
            if not msgs:
                if time.monotonic() > deadline:
                    raise ConnectError(f"No records from {topic}-{partition} within {timeout_s:g}s "
                                       f"(reading [{lo}, {hi}))")
                continue
            deadline = time.monotonic() + timeout_s
            next_offset = msgs[-1].offset() + 1
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == eof:
                        return h.digest(), count, size
                    raise ConnectError(f"Cannot read {topic}-{partition}: {err.str()}")
                offset = msg.offset()
                if offset < lo:
                    continue  # left over from the previous assignment
                if hi is not None and offset >= hi:
                    return h.digest(), count, size
                key, value, headers = msg.key(), msg.value(), msg.headers()
                klen = -1 if key is None else len(key)
                vlen = -1 if value is None else len(value)
                update(pack(klen, vlen, msg.timestamp()[1], len(headers) if headers else 0) + (key or b"")
                       + (value or b""))
                if headers:
                    update(headers_bytes(headers))
                count += 1
                size += max(klen, 0) + max(vlen, 0)
                if offset == last or (limit is not None and count >= limit):
                    return h.digest(), count, size
    finally:
        consumer.unassign()


def _compare_one(spec: ChunkSpec, source: Any, target: Any, timeout_s: float) -> ChunkResult:
    """One chunk on consumers already assigned to its start on both sides."""
    if spec.target_lo is not None:  # first pass: chunk hashes only
        src_hash, src_n, src_bytes = _hash_range(source, spec.topic, spec.partition, spec.source_lo, spec.source_hi,
                                                 None, timeout_s)
        tgt_hash, tgt_n, tgt_bytes = _hash_range(target, spec.target_topic, spec.partition, spec.target_lo,
                                                 spec.target_hi, src_n if spec.target_hi is None else None, timeout_s)
        if src_n == tgt_n and src_hash == tgt_hash:
            return ChunkResult(spec.topic, spec.partition, spec.index, compared=src_n, hashed_equal=True,
                               source_bytes=src_bytes, target_bytes=tgt_bytes, target_records=tgt_n)
        # The hashes differ: read both sides again, record by record.
        _assign(source, spec.topic, spec.partition, spec.source_lo)
        _assign(target, spec.target_topic, spec.partition, spec.target_lo)
    limit = 2 * (spec.source_hi - spec.source_lo) + _OPEN_END_SLACK if spec.target_hi is None else None
    src, src_bytes = _drain(source, spec.topic, spec.partition, spec.source_lo, spec.source_hi, None, timeout_s)
    tgt, tgt_bytes = _drain(target, spec.target_topic, spec.partition, spec.target_lo, spec.target_hi, limit,
                            timeout_s)
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
            pairs.append((_consumer(clients.source_consumer), _consumer(clients.target_consumer)))
        source, target = pairs[k % 2]
        spec = specs[k]
        _assign(source, spec.topic, spec.partition, spec.source_lo)
        _assign(target, spec.target_topic, spec.partition, spec.target_lo)
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


def run_local(plan: VerifyPlan, progress: Progress | None = None,
              should_continue: Callable[[], bool] = lambda: True) -> Verification | None:
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


def run_spark(spark: SparkSession, plan: VerifyPlan, progress: Progress | None = None) -> Verification:
    """The verification on Spark: one task per chunk; executors read the records."""
    chunks = _order(plan.chunks)
    if not chunks:
        return merge(plan.reports, [])
    sc = spark.sparkContext
    shared = sc.broadcast(plan.clients)
    done = sc.accumulator(0)

    def task(part: Iterable[ChunkSpec]) -> Iterator[ChunkResult]:
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
        slices = min(len(chunks), max(1, sc.defaultParallelism) * TASKS_PER_CORE)
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


def run_job(config: MirrorMakerConfig, source: str, target: str, topics: str | None = None,
            master: str | None = None, spark: SparkSession | None = None,
            chunk_records: int = DEFAULT_CHUNK_RECORDS, progress: Progress | None = None,
            timeout_s: float = DEFAULT_TIMEOUT_S) -> Verification:
    """Plan on the driver, compare on Spark (``spark``: an existing session; else one built for the job)."""
    plan = plan_verification(config, source, target, topics, chunk_records, timeout_s)
    if spark is not None or not plan.chunks:
        return run_spark(spark, plan, progress) if spark is not None else merge(plan.reports, [])
    from mirror.jobs.spark import spark_session

    with spark_session(f"mm2 verify {source}->{target}", master) as session:
        return run_spark(session, plan, progress)


__all__ = [
    "FlowEvidence",
    "VerifyClients",
    "VerifyPlan",
    "execute_chunks",
    "plan_verification",
    "run_job",
    "run_local",
    "run_spark",
]
