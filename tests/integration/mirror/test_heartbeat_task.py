"""MirrorHeartbeatConnector + task against a real target cluster."""

from __future__ import annotations

import sys
import threading
import time

from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import Heartbeat
from mirror.connectors.heartbeat_connector import MirrorHeartbeatConnector
from mirror.connectors.heartbeat_task import MirrorHeartbeatTask


def waiting_in_poll(thread: threading.Thread) -> bool:
    """``thread`` is blocked inside MirrorHeartbeatTask.poll's wait (so a stop() must wake it, not pre-empt it)."""
    frame = sys._current_frames().get(thread.ident or -1)
    names = []
    while frame is not None:
        names.append(frame.f_code.co_name)
        frame = frame.f_back
    return bool(names) and names[0] == "wait" and "poll" in names


def props(b: KafkaCluster, **extra: str) -> dict[str, str]:
    out = {
        "name": "MirrorHeartbeatConnector",
        "connector.class": "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        "target.cluster.bootstrap.servers": b.bootstrap_servers,
        "heartbeats.topic.replication.factor": "1",
        "enabled": "false",  # ignored: heartbeats run in every flow
    }
    out.update(extra)
    return out


def test_heartbeats_topic_created_and_heartbeats_emitted(kafka_cluster: KafkaCluster) -> None:
    b = kafka_cluster
    connector = MirrorHeartbeatConnector()
    connector.start(props(b))
    try:
        assert "heartbeats" in b.topic_names()
        assert b.partitions_for("heartbeats") == [0]
        configs = connector.task_configs(5)
        assert len(configs) == 1
    finally:
        connector.stop()

    task = MirrorHeartbeatTask()
    task.start(configs[0])
    try:
        before = int(time.time() * 1000)
        started = time.monotonic()
        records = [r for _ in range(2) for r in (task.poll() or [])]
        # one per emit.heartbeats.interval.seconds (1 s): never sooner; the upper bound is ten intervals,
        # generous for a loaded machine, and still catches a poll that ignores the interval it was given
        assert 1.5 <= time.monotonic() - started < 20
        assert len(records) == 2
        for r in records:
            hb = Heartbeat.decode(r.key, r.value)
            assert (hb.source_cluster_alias, hb.target_cluster_alias) == ("A", "B")
            assert hb.timestamp == r.timestamp and hb.timestamp >= before
            assert (r.topic, r.kafka_partition) == ("heartbeats", 0)
            assert r.source_partition == {"sourceClusterAlias": "A", "targetClusterAlias": "B"}
            assert r.source_offset == {"offset": 0}
        b.produce(
            "heartbeats", [{"key": r.key, "value": r.value, "partition": 0, "timestamp": r.timestamp} for r in records]
        )
        read = [Heartbeat.decode(m.key(), m.value()) for m in b.read_all("heartbeats")[0]]
        assert [h.timestamp for h in read] == [r.timestamp for r in records]

        # stop() wakes a poll that is waiting for the next interval.
        slow = MirrorHeartbeatTask()
        slow.start(props(b, **{"emit.heartbeats.interval.seconds": "30"}))
        result: list[object] = []
        t = threading.Thread(target=lambda: result.append(slow.poll()))
        t.start()
        wait_for(lambda: waiting_in_poll(t), 30, 0.01, "poll() waiting for its 30 s interval")
        slow.stop()
        t.join(20)  # far below the 30 s interval: only the wake-up ends the poll this soon
        assert not t.is_alive() and result == [None]
    finally:
        task.stop()


def test_disabled_emission_still_creates_topic(kafka_cluster: KafkaCluster) -> None:
    connector = MirrorHeartbeatConnector()
    connector.start(props(kafka_cluster, **{"emit.heartbeats.enabled": "false"}))
    try:
        assert "heartbeats" in kafka_cluster.topic_names()
        assert connector.task_configs(1) == []
    finally:
        connector.stop()
