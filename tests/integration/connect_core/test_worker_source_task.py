"""The Worker's source-task loop against a real broker: exact records, committed offsets, topic creation."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest

from connect_core.kafka.admin import TopicAdmin
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.runtime.status import StatusRecorder
from connect_core.runtime.worker import Worker
from connect_core.runtime.worker_config import StandaloneConfig
from connect_core.storage.memory import MemoryOffsetBackingStore, MemoryStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl
from embedded_kafka import KafkaCluster
from tests.worker_plugins import BYTES, CONNECTOR, Registry


def wait_for(cond: Callable[[], bool], timeout: float = 20.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Env:
    def __init__(self, cluster: KafkaCluster) -> None:
        Registry.reset()
        self.offsets = MemoryOffsetBackingStore()
        self.status = MemoryStatusBackingStore()
        props = {"bootstrap.servers": cluster.bootstrap_servers, "key.converter": BYTES, "value.converter": BYTES,
                 "header.converter": BYTES, "offset.flush.interval.ms": "200"}  # fmt: skip
        self.worker = Worker("w", StandaloneConfig(props), self.offsets, status_store=self.status)
        self.recorder = StatusRecorder(self.status, "w")
        self.worker.start()

    def committed(self, connector: str, partitions: int) -> dict[int, int | None]:
        reader = OffsetStorageReaderImpl(self.offsets, connector)
        found = reader.offsets([{"p": p} for p in range(partitions)])
        return {p["p"]: (o or {}).get("n") for p, o in found}

    def run_task(self, name: str, conn: dict[str, str], partitions: str) -> ConnectorTaskId:
        task_props = {"connector.name": name, "topic": conn["topic"], "records": conn["records"],
                      "batch": conn.get("batch", "50"), "partitions": partitions}  # fmt: skip
        tid = ConnectorTaskId(name, 0)
        assert self.worker.start_source_task(tid, conn, task_props, self.recorder, TargetState.STARTED, 1)
        return tid


@pytest.fixture
def env(kafka_cluster: KafkaCluster) -> Iterator[Env]:
    e = Env(kafka_cluster)
    yield e
    e.worker.stop()


def test_records_arrive_exactly_and_offsets_follow(
    env: Env, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = kafka_cluster.create_topic(unique_name("out"), partitions=2)
    conn = {"name": "c", "connector.class": CONNECTOR, "topic": topic, "records": "300", "batch": "64"}
    tid = env.run_task("c", conn, "0,1")
    wait_for(lambda: env.committed("c", 2) == {0: 299, 1: 299}, what="all offsets committed")
    got = kafka_cluster.read_all(topic)
    msgs = [m for ms in got.values() for m in ms]
    assert len(msgs) == 600
    by_source: dict[int, list[int]] = {0: [], 1: []}
    # (target partition, source partition) -> n in target offset order
    sequences: dict[tuple[int, int], list[int]] = {}
    for m in sorted(msgs, key=lambda m: (m.partition(), m.offset())):
        key = m.key().decode()
        p, n = (int(x) for x in key[1:].split("-"))
        by_source[p].append(n)
        sequences.setdefault((m.partition(), p), []).append(n)
        assert m.value() == f"v{p}-{n}".encode()
        assert m.headers() == [("h", b"x")]
        assert m.timestamp()[1] == 1_700_000_000_000 + n
    for p in (0, 1):  # every record of each source partition exactly once ...
        assert sorted(by_source[p]) == list(range(300))
    # ... and keys hash to fixed partitions, so within each target partition a source partition's
    # records keep the order the task produced them in (n increasing with the offset)
    assert len(sequences) > 2, sequences.keys()  # both source partitions spread over both target partitions
    for where, ns in sequences.items():
        assert ns == sorted(ns), f"target partition {where[0]}, source partition {where[1]}: out of order"
    assert env.status.get_task(tid) is not None
    assert [t.topic for t in env.status.get_topics("c")] == [topic]
    env.worker.stop_and_await_task(tid)
    task_status = env.status.get_task(tid)
    assert task_status is not None and task_status.state is State.UNASSIGNED


def test_topic_creation_groups_create_missing_topic(
    env: Env, kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    topic = unique_name("created")
    conn = {"name": "c2", "connector.class": CONNECTOR, "topic": topic, "records": "20",
            "topic.creation.default.replication.factor": "1", "topic.creation.default.partitions": "3",
            "topic.creation.default.retention.ms": "123456"}  # fmt: skip
    env.run_task("c2", conn, "0")
    wait_for(lambda: env.committed("c2", 1) == {0: 19}, what="committed")
    admin = TopicAdmin({"bootstrap.servers": kafka_cluster.bootstrap_servers})
    assert admin.partition_counts([topic]) == {topic: 3}
    configs = admin.describe_configs([topic])[topic]
    assert configs["retention.ms"].value == "123456"
    assert sum(len(v) for v in kafka_cluster.read_all(topic).values()) == 20
