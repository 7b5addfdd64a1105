"""Backfill work units, copied exactly once by a Spark task (executor side).

A task copies its units with one consumer (fetching all their partitions at once, as the live task
does) and one transactional producer. Each transaction on the target holds a chunk of each unit's
records (it commits when it reaches a bound in records, bytes or age: :mod:`backfill_bounds`) *and*
each unit's progress, written as the MirrorSourceConnector's own source offset in the flow's offsets
topic: the live task and a retried attempt both resume from what was committed, never from what was
merely sent. The transactional.id is that of the task's first unit, the same for every attempt of the
task, so starting an attempt fences (and aborts the open transaction of) any earlier attempt; a retried
attempt fences *before* it reads its committed position, so no earlier attempt can commit after that
read. Before the tasks start, the Spark driver fences the ids an earlier run's tasks used, which covers a
run that grouped the units otherwise (:mod:`backfill_task_ids`). After each commit the chunk's offset
syncs and offset mapping are sent (they live on another cluster by default, so they cannot join the
transaction; syncs are idempotent points and a lost one only costs translation precision).
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import consumer_config, create_consumer, create_producer, producer_config
from connect_core.kafka.fencing import fence_transactional_ids
from connect_core.kafka.types import ClientPartition, KafkaError, KafkaException, Message, Producer
from connect_core.storage.offset_storage import (
    deserialize_offset_key,
    deserialize_offset_value,
    serialize_offset_key,
    serialize_offset_value,
)
from mirror.client.formats import OffsetSync, TopicPartition, unwrap_offset, wrap_offset, wrap_partition
from mirror.client.offset_mappings import mapping_for_copied_range
from mirror.connectors.throughput_cap import ThroughputCap
from mirror.jobs.backfill.bounds import DEFAULT_BYTES, DEFAULT_SECONDS
from mirror.jobs.backfill.plan import WorkUnit, transactional_id

log = logging.getLogger(__name__)

SOURCE_CONNECTOR = "MirrorSourceConnector"
_CONSUME_BATCH = 2000
_BATCH_BYTES = 1_000_000
_BATCH_RECORDS = 10_000
_CONSUMER_TUNING: dict[str, Any] = {
    "enable.auto.commit": False,
    "enable.partition.eof": True,
    "queued.max.messages.kbytes": 65536,
    "fetch.max.bytes": 32 * 1024 * 1024,
    "max.partition.fetch.bytes": 8 * 1024 * 1024,
    "fetch.wait.max.ms": 500,
    "fetch.queue.backoff.ms": 20,
}
#: Defaults (a user's own setting wins) for a task's clients. librdkafka waits half the reconnect backoff
#: (50 ms by default) before it connects to the broker a first metadata answer names: that wait was
#: 40-50 ms of the 65-115 ms a task took to start copying, and it is 11 ms at 20.
_CLIENT_DEFAULTS: dict[str, Any] = {"reconnect.backoff.ms": 20}
_PRODUCER_TUNING: dict[str, Any] = {
    # A batch job waits for full batches: a commit flushes at once, so no chunk waits for the linger.
    # At 100 ms the producer's I/O thread used 2-3x the CPU (0.6-0.8 s per 300 MB against 0.1-0.3 s).
    "linger.ms": 1000,
    "batch.size": _BATCH_BYTES,
    "batch.num.messages": _BATCH_RECORDS,
    # Java's buffer.memory. An idempotent producer sends one batch per partition at a time, and its I/O
    # thread spins while a queued record is older than linger.ms or a flush is on (librdkafka 2.x):
    # a queue the target drains in well under the linger keeps it asleep.
    "queue.buffering.max.kbytes": 32_768,
    "queue.buffering.max.messages": 500_000,
}


@dataclass(frozen=True)
class BackfillClients:
    """What an executor needs to copy one unit (picklable: plain dicts and strings)."""

    source: str
    target: str
    source_consumer: dict[str, Any]
    target_producer: dict[str, Any]
    target_consumer: dict[str, Any]
    offsets_topic: str
    syncs_producer: dict[str, Any] | None
    syncs_topic: str
    mappings_topic: str | None
    #: a transaction commits once it holds this many records or bytes, or is this old (see backfill_bounds)
    chunk_records: int
    timeout_s: float
    chunk_bytes: int = DEFAULT_BYTES
    chunk_seconds: float = DEFAULT_SECONDS
    #: test seam: the first attempt of the unit named here raises after this many committed chunks
    fail_first_attempt: tuple[str, int] | None = None
    #: bytes per second (record keys and values fetched) each task may copy: its share of the job's limit
    task_throughput_limit: float | None = None
    #: copy the source's record batches as bytes (the flow needs no decoded record: batch_copy.py)
    batch_copy: bool = False
    #: partitions of the offsets topic (where a unit's progress record goes: its key's partition)
    offsets_partitions: int = 0
    #: the target topics' max.message.bytes (a larger batch goes through the record path)
    max_message_bytes: tuple[tuple[str, int], ...] = ()


@dataclass
class UnitResult:
    """What one unit's copy did (the last, successful attempt)."""

    topic: str
    partition: int
    start: int
    end: int
    resumed_from: int
    records: int
    bytes: int
    chunks: int
    attempt: int
    #: epoch seconds: the attempt's first fetch (clients up, producer id held) and its last chunk's commit
    started_at: float = 0.0
    finished_at: float = 0.0
    #: seconds from begin to committed of the longest transaction that held a chunk of this unit
    longest_transaction_s: float = 0.0
    #: the Spark task (partition index) that copied the unit, and that task's start and end (epoch seconds)
    task: int = -1
    task_started_at: float = 0.0
    task_finished_at: float = 0.0


def offset_key(clients: BackfillClients, unit: WorkUnit) -> bytes:
    return serialize_offset_key(
        SOURCE_CONNECTOR, wrap_partition(TopicPartition(unit.topic, unit.partition), clients.source)
    )


def committed_offsets(clients: BackfillClients, units: list[WorkUnit]) -> dict[bytes, int]:
    """The flow's committed source offsets (last copied record) of the units' partitions, by offset key."""
    from connect_core.storage.committed_offsets import read_committed_offsets

    wanted = {offset_key(clients, unit) for unit in units}
    found: dict[bytes, int] = {}
    # decided from the transaction markers: an earlier attempt's aborted offset record is not a position
    for key, value in read_committed_offsets(clients.offsets_topic, clients.target_consumer, clients.timeout_s):
        if key in wanted:
            found[key] = unwrap_offset(deserialize_offset_value(value)) if value is not None else -1
    return found


class _Chunk:
    """One transaction's records: counts, and the target offsets of its first and last records
    (from their delivery reports only: no per-record callback on the hot path)."""

    __slots__ = ("bytes", "count", "error", "first_downstream", "first_upstream", "last_downstream", "last_upstream")

    def __init__(self) -> None:
        self.first_upstream = self.last_upstream = -1
        self.first_downstream = self.last_downstream = -1
        self.count = self.bytes = 0
        self.error: KafkaError | None = None

    def on_first(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.error = err
        else:
            self.first_downstream = int(msg.offset() or 0)

    def on_last(self, err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            self.error = err
        else:
            self.last_downstream = int(msg.offset() or 0)

    def on_both(self, err: KafkaError | None, msg: Message) -> None:
        self.on_first(err, msg)
        self.on_last(err, msg)

    def on_other(self, err: KafkaError | None, _msg: Message) -> None:
        if err is not None:
            self.error = err


def _send(
    producer: Producer,
    topic: str,
    partition: int,
    msg: Message,
    on_delivery: Callable[[KafkaError | None, Message], None] | None,
) -> int:
    """Byte-for-byte as MirrorSource: key, value, headers and timestamp, same partition; returns the
    record's key and value bytes. The copy loop inlines this; it is the slow path (a full local queue)."""
    value, key = msg.value(), msg.key()
    kind, ts = msg.timestamp()
    headers = msg.headers()
    while True:
        try:
            producer.produce(topic, value, key, partition, on_delivery, None, ts if kind and ts > 0 else 0, headers)
            return (len(value) if value else 0) + (len(key) if key else 0)
        except BufferError:
            producer.poll(0.05)


def transactional_producer_config(clients: BackfillClients, transactional_id: str) -> dict[str, Any]:
    return {
        **_PRODUCER_TUNING,
        **_CLIENT_DEFAULTS,
        **producer_config(clients.target_producer, {"transactional.id": transactional_id, "enable.idempotence": True}),
    }


def transactional_producer(clients: BackfillClients, transactional_id: str) -> Producer:
    return create_producer(transactional_producer_config(clients, transactional_id))


def drain_limit(partitions: int, records: int, record_bytes: int, batch_bytes: int, batch_records: int) -> int:
    """How many queued records a commit may leave to its flush: one part-filled batch per partition.

    A flush makes librdkafka's I/O thread spin while any partition has a batch waiting behind its one
    in-flight request, so full batches are better sent before it; part-filled ones would wait out the
    linger. Sizes count keys and values only, so a real batch holds fewer records than estimated."""
    per_record = record_bytes / records if records > 0 else 0.0
    per_batch = batch_records if per_record <= 0 else int(min(batch_records, max(1.0, batch_bytes / per_record)))
    return partitions * per_batch


def init_transactions(producer: Producer, clients: BackfillClients, topic: str, what: str) -> None:
    """InitProducerId: fences every earlier producer of the id and aborts its open transaction."""
    try:
        # A broker up first: librdkafka's coordinator look-up, finding none, waits out a 500 ms retry
        # timer. The first metadata answer may come from the bootstrap connection, which librdkafka then
        # drops for the broker it names; the second waits until that broker's connection is up.
        producer.list_topics(topic, clients.timeout_s)
        producer.list_topics(topic, clients.timeout_s)
        producer.init_transactions(clients.timeout_s)
    except KafkaException as e:
        raise ConnectError(f"Cannot start a transaction on cluster '{clients.target}' for {what}: {e}") from e


def resume_fenced(
    attempt: int,
    fence: Callable[[], None],
    read_committed: Callable[[], dict[bytes, int]],
    begin: Callable[[dict[bytes, int]], T],
) -> T:
    """Start an attempt in the one order that keeps it exactly once: ``fence`` is the attempt's InitProducerId,
    ``read_committed`` reads the units' committed positions, ``begin`` sets the copies up from positions ({}:
    the plan's) and returns them.

    A first attempt begins where the plan says (read after the driver fenced every earlier run's ids), so
    fetching starts while the producer gets its id. A retried attempt fences first, then reads: once the
    fence is done no earlier attempt (a paused or still running one) can commit, so the positions read next
    are final; read first, and an old attempt could commit a chunk in between that this one copies again."""
    if attempt == 0:
        started = begin({})
        fence()
        return started
    fence()
    return begin(read_committed())


def fence_ids(clients: BackfillClients, ids: Iterable[str]) -> None:
    """Re-initialise transactional ids an earlier run used (on the Spark driver): aborts what it left open
    (on some brokers an open transaction holds the last stable offset back) and fences its stray executors.
    Which ids: :mod:`mirror.jobs.backfill.task_ids`."""
    fence_transactional_ids(
        transactional_producer_config(clients, ""),
        ids,
        clients.timeout_s,
        whose="an earlier backfill run's ",
        warm_up_topic=clients.offsets_topic,
    )


def plain_producer_config(clients: BackfillClients) -> dict[str, Any]:
    """The target producer without a transactional id, for the driver's own bookkeeping records."""
    return {**_CLIENT_DEFAULTS, **producer_config(clients.target_producer)}


class CommittedChunk(Protocol):
    """What the accounting after a commit reads of a unit's chunk, whichever copier filled it."""

    count: int
    bytes: int
    last_upstream: int
    error: Any  # a delivery failure (the record path's KafkaError, the batch path's exception) or None


ChunkT = TypeVar("ChunkT", bound=CommittedChunk)
T = TypeVar("T")


class UnitProgress(Generic[ChunkT]):
    """One unit of a Spark task, for either copier: its result, its chunk of the open transaction, the last
    source offset an earlier chunk copied, and the one rule of what a committed chunk adds to them."""

    def __init__(self, clients: BackfillClients, unit: WorkUnit, resumed: int, attempt: int) -> None:
        self.clients = clients
        self.unit = unit
        self.key = offset_key(clients, unit)
        self.tp = TopicPartition(unit.topic, unit.partition)
        self.result = UnitResult(unit.topic, unit.partition, unit.start, unit.end, resumed, 0, 0, 0, attempt)
        self.done = resumed >= unit.end
        self.chunk: ChunkT = self._new_chunk()
        self.previous: int | None = None  # the last source offset copied by an earlier chunk

    def _new_chunk(self) -> ChunkT:
        raise NotImplementedError

    def _send_syncs(self, syncs: Producer, chunk: ChunkT) -> None:
        """The chunk's offset syncs and mappings (each copier knows where its chunk's records landed)."""
        raise NotImplementedError

    def committed(self, syncs: Producer | None, open_s: float) -> None:
        """The transaction holding the sealed chunk committed after ``open_s`` seconds open: count the chunk
        into the result, send its offset syncs and mappings, start the next chunk."""
        chunk = self.chunk
        if chunk.count == 0:
            return
        if chunk.error is not None:
            raise ConnectError(f"Copy of {self.unit.name} failed: {_failure(chunk.error)}")
        result = self.result
        result.records += chunk.count
        result.bytes += chunk.bytes
        result.chunks += 1
        result.longest_transaction_s = max(result.longest_transaction_s, open_s)
        if syncs is not None:
            self._send_syncs(syncs, chunk)
        self.previous = chunk.last_upstream
        self.rolled_back()

    def rolled_back(self) -> None:
        self.chunk = self._new_chunk()


def _failure(error: object) -> str:
    """A delivery failure as a person reads it (a client error's own text, not its repr)."""
    return error.str() if isinstance(error, KafkaError) else str(error)


def fail_if_injected(clients: BackfillClients, attempt: int, copies: Iterable[UnitProgress[Any]]) -> None:
    """The tests' injected failure of a first attempt after a given unit's n-th committed chunk."""
    failing = clients.fail_first_attempt
    if failing is not None and attempt == 0:
        for copy in copies:
            if failing == (copy.unit.name, copy.result.chunks):
                raise ConnectError(
                    f"injected failure of {copy.unit.name} after {copy.result.chunks} committed chunk(s)"
                )


class UnitCopy(UnitProgress[_Chunk]):
    """One unit's share of its task's open transaction; records arrive in partition order.

    The chunk's latest record is held back (``pending``) until the next one arrives or the chunk is
    sealed, so that the chunk's last record, and only it, is produced with a delivery report."""

    def __init__(self, clients: BackfillClients, unit: WorkUnit, resumed: int, attempt: int) -> None:
        super().__init__(clients, unit, resumed, attempt)
        self.pending: Message | None = None
        self.target_topic, self.partition = unit.target_topic, unit.partition
        self.last_offset = unit.end - 1
        self.producer: Producer | None = None  # the task's, set before the first record

    def _new_chunk(self) -> _Chunk:
        return _Chunk()

    def seal(self) -> None:
        """The chunk's last record (with its delivery report) and the unit's progress, into the transaction."""
        chunk, producer = self.chunk, self.producer
        if chunk.count == 0 or producer is None:
            return
        assert self.pending is not None
        chunk.bytes += _send(
            producer,
            self.target_topic,
            self.partition,
            self.pending,
            chunk.on_both if chunk.count == 1 else chunk.on_last,
        )
        self.pending = None
        producer.produce(
            self.clients.offsets_topic,
            serialize_offset_value(wrap_offset(chunk.last_upstream)),
            self.key,
            on_delivery=chunk.on_other,
        )

    def rolled_back(self) -> None:
        super().rolled_back()
        self.pending = None

    def _send_syncs(self, syncs: Producer, chunk: _Chunk) -> None:
        """Offset syncs at the chunk's first and last records, and its mapping when both sides are contiguous."""
        clients = self.clients
        if chunk.first_downstream < 0 or chunk.last_downstream < 0:
            return
        for upstream, downstream in (
            (chunk.first_upstream, chunk.first_downstream),
            (chunk.last_upstream, chunk.last_downstream),
        ):
            sync = OffsetSync(self.tp, upstream, downstream)
            syncs.produce(clients.syncs_topic, sync.record_value(), sync.record_key(), partition=0)
        span = chunk.count - 1
        contiguous = (
            chunk.last_downstream - chunk.first_downstream == span
            and chunk.last_upstream - chunk.first_upstream == span
        )
        if clients.mappings_topic is not None and contiguous:
            mapping = mapping_for_copied_range(
                self.tp, chunk.first_upstream, chunk.first_downstream, chunk.count, self.previous
            )
            syncs.produce(clients.mappings_topic, mapping.record_value(), mapping.record_key(), partition=0)
        syncs.poll(0)


class GroupCopier:
    """Copies a Spark task's units: one consumer for all their partitions, one transactional producer.

    One producer, not one per unit: librdkafka spends three to four times the CPU per record when
    several idempotent producers of one process have records in flight together (8 transactional
    producers: 2.1-2.8 CPU-s for 300k x 1 KB; one: 0.7), and on a busy machine that CPU is the copy's
    speed. Its transactional.id is the task's first unit's, the same for every attempt of the task."""

    def __init__(self, clients: BackfillClients, units: list[WorkUnit], attempt: int) -> None:
        self.clients = clients
        self.units = units
        self.attempt = attempt
        self.in_transaction = False
        self.transaction_started = 0.0  # monotonic time of the open transaction's begin
        self.batch_limits = (_BATCH_BYTES, _BATCH_RECORDS)  # the producer's batch.size, batch.num.messages

    def run(self) -> list[UnitResult]:
        clients = self.clients
        first = self.units[0]
        conf = transactional_producer_config(clients, transactional_id(clients.source, clients.target, first))
        self.batch_limits = (int(conf["batch.size"]), int(conf["batch.num.messages"]))
        producer = create_producer(conf)
        consumer = create_consumer(
            {
                **_CLIENT_DEFAULTS,
                **consumer_config(
                    clients.source_consumer,
                    {"group.id": f"mm2-backfill-{clients.source}-{clients.target}", **_CONSUMER_TUNING},
                ),
            }
        )
        syncs = create_producer(producer_config(clients.syncs_producer)) if clients.syncs_producer else None
        what = f"the task copying {first.name}"
        copies: list[UnitCopy] = []
        active: dict[tuple[str, int], UnitCopy] = {}
        try:
            copies, active = resume_fenced(
                self.attempt,
                lambda: init_transactions(producer, clients, first.target_topic, what),
                lambda: committed_offsets(clients, self.units),
                lambda committed: self._begin(consumer, committed),
            )
            for copy in active.values():
                copy.producer = producer
            started_at = time.time()  # timed from here as a live task is from its first poll
            collecting = gc.isenabled()
            gc.disable()  # the loop makes no reference cycles: collections would only walk the heap
            try:
                self._copy(consumer, producer, active, syncs)
            finally:
                if collecting:
                    gc.enable()
            if syncs is not None:
                syncs.flush(clients.timeout_s)  # the last chunk's offset syncs are part of the copy
            finished_at = time.time()  # before the clients close, as a live task is timed to its last ack
        except BaseException:
            self._abort(producer, active.values())
            raise
        finally:
            consumer.close()
            producer.flush(clients.timeout_s)
            if syncs is not None:
                syncs.flush(clients.timeout_s)
        for copy in active.values():
            copy.result.started_at, copy.result.finished_at = started_at, finished_at
        return [c.result for c in copies]

    def _begin(
        self, consumer: Any, committed: dict[bytes, int]
    ) -> tuple[list[UnitCopy], dict[tuple[str, int], UnitCopy]]:
        """The units' copies (see :meth:`_copies`), the unfinished ones assigned to the consumer."""
        copies, active = self._copies(committed)
        consumer.assign([ClientPartition(t, p, c.result.resumed_from) for (t, p), c in active.items()])
        return copies, active

    def _copies(self, committed: dict[bytes, int]) -> tuple[list[UnitCopy], dict[tuple[str, int], UnitCopy]]:
        """Every unit's copy from the later of its planned start and its committed position; the unfinished."""
        copies = [
            UnitCopy(
                self.clients, unit, max(unit.start, committed.get(offset_key(self.clients, unit), -1) + 1), self.attempt
            )
            for unit in self.units
        ]
        return copies, {(c.unit.topic, c.unit.partition): c for c in copies if not c.done}

    def _copy(
        self, consumer: Any, producer: Producer, active: dict[tuple[str, int], UnitCopy], syncs: Producer | None
    ) -> None:
        """The hot loop: per record, the message's accessors and one ``produce``; everything else per run
        of one partition's records (a consumed batch holds whole fetched batches, so runs are long)."""
        timeout_s = self.clients.timeout_s
        remaining = len(active)
        deadline = time.monotonic() + timeout_s
        produce = producer.produce
        in_transaction = self.in_transaction
        # the open transaction's records and bytes against their bounds; its age is checked per batch
        max_records, max_bytes, max_seconds = (
            self.clients.chunk_records,
            self.clients.chunk_bytes,
            self.clients.chunk_seconds,
        )
        txn_records = txn_bytes = 0
        txn_deadline = float("inf")
        limit = self.clients.task_throughput_limit
        cap = ThroughputCap(limit) if limit is not None else None
        while remaining:
            msgs = consumer.consume(_CONSUME_BATCH, 0.5)
            if cap is not None and msgs:  # throttles the fetching; order and transactions are unchanged
                cap.take(sum(len(m) + len(m.key() or b"") for m in msgs))
            if in_transaction and time.monotonic() >= txn_deadline:  # old enough: commit what it holds
                self._commit(producer, active.values(), syncs)
                in_transaction, txn_records, txn_bytes = False, 0, 0
            if not msgs:
                if time.monotonic() > deadline:
                    late = ", ".join(c.unit.name for c in active.values() if not c.done)
                    raise ConnectError(f"No records from {late} within {timeout_s:g}s")
                continue
            deadline = time.monotonic() + timeout_s
            copy: UnitCopy | None = None
            run_topic: str | None = None
            run_partition = -1
            # the run's unit, in locals (its pending record is written back to it before anything else looks)
            chunk, pending, first_cb, end, last_offset = _Chunk(), None, None, 0, 0
            target_topic, tpart, done = "", -1, True
            for msg in msgs:
                partition, topic = msg.partition(), msg.topic()
                if partition != run_partition or topic != run_topic:
                    if copy is not None:
                        copy.pending = pending
                    copy = active.get((topic, partition))
                    if copy is None:  # a client-level event, not a record of ours
                        self._client_event(msg)
                        run_topic = None
                        continue
                    run_topic, run_partition = topic, partition
                    chunk, pending, done = copy.chunk, copy.pending, copy.done
                    first_cb = chunk.on_first if chunk.count == 1 and pending is not None else None
                    end, last_offset = copy.unit.end, copy.last_offset
                    target_topic, tpart = copy.target_topic, copy.partition
                if done:
                    continue
                offset = msg.offset()
                err = msg.error()
                if err is not None:
                    if err.code() != KafkaError._PARTITION_EOF:
                        raise ConnectError(f"Cannot read {copy.unit.name}: {err.str()}")  # type: ignore[union-attr]
                    done = (offset or 0) >= end  # the log ends at or past the unit: only markers were left
                elif offset >= end:  # written after the plan: the live task's, not ours
                    done = True
                else:
                    if not in_transaction:
                        producer.begin_transaction()
                        self.in_transaction = in_transaction = True
                        self.transaction_started = time.monotonic()
                        txn_deadline = self.transaction_started + max_seconds
                    if pending is not None:
                        value, key = pending.value(), pending.key()
                        kind, ts = pending.timestamp()
                        try:
                            produce(
                                target_topic,
                                value,
                                key,
                                tpart,
                                first_cb,
                                None,
                                ts if kind and ts > 0 else 0,
                                pending.headers(),
                            )
                            size = (len(value) if value else 0) + (len(key) if key else 0)
                        except BufferError:
                            size = _send(producer, target_topic, tpart, pending, first_cb)
                        chunk.bytes += size
                        txn_bytes += size
                        first_cb = None
                    else:
                        chunk.first_upstream = offset
                        first_cb = chunk.on_first
                    pending = msg
                    chunk.last_upstream = offset
                    chunk.count += 1
                    txn_records += 1
                    if offset >= last_offset:
                        done = True
                    if txn_records >= max_records or txn_bytes >= max_bytes:  # full: the transaction commits
                        copy.pending = pending  # type: ignore[union-attr]
                        self._commit(producer, active.values(), syncs)
                        in_transaction, txn_records, txn_bytes = False, 0, 0
                        chunk, pending, first_cb = copy.chunk, None, None  # type: ignore[union-attr]
                if done:
                    assert copy is not None
                    copy.done = True
                    consumer.pause([ClientPartition(copy.unit.topic, copy.unit.partition)])
                    remaining -= 1
            if copy is not None:
                copy.pending = pending
        if self.in_transaction:
            self._commit(producer, active.values(), syncs)

    @staticmethod
    def _client_event(msg: Message) -> None:
        """An error event of the consumer itself: fatal ones end the copy, others librdkafka retries."""
        err = msg.error()
        if err is not None and err.fatal():
            raise ConnectError(f"Cannot read the source: {err.str()}")

    def _commit(self, producer: Producer, copies: Iterable[UnitCopy], syncs: Producer | None) -> None:
        """Every unit's chunk and progress in the open transaction, committed; then their offset syncs."""
        copies = [c for c in copies if c.chunk.count]
        for copy in copies:
            copy.seal()
        self._drain(producer, copies)
        producer.commit_transaction(self.clients.timeout_s)
        self.in_transaction = False
        open_s = time.monotonic() - self.transaction_started
        for copy in copies:
            copy.committed(syncs, open_s)
        fail_if_injected(self.clients, self.attempt, copies)

    def _drain(self, producer: Producer, copies: list[UnitCopy]) -> None:
        """Wait (asleep in poll) until only part-filled batches are queued: see :func:`drain_limit`.
        Each unit's progress record is queued too, on a partition of the offsets topic."""
        limit = drain_limit(
            len(copies), sum(c.chunk.count for c in copies), sum(c.chunk.bytes for c in copies), *self.batch_limits
        ) + len(copies)
        deadline = time.monotonic() + self.clients.timeout_s
        while len(producer) > limit and time.monotonic() < deadline:
            producer.poll(0.01)

    def _abort(self, producer: Producer, copies: Iterable[UnitCopy]) -> None:
        if self.in_transaction:
            try:
                producer.abort_transaction(self.clients.timeout_s)
            except KafkaException as e:
                log.warning("Could not abort the transaction of the task copying %s: %s", self.units[0].name, e)
            self.in_transaction = False
        for copy in copies:
            copy.rolled_back()


def copy_units(clients: BackfillClients, units: list[WorkUnit], attempt: int = 0) -> list[UnitResult]:
    """Copy units; safe to run again for the same units (each resumes from its last committed chunk)."""
    try:
        return GroupCopier(clients, units, attempt).run()
    except SystemError as e:
        # confluent-kafka reports a client error raised while it serves callbacks (a fenced producer's, for
        # one) as "SystemError: <callback> returned a result with an exception set": the client's own
        # error, its cause, is what the attempt failed of.
        if isinstance(e.__cause__, KafkaException | ConnectError):
            raise e.__cause__ from None
        raise


def copy_unit(clients: BackfillClients, unit: WorkUnit, attempt: int = 0) -> UnitResult:
    return copy_units(clients, [unit], attempt)[0]


def decode_progress(key: bytes | None, value: bytes | None) -> tuple[tuple[str, int], int] | None:
    """((topic, partition), last copied offset) of a MirrorSourceConnector offset record, else None."""
    decoded = deserialize_offset_key(key)
    if decoded is None or decoded[0] != SOURCE_CONNECTOR or decoded[1] is None or value is None:
        return None
    partition = decoded[1]
    try:
        return (str(partition["topic"]), int(partition["partition"])), unwrap_offset(deserialize_offset_value(value))
    except (KeyError, TypeError, ValueError):
        return None


__all__ = ["BackfillClients", "UnitResult", "committed_offsets", "copy_unit", "copy_units", "decode_progress"]
