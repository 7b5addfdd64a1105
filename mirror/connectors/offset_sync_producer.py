"""Writes offset syncs to partition 0 of the offset-syncs topic (I/O shell of Kafka's ``OffsetSyncWriter``).

The decisions - which acknowledged record needs a sync now, which only at the next commit, and the
limit of 10 sends in flight - live in :class:`mirror.connectors.offset_sync_writer.OffsetSyncQueue`; this class
only owns the producer. The producer is idempotent (order of syncs for a partition matters: an
older sync arriving after a newer one would read as an upstream rewind and wipe the reader's
history) and delivery callbacks are served by ``poll(0)`` on every send and commit.

The same producer writes mm2's offset mappings (:mod:`mirror.client.offset_mappings`) to their own
topic when one is given. Runs handed to :meth:`OffsetSyncProducer.send_mapping` are buffered per
partition and written by :meth:`OffsetSyncProducer.publish_mappings` (each publication of the source
task: every 0.5 s while it copies, and at each offset flush) as ONE segment record per partition holding
every run since the last publication - a transactional source's marker gaps cost nothing extra - or
sooner when a partition has ``MAX_RUNS_PER_RECORD`` runs buffered. They have no in-flight limit of their
own; idempotence keeps them in order. :meth:`OffsetSyncProducer.expire_mappings` tombstones the records
this producer wrote that lie wholly below the source partitions' log starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from connect_core.kafka.clients import create_producer, producer_config
from connect_core.kafka.types import KafkaError, KafkaException, Message, Producer
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.client.offset_mappings import MAX_RUNS_PER_RECORD, OffsetMapping, encode_segment, mapping_key
from mirror.connectors.offset_mapping_retention import MappingKeys
from mirror.connectors.offset_sync_writer import MAX_OUTSTANDING_OFFSET_SYNCS, OffsetSyncQueue, PartitionState

log = logging.getLogger(__name__)

_PRODUCER_DEFAULTS: dict[str, Any] = {
    "enable.idempotence": True,
    "acks": "all",
    "linger.ms": 5,
}


class OffsetSyncProducer:
    """Queues offset syncs per acknowledged record and sends them with at most 10 in flight.

    Thread-safe: ``queue`` runs on the producer delivery path of the replication records,
    ``commit`` on the worker's offset-flush path.
    """

    def __init__(
        self,
        java_props: Mapping[str, Any],
        topic: str,
        max_offset_lag: int,
        producer: Producer | None = None,
        max_in_flight: int = MAX_OUTSTANDING_OFFSET_SYNCS,
        on_sent: Callable[[OffsetSync], None] | None = None,
        mappings_topic: str | None = None,
    ) -> None:
        """``on_sent`` is called (on the thread serving delivery reports) for each delivered sync;
        ``mappings_topic``: where :meth:`send_mapping` writes (None: mappings are dropped)."""
        self.topic = topic
        self.mappings_topic = mappings_topic
        self.mappings_sent = 0  # records (segments) delivered
        self.mappings_failed = 0
        self.mapping_tombstones = 0  # tombstones delivered
        self.mapping_keys = MappingKeys()
        self._segments: dict[TopicPartition, list[OffsetMapping]] = {}
        self._on_sent = on_sent
        self.syncs = OffsetSyncQueue(max_offset_lag, max_in_flight)
        conf = producer_config(java_props)
        for key, value in _PRODUCER_DEFAULTS.items():
            conf.setdefault(key, value)
        self._conf = conf
        self._producer = create_producer(conf) if producer is None else producer
        self.producers_replaced = 0
        self.sent = 0
        self.failed = 0
        if mappings_topic is not None and not self._topic_exists(mappings_topic):
            # Not created (an older connector, no permission): translation just stays Kafka's; sends to a
            # missing topic would only wait out their timeout and slow every flush.
            log.info("Offset-mappings topic %s not found: offset mappings are not written", mappings_topic)
            self.mappings_topic = None

    def _topic_exists(self, topic: str) -> bool:
        """Full metadata (a request naming the topic would auto-create it on some brokers)."""
        try:
            return topic in self._producer.list_topics(timeout=10).topics
        except Exception as e:
            log.warning("Could not look up topic %s: %s", topic, e)
            return False

    def queue(self, topic_partition: TopicPartition, upstream_offset: int, downstream_offset: int) -> None:
        """Account for one acknowledged record and send whatever is due (cheap when nothing is)."""
        if self.syncs.on_record(topic_partition, upstream_offset, downstream_offset):
            self.fire_pending()

    def send_due(
        self, topic_partition: TopicPartition, state: PartitionState, points: list[tuple[int, int]], last_upstream: int
    ) -> None:
        """Sync points an acknowledgement decided (:class:`~mirror.connectors.partition_copy.PartitionCopy`),
        each made pending and sent in turn (owner thread); the partition's newest position, ``last_upstream``,
        is delayed to the next publication when it is not the last of them."""
        syncs = self.syncs
        for upstream, downstream in points:
            if syncs.in_flight >= syncs.max_in_flight:
                # No slot frees before the poll below: each later point would only replace the one before
                # as pending, so the newest is made pending at once (at 100 B, ~14 points a batch, ~1.5 sent).
                upstream, downstream = points[-1]
                syncs.make_pending(topic_partition, upstream, downstream)
                break
            syncs.make_pending(topic_partition, upstream, downstream)
            for sync in syncs.take_pending():
                self._send(sync)
        if points:
            # Delivery reports once per acknowledgement, not per sync point: a batch of 100 B records
            # decides a sync every offset.lag.max records, and a producer poll each cost as much as the send.
            self._serve(0)
        if not points or points[-1][0] != last_upstream:
            syncs.mark_delayed(topic_partition, state)

    def commit(self) -> None:
        """Publication: buffered mappings written, delayed syncs made pending (quiet partitions reach their
        end) and sent."""
        self.publish_mappings()
        self.syncs.promote_delayed()
        self.fire_pending()
        self._serve(0)

    def fire_pending(self) -> None:
        for sync in self.syncs.take_pending():
            self._send(sync)
        self._serve(0)

    def _serve(self, timeout_s: float) -> None:
        """Delivery reports; a producer that failed fatally is replaced, since syncs and mappings are
        best effort (as in Java) and must never stop the copy. Seen after a broker restart that lost
        the idempotent producer's sequence state (OUT_OF_ORDER_SEQUENCE_NUMBER, fatal)."""
        try:
            self._producer.poll(timeout_s)
        except KafkaException as e:
            error = e.args[0] if e.args else None
            if not (isinstance(error, KafkaError) and error.fatal()):
                raise
            log.error(
                "The offset-sync producer failed fatally (%s); a new producer takes over, and what the "
                "old one had not delivered is not sent again",
                error.str(),
            )
            old, self._producer = self._producer, create_producer(self._conf)
            self.producers_replaced += 1
            try:
                old.purge()
            except Exception as purge_error:  # a failed producer may refuse this too: it is dropped anyway
                log.debug("Purging the failed offset-sync producer: %s", purge_error)
            # its delivery reports will never be served: its sends no longer count against the in-flight limit
            self.syncs.reset_in_flight()

    def _send(self, sync: OffsetSync) -> None:
        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            self.syncs.on_send_complete()
            if err is not None:
                self.failed += 1
                log.error("Failure sending offset sync %s: %s", sync, err)
            else:
                self.sent += 1
                if self._on_sent is not None:
                    self._on_sent(sync)

        while True:
            try:
                self._producer.produce(
                    self.topic, value=sync.record_value(), key=sync.record_key(), partition=0, on_delivery=on_delivery
                )
                return
            except BufferError:
                self._serve(0.05)
            except Exception as e:  # a send that cannot even be queued must release its slot
                self.syncs.on_send_complete()
                self.failed += 1
                log.error("Failure sending offset sync %s: %s", sync, e)
                return

    def send_mapping(self, mapping: OffsetMapping) -> None:
        """Buffer one run for its partition's next segment record (see :meth:`publish_mappings`)."""
        if self.mappings_topic is None:
            return
        runs = self._segments.get(mapping.topic_partition)
        if runs is None:
            runs = self._segments[mapping.topic_partition] = []
        runs.append(mapping)
        if len(runs) >= MAX_RUNS_PER_RECORD:
            self._write_segment(mapping.topic_partition, runs)
            runs.clear()

    def publish_mappings(self) -> None:
        """Write one segment record per partition with runs buffered since the last publication."""
        segments, self._segments = self._segments, {}
        for tp, runs in segments.items():
            if runs:
                self._write_segment(tp, runs)

    def expire_mappings(self, log_starts: Mapping[TopicPartition, int]) -> int:
        """Tombstone this producer's records wholly below each partition's log start; returns how many."""
        topic = self.mappings_topic
        if topic is None:
            return 0
        expired = self.mapping_keys.expired(log_starts)
        count = 0
        for tp, lows in expired.items():
            for low in lows:
                self._produce_mapping(topic, mapping_key(tp, low), None, f"tombstone of {tp} at {low}")
                count += 1
        return count

    def _write_segment(self, tp: TopicPartition, runs: list[OffsetMapping]) -> None:
        topic = self.mappings_topic
        if topic is None:
            return
        key, value = encode_segment(runs)
        self.mapping_keys.written(tp, runs[0].upstream_low, max(m.upstream_end for m in runs))
        self._produce_mapping(topic, key, value, f"{len(runs)} offset mappings of {tp}")

    def _produce_mapping(self, topic: str, key: bytes, value: bytes | None, what: str) -> None:
        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            if err is not None:
                self.mappings_failed += 1
                log.error("Failure sending %s: %s", what, err)
            elif value is None:
                self.mapping_tombstones += 1
            else:
                self.mappings_sent += 1

        while True:
            try:
                self._producer.produce(topic, value=value, key=key, partition=0, on_delivery=on_delivery)
                return
            except BufferError:
                self._serve(0.05)
            except Exception as e:
                self.mappings_failed += 1
                log.error("Failure sending %s: %s", what, e)
                return

    def flush(self, timeout_s: float = 10.0) -> int:
        """Wait for outstanding syncs; returns how many are still undelivered."""
        return int(self._producer.flush(timeout_s))

    def close(self, timeout_s: float = 10.0) -> None:
        self.publish_mappings()  # what was acknowledged stays translatable
        remaining = self.flush(timeout_s)
        if remaining:
            log.warning("%d offset sync(s) to %s not delivered at shutdown", remaining, self.topic)


__all__ = ["OffsetSyncProducer"]
