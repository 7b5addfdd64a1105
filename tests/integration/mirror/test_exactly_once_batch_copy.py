"""An exactly-once MirrorSource task on the batch path (issue 37 item 4), on a real worker and real brokers.

With ``exactly.once.source.support = enabled`` and ``batch.copy.enabled = true`` the task copies the source's
batches as bytes through one transactional batch producer holding its transactional id: the copied batches,
the records of a batch that had to be decoded (here: one above the target topic's max.message.bytes) and the
source offsets (to the offsets topic on the target) all go into the same transactions. Judged by the suite's
read_committed reader (it applies the markers itself) and by the target's stored batches (CRC-32C checked here,
record bytes compared with the source's): B holds exactly the committed source records, in order, once. The
source holds committed, aborted and still-open transactions and plain writes. A newer instance of the task
fences the older one (which fails saying so) and carries on from the committed offsets; a producer failure in
the middle of a transaction (batches written, then the commit refused, as by a broker that lost the producer's
state) is aborted and recovered from by a fresh instance, with no duplicate and no gap.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from connect_core.kafka.admin import NewTopicSpec
from connect_core.kafka.client_logging import RDKAFKA_LOG
from connect_core.kafka.producer_errors import mapped_error
from connect_core.kafka.transactional_batch_producer import TransactionalBatchProducer
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.runtime import worker as worker_module
from connect_core.runtime.distributed_config import DistributedConfig
from connect_core.runtime.exactly_once_source_task import ExactlyOnceWorkerSourceTask
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.worker import Worker
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
from connect_core.storage.memory import MemoryStatusBackingStore
from embedded_kafka import KafkaCluster
from mirror.client.formats import OffsetSync
from tests.oracle.committed_reader import raw_batches, read_topic_committed
from tests.raw_batch_bytes import StoredBatch, data_batches
from tests.worker_plugins import BYTES

pytestmark = pytest.mark.integration

#: Generous: only a task that stopped copying takes this long (the waits below restart it on progress).
DEADLINE_S = 120.0
CONNECTOR = "MirrorSourceConnector"
TARGET_LIMIT = 40_000  # the target topic's max.message.bytes: the big batch below is above it
BIG = bytes(range(256)) * 40  # 10 KB per record, 6 of them in one batch
OUT_OF_ORDER_SEQUENCE = 45
SYNCS_TOPIC = "mm2-offset-syncs.B.internal"  # on the source cluster (offset-syncs.topic.location = source)


class Eos:
    """Distributed workers on B with exactly-once source support, copying A's topic with the batch path on."""

    def __init__(self, a: KafkaCluster, b: KafkaCluster, unique: Callable[[str], str], topic: str) -> None:
        self.a, self.b, self.topic = a, b, topic
        self.group = unique("eos-batch")
        self.offsets_topic = unique("eos-batch-offsets")
        self.client = {"bootstrap.servers": b.bootstrap_servers}
        self.worker_props = {
            **self.client,
            "group.id": self.group,
            "offset.storage.topic": self.offsets_topic,
            "config.storage.topic": unique("eos-batch-configs"),
            "status.storage.topic": unique("eos-batch-status"),
            "key.converter": BYTES,
            "value.converter": BYTES,
            "header.converter": BYTES,
            "exactly.once.source.support": "enabled",
        }
        self.workers: list[tuple[Worker, MemoryStatusBackingStore]] = []
        self.tid = ConnectorTaskId(CONNECTOR, 0)

    def start_worker(self) -> tuple[Worker, MemoryStatusBackingStore]:
        """A worker whose offset store reads read_committed, as the product builds it for exactly-once."""
        offsets = KafkaOffsetBackingStore(NewTopicSpec(self.offsets_topic, 5, 1), self.client, exactly_once=True)
        status = MemoryStatusBackingStore()
        worker = Worker(f"w{len(self.workers)}", DistributedConfig(self.worker_props), offsets, status_store=status)
        worker.start()
        self.workers.append((worker, status))
        return worker, status

    def run_task(self, worker: Worker, status: MemoryStatusBackingStore, partitions: int, **extra: str) -> None:
        props = {
            "name": CONNECTOR,
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": "A",
            "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": self.a.bootstrap_servers,
            "target.cluster.bootstrap.servers": self.b.bootstrap_servers,
            "task.assigned.partitions": ",".join(f"{self.topic}-{p}" for p in range(partitions)),
            "task.index": "0",
            "batch.copy.enabled": "true",
            "consumer.poll.timeout.ms": "200",
            **extra,
        }
        recorder = StatusRecorder(status, worker.worker_id)
        assert worker.start_source_task(self.tid, props, props, recorder, TargetState.STARTED, 1)

    def instance(self, worker: Worker) -> ExactlyOnceWorkerSourceTask:
        task = worker.task(self.tid)
        assert isinstance(task, ExactlyOnceWorkerSourceTask)
        return task

    def stop(self) -> None:
        for worker, _ in self.workers:
            worker.stop()


@pytest.fixture
def eos(two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: Callable[[str], str]) -> Iterator[Eos]:
    a, b = two_clusters
    topic = unique_name("eos-batches")
    env = Eos(a, b, unique_name, topic)
    a.create_topic(SYNCS_TOPIC, partitions=1)  # the connector creates it in a flow; the task only writes to it
    yield env
    env.stop()


# ---------------------------------------------------------------------------- the source


def write(cluster: KafkaCluster, topic: str, partition: int, values: list[bytes], codec: str = "none") -> None:
    """One batch of ``values`` (flushed together): null keys and values among them, repeated headers."""
    conf = {"bootstrap.servers": cluster.bootstrap_servers, "linger.ms": 1000, "compression.type": codec}
    producer = Producer({**conf, "logger": RDKAFKA_LOG})
    for i, value in enumerate(values):
        producer.produce(topic, None if i % 5 == 4 else value, None if i % 3 else b"k%d" % i, partition=partition,
                         headers=[("h", b"1"), ("h", None)], timestamp=1_600_000_000_000 + i)  # fmt: skip
    assert producer.flush(30) == 0


def transaction(cluster: KafkaCluster, topic: str, partition: int, tid: str, values: list[bytes]) -> Producer:
    """A transaction with ``values`` written on the broker, left open for the caller to end."""
    conf = {"bootstrap.servers": cluster.bootstrap_servers, "transactional.id": tid}
    producer = Producer({**conf, "logger": RDKAFKA_LOG})
    producer.init_transactions(30)
    producer.begin_transaction()
    for value in values:
        producer.produce(topic, value, partition=partition)
    assert producer.flush(30) == 0
    return producer


def committed(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[Any, ...]]]:
    return {
        p: [(r.key, r.value, r.headers, r.timestamp) for r in log.committed]
        for p, log in read_topic_committed(cluster, topic, timeout_s=DEADLINE_S).items()
    }


def wait_until(cond: Callable[[], bool], what: str, progress: Callable[[], object]) -> None:
    """Until ``cond``; fails only once ``progress`` stood still for DEADLINE_S (a busy machine is slow, not stuck)."""
    seen, since = progress(), time.monotonic()
    while not cond():
        now = time.monotonic()
        current = progress()
        if current != seen:
            seen, since = current, now
        assert now - since < DEADLINE_S, f"no progress towards {what} for {DEADLINE_S:g}s (at {current})"
        time.sleep(0.2)


def copied_count(b: KafkaCluster, topic: str) -> int:
    return sum(len(v) for v in committed(b, topic).values())


# ---------------------------------------------------------------------------- the tests


def test_batches_decoded_records_and_offsets_go_out_in_the_tasks_transactions(
    eos: Eos, unique_name: Callable[[str], str]
) -> None:
    a, b, topic = eos.a, eos.b, eos.topic
    a.create_topic(topic, partitions=2)
    b.create_topic(f"A.{topic}", partitions=2, config={"max.message.bytes": str(TARGET_LIMIT)})
    for codec in ("none", "gzip", "lz4", "zstd"):
        write(a, topic, 0, [b"%s-%d" % (codec.encode(), i) * (1 + i % 4) for i in range(20)], codec)
    source_txn = unique_name("source-txn")
    transaction(a, topic, 0, source_txn, [b"kept-%d" % i for i in range(8)]).commit_transaction(30)
    transaction(a, topic, 0, source_txn, [b"gone-%d" % i for i in range(8)]).abort_transaction(30)
    write(a, topic, 0, [BIG + b"%d" % i for i in range(6)])  # about 60 KB: above the target's limit, decoded
    write(a, topic, 0, [b"after-%d" % i for i in range(10)], "gzip")
    write(a, topic, 1, [b"before-open-%d" % i for i in range(10)])
    still_open = transaction(a, topic, 1, unique_name("open-txn"), [b"open-%d" % i for i in range(5)])
    write(a, topic, 1, [b"behind-open-%d" % i for i in range(5)])

    worker, status = eos.start_worker()
    eos.run_task(worker, status, 2)
    remote = f"A.{topic}"
    source = committed(a, topic)
    assert len(source[0]) == 4 * 20 + 8 + 6 + 10 and len(source[1]) == 10  # the open transaction holds the rest
    wait_until(lambda: committed(b, remote) == source, "the committed source records on B",
               lambda: copied_count(b, remote))  # fmt: skip
    assert eos.instance(worker).copy_path == "batch"

    still_open.commit_transaction(30)
    source = committed(a, topic)
    assert len(source[1]) == 20
    wait_until(lambda: committed(b, remote) == source, "the opened transaction's records on B",
               lambda: copied_count(b, remote))  # fmt: skip
    task = eos.instance(worker)
    assert task.is_running and status.get_task(eos.tid).state is State.RUNNING  # type: ignore[union-attr]
    worker.stop_and_await_task(eos.tid)

    logs = read_topic_committed(b, remote, timeout_s=DEADLINE_S)
    assert all(log.open == 0 and log.aborted == 0 for log in logs.values())
    target = {p: data_batches(b.bootstrap_servers, remote, p) for p in (0, 1)}
    assert all(batch.crc_ok for batches in target.values() for batch in batches)
    # the source's batches as bytes: every batch that can pass is on B with the same record bytes, in order
    passing = [s.records for s in data_batches(a.bootstrap_servers, topic, 0) if _passes(s)]
    assert len(passing) == 4 + 1 + 1
    assert [t.records for t in target[0] if t.records in passing] == passing
    rebuilt = [t for t in target[0] if t.records not in passing]
    assert sum(t.record_count for t in rebuilt) == 6 and all(len(t.records) + 61 <= TARGET_LIMIT for t in rebuilt)
    # one producer id wrote the copies, the decoded records and the source offsets, all in transactions
    producers = {t.producer_id for batches in target.values() for t in batches}
    offsets = [t for p in range(5) for t in data_batches(b.bootstrap_servers, eos.offsets_topic, p)]
    assert len(producers) == 1 and offsets and {t.producer_id for t in offsets} == producers
    assert all(t.attributes & 0x10 for batches in target.values() for t in batches)  # the transactional bit
    assert all(t.crc_ok and t.attributes & 0x10 for t in offsets)
    # offset syncs, told after the commits: each maps a source record to its committed copy on B
    syncs = [OffsetSync.decode(r.key, r.value) for r in read_topic_committed(a, SYNCS_TOPIC)[0].committed]
    source_at = {(p, r.offset): r.value for p, log in read_topic_committed(a, topic).items() for r in log.committed}
    target_at = {(p, r.offset): r.value for p, log in logs.items() for r in log.committed}
    assert {s.partition for s in syncs} == {0, 1}
    for sync in syncs:
        assert source_at[(sync.partition, sync.upstream_offset)] == target_at[(sync.partition, sync.downstream_offset)]


def _passes(batch: StoredBatch) -> bool:
    """A source batch the batch path copies as it is: not aborted, not above the target's limit."""
    return b"gone-" not in batch.records and len(batch.records) + 61 <= TARGET_LIMIT


def test_a_newer_instance_fences_the_older_one_which_fails_saying_so(eos: Eos) -> None:
    a, b, topic = eos.a, eos.b, eos.topic
    a.create_topic(topic, partitions=1)
    b.create_topic(f"A.{topic}", partitions=1)
    remote = f"A.{topic}"
    write(a, topic, 0, [b"first-%d" % i for i in range(20)])
    old_worker, old_status = eos.start_worker()
    eos.run_task(old_worker, old_status, 1)
    wait_until(lambda: copied_count(b, remote) == 20, "the first records on B", lambda: copied_count(b, remote))
    old = eos.instance(old_worker)

    new_worker, new_status = eos.start_worker()  # a newer instance of the same task (the old one a zombie)
    eos.run_task(new_worker, new_status, 1)
    wait_until(lambda: eos.instance(new_worker).copy_path == "batch", "the new instance started", lambda: 0)
    round_ = 0
    while not old.is_failed:  # the zombie learns it was fenced when it next writes
        write(a, topic, 0, [b"more-%d-%d" % (round_, i) for i in range(5)])
        round_ += 1
        expected = 20 + 5 * round_
        wait_until(lambda n=expected: old.is_failed or copied_count(b, remote) == n,  # type: ignore[misc]
                   "the new records copied", lambda: copied_count(b, remote))  # fmt: skip
        assert round_ < 20, "the older instance never failed"
    # the task knows it failed a moment before its worker records the FAILED status
    wait_until(lambda: getattr(old_status.get_task(eos.tid), "state", None) is State.FAILED,
               "the older instance's FAILED status", lambda: 0)  # fmt: skip
    state = old_status.get_task(eos.tid)
    assert state is not None and state.state is State.FAILED
    assert f"{eos.tid} was fenced out" in (state.trace or "") and eos.group in (state.trace or "")
    write(a, topic, 0, [b"last-%d" % i for i in range(5)])
    source = committed(a, topic)
    wait_until(lambda: committed(b, remote) == source, "every record on B once", lambda: copied_count(b, remote))
    assert eos.instance(new_worker).is_running
    assert all(batch.crc_ok for batch in data_batches(b.bootstrap_servers, remote, 0))


class _Faults:
    commits = 0
    failing: set[int] = set()


class FailingCommitProducer(TransactionalBatchProducer):
    """The real transactional batch producer, whose commits ``_Faults.failing`` names are refused after the
    transaction's batches were written, as by a broker that lost the producer's state (fatal, not fencing)."""

    def commit_transaction(self, timeout_s: float | None = None) -> None:
        _Faults.commits += 1
        if _Faults.commits in _Faults.failing:
            self.flush(timeout_s or 30.0)  # the batches are on the broker, in the open transaction
            raise mapped_error(OUT_OF_ORDER_SEQUENCE, "Produce of a batch")
        super().commit_transaction(timeout_s)


def test_a_failure_mid_transaction_is_aborted_and_recovered_without_duplicates(
    eos: Eos, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(worker_module, "TransactionalBatchProducer", FailingCommitProducer)
    monkeypatch.setattr(_Faults, "commits", 0)
    monkeypatch.setattr(_Faults, "failing", {2})
    a, b, topic = eos.a, eos.b, eos.topic
    a.create_topic(topic, partitions=2)
    b.create_topic(f"A.{topic}", partitions=2)
    remote = f"A.{topic}"
    worker, status = eos.start_worker()
    for p in (0, 1):
        write(a, topic, p, [b"one-%d-%d" % (p, i) for i in range(10)])
    eos.run_task(worker, status, 2)
    wait_until(lambda: copied_count(b, remote) == 20, "the first records on B", lambda: copied_count(b, remote))
    first = eos.instance(worker)
    while _Faults.commits < 2:  # the next transaction fails at its commit
        write(a, topic, 0, [b"two-%d" % _Faults.commits])
        wait_until(lambda: _Faults.commits >= 2 or copied_count(b, remote) > 20, "a second commit",
                   lambda: _Faults.commits)  # fmt: skip
    wait_until(lambda: eos.instance(worker) is not first and eos.instance(worker).is_running,
               "a fresh instance of the task", lambda: _Faults.commits)  # fmt: skip
    assert "Out of order sequence number" in str(first.restart_cause) or "OutOfOrderSequence" in str(
        first.restart_cause
    )
    for p in (0, 1):
        write(a, topic, p, [b"three-%d-%d" % (p, i) for i in range(10)])
    source = committed(a, topic)
    wait_until(lambda: committed(b, remote) == source, "every record on B once", lambda: copied_count(b, remote))
    assert status.get_task(eos.tid).state is State.RUNNING  # type: ignore[union-attr]
    worker.stop_and_await_task(eos.tid)
    logs = read_topic_committed(b, remote, timeout_s=DEADLINE_S)
    assert sum(log.aborted for log in logs.values()) >= 1  # the failed transaction's batches, aborted on B
    assert all(log.open == 0 for log in logs.values())
    assert all(batch.crc_ok for p in (0, 1) for batch in data_batches(b.bootstrap_servers, remote, p))


class _Exchanges:
    """What the task's transactional batch producer asked of the brokers, in order."""

    coordinator: list[str] = []
    produces: list[set[str]] = []


class CountingProducer(TransactionalBatchProducer):
    """The real transactional batch producer, noting each coordinator request and the topics of each Produce."""

    def _coordinator_call(self, make: Any, what: str, deadline: float, *args: Any) -> Any:
        answer = super()._coordinator_call(make, what, deadline, *args)
        _Exchanges.coordinator.append(what)
        return answer

    def _request(self, parts: Any) -> Any:
        _Exchanges.produces.append({topic for topic, _ in parts})
        return super()._request(parts)


def test_a_transaction_registers_its_partitions_once_and_sends_its_offsets_with_its_batches(
    eos: Eos, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The round trips of a transaction behind a backlog (where the next poll is read while the transaction's
    copies travel): one AddPartitionsToTxn for the copies' partitions and the offsets topic's, the source
    offsets in the same Produce request as copied batches, then EndTxn."""
    monkeypatch.setattr(worker_module, "TransactionalBatchProducer", CountingProducer)
    monkeypatch.setattr(_Exchanges, "coordinator", [])
    monkeypatch.setattr(_Exchanges, "produces", [])
    a, b, topic = eos.a, eos.b, eos.topic
    a.create_topic(topic, partitions=2)
    b.create_topic(f"A.{topic}", partitions=2)
    remote = f"A.{topic}"
    worker, status = eos.start_worker()
    eos.run_task(worker, status, 2)
    for round_ in range(3):  # one batch of 600 records per partition: a poll of a backlog, read ahead of the commit
        for p in (0, 1):
            write(a, topic, p, [b"%d-%d-%04d" % (round_, p, i) for i in range(600)])
        wait_until(lambda n=1200 * (round_ + 1): copied_count(b, remote) == n,  # type: ignore[misc]
                   "the round's records on B", lambda: copied_count(b, remote))  # fmt: skip
    worker.stop_and_await_task(eos.tid)

    assert committed(b, remote) == committed(a, topic)  # each record once, in order
    commits = _Exchanges.coordinator.count("EndTxn(commit)")
    assert commits >= 3 and "EndTxn(abort)" not in _Exchanges.coordinator
    assert _Exchanges.coordinator.count("AddPartitionsToTxn") == commits  # one per transaction, offsets included
    with_offsets = [topics for topics in _Exchanges.produces if eos.offsets_topic in topics]
    assert len(with_offsets) == commits and all(remote in topics for topics in with_offsets)
    logs = read_topic_committed(b, remote, timeout_s=DEADLINE_S)
    assert all(log.open == 0 and log.aborted == 0 for log in logs.values())


def _commits_and_data_bytes(bootstrap: str, topic: str) -> tuple[int, list[int]]:
    """Partition 0's commit markers, and the record count of each transaction they ended (the test's own reader)."""
    sizes, size = [], 0
    batches, _ = raw_batches(bootstrap.split(",")[0], topic, 0)
    for batch in batches:
        if batch.is_control_batch:
            assert [kind for _, kind in batch.control_types()] == [1], "not one commit marker"
            sizes.append(size)
            size = 0
        else:
            size += batch.last_offset_delta + 1
    assert size == 0, "records behind the last marker"
    return len(sizes), sizes


@pytest.mark.parametrize("most_bytes", [0, 6_000_000], ids=["a-transaction-per-poll", "spanning-polls"])
def test_behind_a_backlog_one_transaction_spans_polls_up_to_its_bytes(eos: Eos, most_bytes: int) -> None:
    """A backlog of 18 MB, read by Fetches of at most ~2 MB: one transaction per poll (0), or transactions
    that span polls up to about 6 MB each; either way each source record on B exactly once, in order."""
    a, b, topic = eos.a, eos.b, eos.topic
    a.create_topic(topic, partitions=1)
    remote = f"A.{topic}"
    b.create_topic(remote, partitions=1)
    value = bytes(range(256)) * 4
    for i in range(30):  # 30 batches of 600 x 1 KB
        write(a, topic, 0, [b"%02d-%03d" % (i, j) + value for j in range(600)])
    worker, status = eos.start_worker()
    eos.run_task(worker, status, 1, **{
        "batch.copy.transaction.max.bytes": str(most_bytes),
        "batch.copy.transaction.max.ms": "600000",  # the bytes decide here
        "consumer.poll.timeout.ms": "5000",  # a poll that comes back empty ends a spanning transaction
        "consumer.fetch.max.bytes": "2000000",
        "consumer.max.partition.fetch.bytes": "2000000",
    })  # fmt: skip
    wait_until(lambda: copied_count(b, remote) == 18_000, "the backlog on B", lambda: copied_count(b, remote))
    worker.stop_and_await_task(eos.tid)

    assert committed(b, remote) == committed(a, topic)
    commits, sizes = _commits_and_data_bytes(b.bootstrap_servers, remote)  # records per transaction
    if most_bytes == 0:
        assert commits >= 7, sizes  # a Fetch answered about 2 MB (Tansu: whole batches up to 2.4 MB) of 18 MB
    else:  # about 6 MB (3.5 Fetches' worth) each; a poll that found nothing yet may end one early
        assert 3 <= commits <= 6, sizes
        assert all(size <= 6_000 + 2 * 1_800 for size in sizes), sizes  # 6 MB, then the poll that passed it
