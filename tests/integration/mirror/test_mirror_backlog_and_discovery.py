"""MirrorMaker's backlog, live and restart scenarios and topic discovery, checked strictly:

* a backlog written in real multi-record batches (keys, headers, timestamps, tombstones, null keys)
  on a 3-partition topic is identical on the target per partition, then live data, then after a
  worker restart, with no record lost and none replayed after a graceful restart;
* a new topic and a topic config change reach the target within a bound tied to
  refresh.topics.interval.seconds / sync.topic.configs.interval.seconds, not an open-ended wait.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from connect_core.herder.standalone import StandaloneHerder, build_standalone_herder
from connect_core.model import State
from embedded_kafka import KafkaCluster, wait_for
from mirror.connectors.mirror_admin import MirrorAdmin

pytestmark = pytest.mark.integration

NameFn = Callable[[str], str]
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
REFRESH_S = 3
# What is timed is the connector's own periodic work: a new source topic shows up as its remote topic
# on the target at the next topic refresh (<= REFRESH_S, then one CreateTopics), a config change at the
# next config sync (one DescribeConfigs + IncrementalAlterConfigs). The allowance is generous for those
# calls on a loaded 2-core machine running several tests at once, and still far below the defaults an
# ignored setting would fall back to (10 minutes for both intervals). Task reconfiguration and the first
# fetch (seconds more under load) are waited for, not timed.
SLACK_S = 20
FLOW_TIMEOUT_S = 60


#: A transformation that never matches: records stay as they are, but the worker must take the
#: general per-record path (SourceRecords, converters, commit_record) instead of copying messages.
NO_OP_TRANSFORM = {
    "transforms": "never", "transforms.never.type": "org.apache.kafka.connect.transforms.Filter",
    "transforms.never.predicate": "none",
    "predicates": "none", "predicates.none.type": "org.apache.kafka.connect.transforms.predicates.TopicNameMatches",
    "predicates.none.pattern": "no-topic-is-named-like-this",
}  # fmt: skip


#: The flow settings of each copy path: source batches as bytes (the default), consumed messages copied
#: without SourceRecords, and SourceRecords (a transform needs decoded records).
COPY_PATHS: dict[str, dict[str, str] | None] = {
    "batch": None,
    "message": {"batch.copy.enabled": "false"},
    "record": NO_OP_TRANSFORM,
}


def copy_paths(herder: StandaloneHerder) -> set[str]:
    """The copy path of each running source task, as its status says."""
    return {task.copy_path for task in herder.worker._tasks.values()}


@contextmanager
def source_flow(a: KafkaCluster, b: KafkaCluster, offsets: Path,
                extra: dict[str, str] | None = None) -> Iterator[StandaloneHerder]:  # fmt: skip
    herder = build_standalone_herder({
        "bootstrap.servers": b.bootstrap_servers, "key.converter": BYTES, "value.converter": BYTES,
        "header.converter": BYTES, "offset.flush.interval.ms": "300",
        "offset.storage.file.filename": str(offsets), "listeners": "http://127.0.0.1:0",
    }, worker_id="audit-A->B")  # fmt: skip
    herder.start()
    try:
        herder.put_connector_config("MirrorSourceConnector", {
            "name": "MirrorSourceConnector",
            "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
            "source.cluster.alias": "A", "target.cluster.alias": "B",
            "source.cluster.bootstrap.servers": a.bootstrap_servers,
            "target.cluster.bootstrap.servers": b.bootstrap_servers,
            "tasks.max": "2", "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
            "refresh.topics.interval.seconds": str(REFRESH_S),
            "sync.topic.configs.interval.seconds": str(REFRESH_S), **(extra or {}),
        }, True)  # fmt: skip
        yield herder
    finally:
        herder.stop()


def batched(a: KafkaCluster, topic: str, prefix: str, n: int, base_ts: int) -> None:
    """Write with linger so the broker stores multi-record batches, as real producers do."""
    p = a.producer(**{"linger.ms": 20, "batch.num.messages": 10000})
    for i in range(n):
        p.produce(
            topic,
            key=None if i % 7 == 0 else f"{prefix}-{i % 50}".encode(),
            value=None if i % 11 == 3 else f"{prefix}-value-{i}".encode() * (1 + i % 3),
            headers=[("seq", str(i).encode()), ("dup", b"1"), ("dup", b"2"), ("nil", None)] if i % 2 else None,
            timestamp=base_ts + i,
            partition=i % 3,
        )
    assert p.flush(30) == 0


def per_partition(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[Any, ...]]]:
    return {
        p: [(m.key(), m.value(), tuple(m.headers() or ()), m.timestamp()) for m in msgs]
        for p, msgs in cluster.read_all(topic).items()
    }


def identical(a: KafkaCluster, b: KafkaCluster, topic: str) -> bool:
    remote = f"A.{topic}"
    if remote not in b.topic_names():
        return False
    return per_partition(b, remote) == per_partition(a, topic)


@pytest.mark.parametrize("path", list(COPY_PATHS))
def test_batched_backlog_live_and_restart_identical_per_partition(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
    unique_name: NameFn,
    tmp_path: Path,
    path: str,
) -> None:
    a, b = two_clusters
    extra = COPY_PATHS[path]
    topic = a.create_topic(unique_name("batched"), partitions=3)
    batched(a, topic, "backlog", 600, 1_600_000_000_000)
    offsets = tmp_path / "offsets.json"
    with source_flow(a, b, offsets, extra) as herder:
        # exact equality, duplicates included: a fresh flow must not replay anything either
        wait_for(lambda: identical(a, b, topic), 30, 0.5, "backlog not identical on the target")
        assert herder.connector_status("MirrorSourceConnector").connector.state is State.RUNNING
        assert copy_paths(herder) == {path}
        batched(a, topic, "live", 300, 1_650_000_000_000)
        wait_for(lambda: identical(a, b, topic), 30, 0.5, "live data not identical on the target")
    batched(a, topic, "offline", 150, 1_670_000_000_000)
    with source_flow(a, b, offsets, extra):
        wait_for(lambda: identical(a, b, topic), 30, 0.5, "data written while stopped not identical")
    assert b.partitions_for(f"A.{topic}") == [0, 1, 2]


def test_new_topic_and_config_change_within_the_refresh_interval(
    two_clusters: tuple[KafkaCluster, KafkaCluster],
    unique_name: NameFn,
    tmp_path: Path,
) -> None:
    a, b = two_clusters
    first, late = unique_name("first"), unique_name("late")
    a.create_topic(first, partitions=1, config={"retention.ms": "3600000"})
    a.produce(first, [b"x"])
    source_admin = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 10)
    target_admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 10)

    def target_config(key: str) -> str | None:
        entries = target_admin.describe_topic_configs([f"A.{first}"])[f"A.{first}"]
        return {e.name: e.value for e in entries}.get(key)

    with source_flow(a, b, tmp_path / "offsets.json"):
        wait_for(lambda: b.read_values(f"A.{first}") == [b"x"] if f"A.{first}" in b.topic_names() else False,
                 30, 0.3, "first topic not mirrored")  # fmt: skip
        assert target_config("retention.ms") == "3600000"

        a.create_topic(late, partitions=2)  # returns once the topic is in A's metadata
        created = time.monotonic()
        a.produce(late, [{"value": b"late-0", "partition": 0}, {"value": b"late-1", "partition": 1}])
        wait_for(lambda: f"A.{late}" in b.topic_names(), FLOW_TIMEOUT_S, 0.2, "new topic never discovered")
        took = time.monotonic() - created
        assert took <= REFRESH_S + SLACK_S, f"new topic discovered after {took:.1f}s with refresh every {REFRESH_S}s"
        wait_for(lambda: sorted(v or b"" for v in b.read_values(f"A.{late}")) == [b"late-0", b"late-1"],
                 FLOW_TIMEOUT_S, 0.3, "new topic's records not mirrored")  # fmt: skip

        changed = time.monotonic()
        source_admin.incremental_alter_topic_configs({first: [("retention.ms", "7200000", "SET")]})
        wait_for(lambda: target_config("retention.ms") == "7200000", FLOW_TIMEOUT_S, 0.2,
                 "config change not mirrored")  # fmt: skip
        took = time.monotonic() - changed
        assert took <= REFRESH_S + SLACK_S, f"config change took {took:.1f}s with sync every {REFRESH_S}s"
