"""Kafka-backed offset, config and status stores over a real broker."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from connect_core.api.errors import ConfigError
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.log import KafkaBasedLog
from connect_core.model import ConnectorTaskId, State, TargetState
from connect_core.storage import formats
from connect_core.storage.api import ConnectorStatus, TaskStatus, TopicStatus
from connect_core.storage.kafka_config import KafkaConfigBackingStore
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
from connect_core.storage.kafka_status import KafkaStatusBackingStore
from connect_core.storage.offset_storage import OffsetStorageReaderImpl, OffsetStorageWriter
from embedded_kafka import KafkaCluster


def _worker(cluster: KafkaCluster, unique_name: Callable[[str], str], **extra: str) -> dict[str, str]:
    return {
        "bootstrap.servers": cluster.bootstrap_servers,
        "group.id": unique_name("connect"),
        "offset.storage.topic": unique_name("offsets"),
        "offset.storage.partitions": "4",
        "offset.storage.replication.factor": "-1",
        "config.storage.topic": unique_name("configs"),
        "config.storage.replication.factor": "-1",
        "status.storage.topic": unique_name("status"),
        "status.storage.partitions": "2",
        "status.storage.replication.factor": "-1",
        **extra,
    }


def test_offsets_round_trip_and_reload_by_second_instance(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    worker = _worker(kafka_cluster, unique_name)
    store = KafkaOffsetBackingStore.from_worker_config(worker)
    store.start()
    try:
        writer = OffsetStorageWriter(store, "MirrorSourceConnector")
        for p in range(10):
            writer.offset({"topic": "t", "partition": p, "cluster": "a"}, {"offset": p * 10})
        assert writer.begin_flush()
        flushed: list[BaseException | None] = []
        future = writer.do_flush(flushed.append)
        assert future is not None
        future.result(timeout=30)
        assert flushed == [None]
        reader = OffsetStorageReaderImpl(store, "MirrorSourceConnector")
        assert reader.offset({"cluster": "a", "partition": 3, "topic": "t"}) == {"offset": 30}
        # A tombstone removes the partition.
        store.set(
            {
                formats.serialize_offset_key(
                    "MirrorSourceConnector", {"topic": "t", "partition": 9, "cluster": "a"}
                ): None
            }
        ).result(30)
    finally:
        store.stop()

    again = KafkaOffsetBackingStore.from_worker_config(worker)
    again.start()
    try:
        reader = OffsetStorageReaderImpl(again, "MirrorSourceConnector")
        partitions = [{"topic": "t", "partition": p, "cluster": "a"} for p in range(10)]
        got = dict((p["partition"], o) for p, o in reader.offsets(partitions))
        assert got == {p: ({"offset": p * 10} if p != 9 else None) for p in range(10)}
        assert sorted(p["partition"] for p in again.connector_partitions("MirrorSourceConnector")) == list(range(9))
    finally:
        again.stop()
    # Records on the topic are Java's exact bytes.
    topic = worker["offset.storage.topic"]
    keys = {m.key() for msgs in kafka_cluster.read_all(topic).values() for m in msgs}
    assert b'["MirrorSourceConnector",{"cluster":"a","partition":3,"topic":"t"}]' in keys


class Listener:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []

    def on_connector_config_update(self, connector: str) -> None:
        self.events.append(("config", connector))

    def on_connector_config_remove(self, connector: str) -> None:
        self.events.append(("remove", connector))

    def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        self.events.append(("tasks", tuple(tasks)))

    def on_connector_target_state_change(self, connector: str) -> None:
        self.events.append(("target", connector))

    def on_session_key_update(self, key: dict[str, Any]) -> None:
        self.events.append(("session", None))


def test_config_store_commit_protocol_over_real_topic(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    worker = _worker(kafka_cluster, unique_name)
    writer = KafkaConfigBackingStore.from_worker_config(worker)
    writer.start()
    observer = KafkaConfigBackingStore.from_worker_config(worker)
    listener = Listener()
    observer.set_update_listener(listener)
    observer.start()
    try:
        writer.put_connector_config("c", {"connector.class": "X", "tasks.max": "2"}, TargetState.PAUSED)
        writer.put_task_configs("c", [{"task": "0"}, {"task": "1"}])
        snap = writer.snapshot()  # the writer's own snapshot reflects its writes at once
        assert snap.connector_configs["c"]["tasks.max"] == "2"
        assert snap.target_state("c") == TargetState.PAUSED
        assert snap.tasks("c") == [ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)]

        # Task configs without their commit record are not applied anywhere.
        client = {"bootstrap.servers": kafka_cluster.bootstrap_servers}
        raw = KafkaBasedLog(worker["config.storage.topic"], client, client, lambda m: None)
        raw.start()
        try:
            raw.send_future(formats.task_key("c", 0).encode(), formats.encode_task_config({"task": "new0"})).result(30)
        finally:
            raw.stop()
        observer.refresh(30)
        assert observer.snapshot().task_config(ConnectorTaskId("c", 0)) == {"task": "0"}

        writer.put_task_configs("c", [{"task": "only"}])
        observer.refresh(30)
        snap = observer.snapshot()
        assert snap.tasks("c") == [ConnectorTaskId("c", 0)]
        assert snap.task_config(ConnectorTaskId("c", 0)) == {"task": "only"}
        assert ("config", "c") in listener.events
        assert ("tasks", (ConnectorTaskId("c", 0),)) in listener.events

        writer.put_target_state("c", TargetState.STOPPED)
        observer.refresh(30)
        assert observer.snapshot().target_state("c") == TargetState.STOPPED
        assert ("target", "c") in listener.events
        writer.remove_connector_config("c")
        observer.refresh(30)
        assert not observer.contains("c") and ("remove", "c") in listener.events
    finally:
        observer.stop()
        writer.stop()

    # A fresh store replays the whole log to the same state.
    replay = KafkaConfigBackingStore.from_worker_config(worker)
    replay.start()
    try:
        assert replay.snapshot().connectors() == []
    finally:
        replay.stop()


def test_config_store_refuses_multi_partition_topic(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    worker = _worker(kafka_cluster, unique_name)
    kafka_cluster.create_topic(worker["config.storage.topic"], partitions=2, config={"cleanup.policy": "compact"})
    store = KafkaConfigBackingStore.from_worker_config(worker)
    with pytest.raises(ConfigError, match="single partition") as info:
        store.start()
    assert info.value.issues[0].key == "config.storage.topic"


def test_status_store_put_safe_and_read_back(kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]) -> None:
    worker = _worker(kafka_cluster, unique_name)
    w1 = KafkaStatusBackingStore.from_worker_config(worker)
    w2 = KafkaStatusBackingStore.from_worker_config(worker)
    w1.start()
    w2.start()
    try:
        task = ConnectorTaskId("c", 0)
        w2.put(TaskStatus(task, State.RUNNING, "worker-2", generation=5))
        w2.put(ConnectorStatus("c", State.RUNNING, "worker-2", generation=5))
        w2.flush()
        w1.read_to_end()
        assert w1.get_task(task) == TaskStatus(task, State.RUNNING, "worker-2", None, 5)
        # worker-1 lost the task in an older generation: its safe write must not win.
        w1.put_safe(TaskStatus(task, State.UNASSIGNED, "worker-1", generation=4))
        w1.put_safe(TaskStatus(ConnectorTaskId("c", 1), State.FAILED, "worker-1", trace="boom", generation=4))
        w1.flush()
        w2.read_to_end()
        w1.read_to_end()
        for store in (w1, w2):
            assert store.get_task(task) == TaskStatus(task, State.RUNNING, "worker-2", None, 5)
            assert [t.id.task for t in store.get_all_tasks("c")] == [0, 1]
            assert store.get_all_tasks("c")[1].trace == "boom"
            assert store.connectors() == {"c"}
        # A newer generation may overwrite.
        w1.put_safe(TaskStatus(task, State.RUNNING, "worker-1", generation=6))
        w1.flush()
        w2.read_to_end()
        status = w2.get_task(task)
        assert status is not None and status.worker_id == "worker-1"
        # Destroyed = tombstone; topics are tracked and deleted.
        w2.put(ConnectorStatus("c", State.DESTROYED, "worker-2", generation=7))
        w2.put_topic(TopicStatus("t1", "c", 0, 1234))
        w2.flush()
        w1.read_to_end()
        assert w1.get_connector("c") is None and w1.connectors() == set()
        assert w1.get_topics("c") == [TopicStatus("t1", "c", 0, 1234)]
        w1.delete_topics("c")
        w1.flush()
        w2.read_to_end()
        assert w2.get_topics("c") == []
    finally:
        w1.stop()
        w2.stop()


def test_internal_topics_created_compacted_with_configured_partitions(
    kafka_cluster: KafkaCluster, unique_name: Callable[[str], str]
) -> None:
    worker = _worker(kafka_cluster, unique_name, **{"offset.storage.segment.ms": "600000"})
    stores: list[KafkaOffsetBackingStore | KafkaConfigBackingStore | KafkaStatusBackingStore] = [
        KafkaOffsetBackingStore.from_worker_config(worker),
        KafkaConfigBackingStore.from_worker_config(worker),
        KafkaStatusBackingStore.from_worker_config(worker),
    ]
    for s in stores:
        s.start()
    try:
        admin = TopicAdmin({"bootstrap.servers": kafka_cluster.bootstrap_servers})
        names = [worker[f"{p}.storage.topic"] for p in ("offset", "config", "status")]
        assert admin.partition_counts(names) == dict(zip(names, [4, 1, 2], strict=True))
        configs = admin.describe_configs(names)
        for n in names:
            assert configs[n]["cleanup.policy"].value == "compact"
        assert configs[names[0]]["segment.ms"].value == "600000"
    finally:
        for s in stores:
            s.stop()
