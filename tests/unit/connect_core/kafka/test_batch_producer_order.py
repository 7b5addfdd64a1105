"""The batch producer's per-partition bookkeeping (pure logic, no broker): batches go out in order, one per
partition per request; a retry sends the failed batch and every later one again, in order; completions in
any state keep "the next batch to send" right. The network client is a stand-in that only takes requests."""

from __future__ import annotations

import struct
from typing import Any

from kafka.record._crc32c import crc as independent_crc32c  # type: ignore[import-untyped]

from connect_core.api.errors import ConnectError
from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.record_batch import RawBatch, split_batches


class _Future:
    is_done = False


class _Client:
    """Takes requests and never answers: the test decides what happens to them."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    def ready(self, node: int) -> bool:
        return True

    def poll(self, timeout_ms: int = 0) -> None:
        return None

    def send(self, node: int, request: Any) -> _Future:
        self.sent.append(request)
        return _Future()


def _batch(base: int) -> RawBatch:
    body = struct.pack(">hiqqqhii", 0, 0, 1, 1, -1, -1, -1, 1) + b"record"
    (raw,) = split_batches(struct.pack(">qiibI", base, len(body) + 9, 0, 2, independent_crc32c(body)) + body)
    return raw


def _producer() -> tuple[BatchProducer, _Client]:
    producer = BatchProducer("127.0.0.1:1", {}, "order-test", max_in_flight=3)
    client = _Client()
    producer._client = client  # type: ignore[assignment]
    producer.producer_id, producer.producer_epoch = 7, 0
    producer._leaders = {("t", 0): 1, ("t", 1): 1}
    return producer, client


def _sent_sequences(client: _Client) -> list[list[tuple[int, int]]]:
    """Per request: (partition, base sequence) of each batch it carries."""
    out = []
    for request in client.sent:
        out.append([(p, struct.unpack_from(">i", bytes(pieces[0]), 53)[0]) for _t, p, pieces in request._parts])
    return out


def test_batches_go_out_in_order_one_per_partition_per_request() -> None:
    producer, client = _producer()
    for i in range(4):
        producer.send("t", 0, _batch(i), lambda base, err: None)
    producer.send("t", 1, _batch(0), lambda base, err: None)
    for _ in range(5):
        producer._dispatch()
    # at most 3 requests in flight to the leader; sequences of partition 0 advance one record per batch
    assert _sent_sequences(client) == [[(0, 0), (1, 0)], [(0, 1)], [(0, 2)]]
    state = producer._partitions[("t", 0)]
    assert state.sent == 3 and state.next_unsent() is state.entries[3]


def test_a_retry_resends_from_the_failed_batch_on_and_completions_keep_the_count() -> None:
    producer, client = _producer()
    done: list[int] = []
    for i in range(4):
        producer.send("t", 0, _batch(i), lambda base, err, i=i: done.append(i))
    producer._max_in_flight = 10
    for _ in range(4):
        producer._dispatch()
    state = producer._partitions[("t", 0)]
    assert state.sent == 4 and state.next_unsent() is None
    first, second, third = state.entries[0], state.entries[1], state.entries[2]
    producer._complete(state, first, 0, None)
    assert state.sent == 3 and done == [0]
    producer._resend_from(state, third, "test")
    assert state.sent == 1 and state.next_unsent() is third
    assert [e.sent for e in state.entries] == [True, False, False]
    producer._complete(state, second, 1, None)
    assert state.sent == 0 and state.next_unsent() is third
    producer._retry_at = 0.0
    client.sent.clear()
    producer._dispatch()
    assert _sent_sequences(client) == [[(0, 2)]]  # the failed batch again, with its own sequence
    assert state.sent == 1 and state.next_unsent() is state.entries[1]


def test_a_failed_partition_completes_every_batch_sent_or_not() -> None:
    producer, _client = _producer()
    errors: list[BaseException | None] = []
    for i in range(3):
        producer.send("t", 0, _batch(i), lambda base, err: errors.append(err))
    producer._dispatch()
    state = producer._partitions[("t", 0)]
    assert state.sent == 1
    producer._fail_partition(("t", 0), state, ConnectError("x"))
    assert len(errors) == 3 and all(errors)
    assert state.sent == 0 and state.next_unsent() is None and producer.in_flight == 0
