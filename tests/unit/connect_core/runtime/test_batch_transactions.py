"""BatchTransactions' own logic (no broker): records queued in order and built into batches per partition below
the limit, keyed records on Kafka's default partition, each record's report from its batch's answer, and the
batch producer's errors as librdkafka's codes, which the exactly-once task sorts as it does librdkafka's.
The wire behaviour is in tests/integration/mirror/test_exactly_once_batch_copy.py."""

from __future__ import annotations

from typing import Any

import pytest

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.kafka.batch_builder import PlainRecord, build_batch
from connect_core.kafka.partitioning import key_partition
from connect_core.kafka.producer_errors import ProducerFencedError, mapped_error
from connect_core.kafka.types import KafkaError, KafkaException
from connect_core.runtime.batch_transactions import BatchTransactions, kafka_error_of, within
from connect_core.runtime.transaction_errors import ProducerErrorKind, classify_code, error_code


class Recording:
    """What BatchTransactions calls of its transactional batch producer, recorded; answers given by the test."""

    def __init__(self, partitions: int = 5) -> None:
        self.partitions = partitions
        self.sent: list[tuple[str, int, list[PlainRecord], Any]] = []
        self.in_flight = 0
        self.fail_with: ConnectError | None = None

    def partition_count(self, topic: str) -> int:
        return self.partitions

    def send_records(self, topic: str, partition: int, records: list[PlainRecord], callback: Any) -> None:
        if self.fail_with is not None:
            raise self.fail_with
        self.sent.append((topic, partition, records, callback))
        self.in_flight += 1

    def poll(self, timeout_s: float = 0.0) -> None:
        pass

    def flush(self, timeout_s: float) -> bool:
        return True

    def commit_transaction(self, timeout_s: float | None = None) -> None:
        raise mapped_error(90, "EndTxn(commit)")


def _reports() -> tuple[list[tuple[Any, Any]], Any]:
    seen: list[tuple[Any, Any]] = []
    return seen, lambda err, msg: seen.append((err, msg))


def test_records_wait_until_served_then_go_per_partition_in_order_with_their_offsets() -> None:
    producer = Recording()
    txn = BatchTransactions(producer)  # type: ignore[arg-type]
    seen, report = _reports()
    for i in range(3):
        txn.produce("t", b"v%d" % i, None, 1, report, None, 1_000 + i, [("h", None)])
    assert not producer.sent and len(txn) == 3  # queued: nothing reached the producer yet
    txn.poll(0)
    ((topic, partition, records, callback),) = producer.sent
    assert (topic, partition, [r.value for r in records]) == ("t", 1, [b"v0", b"v1", b"v2"])
    assert records[0].headers == [("h", None)] and records[2].timestamp == 1_002
    callback(40, None)
    assert [(err, msg.offset(), msg.partition(), msg.timestamp()) for err, msg in seen] == [
        (None, 40, 1, (1, 1_000)),
        (None, 41, 1, (1, 1_001)),
        (None, 42, 1, (1, 1_002)),
    ]


def test_a_keyed_record_without_a_partition_goes_where_kafkas_partitioner_puts_it() -> None:
    producer = Recording(partitions=25)
    txn = BatchTransactions(producer)  # type: ignore[arg-type]
    key = b'["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t"}]'
    txn.produce("offsets", b"{}", key, on_delivery=None)
    txn.flush(0)
    assert producer.sent[0][1] == key_partition(key, 25)


def test_batches_are_built_below_the_limit_a_big_record_alone() -> None:
    entries: list[tuple[PlainRecord, Any]] = [(PlainRecord(None, b"x" * 300), None) for _ in range(10)]
    entries.insert(4, (PlainRecord(None, b"y" * 5_000), None))
    groups = within(entries, 1_000)
    assert [len(g) for g in groups] == [2, 2, 1, 2, 2, 2]
    assert [r for g in groups for r in g] == entries  # nothing dropped or reordered
    sizes = [len(build_batch([r for r, _ in g]).data) for g in groups]
    assert all(size <= 1_000 for i, size in enumerate(sizes) if i != 2) and sizes[2] > 5_000
    producer = Recording()
    txn = BatchTransactions(producer)  # type: ignore[arg-type]
    txn.limit_batches(1_000)
    for record, _ in entries:
        txn.produce("t", record.value, None, 0)
    txn.flush(0)
    assert [len(records) for _, _, records, _ in producer.sent] == [2, 2, 1, 2, 2, 2]


def test_a_failed_batch_fails_each_of_its_records_with_the_brokers_code() -> None:
    producer = Recording()
    txn = BatchTransactions(producer)  # type: ignore[arg-type]
    seen, report = _reports()
    txn.produce("t", b"a", None, 0, report)
    txn.produce("t", b"b", None, 0, report)
    txn.poll(0)
    producer.sent[0][3](-1, mapped_error(10, "Produce of a batch to t-0"))
    assert [(err.code(), msg) for err, msg in seen] == [(10, None), (10, None)]
    assert classify_code(seen[0][0].code()) is ProducerErrorKind.PERMANENT


def test_a_fenced_producer_reports_fencing_for_records_it_could_not_take() -> None:
    producer = Recording()
    producer.fail_with = ProducerFencedError("fenced", 90)
    txn = BatchTransactions(producer)  # type: ignore[arg-type]
    seen, report = _reports()
    txn.produce("t", b"a", None, 0, report)
    txn.poll(0)
    assert [err.code() for err, _ in seen] == [90]


def test_transactional_calls_raise_librdkafkas_exception_with_the_code() -> None:
    txn = BatchTransactions(Recording())  # type: ignore[arg-type]
    with pytest.raises(KafkaException) as raised:
        txn.commit_transaction(1)
    assert error_code(raised.value) == 90 and classify_code(90) is ProducerErrorKind.FENCED


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (ProducerFencedError("fenced", 47), ProducerErrorKind.FENCED),
        (mapped_error(45, "Produce"), ProducerErrorKind.RECOVERABLE),  # a broker that lost the producer's state
        (mapped_error(53, "InitProducerId"), ProducerErrorKind.PERMANENT),  # not authorised
        (RetriableError("EndTxn(commit) kept failing: no answer"), ProducerErrorKind.PERMANENT),  # a time-out
        (ConnectError("Cannot commit: the producer is ready"), ProducerErrorKind.RECOVERABLE),
    ],
)
def test_errors_are_sorted_as_the_record_paths_are(error: ConnectError, kind: ProducerErrorKind) -> None:
    mapped = kafka_error_of(error)
    assert isinstance(mapped, KafkaError) and classify_code(mapped.code()) is kind
