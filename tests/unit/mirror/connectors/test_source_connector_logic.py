"""MirrorSourceConnector's pure decisions, plus the connectors' broker-free parts."""

from __future__ import annotations

from typing import Any

import pytest

from connect_core.api.connector import ExactlyOnceSupport
from connect_core.api.errors import BadRequestError, RetriableError
from mirror.client.filters import DefaultConfigPropertyFilter, DefaultTopicFilter, should_replicate_topic
from mirror.client.formats import TopicPartition
from mirror.client.policy import DefaultReplicationPolicy, IdentityReplicationPolicy
from mirror.connectors.checkpoint_connector import MirrorCheckpointConnector, group_partitions
from mirror.connectors.config import MirrorCheckpointConfig, MirrorHeartbeatConfig
from mirror.connectors.heartbeat_connector import MirrorHeartbeatConnector
from mirror.connectors.source_connector import MirrorSourceConnector
from mirror.connectors.source_logic import (
    AclSpec,
    ConfigEntryInfo,
    acls_to_sync,
    assign_round_robin,
    config_alter_ops,
    counts,
    create_configs,
    expand,
    is_known_target_topic,
    is_source_default,
    plan_topic_changes,
    refresh_changes,
    target_config_entries,
)

TP = TopicPartition
BASE = {
    "name": "MirrorSourceConnector",
    "connector.class": "MirrorSourceConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
}


def test_round_robin_matches_kafka_example() -> None:
    # Kafka's comment: 3 tasks, topics with 8, 2 and 2 partitions.
    parts = expand({"t0": 8, "t1": 2, "t2": 2})
    tasks = assign_round_robin(parts, 3)
    assert tasks[0] == [TP("t0", 0), TP("t0", 3), TP("t0", 6), TP("t1", 1)]
    assert tasks[1] == [TP("t0", 1), TP("t0", 4), TP("t0", 7), TP("t2", 0)]
    assert tasks[2] == [TP("t0", 2), TP("t0", 5), TP("t1", 0), TP("t2", 1)]
    assert assign_round_robin(parts[:2], 5) == [[TP("t0", 0)], [TP("t0", 1)]]
    assert assign_round_robin([], 4) == []


def test_cycle_detection_and_topic_predicate() -> None:
    policy = DefaultReplicationPolicy()
    f = DefaultTopicFilter()
    # Flow A -> B: topics that came from B (directly or via other hops) are cycles.
    assert not should_replicate_topic("B.orders", f, policy, "B")
    assert not should_replicate_topic("C.B.orders", f, policy, "B")
    assert should_replicate_topic("C.orders", f, policy, "B")
    assert should_replicate_topic("orders", f, policy, "B")
    # Internal topics never; heartbeats always (unless disabled and filtered out).
    assert not should_replicate_topic("mm2-offset-syncs.B.internal", f, policy, "B")
    assert not should_replicate_topic("A.checkpoints.internal", f, policy, "B")
    assert not should_replicate_topic("__consumer_offsets", f, policy, "B")
    narrow = DefaultTopicFilter({"topics": "orders"})
    assert should_replicate_topic("heartbeats", narrow, policy, "B")
    assert should_replicate_topic("C.heartbeats", narrow, policy, "B")
    assert not should_replicate_topic("heartbeats", narrow, policy, "B", heartbeats_replication_enabled=False)
    # IdentityReplicationPolicy cannot detect cycles beyond its configured source alias.
    identity = IdentityReplicationPolicy()
    identity.configure({"source.cluster.alias": "A"})
    assert should_replicate_topic("orders", f, identity, "B")


def test_known_target_topics() -> None:
    policy = DefaultReplicationPolicy()
    assert is_known_target_topic("A.orders", policy, "A", "A.checkpoints.internal")
    assert not is_known_target_topic("A.checkpoints.internal", policy, "A", "A.checkpoints.internal")
    assert not is_known_target_topic("C.orders", policy, "A", "A.checkpoints.internal")
    assert not is_known_target_topic("orders", policy, "A", "A.checkpoints.internal")


def test_plan_creates_missing_and_grows_never_shrinks() -> None:
    plan = plan_topic_changes({"a": 3, "b": 2, "c": 4}, {"A.b": 2, "A.c": 6}, lambda t: f"A.{t}")
    assert plan.create == {"A.a": 3}
    assert plan.grow == {}
    plan = plan_topic_changes({"b": 5}, {"A.b": 2}, lambda t: f"A.{t}")
    assert plan.grow == {"A.b": 5}


def test_refresh_changes() -> None:
    up = DefaultReplicationPolicy().upstream_topic
    known = [TP("a", 0)]
    same = refresh_changes(known, [TP("a", 0)], [TP("A.a", 0)], up)
    assert not same.changed
    added = refresh_changes(known, [TP("a", 0), TP("a", 1)], [TP("A.a", 0), TP("A.a", 1)], up)
    assert added.changed and added.new == {TP("a", 1)}
    missing = refresh_changes(known, [TP("a", 0)], [], up)
    assert missing.changed and missing.missing_in_target == {TP("a", 0)}
    deleted = refresh_changes(known, [], [], up)
    assert deleted.changed and deleted.deleted == {TP("a", 0)}
    assert counts([TP("a", 0), TP("a", 1), TP("b", 0)]) == {"a": 2, "b": 1}


def entry(name: str, value: str, **kw: object) -> ConfigEntryInfo:
    return ConfigEntryInfo(name, value, **kw)  # type: ignore[arg-type]


def test_source_default_rule_handles_brokers_that_mark_everything_default() -> None:
    # Tansu marks explicitly set keys as defaults: a non-default VALUE must still count as set.
    assert not is_source_default(entry("retention.ms", "1000", is_default=True, source="DEFAULT_CONFIG"))
    assert is_source_default(entry("retention.ms", "604800000", is_default=True, source="DEFAULT_CONFIG"))
    assert not is_source_default(entry("retention.ms", "604800000", source="DYNAMIC_TOPIC_CONFIG"))
    assert not is_source_default(entry("x.unknown", "1", is_default=True))
    assert is_source_default(entry("message.timestamp.after.max.ms", "3600000", is_default=True))


def test_target_config_entries_and_ops() -> None:
    entries = [
        entry("retention.ms", "1000", is_default=True, source="DEFAULT_CONFIG"),  # Tansu-style explicit value
        entry("cleanup.policy", "delete", is_default=True, source="DEFAULT_CONFIG"),  # real default
        entry("min.insync.replicas", "2", source="DYNAMIC_TOPIC_CONFIG"),  # excluded by default
        entry("segment.bytes", "1000", is_read_only=True),
        entry("ssl.secret", "x", is_sensitive=True),
        entry("max.message.bytes", "5000", source="STATIC_BROKER_CONFIG"),
        entry("compression.type", "lz4", source="DYNAMIC_TOPIC_CONFIG"),
    ]
    target = DefaultConfigPropertyFilter()
    created = target_config_entries(entries, target, incremental=False)
    assert create_configs(created) == {"retention.ms": "1000", "compression.type": "lz4"}
    synced = target_config_entries(entries, target, incremental=True)
    assert config_alter_ops(synced, target) == [
        ("retention.ms", "1000", "SET"),
        ("cleanup.policy", None, "DELETE"),
        ("compression.type", "lz4", "SET"),
    ]
    source = DefaultConfigPropertyFilter({"use.defaults.from": "source"})
    assert create_configs(target_config_entries(entries, source, incremental=False)) == {
        "retention.ms": "1000",
        "cleanup.policy": "delete",
        "compression.type": "lz4",
    }
    assert ("cleanup.policy", "delete", "SET") in config_alter_ops(
        target_config_entries(entries, source, incremental=True), source
    )


def test_acl_sync_rules() -> None:
    acls = [
        AclSpec("TOPIC", "orders", "LITERAL", "User:a", "*", "ALL", "ALLOW"),
        AclSpec("TOPIC", "orders", "LITERAL", "User:b", "*", "WRITE", "ALLOW"),
        AclSpec("TOPIC", "orders", "LITERAL", "User:c", "*", "WRITE", "DENY"),
        AclSpec("TOPIC", "ord", "PREFIXED", "User:d", "*", "READ", "ALLOW"),
        AclSpec("TOPIC", "B.x", "LITERAL", "User:e", "*", "READ", "ALLOW"),
    ]
    out = acls_to_sync(acls, lambda t: not t.startswith("B."), lambda t: f"A.{t}")
    assert out == [
        AclSpec("TOPIC", "A.orders", "LITERAL", "User:a", "*", "READ", "ALLOW"),
        AclSpec("TOPIC", "A.orders", "LITERAL", "User:c", "*", "WRITE", "DENY"),
    ]
    assert acls_to_sync([], lambda t: True, lambda t: t) == []


# -- connectors without brokers ------------------------------------------------------------------------


def test_source_connector_validate_and_eos() -> None:
    c = MirrorSourceConnector()
    values = {
        cv.name: cv
        for cv in c.validate({**BASE, "exactly.once.support": "required", "offset-syncs.topic.location": "nowhere"})
    }
    assert values["exactly.once.support"].errors
    assert values["offset-syncs.topic.location"].errors
    assert not values["topics"].errors
    assert c.exactly_once_support(BASE) is ExactlyOnceSupport.UNSUPPORTED
    assert (
        c.exactly_once_support({**BASE, "consumer.isolation.level": "read_committed"}) is ExactlyOnceSupport.SUPPORTED
    )


def test_disabled_source_connector_has_no_tasks() -> None:
    c = MirrorSourceConnector()
    c.start({**BASE, "enabled": "false"})
    assert c.task_configs(4) == []
    c.stop()


def test_alter_offsets_validation() -> None:
    src = MirrorSourceConnector()
    good: dict[str, Any] = {"cluster": "A", "topic": "t", "partition": 0}
    assert src.alter_offsets(BASE, [(good, {"offset": 5}), ({"junk": 1}, None)])
    bad_cases: list[tuple[dict[str, Any], dict[str, Any]]] = [
        ({"topic": "t", "partition": 0}, {"offset": 1}),
        ({**good, "partition": -1}, {"offset": 1}),
        ({**good, "partition": "0"}, {"offset": 1}),
        (good, {"offset": -1}),
        (good, {"offset": "1"}),
        (good, {}),
    ]
    for bad_partition, bad_offset in bad_cases:
        with pytest.raises(BadRequestError):
            src.alter_offsets(BASE, [(bad_partition, bad_offset)])
    cp = MirrorCheckpointConnector()
    cp_part = {"group": "g", "topic": "A.t", "partition": 1}
    assert cp.alter_offsets(BASE, [(cp_part, {"offset": 0})])
    with pytest.raises(BadRequestError):
        cp.alter_offsets(BASE, [(cp_part, {"offset": 3})])
    hb = MirrorHeartbeatConnector()
    assert hb.alter_offsets(BASE, [({"sourceClusterAlias": "A", "targetClusterAlias": "B"}, {"offset": 0})])
    with pytest.raises(BadRequestError):
        hb.alter_offsets(BASE, [({"sourceClusterAlias": "A"}, {"offset": 0})])


def test_checkpoint_connector_validate_and_task_split() -> None:
    c = MirrorCheckpointConnector()
    values = {cv.name: cv for cv in c.validate({**BASE, "emit.checkpoints.enabled": "false"})}
    assert values["emit.checkpoints.enabled"].errors
    assert group_partitions(["a", "b", "c", "d", "e"], 2) == [["a", "b", "c"], ["d", "e"]]
    assert group_partitions(["a"], 1) == [["a"]]
    assert group_partitions(["a", "b"], 3) == [["a"], ["b"], []]


def test_checkpoint_connector_tasks_before_groups_loaded_is_retriable() -> None:
    c = MirrorCheckpointConnector()
    c._config = MirrorCheckpointConfig(BASE)
    with pytest.raises(RetriableError):
        c.task_configs(2)
    c._known_groups = frozenset({"g3", "g1", "g2"})
    configs = c.task_configs(2)
    assert [cfg["task.assigned.groups"] for cfg in configs] == ["g1,g2", "g3"]
    assert [cfg["task.index"] for cfg in configs] == ["0", "1"]
    c._known_groups = frozenset()
    assert c.task_configs(2) == []


def test_heartbeat_connector_tasks() -> None:
    c = MirrorHeartbeatConnector()
    c._config = MirrorHeartbeatConfig(BASE)
    assert c.task_configs(3) == [BASE]
    c._config = MirrorHeartbeatConfig({**BASE, "emit.heartbeats.enabled": "false"})
    assert c.task_configs(3) == []
