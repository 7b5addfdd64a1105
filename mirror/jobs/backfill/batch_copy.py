"""Backfill work units copied as the source's record batches, exactly once (executor side).

The same contract as :mod:`mirror.jobs.backfill.copy` (one transactional producer per Spark task, its id
the task's first unit's, each transaction holding a chunk of each unit and each unit's progress record,
fencing before reading a retried attempt's position, offset syncs and mappings after each commit), but
nothing is decoded where the flow needs no decoded record (``batch.copy.enabled``, no transforms,
byte-array converters: ``MirrorMakerConfig.batch_copy_applies``). The live task's batch reader
(:class:`~mirror.connectors.source_batches.SourceBatches`) reads the units' partitions read_committed, drops
aborted transactions' and control batches and says which batches cannot pass as they are; those come back
decoded and go, built into a batch again, through the same transactional producer
(:class:`~connect_core.kafka.transactional_batch_producer.TransactionalBatchProducer`), so one producer id
holds the whole transaction and each partition keeps its source order. Each copied batch gets one offset
sync and one offset mapping (source base -> target base over the batch's records) once its transaction
committed.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from connect_core.api.batch_copy import CopyBatch, DecodedRecords
from connect_core.api.errors import ConnectError
from connect_core.api.records import SourceRecord
from connect_core.kafka.batch_builder import PlainRecord, batches_within, record_bytes
from connect_core.kafka.batch_fetcher import READ_COMMITTED, BatchFetcher
from connect_core.kafka.clients import create_producer, producer_config
from connect_core.kafka.partitioning import key_partition
from connect_core.kafka.security import kafka_python_security
from connect_core.kafka.transactional_batch_producer import TransactionalBatchProducer
from connect_core.kafka.types import Producer
from connect_core.storage.offset_storage import serialize_offset_value
from mirror.client.formats import OFFSET_KEY, OffsetSync, wrap_offset, wrap_partition
from mirror.client.offset_mappings import mapping_for_copied_range
from mirror.connectors.source_batches import DEFAULT_MAX_MESSAGE_BYTES, SourceBatches, decoded_records
from mirror.connectors.throughput_cap import ThroughputCap
from mirror.jobs.backfill.copy import (
    BackfillClients,
    UnitProgress,
    UnitResult,
    committed_offsets,
    fail_if_injected,
    offset_key,
    resume_fenced,
)
from mirror.jobs.backfill.plan import WorkUnit, transactional_id

log = logging.getLogger(__name__)

_FETCH_WAIT_MS = 500
_FETCH_MAX_BYTES = 32 * 1024 * 1024
_PARTITION_MAX_BYTES = 8 * 1024 * 1024
_TIMEOUT_KEY = "transaction.timeout.ms"


@dataclass
class _Route:
    """What the batch reader needs of a partition's destination (the live task's CopyRoute fields)."""

    topic: str
    partition: int
    source_partition: dict[str, Any]


@dataclass
class _Run:
    """One produced batch of a unit: source offsets of its records and, once acknowledged, its target base."""

    upstream: list[int] | range
    downstream: int = -1


@dataclass
class _Chunk:
    """One unit's share of the open transaction."""

    runs: list[_Run] = field(default_factory=list)
    count: int = 0
    bytes: int = 0
    last_upstream: int = -1
    error: BaseException | None = None


class _UnitBatches(UnitProgress[_Chunk]):
    """One unit: its result, where its copy stands, its chunk of the open transaction, where its batches go."""

    def __init__(self, clients: BackfillClients, unit: WorkUnit, resumed: int, attempt: int) -> None:
        super().__init__(clients, unit, resumed, attempt)
        self.route = _Route(unit.target_topic, unit.partition, wrap_partition(self.tp, clients.source))

    def _new_chunk(self) -> _Chunk:
        return _Chunk()

    def _send_syncs(self, syncs: Producer, chunk: _Chunk) -> None:
        """Per batch: an offset sync at its first record, and its mapping when its source offsets are
        consecutive (a decoded batch of a compacted source is not)."""
        clients = self.clients
        previous = self.previous
        for run in chunk.runs:
            if run.downstream < 0 or not run.upstream:
                previous = run.upstream[-1] if run.upstream else previous
                continue
            first, last = run.upstream[0], run.upstream[-1]
            sync = OffsetSync(self.tp, first, run.downstream)
            syncs.produce(clients.syncs_topic, sync.record_value(), sync.record_key(), partition=0)
            if clients.mappings_topic is not None and last - first + 1 == len(run.upstream):
                mapping = mapping_for_copied_range(self.tp, first, run.downstream, len(run.upstream), previous)
                syncs.produce(clients.mappings_topic, mapping.record_value(), mapping.record_key(), partition=0)
            previous = last
        syncs.poll(0)

    def acked(self, run: _Run, chunk: _Chunk) -> Any:
        def callback(base_offset: int, error: BaseException | None) -> None:
            if error is not None:
                chunk.error = chunk.error or error
            run.downstream = base_offset

        return callback


class BatchGroupCopier:
    """Copies a Spark task's units as batches (see the module docstring)."""

    def __init__(self, clients: BackfillClients, units: list[WorkUnit], attempt: int) -> None:
        self.clients = clients
        self.units = units
        self.attempt = attempt
        self.in_transaction = False
        self.transaction_started = 0.0
        self._limits = dict(clients.max_message_bytes)

    def run(self) -> list[UnitResult]:
        clients = self.clients
        first = self.units[0]
        target, source = clients.target_producer, clients.source_consumer
        producer = TransactionalBatchProducer(
            str(target.get("bootstrap.servers", "")),
            kafka_python_security(target),
            f"{target.get('client.id', 'mm2-backfill')}-batches",
            transactional_id(clients.source, clients.target, first),
            transaction_timeout_s=int(target.get(_TIMEOUT_KEY, 60_000)) / 1000,
            request_timeout_s=clients.timeout_s,
        )
        fetcher = BatchFetcher(
            str(source.get("bootstrap.servers", "")),
            kafka_python_security(source),
            f"{source.get('client.id', 'mm2-backfill')}-batches",
            isolation_level=READ_COMMITTED,
            max_bytes=_FETCH_MAX_BYTES,
            partition_max_bytes=_PARTITION_MAX_BYTES,
            request_timeout_s=clients.timeout_s,
        )
        reader = SourceBatches(
            fetcher, lambda topic: self._limits.get(topic, DEFAULT_MAX_MESSAGE_BYTES), _FETCH_WAIT_MS
        )
        syncs = create_producer(producer_config(clients.syncs_producer)) if clients.syncs_producer else None
        copies: list[_UnitBatches] = []
        try:
            copies = resume_fenced(
                self.attempt,
                lambda: producer.init_transactions(clients.timeout_s),
                lambda: committed_offsets(clients, self.units),
                self._copies,
            )
            active = {(c.unit.topic, c.unit.partition): c for c in copies if not c.done}
            for (topic, partition), copy in active.items():
                reader.assign(topic, partition, copy.route, copy.result.resumed_from)
            started_at = time.time()
            self._copy(reader, producer, active, syncs)
            if syncs is not None:
                syncs.flush(clients.timeout_s)
            finished_at = time.time()
        except BaseException:
            if self.in_transaction:
                try:
                    producer.abort_transaction(clients.timeout_s)
                except ConnectError as e:
                    log.warning("Could not abort the transaction of the task copying %s: %s", first.name, e)
            raise
        finally:
            reader.close()
            producer.close()
            if syncs is not None:
                syncs.flush(clients.timeout_s)
        for copy in copies:
            if not copy.result.started_at:
                copy.result.started_at, copy.result.finished_at = started_at, finished_at
        return [c.result for c in copies]

    def _copies(self, committed: dict[bytes, int]) -> list[_UnitBatches]:
        return [
            _UnitBatches(
                self.clients, u, max(u.start, committed.get(offset_key(self.clients, u), -1) + 1), self.attempt
            )
            for u in self.units
        ]

    def _copy(
        self,
        reader: SourceBatches,
        producer: TransactionalBatchProducer,
        active: dict[tuple[str, int], _UnitBatches],
        syncs: Producer | None,
    ) -> None:
        clients = self.clients
        by_route = {id(c.route): c for c in active.values()}
        cap = ThroughputCap(clients.task_throughput_limit) if clients.task_throughput_limit is not None else None
        if cap is not None:
            reader.limit_fetch(cap.fetch_bytes(reader.fetch_max_bytes))
        deadline = time.monotonic() + clients.timeout_s
        txn_records = txn_bytes = 0
        txn_deadline = float("inf")
        while any(not c.done for c in active.values()):
            items, seen = reader.read(_FETCH_WAIT_MS)
            if self.in_transaction and time.monotonic() >= txn_deadline:
                self._commit(producer, active.values(), syncs)
                txn_records = txn_bytes = 0
            copied = 0
            for item in items:
                if isinstance(item, CopyBatch):
                    copy = by_route[id(item.route)]
                    batch = item.batch
                    if copy.done or batch.base_offset >= copy.unit.end:
                        copy.done = True
                        continue
                    if batch.next_offset > copy.unit.end:  # runs past the unit: only its records before the end
                        item = DecodedRecords(decoded_records(item.route, batch, batch.base_offset))
                    else:
                        txn_deadline = self._begin(producer, txn_deadline)
                        run = _Run(range(batch.base_offset, batch.next_offset))
                        chunk = copy.chunk
                        chunk.runs.append(run)
                        producer.send(copy.route.topic, copy.route.partition, batch, copy.acked(run, chunk))
                        size = len(batch.data)
                        chunk.count += len(run.upstream)
                        chunk.bytes += size
                        chunk.last_upstream = batch.next_offset - 1
                        txn_records, txn_bytes, copied = (
                            txn_records + len(run.upstream),
                            txn_bytes + size,
                            copied + size,
                        )
                        copy.done = batch.next_offset >= copy.unit.end
                if isinstance(item, DecodedRecords):
                    txn_records, txn_bytes, copied = self._send_decoded(
                        producer, by_route, item, (txn_records, txn_bytes, copied), txn_deadline
                    )
                    txn_deadline = self._txn_deadline(txn_deadline)
                if txn_records >= clients.chunk_records or txn_bytes >= clients.chunk_bytes:
                    self._commit(producer, active.values(), syncs)
                    txn_records = txn_bytes = 0
                    txn_deadline = float("inf")
            for part in seen:  # fetched to the unit's end (only markers left, or nothing): done
                copy = by_route[id(part.route)]
                if not copy.done and part.position >= copy.unit.end and not part.rule.holding:
                    copy.done = True
            for (topic, partition), copy in active.items():
                if copy.done:
                    reader.partitions.pop((topic, partition), None)
            if cap is not None and copied:
                cap.take(copied)
            if items:
                deadline = time.monotonic() + clients.timeout_s
            elif time.monotonic() > deadline:
                late = ", ".join(c.unit.name for c in active.values() if not c.done)
                raise ConnectError(f"No records from {late} within {clients.timeout_s:g}s")
            producer.poll(0)
        if self.in_transaction:
            self._commit(producer, active.values(), syncs)

    def _txn_deadline(self, current: float) -> float:
        return self.transaction_started + self.clients.chunk_seconds if self.in_transaction else current

    def _begin(self, producer: TransactionalBatchProducer, current: float) -> float:
        if not self.in_transaction:
            producer.begin_transaction()
            self.in_transaction = True
            self.transaction_started = time.monotonic()
            return self.transaction_started + self.clients.chunk_seconds
        return current

    def _send_decoded(
        self,
        producer: TransactionalBatchProducer,
        by_route: dict[int, _UnitBatches],
        item: DecodedRecords,
        counts: tuple[int, int, int],
        txn_deadline: float,
    ) -> tuple[int, int, int]:
        """Records of a batch that could not pass as it is, built into batches again (each below the target
        topic's max.message.bytes), into the same transaction, in order."""
        txn_records, txn_bytes, copied = counts
        records = item.records
        if not records:
            return counts
        copy = next((c for c in by_route.values() if c.route.topic == records[0].topic and
                     c.route.partition == records[0].kafka_partition), None)  # fmt: skip
        if copy is None or copy.done:
            return counts
        wanted = [r for r in records if _offset(r) < copy.unit.end]
        if not wanted:
            copy.done = True
            return counts
        self._begin(producer, txn_deadline)
        limit = self._limits.get(copy.route.topic, DEFAULT_MAX_MESSAGE_BYTES)
        for group in _within(wanted, limit):
            plain = [PlainRecord(r.key, r.value, list(r.headers or ()), r.timestamp) for r in group]
            run = _Run([_offset(r) for r in group])
            chunk = copy.chunk
            chunk.runs.append(run)
            producer.send_records(copy.route.topic, copy.route.partition, plain, copy.acked(run, chunk))
            size = sum(len(r.key or b"") + len(r.value or b"") for r in plain)
            chunk.count += len(plain)
            chunk.bytes += size
            chunk.last_upstream = run.upstream[-1]
            txn_records, txn_bytes, copied = txn_records + len(plain), txn_bytes + size, copied + size
        copy.done = copy.chunk.last_upstream >= copy.unit.end - 1
        return txn_records, txn_bytes, copied

    def _commit(self, producer: TransactionalBatchProducer, copies: Any, syncs: Producer | None) -> None:
        """Every unit's chunk and progress record in the open transaction, committed; then their syncs."""
        clients = self.clients
        sealed = [c for c in copies if c.chunk.count]
        for copy in sealed:
            value = serialize_offset_value(wrap_offset(copy.chunk.last_upstream))
            partition = key_partition(copy.key, max(1, clients.offsets_partitions))
            producer.send_records(
                clients.offsets_topic, partition, [PlainRecord(copy.key, value)], copy.acked(_Run([]), copy.chunk)
            )
        producer.commit_transaction(clients.timeout_s)
        self.in_transaction = False
        open_s = time.monotonic() - self.transaction_started
        for copy in sealed:
            copy.committed(syncs, open_s)
        fail_if_injected(clients, self.attempt, sealed)


def _within(records: list[SourceRecord], limit: int) -> list[list[SourceRecord]]:
    """The records in consecutive groups whose batch stays below ``limit`` bytes (a record above it alone)."""
    return batches_within(records, lambda r: record_bytes(r.key, r.value, r.headers), limit)


def _offset(record: SourceRecord) -> int:
    """The source offset of a decoded record (the batch reader always sets it)."""
    return int((record.source_offset or {})[OFFSET_KEY])


def copy_units_as_batches(clients: BackfillClients, units: list[WorkUnit], attempt: int = 0) -> list[UnitResult]:
    """Copy units as batches; safe to run again for the same units (each resumes from its last commit)."""
    return BatchGroupCopier(clients, units, attempt).run()


__all__ = ["BatchGroupCopier", "copy_units_as_batches"]
