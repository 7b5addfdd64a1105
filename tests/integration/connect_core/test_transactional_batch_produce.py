"""The transactional batch producer against a real broker, judged by the suite's own read_committed reader.

* commit: pre-built batches (gzip and uncompressed) and ordinary records built into a batch, over two
  transactions and three partitions: the reader sees exactly those records, each partition a COMMIT
  marker per transaction, every batch stored with a valid CRC, the transactional bit, our producer id
  and epoch, sequences continuing across the transactions, and the copied batches' record bytes intact;
* abort: the reader sees none of the aborted records, and the next transaction on the same partitions
  commits and is read (an aborted transaction holds nothing back);
* fencing: a second producer with the same transactional id fences the first: the first's next send and
  commit fail with ProducerFencedError, its open transaction is aborted, the second's commit is read.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from connect_core.kafka.batch_builder import PlainRecord, build_batch
from connect_core.kafka.producer_errors import FENCED_CODES, ProducerFencedError
from connect_core.kafka.record_batch import RawBatch
from connect_core.kafka.transactional_batch_producer import TransactionalBatchProducer, TxnState
from embedded_kafka import KafkaCluster
from tests.oracle.committed_reader import raw_batches, read_topic_committed

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]
TIMEOUT_S = 60.0
Acks = list[tuple[int, BaseException | None]]

GZIP = 1


def _records(prefix: str, count: int) -> list[PlainRecord]:
    """Awkward records: null keys, null and empty values, repeated and null headers, old timestamps."""
    return [
        PlainRecord(
            None if i % 3 else b"%s-k%d" % (prefix.encode(), i),
            None if i % 7 == 5 else (b"" if i % 11 == 4 else b"%s-v%d" % (prefix.encode(), i)),
            [("h", b"1"), ("h", None), ("n", b"%d" % i)],
            1_000_000 + i,
        )
        for i in range(count)
    ]


def _producer(cluster: KafkaCluster, transactional_id: str) -> TransactionalBatchProducer:
    return TransactionalBatchProducer(
        cluster.bootstrap_servers, {}, f"{transactional_id}-client", transactional_id, request_timeout_s=30
    )


def _acked(acks: Acks) -> Callable[[int, BaseException | None], None]:
    return lambda base, error: acks.append((base, error))


def _expected(records: Sequence[PlainRecord]) -> list[tuple[bytes | None, bytes | None, tuple[object, ...], int]]:
    return [(r.key, r.value, tuple(r.headers), r.timestamp or 0) for r in records]


def _seen(log: object) -> list[tuple[bytes | None, bytes | None, tuple[object, ...], int]]:
    return [(r.key, r.value, tuple(r.headers), r.timestamp) for r in log.committed]  # type: ignore[attr-defined]


def test_committed_batches_are_read_exactly(cluster_factory: ClusterFactory, unique_name: Callable[[str], str]) -> None:
    (cluster,) = cluster_factory(["A"])
    topic = cluster.create_topic(unique_name("txn-batches"), partitions=2)
    progress = cluster.create_topic(unique_name("txn-progress"), partitions=1)
    first = [_records("a", 40), _records("b", 25)]
    second = [_records("c", 30)]
    copied: dict[int, list[RawBatch]] = {
        0: [build_batch(first[0], GZIP), build_batch(second[0])],
        1: [build_batch(first[1])],
    }
    producer = _producer(cluster, unique_name("txn-commit"))
    acks: Acks = []
    try:
        producer.init_transactions(TIMEOUT_S)
        # first transaction: a batch on each partition and a progress record, as a backfill chunk holds
        producer.begin_transaction()
        producer.send(topic, 0, copied[0][0], _acked(acks))
        producer.send(topic, 1, copied[1][0], _acked(acks))
        producer.send_records(progress, 0, [PlainRecord(b"unit", b"65")], _acked(acks))
        producer.commit_transaction(TIMEOUT_S)
        # second transaction: the same producer, sequences continuing on partition 0
        producer.begin_transaction()
        producer.send(topic, 0, copied[0][1], _acked(acks))
        producer.send_records(progress, 0, [PlainRecord(b"unit", b"95")], _acked(acks))
        producer.commit_transaction(TIMEOUT_S)
        assert producer.state is TxnState.READY
    finally:
        producer.close()
    assert [error for _, error in acks] == [None] * 5
    # acknowledged offsets: a COMMIT marker follows each transaction's batches on every partition
    assert [base for base, _ in acks] == [0, 0, 0, 41, 2]

    logs = read_topic_committed(cluster, topic)
    assert _seen(logs[0]) == _expected(first[0] + second[0])
    assert _seen(logs[1]) == _expected(first[1])
    assert [m[2] for m in logs[0].markers] == [True, True] and [m[2] for m in logs[1].markers] == [True]
    assert logs[0].aborted == logs[0].open == logs[1].aborted == logs[1].open == 0
    assert [(r.key, r.value) for r in read_topic_committed(cluster, progress)[0].committed] == [
        (b"unit", b"65"),
        (b"unit", b"95"),
    ]

    for partition, sent in copied.items():
        address = cluster.bootstrap_servers.split(",")[0]
        stored, _ = raw_batches(address, topic, partition)  # parsed by the suite's reader: CRCs checked there
        data = [b for b in stored if not b.is_control_batch]
        assert [b.producer_id for b in data] == [producer.producer_id] * len(sent)
        assert [b.producer_epoch for b in data] == [producer.producer_epoch] * len(sent)
        assert all(b.is_transactional for b in data)
        expected_sequences, sequence = [], 0
        for batch in sent:
            expected_sequences.append(sequence)
            assert batch.header is not None
            sequence += batch.header.record_count
        assert [b.base_sequence for b in data] == expected_sequences
        assert [b.codec for b in data] == (["gzip", "none"] if partition == 0 else ["none"])
        # the records after each header are the bytes handed to the producer (never re-encoded)
        assert [bytes(b.records) for b in sent] == _stored_record_bytes(cluster, topic, partition)


def test_aborted_batches_are_never_read(cluster_factory: ClusterFactory, unique_name: Callable[[str], str]) -> None:
    (cluster,) = cluster_factory(["A"])
    topic = cluster.create_topic(unique_name("txn-abort"), partitions=2)
    aborted, committed = _records("gone", 30), _records("kept", 20)
    producer = _producer(cluster, unique_name("txn-abort"))
    acks: Acks = []
    try:
        producer.init_transactions(TIMEOUT_S)
        epoch = producer.producer_epoch
        producer.begin_transaction()
        for partition in (0, 1):
            producer.send(topic, partition, build_batch(aborted[:15]), _acked(acks))
            producer.send(topic, partition, build_batch(aborted[15:], GZIP), _acked(acks))
        assert producer.flush(TIMEOUT_S)  # written on the broker, then aborted
        producer.send(topic, 0, build_batch(aborted), _acked(acks))  # queued, never sent: dropped
        producer.abort_transaction(TIMEOUT_S)
        assert producer.producer_epoch > epoch  # the epoch bump that restarts the sequences
        assert [error is None for _, error in acks] == [True] * 4 + [False]
        producer.begin_transaction()
        producer.send(topic, 0, build_batch(committed), _acked(acks))
        producer.commit_transaction(TIMEOUT_S)
    finally:
        producer.close()
    assert acks[-1][1] is None

    logs = read_topic_committed(cluster, topic)
    assert _seen(logs[0]) == _expected(committed)
    assert logs[0].aborted == logs[1].aborted == 30
    assert logs[0].open == logs[1].open == 0 and logs[1].committed == []
    assert [m[2] for m in logs[0].markers] == [False, True] and [m[2] for m in logs[1].markers] == [False]


def test_a_second_producer_fences_the_first(cluster_factory: ClusterFactory, unique_name: Callable[[str], str]) -> None:
    (cluster,) = cluster_factory(["A"])
    topic = cluster.create_topic(unique_name("txn-fence"), partitions=1)
    transactional_id = unique_name("txn-fence")
    zombie, successor = _producer(cluster, transactional_id), _producer(cluster, transactional_id)
    acks: Acks = []
    try:
        zombie.init_transactions(TIMEOUT_S)
        zombie.begin_transaction()
        zombie.send(topic, 0, build_batch(_records("zombie", 10)), _acked(acks))
        assert zombie.flush(TIMEOUT_S) and acks == [(0, None)]

        successor.init_transactions(TIMEOUT_S)  # fences the zombie and aborts its open transaction
        assert successor.producer_id == zombie.producer_id and successor.producer_epoch > zombie.producer_epoch

        zombie.send(topic, 0, build_batch(_records("late", 5)), _acked(acks))
        with pytest.raises(ProducerFencedError) as fenced:
            zombie.commit_transaction(TIMEOUT_S)
        assert fenced.value.code in FENCED_CODES
        assert isinstance(acks[-1][1], ProducerFencedError)
        assert zombie.state is TxnState.FENCED
        with pytest.raises(ProducerFencedError):
            zombie.send(topic, 0, build_batch(_records("later", 5)), _acked(acks))
        with pytest.raises(ProducerFencedError):
            zombie.abort_transaction(TIMEOUT_S)

        successor.begin_transaction()
        successor.send(topic, 0, build_batch(_records("successor", 8)), _acked(acks))
        successor.commit_transaction(TIMEOUT_S)
    finally:
        zombie.close()
        successor.close()

    (log,) = read_topic_committed(cluster, topic).values()
    assert _seen(log) == _expected(_records("successor", 8))
    assert log.aborted == 10 and log.open == 0
    assert [m[2] for m in log.markers] == [False, True]


def _stored_record_bytes(cluster: KafkaCluster, topic: str, partition: int) -> list[bytes]:
    from tests.raw_batch_bytes import data_batches

    stored = data_batches(cluster.bootstrap_servers, topic, partition)
    assert all(b.crc_ok for b in stored)
    return [b.records for b in stored]
