"""Exactly-once source tasks (KIP-618) against a real broker: records and offsets in one transaction per
boundary, callbacks after the commit, connector-defined boundaries, and a fenced task that fails.

Visibility is judged by the suite's read_committed reader (it applies the transaction markers itself),
so the assertions hold on Tansu as on Apache Kafka.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_core.api import SourceRecord, SourceTask
from connect_core.kafka.admin import NewTopicSpec
from connect_core.kafka.clients import create_producer, producer_config
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.runtime.distributed_config import DistributedConfig
from connect_core.runtime.exactly_once_source_task import ExactlyOnceWorkerSourceTask
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.worker import Worker
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
from connect_core.storage.memory import MemoryStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, deserialize_offset_key
from embedded_kafka import KafkaCluster
from tests.oracle.committed_reader import read_topic_committed
from tests.worker_plugins import BYTES, CONNECTOR, CountingSourceConnector, CountingSourceTask, Registry

BOUNDARY_CONNECTOR = f"{__name__}:BoundaryConnector"


class BoundaryTask(CountingSourceTask):
    """Asks for a commit after every ``commit.every`` records, and for an abort of batch ``abort.batch``."""

    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        self.every = int(props.get("commit.every", "30"))
        self.abort_batch = int(props.get("abort.batch", "-1"))
        self.batches = 0
        self.since_commit = 0

    def poll(self) -> list[SourceRecord] | None:
        batch = super().poll()
        if not batch:
            return batch
        transactions = self.context.transaction_context()
        assert transactions is not None
        self.batches += 1
        self.since_commit += len(batch)
        if self.batches == self.abort_batch:
            transactions.abort_transaction()
            self.since_commit = 0
        elif self.since_commit >= self.every:
            transactions.commit_transaction(batch[-1])
            self.since_commit = 0
        return batch


class BoundaryConnector(CountingSourceConnector):
    def task_class(self) -> type[SourceTask]:
        return BoundaryTask

    def can_define_transaction_boundaries(self, props: dict[str, str]) -> Any:
        from connect_core.api import TransactionBoundaryDefinition

        return TransactionBoundaryDefinition.SUPPORTED


def wait_for(cond: Callable[[], bool], timeout: float = 60.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Env:
    def __init__(self, cluster: KafkaCluster, unique: Callable[[str], str]) -> None:
        Registry.reset()
        self.cluster = cluster
        self.group = unique("eos-group")
        self.offsets_topic = unique("eos-offsets")
        client = {"bootstrap.servers": cluster.bootstrap_servers}
        self.offsets = KafkaOffsetBackingStore(NewTopicSpec(self.offsets_topic, 5, 1), client)
        self.status = MemoryStatusBackingStore()
        props = {**client, "group.id": self.group, "offset.storage.topic": self.offsets_topic,
                 "config.storage.topic": unique("eos-configs"), "status.storage.topic": unique("eos-status"),
                 "key.converter": BYTES, "value.converter": BYTES, "header.converter": BYTES,
                 "exactly.once.source.support": "enabled"}  # fmt: skip
        self.worker = Worker("w", DistributedConfig(props), self.offsets, status_store=self.status)
        self.recorder = StatusRecorder(self.status, "w")
        self.worker.start()

    def run_task(self, name: str, conn: dict[str, str], task_extra: dict[str, str] | None = None) -> ConnectorTaskId:
        task_props = {"connector.name": name, "topic": conn["topic"], "records": conn["records"],
                      "batch": conn.get("batch", "10"), "partitions": "0", **(task_extra or {})}  # fmt: skip
        tid = ConnectorTaskId(name, 0)
        assert self.worker.start_source_task(tid, conn, task_props, self.recorder, TargetState.STARTED, 1)
        return tid

    def committed_offset(self, connector: str) -> int | None:
        reader = OffsetStorageReaderImpl(self.offsets, connector)
        found = reader.offset({"p": 0})
        return None if found is None else int(found["n"])


@pytest.fixture
def env(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> Iterator[Env]:
    e = Env(kafka_cluster, unique_name)
    yield e
    e.worker.stop()


def _values(cluster: KafkaCluster, topic: str) -> list[bytes | None]:
    return [r.value for r in read_topic_committed(cluster, topic)[0].committed]


def test_poll_boundaries_commit_records_with_their_offsets_then_call_back(
    env: Env, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("eos-out"), partitions=1)
    conn = {"name": "poll", "connector.class": CONNECTOR, "topic": topic, "records": "200", "batch": "25",
            "producer.override.max.block.ms": "45000"}  # fmt: skip
    tid = env.run_task("poll", conn)
    task = env.worker.task(tid)
    assert isinstance(task, ExactlyOnceWorkerSourceTask)
    assert task.transactional_id == f"{env.group}-poll-0"
    assert task.call_timeout_s == 45.0  # the producer's max.block.ms bounds its transactional calls, as in Java
    wait_for(lambda: env.committed_offset("poll") == 199, what="the last offset committed")
    log = read_topic_committed(kafka_cluster, topic)[0]
    assert [r.value for r in log.committed] == [f"v0-{n}".encode() for n in range(200)]
    assert (log.aborted, log.open) == (0, 0)
    assert len([m for m in log.markers if m[2]]) >= 8  # one COMMIT per poll batch of 25
    # the offsets went out in the same transactions: every offset record is transactional and committed
    offset_logs = read_topic_committed(kafka_cluster, env.offsets_topic)
    offset_records = [
        r
        for p in offset_logs.values()
        for r in p.committed
        if (deserialize_offset_key(r.key) or ("", None))[0] == "poll"
    ]
    assert offset_records and all(p.aborted == 0 for p in offset_logs.values())
    assert sum(len(p.markers) for p in offset_logs.values()) >= 8
    # commit_record came after each commit, for every record, with where it landed
    wait_for(lambda: len(Registry.committed_records["poll"]) == 200, what="commit_record for every record")
    assert [n for n, _ in Registry.committed_records["poll"]] == list(range(200))
    assert [m.offset for _, m in Registry.committed_records["poll"]] == [r.offset for r in log.committed]
    assert Registry.commits["poll"] >= 8
    env.worker.stop_and_await_task(tid)
    status = env.status.get_task(tid)
    assert status is not None and status.state is State.UNASSIGNED


def test_connector_boundaries_commit_where_the_task_asks_and_an_abort_keeps_the_offsets(
    env: Env, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("eos-conn"), partitions=1)
    conn = {"name": "conn", "connector.class": BOUNDARY_CONNECTOR, "topic": topic, "records": "100",
            "batch": "10", "transaction.boundary": "connector"}  # fmt: skip
    tid = env.run_task("conn", conn, {"commit.every": "30", "abort.batch": "5"})
    wait_for(lambda: len(Registry.committed_records["conn"]) == 60, what="two transactions committed")
    task = env.worker.task(tid)
    assert task is not None
    wait_for(lambda: task.task.next[0] == 100, what="every record polled")  # type: ignore[attr-defined]
    env.worker.stop_and_await_task(tid)  # commits the open tail (records 80..99)
    assert env.committed_offset("conn") == 99
    log = read_topic_committed(kafka_cluster, topic)[0]
    # batches 1-3 (0..29) committed together; batches 4-5 (30..49) aborted on request, their offsets kept;
    # then 50..79 and 80..99 (the tail, committed at stop)
    expected = [f"v0-{n}".encode() for n in [*range(30), *range(50, 100)]]
    assert [r.value for r in log.committed] == expected
    assert log.aborted == 20
    commits = [m for m in log.markers if m[2]]
    assert len(commits) == 3, log.markers
    assert [n for n, _ in Registry.committed_records["conn"]] == [*range(30), *range(50, 100)]


def test_interval_boundary_commits_on_the_interval(
    env: Env, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("eos-interval"), partitions=1)
    conn = {"name": "interval", "connector.class": CONNECTOR, "topic": topic, "records": "60", "batch": "1",
            "poll.delay": "0.05", "transaction.boundary": "interval",
            "transaction.boundary.interval.ms": "1000"}  # fmt: skip
    env.run_task("interval", conn, {"poll.delay": "0.05"})
    wait_for(lambda: env.committed_offset("interval") == 59, what="the last offset committed")
    log = read_topic_committed(kafka_cluster, topic)[0]
    assert [r.value for r in log.committed] == [f"v0-{n}".encode() for n in range(60)]
    commits = len([m for m in log.markers if m[2]])
    # 60 one-record polls 50 ms apart take 3 s or more: a handful of 1 s transactions, not 60
    assert 2 <= commits <= 20, commits


def test_a_fenced_task_fails_and_its_open_transaction_is_aborted(
    env: Env, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("eos-fenced"), partitions=1)
    conn = {"name": "fenced", "connector.class": CONNECTOR, "topic": topic, "records": "1000000", "batch": "5",
            "poll.delay": "0.2"}  # fmt: skip
    tid = env.run_task("fenced", conn, {"poll.delay": "0.2"})
    wait_for(lambda: (env.committed_offset("fenced") or 0) > 20, what="the task committing")
    # a newer instance of the same task takes over its transactional.id
    zombie_killer = create_producer(
        producer_config(
            {"bootstrap.servers": kafka_cluster.bootstrap_servers, "transactional.id": f"{env.group}-fenced-0"}
        )
    )
    zombie_killer.init_transactions(30)
    wait_for(lambda: (s := env.status.get_task(tid)) is not None and s.state is State.FAILED, what="task FAILED")
    status = env.status.get_task(tid)
    assert status is not None and "fenced" in (status.trace or "").lower()
    task = env.worker.task(tid)
    assert task is not None and task.is_failed
    env.worker.stop_and_await_task(tid)
    log = read_topic_committed(kafka_cluster, topic)[0]
    assert log.open == 0
    values = [r.value for r in log.committed]
    assert values == [f"v0-{n}".encode() for n in range(len(values))]  # no gap, no duplicate
