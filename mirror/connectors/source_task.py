"""MirrorSourceTask: copies its assigned source partitions, record for record, to the remote topics.

Behaviour (Kafka 4.x ``MirrorSourceTask``):

* The consumer is ``assign()``-ed (no group membership, nothing committed to the source). Each
  partition resumes at the stored Connect offset + 1 (the offset is the last replicated record);
  a partition without one starts per ``auto.offset.reset`` (MM2 default ``earliest``).
* Each record keeps its partition number, key and value bytes (tombstones stay tombstones), all
  headers (order, duplicates, null values) and its source timestamp; the topic is named by the
  replication policy. Source partition ``{topic, partition, cluster}``, offset ``{offset}``.
* ``commit_record`` (after the target acknowledged) feeds the offset syncs and the offset mappings,
  through the partition's :class:`~mirror.connectors.partition_copy.PartitionCopy`. What is
  acknowledged is *published* (open offset mappings and delayed offset syncs written) at most every
  :data:`PUBLISH_INTERVAL_S` while copies are acknowledged, and at each offset flush (``commit``):
  translation and ``mm2 verify`` are exact within about a second of the copy, whatever
  ``offset.flush.interval.ms`` says. Kafka sends delayed syncs only at the offset flush (60 s).

The single seam of "acknowledged": the task learns of a copy only through ``commit_record`` and its
routes' ``acknowledged`` (a run of messages or a batch), which the runtime calls once the target holds the
records (a transactional runtime calls them after the transaction commits). Every one of them reports to
the partition's :class:`~mirror.connectors.partition_copy.PartitionCopy`, the one rule of what an
acknowledgement decides; publishing only ever writes what they reported, so no mapping or sync points at
a record the target does not have.

Memory is bounded whatever the backlog: librdkafka's prefetch queue is capped
(``queued.max.messages.kbytes``, ``fetch.max.bytes``) and ``poll`` returns at most
``max.poll.records`` records. ``fetch.wait.max.ms`` is kept at or above 100 ms.

Metrics are aggregated per batch and partition and handed to a :class:`SourceMetrics` sink, never
per record; the default sink does nothing.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from connect_core.api.batch_copy import BatchItem, DecodedRecords
from connect_core.api.errors import ConfigError, ConfigIssue
from connect_core.api.message_copy import CopyRun
from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.api.schema import OPTIONAL_BYTES_SCHEMA
from connect_core.api.task import SourceTask
from connect_core.kafka.batch_fetcher import READ_COMMITTED, BatchFetcher, BrokerUnreachable
from connect_core.kafka.client_logging import report_unreachable
from connect_core.kafka.clients import consumer_config, create_consumer
from connect_core.kafka.errors import from_kafka_error
from connect_core.kafka.security import kafka_python_security
from connect_core.kafka.types import OFFSET_BEGINNING, OFFSET_END, PARTITION_EOF, ClientPartition, Consumer, KafkaError
from mirror.client.formats import (
    OFFSET_KEY,
    PARTITION_KEY,
    TOPIC_KEY,
    OffsetSync,
    TopicPartition,
    unwrap_offset,
    wrap_partition,
)
from mirror.client.policy import ReplicationPolicy
from mirror.connectors.config import REPLICATION_CONSUMER_ROLE, MirrorSourceTaskConfig, OffsetReset
from mirror.connectors.log_start_lookup import LogStartLookup
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.connectors.offset_sync_producer import OffsetSyncProducer
from mirror.connectors.offset_sync_writer import OffsetSyncQueue
from mirror.connectors.partition_copy import PartitionCopy
from mirror.connectors.source_batches import (
    DEFAULT_FETCH_WAIT_MS,
    DEFAULT_MAX_MESSAGE_BYTES,
    LATEST,
    SourceBatches,
)
from mirror.connectors.source_gaps import LOST_KEY, GapTracker, LostRange, LostTotal
from mirror.connectors.source_gaps_check import GAPS_ADMIN_ROLE, log_starts_now, report_lost
from mirror.connectors.source_incarnation import TOPIC_ID_KEY, RecreatedAction
from mirror.connectors.source_incarnation_check import INCARNATION_ADMIN_ROLE, lookup_topic_ids, start_decisions
from mirror.connectors.source_incarnation_watch import IncarnationChange, TopicIdWatch
from mirror.connectors.source_metrics import NoOpSourceMetrics, SourceMetrics, reports_lag
from mirror.connectors.throughput_cap import THROUGHPUT_LIMIT, ThroughputCap, flow_cap, parse_limit

log = logging.getLogger(__name__)

#: Prefetch defaults (a user's explicit consumer setting wins, but never beyond these caps unless set).
PREFETCH_DEFAULTS: dict[str, Any] = {
    "queued.max.messages.kbytes": 32768,
    "queued.min.messages": 20000,
    "fetch.max.bytes": 16 * 1024 * 1024,
    "fetch.wait.max.ms": 500,
    # librdkafka's default (1000 ms) idles the fetcher for a whole second each time the capped
    # prefetch queue was full, i.e. every time the task is slower than the source: 3-4x throughput.
    "fetch.queue.backoff.ms": 20,
    # where the partition ends: a trailing transaction marker is then known to hold no record
    "enable.partition.eof": True,
}
MIN_FETCH_WAIT_MS = 100
_METADATA_PER_TOPIC_MAX = 8
DEFAULT_MAX_POLL_RECORDS = 1000
#: Longest consumer wait while records are still unacknowledged (acks are served between polls).
ACK_WAIT_POLL_S = 0.005
#: Acknowledged copies become translatable (mappings and delayed syncs written) at most this long after
#: their acknowledgement; also the shortest time between two publications (bounds the records written).
PUBLISH_INTERVAL_S = 0.5
#: client.id role of the admin that looks up log starts (offset-mapping records below them are tombstoned)
MAPPINGS_RETENTION_ADMIN_ROLE = "offset-mappings-retention-admin"
#: A start position below every stored one: the partition is a new incarnation, read from its log start.
_NEW_INCARNATION = -3


_NO_TIMESTAMP = float("inf")


class _Partition:
    """Everything the hot path needs about one assigned source partition, found once per run of messages.

    It is also the partition's :class:`~connect_core.api.message_copy.CopyRoute` when the worker
    copies messages or batches without SourceRecords (``topic``, ``partition``, ``source_partition`` and
    the per-run callbacks, which go to the task's handlers given at construction). What its acknowledged
    copies decided (offset syncs, mappings) is its ``copy``.
    """

    __slots__ = (
        "acked",
        "batch_read",
        "copy",
        "end",
        "high_watermark",
        "in_flight",
        "max_latency",
        "newest",
        "next_offset",
        "offset_extra",
        "oldest",
        "on_acknowledged",
        "on_dispatched",
        "partition",
        "polled",
        "polled_bytes",
        "read_through",
        "read_timestamp",
        "source_partition",
        "topic",
        "tp",
    )

    def __init__(
        self,
        tp: TopicPartition,
        source_partition: dict[str, Any],
        topic: str,
        on_dispatched: Callable[[_Partition, CopyRun], None],
        on_acknowledged: Callable[[_Partition, CopyRun], None],
    ) -> None:
        self.tp = tp
        self.source_partition = source_partition  # the SourceRecord.source_partition of every record
        self.topic = topic  # the remote topic
        self.partition = tp.partition
        self.on_dispatched = on_dispatched
        self.on_acknowledged = on_acknowledged
        self.copy = PartitionCopy(tp)  # told where the copy resumes at assignment when a stored offset is known
        self.end = -1  # the offset the consumer last reached the end of the partition at (-1: not yet)
        self.newest: Any = None  # newest message of the current poll (None between polls)
        self.polled = 0
        self.polled_bytes = 0
        self.oldest: float = _NO_TIMESTAMP
        self.acked = 0
        self.max_latency = 0.0
        # Lag bookkeeping: records read and handed to the producer but not acknowledged yet, the newest
        # offset read (and its timestamp), and the records of the current poll not yet counted in flight.
        self.in_flight = 0
        self.read_through = -1
        self.read_timestamp = -1
        self.batch_read = 0
        # incarnation entries of every source offset (the source topic's id; see source_incarnation)
        self.offset_extra: dict[str, Any] | None = None
        # the offset the next record read should have (-1: unknown); a higher one is a jump (see source_gaps)
        self.next_offset = -1
        self.high_watermark = -1  # the batch path's view of the source's high watermark (last fetch)

    def source_offset(self, upstream_offset: int) -> dict[str, Any]:
        extra = self.offset_extra
        if extra is None:
            return {OFFSET_KEY: upstream_offset}
        offset = extra.copy()
        offset[OFFSET_KEY] = upstream_offset
        return offset

    def dispatched(self, run: CopyRun) -> None:
        self.on_dispatched(self, run)

    def acknowledged(self, run: CopyRun) -> None:
        self.on_acknowledged(self, run)


class MirrorSourceTask(SourceTask):
    """See the module docstring."""

    def __init__(self, metrics: SourceMetrics | None = None) -> None:
        self._measure = False  # a real metrics sink: per-record byte/age/latency bookkeeping
        self._lag = False  # the sink records lag: keep the in-flight/newest-read bookkeeping it needs
        self.metrics = metrics or NoOpSourceMetrics()
        self._consumer: Consumer | None = None
        self._sync_queue: OffsetSyncQueue | None = None
        self._offset_syncs = None
        self._policy: ReplicationPolicy | None = None
        self._source_alias = ""
        self._poll_timeout_s = 1.0
        self._max_records = DEFAULT_MAX_POLL_RECORDS
        self._consumer_lock = threading.Lock()
        self._stopping = False
        self._remote: dict[str, str] = {}
        self._runs: dict[tuple[str, int], _Partition] = {}
        self._run_of: dict[int, _Partition] = {}  # id(partition map) -> its _Partition
        self._acked_runs: list[_Partition] = []  # partitions with ack metrics not yet reported
        self._foreign_acks: dict[tuple[str, int], _Partition] = {}  # ack metrics of foreign records
        self._other_copies: dict[TopicPartition, PartitionCopy] = {}  # foreign records of unassigned partitions
        self._unacknowledged = 0  # records returned by poll() and not yet seen by commit_record()
        self.assigned: list[TopicPartition] = []
        self._cap: ThroughputCap | None = None
        self._unpublished = False  # acknowledged copies not yet published (see _maybe_publish)
        self._publish_due = 0.0  # monotonic time before which nothing is published again
        self._log_starts: LogStartLookup | None = None  # for tombstoning mappings below the source's log start
        self._recreated_action = RecreatedAction.MIRROR_FROM_START
        self._flow = ""
        self._source_admin: dict[str, Any] = {}
        self._admin_timeout_s = 30.0
        self._start_ids: dict[str, str] = {}  # the source topics' ids at start (see _start_positions)
        self._watch: TopicIdWatch | None = None  # looks them up again while the task runs (issue 38)
        self._recreating: dict[TopicPartition, IncarnationChange] = {}  # held until their copies are acked
        self._suspects: dict[str, int] = {}  # topics the batch fetcher saw under a new id -> watch.started then
        self._gaps = GapTracker()  # jumps in the offsets read, checked against the log start (issue 38)
        self._gap_starts: LogStartLookup | None = None
        self._lost: dict[TopicPartition, LostTotal] = {}
        self._batch_offered = False  # the runtime can produce source batches as they are
        self._batches: SourceBatches | None = None  # set when this task reads raw batches (the batch path)
        self._target_admin: MirrorAdmin | None = None
        self._max_message_bytes: dict[str, int] = {}
        self._batch_bytes_limit = 0
        self._transaction_limits = (0, 0)  # batch path, exactly-once: bytes and ms one transaction may span

    @property
    def _offset_syncs(self) -> OffsetSyncProducer | None:
        return self._sync_producer

    @_offset_syncs.setter
    def _offset_syncs(self, producer: OffsetSyncProducer | None) -> None:
        self._sync_producer = producer
        self._sync_queue = producer.syncs if producer is not None else None  # one hop less per record

    @property
    def metrics(self) -> SourceMetrics:
        return self._metrics

    @metrics.setter
    def metrics(self, sink: SourceMetrics) -> None:
        """Set before ``start`` (``FlowMetrics.attach``); the no-op sink turns all bookkeeping off."""
        self._metrics = sink
        self._measure = not isinstance(sink, NoOpSourceMetrics)
        self._lag = reports_lag(sink)

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self, props: dict[str, str]) -> None:
        config = MirrorSourceTaskConfig(props)
        self._source_alias = config.source_cluster_alias
        self._policy = config.replication_policy()
        self._poll_timeout_s = config.consumer_poll_timeout_s
        self._stopping = False
        java = config.source_consumer_config(REPLICATION_CONSUMER_ROLE)
        self._max_records = _int_setting(java, "max.poll.records", DEFAULT_MAX_POLL_RECORDS)
        self.assigned = config.task_topic_partitions()
        self._cap = flow_cap(
            f"{self._source_alias}->{config.target_cluster_alias}", parse_limit(props.get(THROUGHPUT_LIMIT))
        )
        self.metrics.throughput(self._cap.limit, self._cap.rate())
        # -- source-incarnation hook (issue 38): what the start-time topic-id check needs
        self._recreated_action = config.recreated_action
        self._flow = f"{self._source_alias}->{config.target_cluster_alias}"
        self._source_admin = config.source_admin_config(INCARNATION_ADMIN_ROLE)
        self._admin_timeout_s = config.admin_timeout_s
        self._gap_starts = LogStartLookup(
            config.source_admin_config(GAPS_ADMIN_ROLE), interval_s=0.0, timeout_s=config.admin_timeout_s
        )
        self.metrics.assigned([(self._remote_topic(tp.topic), tp.partition) for tp in self.assigned])
        try:
            if config.emit_offset_syncs_enabled:
                self._offset_syncs = OffsetSyncProducer(
                    config.offset_syncs_topic_producer_config(),
                    config.offset_syncs_topic(),
                    config.max_offset_lag,
                    on_sent=self._on_offset_sync_sent,
                    mappings_topic=config.offset_mappings_topic(),
                )
                self._log_starts = LogStartLookup(
                    config.source_admin_config(MAPPINGS_RETENTION_ADMIN_ROLE), timeout_s=config.admin_timeout_s
                )
            reset = config.offset_reset
            if self._batch_offered and config.batch_copy_enabled:
                self._start_batches(config, java, reset)
            else:
                self._consumer = create_consumer(replication_consumer_config(java, config.entity_label()))
                self._initialize_consumer(self.assigned, reset)
            self._watch = TopicIdWatch(
                self._source_admin,
                [tp.topic for tp in self.assigned],
                self._start_ids,
                timeout_s=config.admin_timeout_s,
            )
        except BaseException:
            self.stop()
            raise
        log.info(
            "%s replicating %d topic-partitions %s->%s (%s path): %s.",
            config.entity_label(),
            len(self.assigned),
            self._source_alias,
            config.target_cluster_alias,
            self.copy_path,
            [str(tp) for tp in self.assigned],
        )

    # -- the batch path (connect_core.api.batch_copy) --------------------------------------------

    def accepts_batch_copy(self, props: dict[str, str]) -> bool:
        """``batch.copy.enabled`` in the task's configuration (a configuration that does not parse: no; its
        error is reported by ``start``)."""
        try:
            return MirrorSourceTaskConfig(props).batch_copy_enabled
        except Exception:
            return False

    def offer_batch_copy(self) -> None:
        self._batch_offered = True

    @property
    def batch_copy_active(self) -> bool:
        return self._batches is not None

    @property
    def copy_path(self) -> str:
        """``batch`` (source batches as bytes) or ``record`` (records decoded and produced again)."""
        return "batch" if self._batches is not None else "record"

    @property
    def batch_copy_max_in_flight_bytes(self) -> int:
        return self._batch_bytes_limit

    def batch_backlog(self) -> bool:
        batches = self._batches
        return batches is not None and batches.backlog()

    @property
    def batch_copy_transaction_max_bytes(self) -> int:
        return self._transaction_limits[0]

    @property
    def batch_copy_transaction_max_ms(self) -> int:
        return self._transaction_limits[1]

    def _start_batches(self, config: MirrorSourceTaskConfig, java: dict[str, Any], reset: OffsetReset) -> None:
        """Read the assigned partitions as raw batches (read_committed) with the consumer's own settings;
        ``reset`` (``earliest``/``latest``) places the partitions without a stored offset."""
        positions = 0 if reset == "earliest" else LATEST
        fetcher = BatchFetcher(
            str(java.get("bootstrap.servers", "")),
            kafka_python_security(java),
            f"{java.get('client.id', config.entity_label())}-batches",
            isolation_level=READ_COMMITTED,
            max_bytes=_int_setting(java, "fetch.max.bytes", 16 * 1024 * 1024),
            partition_max_bytes=_int_setting(java, "max.partition.fetch.bytes", 1024 * 1024),
        )
        self._batches = SourceBatches(fetcher, self._target_max_message_bytes, batch_fetch_wait_ms(java))
        self._batch_bytes_limit = config.batch_copy_max_in_flight_bytes
        self._transaction_limits = (config.batch_copy_transaction_max_bytes, config.batch_copy_transaction_max_ms)
        self._target_admin = MirrorAdmin(
            config.target_admin_config("batch-copy-admin"),
            config.target_cluster_alias,
            timeout_s=config.admin_timeout_s,
        )
        wrapped = [self._partition_map(tp.topic, tp.partition) for tp in self.assigned]
        for tp, offset in zip(self.assigned, self._start_positions(self.assigned, wrapped), strict=True):
            route = self._partition(tp.topic, tp.partition)
            if offset == _NEW_INCARNATION:  # a new incarnation of the topic: from its start
                self._batches.assign(tp.topic, tp.partition, route, 0)
                continue
            if offset >= 0:
                route.copy.resume_after(offset)
                route.next_offset = offset + 1
            self._batches.assign(tp.topic, tp.partition, route, offset + 1 if offset >= 0 else positions)
        self._load_max_message_bytes({self._remote_topic(tp.topic) for tp in self.assigned})

    def _load_max_message_bytes(self, topics: set[str]) -> None:
        """The target topics' max.message.bytes (Kafka's default where a topic does not set it)."""
        found: dict[str, int] = {}
        if self._target_admin is not None and topics:
            try:
                for topic, entries in self._target_admin.describe_topic_configs(sorted(topics)).items():
                    for entry in entries:
                        if entry.name == "max.message.bytes" and entry.value:
                            found[topic] = int(entry.value)
            except Exception as e:
                log.warning("Could not read max.message.bytes of the target topics (Kafka's default applies): %s", e)
        for topic in topics:
            self._max_message_bytes[topic] = found.get(topic, DEFAULT_MAX_MESSAGE_BYTES)

    def _target_max_message_bytes(self, topic: str) -> int:
        limit = self._max_message_bytes.get(topic)
        if limit is None:
            self._load_max_message_bytes({topic})
            limit = self._max_message_bytes[topic]
        return limit

    def batch_read_handle(self) -> int | None:
        """See :class:`~connect_core.api.batch_copy.BatchCopyTask`: the source Fetch's, while one is out."""
        batches = self._batches
        return None if batches is None else batches.wait_handle

    def poll_batches(self, in_flight: bool) -> list[BatchItem] | None:
        """One Fetch over the assigned partitions: batches to copy and records of batches that cannot be."""
        if not self._consumer_lock.acquire(blocking=False):
            return None
        try:
            batches = self._batches
            if self._stopping or batches is None:
                return None
            if self._watch is not None:  # source-incarnation hook (issue 38): a topic recreated meanwhile
                self._check_incarnations()
            if self._acked_runs:
                self._flush_ack_metrics(locked=True)
            # How long this call waits for the Fetch's answer (the broker's own wait is the flow's
            # fetch.max.wait.ms, see SourceBatches): with copies in flight not at all, the worker serves acks.
            wait_ms = int(self._poll_timeout_s * 1000)
            if in_flight:
                wait_ms = min(wait_ms, MIN_FETCH_WAIT_MS)
            if self._unpublished:
                wait_ms = max(MIN_FETCH_WAIT_MS, min(wait_ms, int(self._maybe_publish(wait_ms / 1000) * 1000)))
            if self._cap is not None:  # a reloaded cap applies from the next Fetch
                batches.limit_fetch(self._cap.fetch_bytes(batches.fetch_max_bytes))
            try:
                items, seen = batches.read(wait_ms, block=not in_flight)
            except BrokerUnreachable as e:  # as librdkafka's consumer does: said once per outage, retried
                report_unreachable(e.broker, str(e), log)
                time.sleep(min(1.0, self._poll_timeout_s))
                return None
            for reader in seen:
                route = reader.route
                route.high_watermark = reader.high_watermark
                if reader.caught_up and reader.high_watermark > route.end:
                    route.end = reader.high_watermark  # the partition's end (its mappings' trailing gap)
                    self._unpublished = True
                if self._lag and reader.caught_up and route.in_flight <= 0:
                    self._report_partition_lag(route, reader.high_watermark - 1, route.read_timestamp)
            fetched = 0
            for item in items:
                if isinstance(item, DecodedRecords):
                    self._unacknowledged += len(item.records)
                    self._run_of[id(item.records[0].source_partition)].in_flight += len(item.records)
                    fetched += sum(len(r.value or b"") + len(r.key or b"") for r in item.records)
                else:
                    fetched += len(item.batch.data)  # the batch as stored: what the fetch took from the source
            if self._cap is not None:  # the flow's throughput cap holds on the batch path too
                self._cap.take(fetched)
                self.metrics.throughput(self._cap.limit, self._cap.rate())
            return items or None
        finally:
            self._consumer_lock.release()
            if self._acked_runs:
                self._flush_ack_metrics()

    def _initialize_consumer(self, partitions: list[TopicPartition], auto_offset_reset: OffsetReset) -> None:
        """Assign the partitions at their start positions; ``auto_offset_reset`` (``earliest``/``latest``)
        places those without a stored offset."""
        assert self._consumer is not None
        wrapped = [self._partition_map(tp.topic, tp.partition) for tp in partitions]
        stored = self._start_positions(partitions, wrapped)
        reset = OFFSET_BEGINNING if auto_offset_reset == "earliest" else OFFSET_END
        assignment = []
        uncommitted = 0
        for tp, offset in zip(partitions, stored, strict=True):
            if offset == _NEW_INCARNATION:  # a new incarnation of the topic: from its start
                uncommitted += 1
                assignment.append(ClientPartition(tp.topic, tp.partition, OFFSET_BEGINNING))
            elif offset < 0:
                uncommitted += 1
                assignment.append(ClientPartition(tp.topic, tp.partition, reset))
            else:
                assignment.append(ClientPartition(tp.topic, tp.partition, offset + 1))
                # The consumer resumes right after the stored offset: offsets before its first record are empty.
                run = self._partition(tp.topic, tp.partition)
                run.copy.resume_after(offset)
                run.next_offset = offset + 1
        if uncommitted:
            self._await_leaders({tp.topic for tp in partitions})
        self._consumer.assign(assignment)
        log.info("Starting with %d previously uncommitted partitions.", uncommitted)

    def _await_leaders(self, topics: set[str]) -> None:
        """Load the topics' metadata before assigning logical offsets (earliest/latest).

        A logical offset needs a ListOffsets to the leader; librdkafka retries that only after
        500 ms when the leader is not known yet, which is always the case right after the
        consumer was created. One metadata request per topic first saves that half second per
        start (or restart) of the task. Best effort: on failure librdkafka's own retry applies.
        """
        assert self._consumer is not None
        deadline = time.monotonic() + self._poll_timeout_s
        # A few topics: one small request each; many: one request for the whole cluster.
        names: list[str | None] = [None]
        if len(topics) <= _METADATA_PER_TOPIC_MAX:
            names = [*sorted(topics)]
        for topic in names:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            try:
                self._consumer.list_topics(topic, timeout=remaining)
            except Exception as e:
                log.debug("Could not load metadata of %s before assigning: %s", topic or "all topics", e)

    def _stored_offsets(self, wrapped: list[dict[str, Any]]) -> list[int]:
        return [unwrap_offset(v) for v in self._stored_offset_values(wrapped)]

    def _stored_offset_values(self, wrapped: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        context = getattr(self, "context", None)
        if context is None or not wrapped:
            return [None] * len(wrapped)
        reader = context.offset_storage_reader()
        found = dict((_key(p), o) for p, o in reader.offsets(wrapped))
        return [found.get(_key(p)) for p in wrapped]

    def _start_positions(self, partitions: list[TopicPartition], wrapped: list[dict[str, Any]]) -> list[int]:
        """Source-incarnation hook (issue 38): the stored positions, each checked against its topic's id now.

        Returns what ``_stored_offsets`` would (the last mirrored offset, -1: none); a partition of a
        recreated topic starts at its beginning (``_NEW_INCARNATION``) per the flow's choice.
        """
        values = self._stored_offset_values(wrapped)
        ids = lookup_topic_ids(self._source_admin, sorted({tp.topic for tp in partitions}), self._admin_timeout_s)
        self._start_ids = dict(ids)
        decisions = start_decisions(
            partitions,
            values,
            ids,
            self._recreated_action,
            self._flow,
            self._remote_topic,
            self.metrics.source_changed,
        )
        resumed = [tp for tp, d in zip(partitions, decisions, strict=True) if d.position is not None]
        starts = log_starts_now(self._source_admin, resumed, self._admin_timeout_s) if resumed else {}
        out = []
        for tp, decision, value in zip(partitions, decisions, values, strict=True):
            extra = decision.extra
            run = self._partition(tp.topic, tp.partition)
            lost = None if decision.event is not None or value is None else LostTotal.decode(value.get(LOST_KEY))
            if lost is not None:  # records lost earlier stay on record (mm2 status)
                self._lost[tp] = lost
            position = decision.position
            start = starts.get(tp, -1)
            if position is not None and start > position:  # deleted while the task was away
                lost = self._lost.setdefault(tp, LostTotal())
                report_lost(LostRange(tp, position, start, start), lost, self._flow, run.topic, self.metrics)
                position = start
            if lost is not None:
                extra = {**(extra or {}), LOST_KEY: lost.encode()}
            run.offset_extra = extra
            if decision.from_beginning:
                out.append(_NEW_INCARNATION)
            else:
                out.append(-1 if position is None else position - 1)
        return out

    def stop(self) -> None:
        """May run on another thread while ``poll`` waits: wait for it, then close the clients."""
        self._stopping = True
        acquired = self._consumer_lock.acquire(timeout=self._poll_timeout_s + 30)
        try:
            if self._consumer is not None:
                try:
                    self._consumer.close()
                except Exception as e:  # closing quietly, as Kafka does
                    log.warning("Error closing the source consumer: %s", e)
                self._consumer = None
            if self._batches is not None:
                self._batches.close()
        finally:
            if acquired:
                self._consumer_lock.release()
        if self._offset_syncs is not None:
            self._offset_syncs.close()
            self._offset_syncs = None
        if self._log_starts is not None:
            self._log_starts.close()
            self._log_starts = None
        if self._gap_starts is not None:
            self._gap_starts.close()
        if self._watch is not None:
            self._watch.close()
            self._watch = None
        if self._target_admin is not None:
            self._target_admin.close()
            self._target_admin = None
        self._flush_ack_metrics()

    # -- the data path ---------------------------------------------------------------------------

    def _partition(self, topic: str, partition: int) -> _Partition:
        key = (topic, partition)
        run = self._runs.get(key)
        if run is None:
            tp = TopicPartition(topic, partition)
            run = self._runs[key] = _Partition(
                tp,
                wrap_partition(tp, self._source_alias),
                self._remote_topic(topic),
                self._run_dispatched,
                self._run_acknowledged,
            )
            self._run_of[id(run.source_partition)] = run
        return run

    def _partition_map(self, topic: str, partition: int) -> dict[str, Any]:
        """The source-partition map of a topic-partition: one object per partition, reused by every record."""
        return self._partition(topic, partition).source_partition

    def _remote_topic(self, topic: str) -> str:
        remote = self._remote.get(topic)
        if remote is None:
            assert self._policy is not None
            remote = self._remote[topic] = self._policy.format_remote_topic(self._source_alias, topic)
        return remote

    def poll(self) -> list[SourceRecord] | None:
        if not self._consumer_lock.acquire(blocking=False):
            return None
        try:
            messages = self._consume()
            if messages is None:
                return None
            records = self._convert(messages)
            if records:
                self._unacknowledged += len(records)
            return records
        finally:
            self._consumer_lock.release()
            if self._acked_runs:
                self._flush_ack_metrics()

    def _consume(self) -> list[Any] | None:
        """The next prefetched messages (consumer lock held)."""
        if self._stopping or self._consumer is None:
            return None
        if self._gaps.pending:  # source-gaps hook (issue 38): jumps waiting for their log starts
            self._check_gaps()
        if self._watch is not None:  # source-incarnation hook (issue 38): a topic recreated meanwhile
            self._check_incarnations()
        if self._acked_runs:  # acks served since the last poll: report them before blocking
            self._flush_ack_metrics(locked=True)
        # poll() returns as soon as one record is there (consume() would wait out its timeout);
        # then take whatever else is already prefetched, without waiting. While records handed
        # out are not acknowledged yet, wait briefly: the worker serves delivery reports (and so
        # commit_record and the offset syncs) only between polls.
        timeout = self._poll_timeout_s if self._unacknowledged <= 0 else min(self._poll_timeout_s, ACK_WAIT_POLL_S)
        if self._unpublished:
            timeout = self._maybe_publish(timeout)
        first = self._consumer.poll(timeout)
        if first is None:
            if self._cap is not None:
                self.metrics.throughput(self._cap.limit, self._cap.rate())
            return None
        messages = [first]
        if self._max_records > 1:
            messages.extend(self._consumer.consume(num_messages=self._max_records - 1, timeout=0))
        if self._cap is not None:  # measures, and throttles the fetching: the next poll comes within the cap
            self._cap.take(sum(len(m) + len(m.key() or b"") for m in messages))
            self.metrics.throughput(self._cap.limit, self._cap.rate())
        return messages

    # -- the message-copy path (connect_core.api.message_copy): no SourceRecords, reports per run --

    def poll_messages(self) -> list[Any] | None:
        if not self._consumer_lock.acquire(blocking=False):
            return None
        try:
            return self._consume()
        finally:
            self._consumer_lock.release()

    def route(self, topic: str, partition: int) -> _Partition:
        return self._partition(topic, partition)

    def message_error(self, message: Any) -> None:
        self._on_consume_error(message.error(), message)

    def to_source_records(self, messages: list[Any]) -> list[SourceRecord]:
        records = self._convert(messages) or []
        self._unacknowledged += len(records)
        return records

    def _check_gaps(self) -> None:
        """Source-gaps hook (issue 38): settle the jumps whose log starts are in (never blocks)."""
        lookup = self._gap_starts
        if lookup is None:
            return
        starts = lookup.poll(self._gaps.partitions)
        if not starts:
            return
        for lost in self._gaps.resolve(starts):
            run = self._partition(lost.tp.topic, lost.tp.partition)
            total = self._lost.setdefault(lost.tp, LostTotal())
            report_lost(lost, total, self._flow, run.topic, self.metrics)
            run.offset_extra = {**(run.offset_extra or {}), LOST_KEY: total.encode()}

    def _check_incarnations(self) -> None:
        """Source-incarnation hook (issue 38), consumer lock held: a source topic found under a new id while
        the task runs. Its partitions are read no further at once; each is switched to the new incarnation
        once the copies read from the old one are acknowledged (their offsets keep the old id).

        The batch path's fetcher sees a new id in its own metadata first and fetches the topic no more; the
        watch's next lookup (started at once) then decides, with the ids the task stores."""
        watch = self._watch
        assert watch is not None
        batches = self._batches
        if batches is not None:
            for topic in batches.recreated_topics() - set(self._suspects):
                self._suspects[topic] = watch.started  # decided by a lookup started after this one
                watch.request_now()
        for change in watch.poll():
            for tp in self.assigned:
                if tp.topic == change.topic and tp not in self._recreating:
                    self._recreating[tp] = change
                    self._hold(tp)
        for topic, started in list(self._suspects.items()):
            if watch.answered > started and not any(tp.topic == topic for tp in self._recreating):
                del self._suspects[topic]  # answered, no change found for it (or handled already)
                if batches is not None:
                    batches.accept_incarnation(topic)
        for tp, change in list(self._recreating.items()):
            run = self._partition(tp.topic, tp.partition)
            if run.in_flight > 0 and self._consumer is None:  # the batch path: copies of the old one unacked
                continue
            del self._recreating[tp]
            self._switch_incarnation(run, change)

    def _hold(self, tp: TopicPartition) -> None:
        if self._batches is not None:
            self._batches.hold(tp.topic, tp.partition)
        elif self._consumer is not None:
            self._consumer.pause([ClientPartition(tp.topic, tp.partition)])

    def _switch_incarnation(self, run: _Partition, change: IncarnationChange) -> None:
        """The same decision as at a start, from the position read so far: logged once (ERROR) and counted;
        ``mirror-from-start`` reads the partition from the new incarnation's start, its mappings and offset
        syncs begin again there (a new mapping epoch); ``fail`` raises (the task fails with the reason)."""
        tp = run.tp
        read_through = run.next_offset - 1
        stored = {OFFSET_KEY: read_through, TOPIC_ID_KEY: change.previous_topic_id} if read_through >= 0 else None
        (decision,) = start_decisions(
            [tp],
            [stored],
            {tp.topic: change.topic_id},
            self._recreated_action,
            self._flow,
            self._remote_topic,
            self.metrics.source_changed,
        )
        self._lost.pop(tp, None)  # a loss of the old incarnation is no loss of the new one
        run.offset_extra = decision.extra
        if decision.from_beginning or (decision.event is None and decision.position is None):
            run.copy.unknown()  # the old incarnation's open mapping run ends here
            _send_mappings(self._offset_syncs, run.copy)  # taken even without a producer: none outlives it
            run.copy.resume_after(-1)  # the new incarnation's mappings start afresh
            run.end = -1
            run.next_offset = -1
            self._reposition(tp, 0)
        else:  # keep-position: the old position, now in the new incarnation
            self._reposition(tp, read_through + 1)

    def _reposition(self, tp: TopicPartition, position: int) -> None:
        if self._batches is not None:
            self._batches.reposition(tp.topic, tp.partition, max(position, 0))
        elif self._consumer is not None:
            where = ClientPartition(tp.topic, tp.partition, OFFSET_BEGINNING if position <= 0 else position)
            self._consumer.seek(where)
            self._consumer.resume([ClientPartition(tp.topic, tp.partition)])

    def _went_back(self, run: _Partition, offset: int) -> dict[str, Any] | None:
        """Source-incarnation hook (issue 38): the offsets read went back, which the task never does itself:
        the source topic was recreated (the consumer reset into the new one) or truncated. The topic id the
        records carried is then no longer vouched for: it is dropped from their offsets (so a restart does
        not take the records read since for the old incarnation's) and looked up again at the next start."""
        log.warning(
            "%s: source topic %s partition %d went back from offset %d to %d (the topic was recreated or "
            "truncated); it is checked again at the task's next start",
            self._flow,
            run.tp.topic,
            run.tp.partition,
            run.next_offset - 1,
            offset,
        )
        extra = run.offset_extra
        if extra is not None and TOPIC_ID_KEY in extra:
            extra = {k: v for k, v in extra.items() if k != TOPIC_ID_KEY} or None
            run.offset_extra = extra
        return extra

    def _run_dispatched(self, route: _Partition, run: CopyRun) -> None:
        """Per run handed to the producer: the poll metrics and the lag behind the source."""
        if -1 < route.next_offset < run.first_upstream:  # source-gaps hook (issue 38)
            self._gaps.jumped(route.tp, route.next_offset, run.first_upstream)
        elif run.first_upstream < route.next_offset:
            self._went_back(route, run.first_upstream)
        route.next_offset = run.last_upstream + 1
        self._unacknowledged += run.count
        route.in_flight += run.count
        if self._measure:
            now_ms = time.time() * 1000
            oldest = _oldest(run)
            self.metrics.polled(
                route.topic,
                route.partition,
                run.count,
                run.value_bytes,
                now_ms - oldest if 0 <= oldest <= now_ms else 0.0,
            )
        # The consumer is read outside poll here: hold its lock so a concurrent stop() cannot close it
        # underneath (skip the report rather than wait if stop() holds it).
        if self._lag and self._consumer_lock.acquire(blocking=False):
            try:
                self._report_partition_lag(route, run.last_upstream, run.last_timestamp)
            finally:
                self._consumer_lock.release()

    def _run_acknowledged(self, route: _Partition, run: CopyRun) -> None:
        """Per run (messages or a batch) fully acknowledged: the ack metrics, then what the partition's copy
        state decides of it (the offset syncs Kafka's per-record rule gives, the mapping runs)."""
        self._unacknowledged -= run.count
        self._unpublished = True
        if self._stopping:
            return
        route.in_flight -= run.count
        if self._lag:
            self._report_acked_lag(route)
        if self._measure and run.count > run.skipped:
            oldest = _oldest(run)
            self.metrics.acknowledged(
                route.topic,
                route.partition,
                run.count - run.skipped,
                time.time() * 1000 - oldest if oldest >= 0 else 0.0,
            )
        producer = self._sync_producer
        if producer is None:
            return
        copy = route.copy
        queue = producer.syncs
        points = copy.run(queue, run)
        if points is not None:
            producer.send_due(copy.tp, copy.state(queue), points, run.last_upstream)
        if copy.closed:
            _send_mappings(producer, copy)

    def _convert(self, messages: list[Any]) -> list[SourceRecord] | None:
        """One SourceRecord per message: the per-record hot path of replication.

        librdkafka hands out messages in runs of one partition, so the partition's map, remote
        topic and counters are looked up once per run; only the offset map (which the runtime
        keeps per record) and the record itself are new per message. Without a metrics sink
        nothing is measured.
        """
        records: list[SourceRecord] = []
        append = records.append
        measure = self._measure
        lag = self._lag
        seen: list[_Partition] = []
        run: _Partition | None = None
        last_topic = ""
        last_partition = -1
        last_offset = -1
        schema = OPTIONAL_BYTES_SCHEMA
        try:
            for msg in messages:
                err = msg.error()
                if err is not None:
                    self._on_consume_error(err, msg)
                    continue
                topic = msg.topic()
                partition = msg.partition()
                upstream = msg.offset()
                if run is None or partition != last_partition or topic != last_topic:
                    if run is not None:
                        run.next_offset = last_offset + 1
                    run = self._partition(topic, partition)
                    last_topic = topic
                    last_partition = partition
                    if run.newest is None:
                        seen.append(run)
                        run.newest = msg
                    extra = run.offset_extra
                    if run.next_offset > -1 and upstream != run.next_offset:  # issue-38 hooks: once per run
                        if upstream > run.next_offset:
                            self._gaps.jumped(run.tp, run.next_offset, upstream)
                        else:
                            extra = self._went_back(run, upstream)
                last_offset = upstream
                value = msg.value()
                ts = msg.timestamp()[1]
                if ts < 0:
                    ts = None
                if extra is None:
                    offset = {OFFSET_KEY: upstream}
                else:  # the source topic's id rides along (see source_incarnation)
                    offset = extra.copy()
                    offset[OFFSET_KEY] = upstream
                append(
                    SourceRecord(
                        run.source_partition,
                        offset,
                        run.topic,
                        partition,
                        msg.key(),
                        value,
                        msg.headers(),
                        ts,
                        schema,
                        schema,
                    )
                )
                if lag:
                    run.newest = msg
                    run.batch_read += 1
                if measure:
                    run.polled += 1
                    if value is not None:
                        run.polled_bytes += len(value)
                    if ts is not None and ts < run.oldest:
                        run.oldest = ts
        except BaseException:
            for run in seen:  # a failed batch is dropped whole: forget what it counted
                run.newest = None
                run.batch_read = 0
                run.polled = run.polled_bytes = 0
                run.oldest = _NO_TIMESTAMP
            raise
        if run is not None:
            run.next_offset = last_offset + 1
        if measure or lag:
            self._report_polled(seen, measure, lag)
        else:
            for run in seen:
                run.newest = None
        return records or None

    def _report_polled(self, seen: list[_Partition], measure: bool, lag: bool) -> None:
        """Per batch and partition: the poll metrics, then the lag behind the source."""
        now_ms = time.time() * 1000
        for run in seen:
            if measure:
                oldest = run.oldest if run.oldest <= now_ms else now_ms
                self.metrics.polled(run.topic, run.tp.partition, run.polled, run.polled_bytes, now_ms - oldest)
                run.polled = run.polled_bytes = 0
                run.oldest = _NO_TIMESTAMP
        if lag:
            self._report_lag(seen)
        for run in seen:
            run.newest = None

    def _report_lag(self, seen: list[_Partition]) -> None:
        """Per polled partition: records behind the source's high watermark (from the last fetch)."""
        for run in seen:
            msg = run.newest
            run.in_flight += run.batch_read
            run.batch_read = 0
            if msg is not None:
                self._report_partition_lag(run, msg.offset(), msg.timestamp()[1])

    def _report_acked_lag(self, route: _Partition, locked: bool = False) -> None:
        """After acknowledgements: the lag again, with fewer records in flight (``locked``: the
        caller holds the consumer lock; otherwise skip rather than wait if ``stop()`` holds it)."""
        if route.read_through < 0:
            return
        if locked:
            self._report_partition_lag(route, route.read_through, route.read_timestamp)
        elif self._consumer_lock.acquire(blocking=False):
            try:
                self._report_partition_lag(route, route.read_through, route.read_timestamp)
            finally:
                self._consumer_lock.release()

    def _report_partition_lag(self, route: _Partition, newest_offset: int, newest_ts: int) -> None:
        """Records of the partition not on the target yet: those behind the source's high watermark after
        ``newest_offset`` (not read) plus those read and not acknowledged by the target (in flight).

        In flight counts: while the target stalls the task keeps reading into the producer's queue,
        and the records not read alone would stay near zero while nothing reaches the target.
        """
        route.read_through = newest_offset
        route.read_timestamp = newest_ts
        consumer = self._consumer
        tp = route.tp
        if consumer is None:
            high = route.high_watermark  # the batch path: from its last fetch
        else:
            try:
                _low, high = consumer.get_watermark_offsets(ClientPartition(tp.topic, tp.partition), cached=True)
            except Exception:
                return
        if high is None or high < 0:
            return
        self._metrics.lag(
            route.topic,
            tp.partition,
            max(high - newest_offset - 1, 0) + max(route.in_flight, 0),
            newest_ts if newest_ts >= 0 else None,
        )

    def _on_offset_sync_sent(self, sync: OffsetSync) -> None:
        self._metrics.offset_syncs_sent(self._remote_topic(sync.topic), sync.partition, 1)

    def _on_consume_error(self, err: KafkaError, msg: Any = None) -> None:
        """Kafka's task logs client errors and carries on; only fatal ones stop it. The end of a partition
        is noted for its mappings (see :meth:`_publish`)."""
        if err.code() == PARTITION_EOF:
            if msg is not None and msg.offset() is not None and msg.offset() >= 0:
                route = self._runs.get((msg.topic(), msg.partition()))
                if route is not None and msg.offset() > route.end:
                    route.end = msg.offset()
                    self._unpublished = True
            return
        if err.fatal():
            raise from_kafka_error(err, "source consumer")
        log.warning("Failure during poll: %s", err)

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        """Per acknowledged record (task thread): ack metrics, and the partition's copy state decides its
        offset sync and mapping.

        Everything here runs on the task thread (delivery reports are served by the worker's
        ``producer.poll``), as do ``poll`` and ``commit``: no locks on this path.
        """
        self._unacknowledged -= 1
        self._unpublished = True
        if self._stopping:
            return
        sp = record.source_partition
        downstream = None if metadata is None else metadata.offset
        run = self._run_of.get(id(sp))
        if run is None or run.source_partition is not sp:
            if downstream is not None and downstream >= 0:
                self._commit_foreign_record(record, downstream)
            return
        run.in_flight -= 1
        producer = self._sync_producer  # the attribute behind the property: once per record
        if downstream is None or downstream < 0:
            if producer is not None:
                run.copy.unknown()  # not written (tolerated failure): no claim past it
                _send_mappings(producer, run.copy)
            return
        if self._measure:
            self._count_ack(run, record.timestamp)
        syncs = self._sync_queue
        if syncs is None or producer is None:
            return
        offset = record.source_offset
        if offset is None:
            return
        upstream = offset[OFFSET_KEY]
        if upstream.__class__ is not int:
            upstream = int(upstream)
        copy = run.copy
        if copy.record(syncs, upstream, downstream):
            producer.fire_pending()
        if copy.closed:
            _send_mappings(producer, copy)

    def _commit_foreign_record(self, record: SourceRecord, downstream: int) -> None:
        """A record this task did not poll (the general case, keyed by the record's fields)."""
        if self._measure:
            partition = record.kafka_partition or 0
            key = (record.topic, partition)
            acc = self._foreign_acks.get(key)
            if acc is None:
                acc = self._foreign_acks[key] = _Partition(
                    TopicPartition(record.topic, partition),
                    {},
                    record.topic,
                    self._run_dispatched,
                    self._run_acknowledged,
                )
            self._count_ack(acc, record.timestamp)
        producer = self._sync_producer
        sp = record.source_partition
        offset = record.source_offset
        if producer is None or sp is None or offset is None:
            return
        tp = TopicPartition(str(sp[TOPIC_KEY]), int(sp[PARTITION_KEY]))
        own = self._runs.get(tp)
        copy = own.copy if own is not None else self._other_copies.get(tp)
        if copy is None:
            copy = self._other_copies[tp] = PartitionCopy(tp)
        if copy.foreign_record(producer.syncs, int(offset[OFFSET_KEY]), downstream):
            producer.fire_pending()
        if copy.closed:  # copied outside this partition's own records: no continuity claimed across it
            _send_mappings(producer, copy)

    def _count_ack(self, acc: _Partition, timestamp: int | None) -> None:
        """One acknowledged record in ``acc``'s ack metrics (reported per batch by _flush_ack_metrics)."""
        latency = (time.time() * 1000 - timestamp) if timestamp is not None else 0.0
        if not acc.acked:
            self._acked_runs.append(acc)
        acc.acked += 1
        if latency > acc.max_latency:
            acc.max_latency = latency

    def commit(self) -> None:
        self._publish()
        self._expire_mappings()
        self._flush_ack_metrics()

    def _expire_mappings(self) -> None:
        """Tombstone mapping records wholly below the source's log start (the lookup never blocks the copy)."""
        syncs, lookup = self._offset_syncs, self._log_starts
        if syncs is None or lookup is None or syncs.mappings_topic is None:
            return
        starts = lookup.poll(syncs.mapping_keys.partitions)
        if starts:
            expired = syncs.expire_mappings(starts)
            if expired:
                log.info("Removed %d offset-mapping records below the source's log start", expired)

    def _maybe_publish(self, timeout: float) -> float:
        """Publish acknowledged copies when due (once per batch, task thread); returns the consumer wait,
        shortened so that an idle partition's last copies are published on time."""
        now = time.monotonic()
        wait = self._publish_due - now
        if wait <= 0:
            self._publish()
            return timeout
        return min(timeout, wait)

    def _publish(self) -> None:
        """Make every acknowledged copy translatable: one mapping record per partition with the runs closed
        since the last publication and its open run (re-)written, delayed syncs sent."""
        self._unpublished = False
        self._publish_due = time.monotonic() + PUBLISH_INTERVAL_S
        syncs = self._offset_syncs
        if syncs is not None:
            settled = self._unacknowledged == 0  # every record polled so far is acknowledged
            for run in list(self._runs.values()):
                mapping = run.copy.mapping.flush()
                if mapping is not None:
                    syncs.send_mapping(mapping)
                if settled and run.end >= 0:
                    gap = run.copy.mapping.trailing_gap(run.end)
                    if gap is not None:
                        syncs.send_mapping(gap)
            syncs.commit()

    def _flush_ack_metrics(self, locked: bool = False) -> None:
        """The ack metrics of the partitions acknowledged since the last call, and their lag again."""
        runs, self._acked_runs = self._acked_runs, []
        for run in runs:
            count, latency = run.acked, run.max_latency
            run.acked = 0
            run.max_latency = 0.0
            if count:
                self.metrics.acknowledged(run.topic, run.tp.partition, count, latency)
            if self._lag and not self._stopping:
                self._report_acked_lag(run, locked)

    @property
    def offset_sync_producer(self) -> OffsetSyncProducer | None:
        return self._offset_syncs


def _send_mappings(producer: OffsetSyncProducer | None, copy: PartitionCopy) -> None:
    """The mapping runs ``copy`` closed, taken from it and sent to the producer's per-partition segment
    buffers (dropped when the task emits no offset syncs)."""
    closed = copy.take_closed()
    if producer is not None:
        for mapping in closed:
            producer.send_mapping(mapping)


def _oldest(run: CopyRun) -> int:
    """The older of a run's first and last timestamps (-1 when it has none)."""
    first, last = run.first_timestamp, run.last_timestamp
    if first < 0:
        return last
    if last < 0:
        return first
    return first if first <= last else last


def replication_consumer_config(java_props: dict[str, Any], label: str) -> dict[str, Any]:
    """librdkafka config for the replication consumer: assign-only, bounded prefetch."""
    conf = consumer_config(java_props)
    for key, value in PREFETCH_DEFAULTS.items():
        conf.setdefault(key, value)
    try:
        wait = int(conf["fetch.wait.max.ms"])
    except (TypeError, ValueError) as e:
        raise ConfigError(
            [ConfigIssue("consumer.fetch.max.wait.ms", f"Invalid value {conf['fetch.wait.max.ms']}")]
        ) from e
    if wait < MIN_FETCH_WAIT_MS:
        log.warning("Raising the replication consumer's fetch wait from %d ms to %d ms", wait, MIN_FETCH_WAIT_MS)
        conf["fetch.wait.max.ms"] = MIN_FETCH_WAIT_MS
    # librdkafka needs a group.id even for assign(); nothing is ever committed or joined with it.
    conf.setdefault("group.id", f"mm2-replication-{label}")
    conf["enable.auto.commit"] = False
    conf["enable.auto.offset.store"] = False
    # Positions are always explicit (see _initialize_consumer); this only says where a position the source
    # no longer holds (deleted before it was mirrored) resumes: at the log start, as Java MirrorMaker does,
    # never at the end (librdkafka's default), and the jump is counted (source_gaps).
    conf["auto.offset.reset"] = "earliest"
    return conf


def batch_fetch_wait_ms(java: dict[str, Any]) -> int:
    """The batch path's broker wait per Fetch: the flow's ``fetch.max.wait.ms``, as the record path's consumer
    (its default, and at least :data:`MIN_FETCH_WAIT_MS`)."""
    value = java.get("fetch.max.wait.ms")
    if value is None:
        return DEFAULT_FETCH_WAIT_MS
    try:
        wait = int(str(value).strip())
    except ValueError as e:
        raise ConfigError([ConfigIssue("consumer.fetch.max.wait.ms", f"Invalid value {value}")]) from e
    if wait < MIN_FETCH_WAIT_MS:
        log.warning("Raising the batch path's fetch wait from %d ms to %d ms", wait, MIN_FETCH_WAIT_MS)
        return MIN_FETCH_WAIT_MS
    return wait


def _int_setting(props: dict[str, Any], key: str, default: int) -> int:
    value = props.get(key)
    if value is None:
        return default
    try:
        number = int(str(value).strip())
    except ValueError as e:
        raise ConfigError([ConfigIssue("consumer." + key, f"Invalid value {value}: not an integer")]) from e
    if number < 1:
        raise ConfigError([ConfigIssue("consumer." + key, f"Invalid value {value}: must be at least 1")])
    return number


def _key(partition: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, str(v)) for k, v in partition.items()))


__all__ = [
    "MIN_FETCH_WAIT_MS",
    "PREFETCH_DEFAULTS",
    "MirrorSourceTask",
    "NoOpSourceMetrics",
    "SourceMetrics",
    "batch_fetch_wait_ms",
    "replication_consumer_config",
]
