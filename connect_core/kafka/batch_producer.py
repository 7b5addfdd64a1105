"""Produce pre-built record batches, idempotently, over kafka-python's protocol and connection layer.

librdkafka builds its own batches and cannot send one it was given; this sends the source's batches as
they are (:func:`~connect_core.kafka.record_batch.producer_header` sets the fields a producer owns; the
request carries that new header and a view of the fetched records part, uncopied:
:mod:`connect_core.kafka.produce_request`).

* Idempotence: one producer id from InitProducerId (v4; Tansu fails v0), a sequence per partition
  continuing across batches. A batch keeps its sequence through every retry, so a retried batch the
  broker already holds is answered as a duplicate, never written twice.
* Order: per partition, batches are sent in order, at most ``max_in_flight`` requests per leader; a
  retriable failure sends the failed batch and every later one of its partition again, in order.
* One batch per partition per Produce request (Apache Kafka refuses more), many partitions per request.
* Errors are mapped to Connect's: retriable ones are retried until ``delivery_timeout_s``; anything else
  (too large, corrupt, authorization, fenced) is handed to the batch's callback as a ConnectError
  (:mod:`connect_core.kafka.producer_errors`; fencing as ``ProducerFencedError``).

Transactions build on this class (:mod:`connect_core.kafka.transactional_batch_producer`): it sets the
transactional id carried by each Produce and the batches' transactional bit, gets its producer id from
the transaction coordinator, and admits a partition to sending only once it joined the transaction.

Single-threaded: the caller drives I/O and callbacks with :meth:`poll`/:meth:`flush` (the task thread).
"""

from __future__ import annotations

import logging
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.metadata import MetadataRequest
from kafka.protocol.producer import InitProducerIdRequest

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.kafka.io_wait import wait_handle
from connect_core.kafka.produce_request import PiecesProduceRequest, ProducePart
from connect_core.kafka.producer_errors import mapped_error
from connect_core.kafka.raw_fetch import bootstrapped_client
from connect_core.kafka.record_batch import HEADER_SIZE, RawBatch, producer_header

log = logging.getLogger(__name__)

_MAX_FRAME = 64 * 1024 * 1024
_INIT_PRODUCER_ID_VERSION = 4
_PRODUCE_MAX_VERSION = 9
_DUPLICATE_SEQUENCE = 46
_SEQUENCE_LIMIT = 1 << 31
#: Refresh leaders after these answers (unknown partition, no leader, not leader, fenced/unknown epoch).
_STALE_LEADER = {3, 5, 6, 74, 75}
_RETRY_BACKOFF_S = 0.1

#: Called once per batch: (target base offset or -1 when unknown, None) or (-1, the error).
BatchCallback = Callable[[int, BaseException | None], None]
TopicPartitionKey = tuple[str, int]


class _Entry:
    """One batch on its way: the bytes as sent (fixed sequence), its callback, where it stands."""

    __slots__ = ("batch", "callback", "deadline", "generation", "header", "sent", "sequence")

    def __init__(self, batch: RawBatch, sequence: int, callback: BatchCallback, deadline: float) -> None:
        self.batch = batch
        self.sequence = sequence
        self.header: bytearray | None = None  # the header as sent, made once the producer id is known
        self.callback = callback
        self.deadline = deadline
        self.sent = False
        self.generation = 0  # bumped when the batch must be sent again: older answers are ignored


class _Partition:
    __slots__ = ("entries", "in_flight", "next_sequence", "sent")

    def __init__(self) -> None:
        self.entries: deque[_Entry] = deque()  # sent (in order) then unsent
        self.sent = 0  # how many entries from the front are sent: the next to send is entries[sent]
        self.in_flight = 0
        self.next_sequence = 0

    def next_unsent(self) -> _Entry | None:
        """The first batch not sent yet (found without scanning the sent ones: many are in flight)."""
        return self.entries[self.sent] if self.sent < len(self.entries) else None


class BatchProducer:
    """An idempotent producer of pre-built v2 batches (see the module docstring)."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_configs: Mapping[str, Any],
        client_id: str,
        *,
        acks: int = -1,
        request_timeout_s: float = 30.0,
        delivery_timeout_s: float = 120.0,
        max_in_flight: int = 5,
        max_request_bytes: int = 8 * 1024 * 1024,
    ) -> None:
        self._configs = {
            "bootstrap_servers": bootstrap_servers,
            "client_id": client_id,
            "request_timeout_ms": int(request_timeout_s * 1000),
            "receive_message_max_bytes": _MAX_FRAME,
            "max_in_flight_requests_per_connection": max_in_flight,
            **dict(client_configs),
        }
        self._acks = acks
        self._timeout_ms = int(request_timeout_s * 1000)
        self._delivery_timeout_s = delivery_timeout_s
        self._max_in_flight = max_in_flight
        self._max_request_bytes = max_request_bytes
        self._client: KafkaNetClient | None = None
        self._leaders: dict[TopicPartitionKey, int] = {}
        self._partition_counts: dict[str, int] = {}
        self._partitions: dict[TopicPartitionKey, _Partition] = {}
        self._requests: dict[int, list[tuple[Any, dict[TopicPartitionKey, tuple[_Entry, int]]]]] = {}
        self._retry_at = 0.0
        self.producer_id = -1
        self.producer_epoch = -1
        #: set by a transactional producer: carried by each Produce, and each batch gets the transactional bit
        self._transactional_id: str | None = None
        self.in_flight = 0  # batches handed to send() whose callback has not run yet

    # ------------------------------------------------------------------ set-up

    def _connected(self) -> KafkaNetClient:
        if self._client is None:
            self._client = bootstrapped_client(
                self._configs, self._timeout_ms, RetriableError, "the target Kafka cluster"
            )
        return self._client

    def start(self) -> None:
        """Connect and get the producer id (idempotence); done by the first send otherwise."""
        client = self._connected()
        node = client.least_loaded_node(bootstrap_fallback=True)
        request = InitProducerIdRequest(
            transactional_id=None,
            transaction_timeout_ms=60_000,
            producer_id=-1,
            producer_epoch=-1,
            max_version=_INIT_PRODUCER_ID_VERSION,
        )
        try:
            answer = client.send_and_receive(node, request, timeout_ms=self._timeout_ms)
        except kafka_errors.KafkaError as e:
            raise RetriableError(f"InitProducerId failed: {e}") from e
        if answer.error_code:
            raise mapped_error(answer.error_code, "InitProducerId of the batch producer")
        self.producer_id, self.producer_epoch = answer.producer_id, answer.producer_epoch

    def _refresh(self, topics: set[str]) -> None:
        client = self._connected()
        node = client.least_loaded_node(bootstrap_fallback=True)
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in sorted(topics)],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False,
        )
        try:
            answer = client.send_and_receive(node, request, timeout_ms=self._timeout_ms)
        except kafka_errors.KafkaError as e:
            log.debug("Metadata request of the batch producer failed: %s", e)
            self._retry_at = time.monotonic() + _RETRY_BACKOFF_S * 10  # the target is away: no busy loop
            return
        client.cluster.update_metadata(answer)
        for topic in answer.topics:
            if not topic.error_code:
                self._partition_counts[topic.name] = len(topic.partitions)
            for p in topic.partitions if not topic.error_code else []:
                self._leaders[(topic.name, p.partition_index)] = p.leader_id

    def partition_count(self, topic: str) -> int:
        """How many partitions ``topic`` has on the target (0: unknown yet); where a keyed record goes."""
        if not self._partition_counts.get(topic):
            self._refresh({topic})
        return self._partition_counts.get(topic, 0)

    # ------------------------------------------------------------------ sending

    def send(self, topic: str, partition: int, batch: RawBatch, callback: BatchCallback) -> None:
        """Queue a v2 batch for ``topic``-``partition``; ``callback`` runs from :meth:`poll`/:meth:`flush`."""
        header = batch.header
        if header is None:
            raise ValueError("only v2 record batches can be produced as they are")
        state = self._partitions.get((topic, partition))
        if state is None:
            state = self._partitions[(topic, partition)] = _Partition()
        state.entries.append(_Entry(batch, state.next_sequence, callback, time.monotonic() + self._delivery_timeout_s))
        state.next_sequence = (state.next_sequence + header.record_count) % _SEQUENCE_LIMIT
        self.in_flight += 1

    def poll(self, timeout_s: float = 0.0) -> None:
        """Send what can be sent, read answers (waiting up to ``timeout_s`` for one), run callbacks."""
        self._dispatch()
        client = self._client
        if client is None or not self._requests:
            if self.in_flight and timeout_s > 0:  # waiting out a retry back-off: no busy loop for the caller
                time.sleep(min(timeout_s, max(0.0, self._retry_at - time.monotonic())))
            return
        client.poll(timeout_ms=int(timeout_s * 1000))
        self._collect()
        self._dispatch()

    @property
    def wait_handle(self) -> int | None:
        """A descriptor readable while this producer's connections have I/O ready (None: not connected);
        see :mod:`connect_core.kafka.io_wait`."""
        return wait_handle(self._client)

    def flush(self, timeout_s: float) -> bool:
        """Until every batch's callback ran (True) or the time is up (False)."""
        deadline = time.monotonic() + timeout_s
        while self.in_flight:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            self.poll(min(remaining, 0.1))
            if not self._requests and self.in_flight:
                time.sleep(min(_RETRY_BACKOFF_S, max(0.0, remaining)))  # waiting out a retry back-off
        return True

    def _dispatch(self) -> None:
        """Build one request per leader from the first unsent batch of each partition (in order)."""
        if not self.in_flight or time.monotonic() < self._retry_at:
            return
        self._expire()
        try:  # the target may be unreachable for a while: back off and try again, never fail the caller
            if self.producer_id < 0:
                self.start()
            unknown = {tp[0] for tp, s in self._partitions.items() if _has_unsent(s) and self._leaders.get(tp, -1) < 0}
            if unknown:
                self._refresh(unknown)
            client = self._connected()
            admitted = self._admit({tp for tp, s in self._partitions.items() if _has_unsent(s)})
        except RetriableError as e:
            log.debug("Batch producer waiting for the target: %s", e)
            self._retry_at = time.monotonic() + _RETRY_BACKOFF_S * 10
            return
        by_leader: dict[int, dict[TopicPartitionKey, tuple[_Entry, int]]] = {}
        sizes: dict[int, int] = {}
        for tp, state in self._partitions.items():
            leader = self._leaders.get(tp, -1)
            if leader < 0 or state.in_flight >= self._max_in_flight or tp not in admitted:
                continue
            if len(self._requests.get(leader, ())) >= self._max_in_flight:
                continue
            entry = state.next_unsent()
            if entry is None:
                continue
            if entry.header is None:
                entry.header = producer_header(
                    entry.batch,
                    self.producer_id,
                    self.producer_epoch,
                    entry.sequence,
                    self._transactional_id is not None,
                )
            size = sizes.get(leader, 0)
            batch_size = len(entry.batch.data)
            if size and size + batch_size > self._max_request_bytes:
                continue
            sizes[leader] = size + batch_size
            by_leader.setdefault(leader, {})[tp] = (entry, entry.generation)
        for leader, parts in by_leader.items():
            if not client.ready(leader):
                client.poll(timeout_ms=0)
                if not client.ready(leader):
                    continue  # connecting: the next poll sends
            for tp, (entry, _generation) in parts.items():
                entry.sent = True
                state = self._partitions[tp]
                state.sent += 1
                state.in_flight += 1
            future = client.send(leader, self._request(parts))
            self._requests.setdefault(leader, []).append((future, parts))

    def _admit(self, partitions: set[TopicPartitionKey]) -> set[TopicPartitionKey]:
        """The partitions with batches to send that may be sent to now (all of them: a transactional
        producer first adds them to its transaction)."""
        return partitions

    def _request(self, parts: Mapping[TopicPartitionKey, tuple[_Entry, int]]) -> Any:
        pieces: list[ProducePart] = []
        for (topic, partition), (entry, _generation) in parts.items():
            assert entry.header is not None
            pieces.append((topic, partition, (entry.header, entry.batch.data[HEADER_SIZE:])))
        return PiecesProduceRequest(
            self._transactional_id, self._acks, self._timeout_ms, pieces, max_version=_PRODUCE_MAX_VERSION
        )

    # ------------------------------------------------------------------ answers

    def _collect(self) -> None:
        for leader in list(self._requests):
            pending = self._requests[leader]
            while pending and pending[0][0].is_done:
                future, parts = pending.pop(0)
                if future.succeeded():
                    self._answered(future.value, parts)
                else:
                    self._failed_exchange(parts, future.exception)
            if not pending:
                del self._requests[leader]

    def _answered(self, answer: Any, parts: dict[TopicPartitionKey, tuple[_Entry, int]]) -> None:
        results = {(t.name, p.index): p for t in answer.responses for p in t.partition_responses}
        for tp, (entry, generation) in parts.items():
            state = self._partitions[tp]
            state.in_flight -= 1
            if entry.generation != generation:
                continue  # this batch is being sent again (an earlier one of its partition failed)
            result = results.get(tp)
            code = result.error_code if result is not None else 13
            if code == 0 or code == _DUPLICATE_SEQUENCE:
                # A duplicate was written by an earlier try whose answer was lost: its offset is unknown.
                base = result.base_offset if code == 0 and result is not None else -1
                self._complete(state, entry, base, None)
                continue
            error = kafka_errors.for_code(code)
            if code in _STALE_LEADER:
                self._leaders.pop(tp, None)
            if error.retriable or code in _STALE_LEADER:
                self._resend_from(state, entry, f"{error.__name__} ({code})")
            else:
                self._fail_partition(tp, state, mapped_error(code, f"Produce of a batch to {tp[0]}-{tp[1]}"))

    def _failed_exchange(self, parts: dict[TopicPartitionKey, tuple[_Entry, int]], error: Any) -> None:
        """No answer (connection lost, timeout): the batches may or may not be written; send them again."""
        for tp, (entry, generation) in parts.items():
            state = self._partitions[tp]
            state.in_flight -= 1
            self._leaders.pop(tp, None)
            if entry.generation == generation:
                self._resend_from(state, entry, str(error))

    def _resend_from(self, state: _Partition, entry: _Entry, reason: str) -> None:
        log.debug("Batch produce will be retried: %s", reason)
        seen = False
        sent = 0
        for e in state.entries:
            seen = seen or e is entry
            if seen and e.sent:
                e.sent = False
                e.generation += 1
            elif e.sent:
                sent += 1
        state.sent = sent
        self._retry_at = time.monotonic() + _RETRY_BACKOFF_S

    def _complete(self, state: _Partition, entry: _Entry, base_offset: int, error: BaseException | None) -> None:
        # Answers of one partition come in send order: the completed batch is the oldest one.
        if state.entries and state.entries[0] is entry:
            state.entries.popleft()
        else:
            state.entries.remove(entry)
        if entry.sent:
            state.sent -= 1
        self.in_flight -= 1
        entry.callback(base_offset, error)

    def _fail_partition(self, tp: TopicPartitionKey, state: _Partition, error: ConnectError) -> None:
        """A batch that cannot be written: it and every later batch of its partition fail (order)."""
        for entry in list(state.entries):
            entry.generation += 1
            self._complete(state, entry, -1, error)
        state.in_flight = 0

    def _expire(self) -> None:
        now = time.monotonic()
        for tp, state in self._partitions.items():
            if state.entries and not state.entries[0].sent and state.entries[0].deadline < now:
                self._fail_partition(
                    tp,
                    state,
                    RetriableError(f"Batches for {tp[0]}-{tp[1]} were not written within the delivery timeout"),
                )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def _has_unsent(state: _Partition) -> bool:
    return state.sent < len(state.entries)


__all__ = ["BatchCallback", "BatchProducer"]
