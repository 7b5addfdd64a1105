"""Fetch raw record batches of many partitions from their leaders: the read side of the batch copy.

Unlike :class:`~connect_core.kafka.raw_fetch.RawFetcher` (one topic, rare offset lookups, kafka-python's
batch objects) this serves a replication loop: one Fetch per leader carries every partition asked for,
the answer stays bytes (:func:`~connect_core.kafka.record_batch.split_batches`), and the isolation level
is the caller's (read_committed stops at the last stable offset). The answer's aborted-transaction list
and last stable offset are handed on as they are: whether a broker fills the list is the caller's
business (Apache Kafka does, Tansu never does). Security settings arrive as kafka-python keywords
(:func:`connect_core.kafka.security.kafka_python_security`), exactly as for the record path.

No partition starves behind the others (:mod:`connect_core.kafka.fetch_fairness`): each Fetch lists the
partitions from the next one on, and a broker that left a partition below its end empty gets a longer wait
next time (Tansu's S3 engine spends the wait listing batch objects; after a restart, with a short wait,
it answered nothing for some partitions ever again and the copy stalled).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.consumer import FetchRequest
from kafka.protocol.metadata import MetadataRequest

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.kafka.fetch_fairness import FetchWait, rotated
from connect_core.kafka.io_wait import wait_handle
from connect_core.kafka.raw_fetch import bootstrapped_client
from connect_core.kafka.record_batch import RawBatch, split_batches

log = logging.getLogger(__name__)

READ_UNCOMMITTED = 0
READ_COMMITTED = 1
#: kafka-python refuses answers above 1 MB by default; a broker may exceed the asked size by a batch.
_MAX_FRAME = 256 * 1024 * 1024
_FETCH_MAX_VERSION = 12  # the last Fetch version that names topics (v13 on: topic ids only)
#: Fetches by topic id where every topic asked has one: a topic deleted and recreated under its name is then
#: never read at the old topic's positions (a Fetch by name would read the new topic there)
_FETCH_BY_ID_MAX_VERSION = 13
_ZERO_ID = uuid.UUID(int=0)
_OFFSET_OUT_OF_RANGE = 1
_STALE_LEADER = {3, 5, 6, 74, 75, 100}  # unknown partition, no leader, not leader, leader epochs, topic id

TopicPartitionKey = tuple[str, int]


@dataclass
class PartitionAnswer:
    """One partition of a Fetch answer: its whole batches at or after the asked offset, in log order."""

    batches: list[RawBatch]
    high_watermark: int
    last_stable_offset: int
    log_start_offset: int
    aborted: list[tuple[int, int]] = field(default_factory=list)  # (producer id, first offset)
    fetch_offset: int = 0  # the offset asked for (moved to the log start when it lay before it)


class BrokerUnreachable(RetriableError):
    """The fetcher lost or could not open its connection to ``broker`` (host:port); the next fetch reconnects.

    A separate kind so that a replication loop can treat it as librdkafka's consumer does a broker that is
    away: said once per outage (:func:`~connect_core.kafka.client_logging.report_unreachable`), retried."""

    def __init__(self, broker: str, message: str) -> None:
        super().__init__(message)
        self.broker = broker


@dataclass
class _Pending:
    """A Fetch sent and not answered yet: what it asked, its futures (one per leader), when to give up."""

    positions: dict[TopicPartitionKey, int]
    futures: list[tuple[int, Any]]  # (leader, future)
    deadline: float
    wait_ms: int


class BatchFetcher:
    """Fetches raw batches of any partitions of a cluster (caller's thread; one caller at a time)."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_configs: Mapping[str, Any],
        client_id: str,
        *,
        isolation_level: int = READ_COMMITTED,
        max_bytes: int = 16 * 1024 * 1024,
        partition_max_bytes: int = 1024 * 1024,
        request_timeout_s: float = 30.0,
    ) -> None:
        self._configs = {
            "bootstrap_servers": bootstrap_servers,
            "client_id": client_id,
            "request_timeout_ms": int(request_timeout_s * 1000),
            "receive_message_max_bytes": _MAX_FRAME,
            **dict(client_configs),
        }
        self._timeout_ms = int(request_timeout_s * 1000)
        self.isolation_level = isolation_level
        self.max_bytes = max_bytes
        self.partition_max_bytes = partition_max_bytes
        self._client: KafkaNetClient | None = None
        self._leaders: dict[TopicPartitionKey, int] = {}
        self._pending: _Pending | None = None
        self.wait = FetchWait()
        self._rotation = 0  # where the next Fetch starts in the partition list (fairness)
        self._widest_wait_ms = 0  # the longest wait logged so far (said once per new maximum)
        self._topic_ids: dict[str, str] = {}  # each topic's id in the last metadata that listed it
        self._topic_uuids: dict[str, Any] = {}  # the same ids as the protocol carries them
        self._names: dict[str, str] = {}  # id -> topic
        self._recreated: set[str] = set()  # topics seen under a new id: not fetched until accepted

    def _connected(self) -> KafkaNetClient:
        if self._client is None:
            try:
                self._client = bootstrapped_client(self._configs, self._timeout_ms, RetriableError)
            except RetriableError as e:
                first = str(self._configs.get("bootstrap_servers", "")).split(",")[0].strip()
                raise BrokerUnreachable(first, str(e)) from e
        return self._client

    def _unreachable(self, node_id: int, message: str) -> BrokerUnreachable:
        """The error for a lost connection to ``node_id``, named by its address; the client is reset."""
        broker = str(node_id)
        if self._client is not None:
            meta = self._client.cluster.broker_metadata(node_id)
            if meta is not None:
                broker = f"{meta.host}:{meta.port}"
        self._reset()
        return BrokerUnreachable(broker, message)

    def _reset(self) -> None:
        self._pending = None
        if self._client is not None:
            self._client.close()
            self._client = None
        self._leaders.clear()

    def _refresh(self, topics: set[str]) -> None:
        client = self._connected()
        node = client.least_loaded_node(bootstrap_fallback=True)
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in sorted(topics)],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False,
        )
        response = self._exchange(node, request)
        client.cluster.update_metadata(response)
        for topic in response.topics:
            if topic.error_code:
                continue
            self._note_topic_id(topic.name, getattr(topic, "topic_id", None))
            for p in topic.partitions:
                self._leaders[(topic.name, p.partition_index)] = p.leader_id

    def _note_topic_id(self, topic: str, topic_id: Any) -> None:
        """A topic listed under another id than before was deleted and recreated: its partitions are fetched no
        more (a Fetch names topics, and would read the new topic at the old one's positions) until the caller
        has seen it (:meth:`recreated_topics`) and said where to read (:meth:`accept_incarnation`)."""
        text = "" if topic_id is None else str(topic_id)
        if not text or text.strip("0-") == "":  # no id (a broker before Kafka 2.8) or the zero id
            return
        previous = self._topic_ids.get(topic)
        if previous is not None and previous != text:
            self._recreated.add(topic)
            self._names.pop(previous, None)
            log.info("Source topic %s has a new topic id: fetching it waits for the task", topic)
        self._topic_ids[topic] = text
        self._topic_uuids[topic] = topic_id
        self._names[text] = topic

    def recreated_topics(self) -> set[str]:
        """Topics found under a new id and held since (see :meth:`_note_topic_id`)."""
        return set(self._recreated)

    def accept_incarnation(self, topic: str) -> None:
        """Fetch ``topic`` again (the caller repositioned its partitions for the incarnation it now is)."""
        self._recreated.discard(topic)

    def _exchange(self, node_id: int, request: Any) -> Any:
        client = self._connected()
        try:
            return client.send_and_receive(node_id, request, timeout_ms=self._timeout_ms)
        except kafka_errors.KafkaError as e:
            raise self._unreachable(node_id, f"Request to broker {node_id} failed: {e}") from e

    @property
    def pending(self) -> bool:
        """A Fetch was sent and its answers not taken yet (see :meth:`send`/:meth:`receive`)."""
        return self._pending is not None

    @property
    def wait_handle(self) -> int | None:
        """While a Fetch is out: a descriptor readable once its connections have I/O ready (None otherwise);
        see :mod:`connect_core.kafka.io_wait`."""
        return None if self._pending is None else wait_handle(self._client)  # one read: stop() may close it

    def fetch(
        self, positions: Mapping[TopicPartitionKey, int], max_wait_ms: int
    ) -> dict[TopicPartitionKey, PartitionAnswer]:
        """One Fetch per leader for the partitions in ``positions`` ((topic, partition) -> offset), waited for.

        Partitions whose leader moved are left out of the answer (asked again next time); a position
        before the log start is moved to it. Connection failures raise :class:`RetriableError`.
        """
        self.send(positions, max_wait_ms)
        answers = self.receive(self._timeout_ms + self.wait.for_request(max_wait_ms))
        if answers is None:
            self._reset()
            raise RetriableError("Fetch timed out")
        return answers

    def send(self, positions: Mapping[TopicPartitionKey, int], max_wait_ms: int) -> None:
        """Send the Fetch of :meth:`fetch` without waiting: the caller serves other work (the target's
        acknowledgements) and takes the answers with :meth:`receive`. The broker's wait is ``max_wait_ms``
        or longer while the broker needs longer to serve every partition (see the module docstring)."""
        if self._pending is not None:
            raise RuntimeError("a Fetch is already in flight")
        wait_ms = self.wait.for_request(max_wait_ms)
        missing = {tp[0] for tp in positions if self._leaders.get(tp, -1) < 0}
        if missing:
            self._refresh(missing)
        if self._recreated:
            positions = {tp: offset for tp, offset in positions.items() if tp[0] not in self._recreated}
        by_leader: dict[int, dict[TopicPartitionKey, int]] = {}
        for tp, offset in positions.items():
            leader = self._leaders.get(tp, -1)
            if leader >= 0:
                by_leader.setdefault(leader, {})[tp] = offset
        client = self._connected()
        futures = []
        start = self._rotation
        self._rotation += 1
        for leader, parts in by_leader.items():
            try:
                client.await_ready(leader, timeout_ms=self._timeout_ms)
            except kafka_errors.KafkaError as e:
                raise self._unreachable(leader, f"Cannot connect to broker {leader}: {e}") from e
            futures.append((leader, client.send(leader, self._request(rotated(list(parts.items()), start), wait_ms))))
        deadline = time.monotonic() + (self._timeout_ms + wait_ms) / 1000
        self._pending = _Pending(dict(positions), futures, deadline, wait_ms)

    def receive(self, timeout_ms: int) -> dict[TopicPartitionKey, PartitionAnswer] | None:
        """The answers of the Fetch sent last, waiting up to ``timeout_ms`` (0: only what has arrived);
        None while some leader has not answered yet."""
        if self._pending is None:
            return {}
        pending = self._pending
        positions, futures, deadline = pending.positions, pending.futures, pending.deadline
        client = self._connected()
        wait_until = time.monotonic() + timeout_ms / 1000
        for _, future in futures:
            if not future.is_done:
                client.poll(timeout_ms=max(0, int((wait_until - time.monotonic()) * 1000)), future=future)
            if not future.is_done:
                if time.monotonic() > deadline:
                    self._reset()
                    raise RetriableError("Fetch timed out")
                return None
        self._pending = None
        out: dict[TopicPartitionKey, PartitionAnswer] = {}
        for leader, future in futures:
            if not future.succeeded():
                message = f"Fetch failed: {future.exception}"
                if isinstance(future.exception, kafka_errors.KafkaConnectionError):
                    raise self._unreachable(leader, message)
                self._reset()
                raise RetriableError(message)
        for _, future in futures:
            self._read_answer(future.value, positions, out)
        self._judge_wait(positions, out, pending.wait_ms)
        return out

    def _judge_wait(
        self, positions: Mapping[TopicPartitionKey, int], out: Mapping[TopicPartitionKey, PartitionAnswer], wait_ms: int
    ) -> None:
        """Raise the next wait when the broker left a partition below its end empty (or out of the answer
        though its leader did not move); relax it once everything is caught up."""
        starved: list[TopicPartitionKey] = []
        caught_up = True
        for tp, offset in positions.items():
            answer = out.get(tp)
            if answer is None:
                if self._leaders.get(tp, -1) >= 0:  # asked of its leader, not answered: not served
                    starved.append(tp)
                caught_up = False
                continue
            end = answer.high_watermark
            if self.isolation_level == READ_COMMITTED and answer.last_stable_offset >= 0:
                end = answer.last_stable_offset
            if answer.fetch_offset < end:
                caught_up = False
                if not answer.batches and answer.fetch_offset == offset:  # (a moved position is no starving)
                    starved.append(tp)
        if self.wait.answered(wait_ms, bool(starved), caught_up) and self.wait.floor_ms > self._widest_wait_ms:
            self._widest_wait_ms = self.wait.floor_ms
            log.info(
                "The source broker left %d partition(s) below their end unanswered within %d ms (%s-%d first): "
                "Fetch waits raised to %d ms",
                len(starved),
                wait_ms,
                starved[0][0],
                starved[0][1],
                self.wait.floor_ms,
            )

    def _read_answer(
        self, answer: Any, positions: Mapping[TopicPartitionKey, int], out: dict[TopicPartitionKey, PartitionAnswer]
    ) -> None:
        answered: set[str] = set()
        unknown_id = False
        for topic in answer.responses:
            name = topic.topic or self._names.get(str(topic.topic_id))
            if not name:  # an id this fetcher does not know (a broker may even answer the zero id): a topic is gone
                unknown_id = True
                continue
            answered.add(name)
            for data in topic.partitions:
                tp = (name, data.partition_index)
                offset = positions.get(tp)
                if offset is None:
                    continue
                code = data.error_code
                if code in _STALE_LEADER:
                    self._leaders.pop(tp, None)
                elif code == _OFFSET_OUT_OF_RANGE and data.log_start_offset > offset:
                    out[tp] = PartitionAnswer(
                        [],
                        data.high_watermark,
                        data.last_stable_offset,
                        data.log_start_offset,
                        fetch_offset=data.log_start_offset,
                    )
                elif code:
                    error = kafka_errors.for_code(code)
                    message = f"Fetch of {tp[0]}-{tp[1]} at {offset} failed: {error.__name__} ({code})"
                    raise RetriableError(message) if error.retriable else ConnectError(message)
                else:
                    batches = [b for b in split_batches(data.records) if b.next_offset > offset]
                    aborted = [(a.producer_id, a.first_offset) for a in (data.aborted_transactions or [])]
                    out[tp] = PartitionAnswer(
                        batches, data.high_watermark, data.last_stable_offset, data.log_start_offset, aborted, offset
                    )
        if unknown_id:  # which one is told by the metadata: looked up before the next Fetch
            for tp in positions:
                if tp[0] not in answered:
                    self._leaders.pop(tp, None)

    def _request(self, parts: list[tuple[TopicPartitionKey, int]], max_wait_ms: int) -> Any:
        """A Fetch listing ``parts`` in their order (a topic's partitions together, where its first one is);
        by topic id when every topic has one (see :data:`_FETCH_BY_ID_MAX_VERSION`)."""
        topics: dict[str, list[Any]] = {}
        for (topic, partition), offset in parts:
            topics.setdefault(topic, []).append(
                FetchRequest.FetchTopic.FetchPartition(
                    partition=partition,
                    current_leader_epoch=-1,
                    fetch_offset=offset,
                    last_fetched_epoch=-1,
                    log_start_offset=-1,
                    partition_max_bytes=self.partition_max_bytes,
                )
            )
        ids = {t: self._topic_uuids.get(t) for t in topics}
        by_id = all(i is not None for i in ids.values())
        return FetchRequest(
            replica_id=-1,
            max_wait_ms=max_wait_ms,
            min_bytes=1,
            max_bytes=self.max_bytes,
            isolation_level=self.isolation_level,
            session_id=0,
            session_epoch=-1,
            topics=[
                FetchRequest.FetchTopic(topic=t, topic_id=ids[t] if by_id else _ZERO_ID, partitions=p)
                for t, p in topics.items()
            ],
            forgotten_topics_data=[],
            rack_id="",
            max_version=_FETCH_BY_ID_MAX_VERSION if by_id else _FETCH_MAX_VERSION,
        )

    def close(self) -> None:
        self._reset()


__all__ = ["READ_COMMITTED", "READ_UNCOMMITTED", "BatchFetcher", "BrokerUnreachable", "PartitionAnswer"]
