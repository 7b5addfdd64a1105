"""The three MirrorMaker connectors running in a standalone herder whose worker writes to the target.

Short intervals throughout (refresh 2 s, checkpoints 1 s, offset flush 500 ms) so each behaviour shows
within seconds: identical records per partition (keys, headers, timestamps, tombstones) live and after a
restart, new topics and config changes, checkpoints and group offset sync, no loops in A<->B, heartbeats.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from confluent_kafka import Consumer

from connect_core.herder.standalone import StandaloneHerder, build_standalone_herder
from connect_core.model import State
from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import Checkpoint, Heartbeat, OffsetAndMetadata, TopicPartition
from mirror.connectors.mirror_admin import MirrorAdmin

NameFn = Callable[[str], str]
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")


def worker_props(target: KafkaCluster, offsets_file: Path) -> dict[str, str]:
    return {
        "bootstrap.servers": target.bootstrap_servers,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "offset.flush.interval.ms": "500",
        "offset.storage.file.filename": str(offsets_file),
        "listeners": "http://127.0.0.1:0",
    }


def connector_config(
    name: str, source: KafkaCluster, target: KafkaCluster, src: str, tgt: str, **extra: str
) -> dict[str, str]:
    cfg = {
        "name": name,
        "connector.class": f"org.apache.kafka.connect.mirror.{name}",
        "source.cluster.alias": src,
        "target.cluster.alias": tgt,
        "source.cluster.bootstrap.servers": source.bootstrap_servers,
        "target.cluster.bootstrap.servers": target.bootstrap_servers,
        "tasks.max": "2",
        "replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "refresh.topics.interval.seconds": "2",
        "sync.topic.configs.interval.seconds": "2",
        "refresh.groups.interval.seconds": "2",
        "emit.checkpoints.interval.seconds": "1",
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "admin.timeout.ms": "15000",
    }
    cfg.update(extra)
    return cfg


@contextmanager
def mirror(
    source: KafkaCluster, target: KafkaCluster, src: str, tgt: str, offsets_file: Path, **extra: str
) -> Iterator[StandaloneHerder]:
    herder = build_standalone_herder(worker_props(target, offsets_file), worker_id=f"{src}->{tgt}")
    herder.start()
    try:
        for name in CONNECTORS:
            herder.put_connector_config(name, connector_config(name, source, target, src, tgt, **extra), True)
        yield herder
    finally:
        herder.stop()


def values_by_partition(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[Any, ...]]]:
    return {
        p: [(m.key(), m.value(), m.headers() or [], m.timestamp()[1]) for m in msgs]
        for p, msgs in cluster.read_all(topic).items()
    }


def dedupe(records: list[tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """At-least-once: a replayed record repeats an earlier one; drop repeats, keep first-seen order."""
    seen: set[tuple[Any, ...]] = set()
    out = []
    for r in records:
        key = (r[0], r[1], tuple(r[2]), r[3])
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def wait_identical(a: KafkaCluster, b: KafkaCluster, topic: str, remote: str, timeout: float = 30) -> None:
    def same() -> bool:
        if remote not in b.topic_names():
            return False
        want = values_by_partition(a, topic)
        got = values_by_partition(b, remote)
        return {p: dedupe(v) for p, v in got.items()} == want

    wait_for(same, timeout, 0.5, f"{remote} on {b.name} does not mirror {topic} on {a.name}")


def records(prefix: str, n: int, partitions: int, base_ts: int) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        out.append(
            {
                "key": f"{prefix}-k{i}".encode() if i % 5 else None,
                "value": None if i % 9 == 4 else f"{prefix}-v{i}".encode(),
                "headers": [("h", f"{i}".encode()), ("h", b"again"), ("null", None)] if i % 2 else None,
                "timestamp": base_ts + i,
                "partition": i % partitions,
            }
        )
    return out


def topic_configs(cluster: KafkaCluster, topic: str) -> dict[str, str | None]:
    admin = MirrorAdmin({"bootstrap.servers": cluster.bootstrap_servers}, cluster.name, 10)
    return {e.name: e.value for e in admin.describe_topic_configs([topic])[topic]}


def test_records_configs_new_topics_restart_and_heartbeats(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    topic, late = unique_name("orders"), unique_name("late")
    a.create_topic(topic, partitions=3, config={"retention.ms": "3600000"})
    a.produce(topic, records("first", 60, 3, 1_600_000_000_000))
    offsets = tmp_path / "offsets.json"

    with mirror(a, b, "A", "B", offsets) as herder:
        wait_identical(a, b, topic, f"A.{topic}")
        status = herder.connector_status("MirrorSourceConnector")
        assert status.connector.state is State.RUNNING
        assert b.partitions_for(f"A.{topic}") == [0, 1, 2]
        assert topic_configs(b, f"A.{topic}").get("retention.ms") == "3600000"

        # live data
        a.produce(topic, records("live", 30, 3, 1_650_000_000_000))
        wait_identical(a, b, topic, f"A.{topic}")

        # new topics and config changes within the refresh interval
        a.create_topic(late, partitions=2)
        a.produce(late, records("late", 10, 2, 1_660_000_000_000))
        MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 10).incremental_alter_topic_configs(
            {topic: [("retention.ms", "7200000", "SET")]}
        )
        wait_identical(a, b, late, f"A.{late}", timeout=20)
        wait_for(
            lambda: topic_configs(b, f"A.{topic}").get("retention.ms") == "7200000",
            15,
            0.5,
            "config change not mirrored",
        )

        # heartbeats arrive on the target
        wait_for(
            lambda: "heartbeats" in b.topic_names() and len(b.read_all("heartbeats")[0]) >= 2, 15, 0.5, "no heartbeats"
        )
        hb = Heartbeat.decode(*(lambda m: (m.key(), m.value()))(b.read_all("heartbeats")[0][-1]))
        assert (hb.source_cluster_alias, hb.target_cluster_alias) == ("A", "B")

    # Restart: data written while stopped is picked up where replication left off, nothing lost.
    a.produce(topic, records("offline", 30, 3, 1_670_000_000_000))
    with mirror(a, b, "A", "B", offsets):
        wait_identical(a, b, topic, f"A.{topic}")
    got = values_by_partition(b, f"A.{topic}")
    duplicates = sum(len(v) - len(dedupe(v)) for v in got.values())
    assert duplicates == 0, f"{duplicates} records replayed after a graceful restart"


def test_checkpoints_and_group_offset_sync(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    """A group consuming along with replication is translated to within offset.lag.max on the target.

    (Translation of positions far behind the newest sync is coarser by design - 64 exponentially
    spaced syncs per partition, as in Kafka - so the group here stays close to the head.)
    """
    a, b = two_clusters
    topic, group = unique_name("events"), unique_name("app")
    lag_max = 10
    a.create_topic(topic, partitions=1)
    source_admin = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 10)
    target_admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 10)
    remote_tp = TopicPartition(f"A.{topic}", 0)

    def checkpoint() -> Checkpoint | None:
        if "A.checkpoints.internal" not in b.topic_names():
            return None
        cps = [Checkpoint.decode(m.key(), m.value()) for m in b.read_all("A.checkpoints.internal")[0]]
        mine = [c for c in cps if c.consumer_group_id == group]
        return mine[-1] if mine else None

    with mirror(a, b, "A", "B", tmp_path / "offsets.json", **{"offset.lag.max": str(lag_max)}):
        for produced, consumed in ((0, 45), (50, 97)):
            a.produce(topic, [{"value": f"e{i}".encode()} for i in range(produced, produced + 50)])
            wait_identical(a, b, topic, f"A.{topic}")
            source_admin.alter_consumer_group_offsets(group, {TopicPartition(topic, 0): OffsetAndMetadata(consumed)})
            # Offset syncs trail the data by up to a poll; a first checkpoint may use an older sync and
            # later ones move forward (never backwards), so wait for one within offset.lag.max.

            def close_enough(c: int = consumed) -> bool:
                cp = checkpoint()
                return cp is not None and cp.upstream_offset == c and cp.downstream_offset >= c - lag_max

            wait_for(close_enough, 30, 0.5, f"no checkpoint within {lag_max} of offset {consumed}")
            cp = checkpoint()
            assert cp is not None and cp.topic_partition == remote_tp and cp.downstream_offset <= consumed

        def synced() -> int:
            oam = target_admin.list_consumer_group_offsets([group])[group].get(remote_tp)
            return -1 if oam is None else oam.offset

        wait_for(lambda: synced() >= 97 - lag_max, 20, 0.5, "group offsets not synced to the target")
        every = [Checkpoint.decode(m.key(), m.value()) for m in b.read_all("A.checkpoints.internal")[0]]
        assert all(c.downstream_offset <= c.upstream_offset for c in every if c.consumer_group_id == group)

    # Failover: the application resumes on the target with the synced group offsets.
    consumed = 97
    committed = target_admin.list_consumer_group_offsets([group])[group][remote_tp]
    assert committed is not None and consumed - lag_max <= committed.offset <= consumed
    consumer = Consumer(
        {
            "bootstrap.servers": b.bootstrap_servers,
            "group.id": group,
            "auto.offset.reset": "latest",
            "enable.auto.commit": False,
            "allow.auto.create.topics": False,
            "session.timeout.ms": 6000,
        }
    )
    seen: list[bytes | None] = []
    try:
        consumer.subscribe([f"A.{topic}"])
        deadline = time.monotonic() + 30
        while len(seen) < 100 - committed.offset and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and msg.error() is None:
                seen.append(msg.value())
    finally:
        consumer.close()
    expected_unconsumed: list[bytes | None] = [f"e{i}".encode() for i in range(consumed, 100)]
    assert seen[-len(expected_unconsumed) :] == expected_unconsumed  # nothing it had not consumed is skipped
    assert len(seen) - len(expected_unconsumed) <= lag_max  # re-reads at most offset.lag.max


def test_active_active_never_loops(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    ta, tb = unique_name("on-a"), unique_name("on-b")
    a.create_topic(ta)
    b.create_topic(tb)
    a.produce(ta, [b"a1", b"a2"])
    b.produce(tb, [b"b1"])
    with mirror(a, b, "A", "B", tmp_path / "ab.json"), mirror(b, a, "B", "A", tmp_path / "ba.json"):
        wait_for(
            lambda: f"A.{ta}" in b.topic_names() and f"B.{tb}" in a.topic_names(),
            30,
            0.5,
            "topics not mirrored both ways",
        )
        wait_for(
            lambda: b.read_values(f"A.{ta}") == [b"a1", b"a2"] and a.read_values(f"B.{tb}") == [b"b1"],
            20,
            0.5,
            "records not mirrored both ways",
        )
        # heartbeats of each flow are replicated one hop further, and never back
        wait_for(
            lambda: "A.heartbeats" in b.topic_names() and "B.heartbeats" in a.topic_names(),
            30,
            0.5,
            "heartbeats not replicated",
        )
        # Proof that each flow refreshed its topics after all of the above existed on its source: a topic
        # created now is mirrored only by such a refresh, and that refresh saw the remote topics too.
        pa, pb = unique_name("probe-a"), unique_name("probe-b")
        a.create_topic(pa)
        b.create_topic(pb)
        wait_for(
            lambda: f"A.{pa}" in b.topic_names() and f"B.{pb}" in a.topic_names(),
            30,
            0.5,
            "topics created later not mirrored both ways",
        )
        looped = [t for t in b.topic_names() | a.topic_names() if t.startswith(("A.B.", "B.A."))]
        assert looped == []
