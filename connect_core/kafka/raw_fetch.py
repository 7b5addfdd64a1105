"""Raw record batches of a partition, control batches included, through kafka-python's network client.

librdkafka hides transaction markers from applications; reading them takes a Fetch request of our own
to the partition's leader. Read_uncommitted by default; with ``read_committed=True`` the answer stops at
the last stable offset and carries the broker's list of aborted transactions (which brokers that do not
filter aborted records leave empty: :mod:`connect_core.kafka.broker_capabilities`). kafka-python's client carries the
worker's security settings (TLS, SASL: :func:`connect_core.kafka.security.kafka_python_security`), so
this works on secured clusters as the rest of the worker does. The client is driven on the caller's
thread (no I/O thread) and serialised by a lock: reads are rare (offset lookups), never per record.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.consumer import FetchRequest
from kafka.protocol.metadata import MetadataRequest
from kafka.record import MemoryRecords  # type: ignore[import-untyped]

from connect_core.api.errors import ConnectError
from connect_core.kafka import selector_keys, wire_reads, wire_writes

_READ_UNCOMMITTED = 0
_READ_COMMITTED = 1
_MAX_BYTES = 16 * 1024 * 1024
_PARTITION_MAX_BYTES = 1024 * 1024
#: kafka-python refuses answers above 1 MB by default; a broker may exceed the asked size by a batch or more.
_MAX_FRAME = 128 * 1024 * 1024
#: The last Fetch version that names topics (v13 on carries topic ids only).
_FETCH_MAX_VERSION = 12
_OFFSET_OUT_OF_RANGE = 1
#: Errors after which the partition's leader is looked up again.
_STALE_LEADER = {3, 6, 74, 75, 100}  # unknown partition, not leader, fenced/unknown leader epoch, unknown topic id


#: Longest reconnect backoff (Kafka's clients: reconnect.backoff.max.ms = 1000).
RECONNECT_BACKOFF_MAX_MS = 1000
#: Tries of one exchange: a connection closed while idle or a moved leader costs one more.
_ATTEMPTS = 3


class _ExchangeFailed(ConnectError):
    """A request got no answer (connection lost, timeout): worth one more try on a fresh connection."""


@dataclass(frozen=True)
class RawBatch:
    """One record batch with its records decoded once: kafka-python's batches iterate only once, and a
    fetch answer is read twice (the capability evidence, then the read_committed rule)."""

    base_offset: int
    next_offset: int
    producer_id: int
    is_transactional: bool
    is_control_batch: bool
    records: tuple[Any, ...]  # kafka-python's ``DefaultRecord`` (``ControlRecord`` in a control batch)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.records)


@dataclass(frozen=True)
class FetchedBatches:
    """One Fetch answer for one partition: the batches at or after the asked offset, in log order."""

    batches: list[RawBatch]
    high_watermark: int
    log_start_offset: int
    #: read_committed answers: the aborted transactions of the range as (producer id, first offset)
    aborted_transactions: tuple[tuple[int, int], ...] = ()
    #: read_committed answers: where the answer stops while a transaction is open (-1: not given)
    last_stable_offset: int = -1

    @property
    def end_offset(self) -> int:
        """Where a reader of this isolation level has read everything: the last stable offset if given."""
        return self.last_stable_offset if self.last_stable_offset >= 0 else self.high_watermark


def bootstrapped_client(
    configs: Mapping[str, Any], timeout_ms: int, error: type[ConnectError], cluster: str = "the Kafka cluster"
) -> KafkaNetClient:
    """A kafka-python network client that has read the cluster's metadata, or ``error`` naming the servers
    (the raw fetcher, the batch fetcher and the batch producer connect the same way).

    Reconnects back off up to Kafka's client default (1 s) unless ``configs`` say otherwise: kafka-python's
    own 30 s cap kept a client away from a restarted broker for up to half a minute after it was back."""
    wire_reads.install()
    wire_writes.install()
    selector_keys.install()
    client = KafkaNetClient(**{"reconnect_backoff_max_ms": RECONNECT_BACKOFF_MAX_MS, **configs})
    try:
        client._manager.bootstrap(timeout_ms=timeout_ms)
    except Exception as e:
        client.close()
        raise error(f"Cannot reach {cluster} at {configs['bootstrap_servers']}: {e}") from e
    return client


class RawFetcher:
    """Fetches raw batches of one topic's partitions from their leaders (control batches included)."""

    def __init__(
        self,
        bootstrap_servers: str,
        client_configs: Mapping[str, Any],
        client_id: str,
        request_timeout_s: float = 30.0,
        read_committed: bool = False,
    ) -> None:
        self._configs = {
            "bootstrap_servers": bootstrap_servers,
            "client_id": client_id,
            "request_timeout_ms": int(request_timeout_s * 1000),
            "receive_message_max_bytes": _MAX_FRAME,
            **dict(client_configs),
        }
        self._timeout_ms = int(request_timeout_s * 1000)
        self._isolation = _READ_COMMITTED if read_committed else _READ_UNCOMMITTED
        self._client: KafkaNetClient | None = None
        self._leaders: dict[tuple[str, int], int] = {}
        self._lock = threading.Lock()

    def _connected(self) -> KafkaNetClient:
        if self._client is None:
            self._client = bootstrapped_client(self._configs, self._timeout_ms, ConnectError)
        return self._client

    def _send(self, node_id: int, request: Any) -> Any:
        """The answer; a failed exchange drops the client, so the next attempt connects afresh."""
        client = self._connected()
        try:
            return client.send_and_receive(node_id, request, timeout_ms=self._timeout_ms)
        except kafka_errors.KafkaError as e:
            self._reset()
            raise _ExchangeFailed(f"Request to broker {node_id} failed: {e}") from e

    def _reset(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None
        self._leaders.clear()

    def partitions(self, topic: str) -> list[int]:
        """The topic's partitions (their leaders are remembered for :meth:`fetch`)."""
        with self._lock:
            for _attempt in range(_ATTEMPTS - 1):
                try:
                    return sorted(self._refresh(topic))
                except _ExchangeFailed:
                    continue  # a connection the broker closed while idle, a broker restarting
            return sorted(self._refresh(topic))

    def _refresh(self, topic: str) -> dict[int, int]:
        client = self._connected()
        node = client.least_loaded_node(bootstrap_fallback=True)
        # allow_auto_topic_creation=False: Tansu creates a topic a metadata request names otherwise
        request = MetadataRequest(
            topics=[MetadataRequest.MetadataRequestTopic(name=topic)],
            allow_auto_topic_creation=False,
            include_cluster_authorized_operations=False,
            include_topic_authorized_operations=False,
        )
        response = self._send(node, request)
        client.cluster.update_metadata(response)
        found = {t.name: t for t in response.topics}
        if topic not in found or found[topic].error_code:
            code = found[topic].error_code if topic in found else "none"
            raise ConnectError(f"No metadata for topic {topic} (error code {code})")
        leaders = {p.partition_index: p.leader_id for p in found[topic].partitions}
        for partition, leader in leaders.items():
            self._leaders[(topic, partition)] = leader
        return leaders

    def fetch(
        self,
        topic: str,
        positions: Mapping[int, int],
        max_wait_ms: int,
        partition_max_bytes: int = _PARTITION_MAX_BYTES,
    ) -> dict[int, FetchedBatches]:
        """One Fetch per leader for every partition in ``positions`` (partition -> offset).

        A partition whose offset precedes the log start is read from the log start. ``max_wait_ms``
        bounds the broker's wait when there is nothing new; Tansu also stops scanning a partition of
        many batches when it runs out, so a caller that got nothing below the high watermark asks
        again with a longer wait. ``partition_max_bytes``: a small value for a caller that wants the
        answer's offsets (high watermark, last stable offset, log start) rather than its records.
        """
        with self._lock:
            wanted = dict(positions)
            out: dict[int, FetchedBatches] = {}
            last: Exception | None = None
            for _attempt in range(_ATTEMPTS):
                if not wanted:
                    return out
                try:
                    missing = [p for p in wanted if (topic, p) not in self._leaders]
                    if missing:
                        self._refresh(topic)
                    by_leader: dict[int, dict[int, int]] = {}
                    for partition, offset in wanted.items():
                        leader = self._leaders.get((topic, partition))
                        if leader is None or leader < 0:
                            raise ConnectError(f"Partition {topic}-{partition} has no leader")
                        by_leader.setdefault(leader, {})[partition] = offset
                    answers = [
                        self._send(
                            leader, _fetch_request(topic, parts, max_wait_ms, self._isolation, partition_max_bytes)
                        )
                        for leader, parts in by_leader.items()
                    ]
                except _ExchangeFailed as e:
                    last = e
                    continue
                for answer in answers:
                    for data in (d for t in answer.responses for d in t.partitions):
                        partition, offset = data.partition_index, wanted[data.partition_index]
                        if data.error_code in _STALE_LEADER:
                            self._leaders.pop((topic, partition), None)
                        elif data.error_code == _OFFSET_OUT_OF_RANGE and data.log_start_offset > offset:
                            wanted[partition] = data.log_start_offset
                        elif data.error_code:
                            raise ConnectError(
                                f"Fetch of {topic}-{partition} at {offset} failed with error code {data.error_code}"
                            )
                        else:
                            out[partition] = FetchedBatches(
                                _batches(data.records, offset),
                                data.high_watermark,
                                data.log_start_offset,
                                _aborted(data.aborted_transactions),
                                _int(data.last_stable_offset),
                            )
                            del wanted[partition]
            if not wanted:
                return out
            raise ConnectError(f"Fetch of {topic} partitions {sorted(wanted)} kept failing: {last or 'leader moving'}")

    def close(self) -> None:
        with self._lock:
            self._reset()


def _fetch_request(
    topic: str, positions: Mapping[int, int], max_wait_ms: int, isolation: int, partition_max_bytes: int
) -> Any:
    parts = [
        FetchRequest.FetchTopic.FetchPartition(
            partition=partition,
            current_leader_epoch=-1,
            fetch_offset=offset,
            last_fetched_epoch=-1,
            log_start_offset=-1,
            partition_max_bytes=partition_max_bytes,
        )
        for partition, offset in positions.items()
    ]
    return FetchRequest(
        replica_id=-1,
        max_wait_ms=max_wait_ms,
        min_bytes=1,
        # Brokers that fill answers to the request's limit alone (Tansu) would otherwise send a probe 16 MB
        max_bytes=min(_MAX_BYTES, partition_max_bytes * max(1, len(parts))),
        isolation_level=isolation,
        session_id=0,
        session_epoch=-1,
        topics=[FetchRequest.FetchTopic(topic=topic, partitions=parts)],
        forgotten_topics_data=[],
        rack_id="",
        max_version=_FETCH_MAX_VERSION,
    )


def _batches(records: bytes | memoryview | None, offset: int) -> list[RawBatch]:
    """The whole batches of a Fetch answer past ``offset`` (a broker may repeat one from before it)."""
    if not records:
        return []
    # kafka-python's record parsing gets bytes, as from its own decoder (a large field arrives as a view)
    memory = MemoryRecords(records if isinstance(records, bytes) else bytes(records))
    batches: list[RawBatch] = []
    while (batch := memory.next_batch()) is not None:
        if batch.next_offset > offset:
            batches.append(
                RawBatch(
                    batch.base_offset,
                    batch.next_offset,
                    batch.producer_id,
                    batch.is_transactional,
                    batch.is_control_batch,
                    tuple(batch),
                )
            )
    return batches


def _aborted(listed: Any) -> tuple[tuple[int, int], ...]:
    """The answer's aborted transactions as (producer id, first offset); none when absent (null)."""
    return tuple((int(t.producer_id), int(t.first_offset)) for t in listed or ())


def _int(value: Any) -> int:
    return -1 if value is None else int(value)
