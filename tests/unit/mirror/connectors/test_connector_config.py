"""MM2 connector configs: every default, client config building, validation naming the key."""

from __future__ import annotations

import logging
import threading

import pytest

from connect_core.api.errors import ConfigError
from mirror.client.formats import TopicPartition
from mirror.connectors.config import (
    CHECKPOINT_CONNECTOR_CONFIG_DEF,
    HEARTBEAT_CONNECTOR_CONFIG_DEF,
    SOURCE_CONNECTOR_CONFIG_DEF,
    MirrorCheckpointConfig,
    MirrorCheckpointTaskConfig,
    MirrorHeartbeatConfig,
    MirrorSourceConfig,
    MirrorSourceTaskConfig,
    validate_checkpoint_connector_props,
    validate_source_connector_props,
)
from mirror.connectors.scheduler import Scheduler
from tests.unit.mirror.connectors.twin_ticks import twin_ticks

BASE = {
    "name": "MirrorSourceConnector",
    "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
}


def issues_of(err: pytest.ExceptionInfo[ConfigError]) -> dict[str, str]:
    return {i.key: i.message for i in err.value.issues}


# -- defaults --------------------------------------------------------------------------------------

SOURCE_DEFAULTS = {
    "enabled": True,
    "target.cluster.alias": "target",
    "admin.timeout.ms": 60000,
    "replication.policy.class": "org.apache.kafka.connect.mirror.DefaultReplicationPolicy",
    "replication.policy.separator": ".",
    "replication.policy.internal.topic.separator.enabled": True,
    "forwarding.admin.class": "org.apache.kafka.clients.admin.ForwardingAdmin",
    "metric.reporters": ["org.apache.kafka.common.metrics.JmxReporter"],
    "security.protocol": "PLAINTEXT",
    "topics": [".*"],
    "topics.exclude": [r"mm2.*\.internal", r".*\.replica", "__.*"],
    "topic.filter.class": "org.apache.kafka.connect.mirror.DefaultTopicFilter",
    "config.property.filter.class": "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
    "consumer.poll.timeout.ms": 1000,
    "refresh.topics.enabled": True,
    "refresh.topics.interval.seconds": 600,
    "sync.topic.configs.enabled": True,
    "sync.topic.configs.interval.seconds": 600,
    "sync.topic.acls.enabled": True,
    "sync.topic.acls.interval.seconds": 600,
    "replication.factor": 2,
    "offset-syncs.topic.replication.factor": 3,
    "offset.lag.max": 100,
    "offset-syncs.topic.location": "source",
    "emit.offset-syncs.enabled": True,
    "heartbeats.replication.enabled": True,
    "tasks.max": 1,
    "ssl.protocol": "TLSv1.3",
    "sasl.mechanism": "GSSAPI",
}


def test_source_defaults() -> None:
    defaults = SOURCE_CONNECTOR_CONFIG_DEF.default_values()
    for key, value in SOURCE_DEFAULTS.items():
        assert defaults[key] == value, key
    assert SOURCE_CONNECTOR_CONFIG_DEF.keys["source.cluster.alias"].required
    assert SOURCE_CONNECTOR_CONFIG_DEF.keys["config.properties.exclude"].default == [
        r"follower\.replication\.throttled\.replicas",
        r"leader\.replication\.throttled\.replicas",
        r"message\.timestamp\.difference\.max\.ms",
        r"message\.timestamp\.type",
        r"unclean\.leader\.election\.enable",
        r"min\.insync\.replicas",
    ]


def test_checkpoint_and_heartbeat_defaults() -> None:
    cp = CHECKPOINT_CONNECTOR_CONFIG_DEF.default_values()
    assert cp["groups"] == [".*"]
    assert cp["groups.exclude"] == ["console-consumer-.*", "connect-.*", "__.*"]
    assert cp["refresh.groups.interval.seconds"] == 600
    assert cp["emit.checkpoints.enabled"] is True
    assert cp["emit.checkpoints.interval.seconds"] == 60
    assert cp["sync.group.offsets.enabled"] is False
    assert cp["sync.group.offsets.interval.seconds"] == 60
    assert cp["checkpoints.topic.replication.factor"] == 3
    assert cp["group.filter.class"] == "org.apache.kafka.connect.mirror.DefaultGroupFilter"
    hb = HEARTBEAT_CONNECTOR_CONFIG_DEF.default_values()
    assert hb["emit.heartbeats.enabled"] is True
    assert hb["emit.heartbeats.interval.seconds"] == 1
    assert hb["heartbeats.topic.replication.factor"] == 3


# -- parsing errors name their keys ------------------------------------------------------------------


def test_missing_alias_and_bad_values_all_reported() -> None:
    props = {k: v for k, v in BASE.items() if k != "source.cluster.alias"}
    props.update({"offset-syncs.topic.location": "elsewhere", "replication.factor": "two", "tasks.max": "0"})
    with pytest.raises(ConfigError) as err:
        MirrorSourceConfig(props)
    issues = issues_of(err)
    assert set(issues) == {"source.cluster.alias", "offset-syncs.topic.location", "replication.factor", "tasks.max"}
    assert "source, target" in issues["offset-syncs.topic.location"]


def test_bad_policy_class_names_key() -> None:
    with pytest.raises(ConfigError) as err:
        MirrorSourceConfig({**BASE, "replication.policy.class": "no.such.Policy"})
    assert "replication.policy.class" in issues_of(err)


def test_use_defaults_from_validated() -> None:
    with pytest.raises(ConfigError) as err:
        MirrorSourceConfig({**BASE, "use.defaults.from": "both"})
    assert "use.defaults.from" in issues_of(err)
    assert MirrorSourceConfig({**BASE, "use.defaults.from": "source"})


def test_unknown_keys_warned_but_client_keys_are_not(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="mirror.connectors.config"):
        MirrorSourceConfig(
            {
                **BASE,
                "no.such.key": "1",
                "source.cluster.bootstrap.servers": "x:1",
                "consumer.fetch.min.bytes": "1",
                "groups": "g.*",
                "emit.heartbeats.enabled": "true",
                "transforms": "",
                "exactly.once.support": "requested",
            }
        )
    warned = [r.getMessage() for r in caplog.records]
    assert any("no.such.key" in m for m in warned)
    assert not any("bootstrap" in m or "fetch.min" in m or "groups" in m or "heartbeats" in m for m in warned)


def test_intervals_disabled_negative_and_zero_rejected() -> None:
    cfg = MirrorSourceConfig({**BASE, "refresh.topics.enabled": "false", "sync.topic.configs.interval.seconds": "5"})
    assert cfg.refresh_topics_interval_s() == -1
    assert cfg.sync_topic_configs_interval_s() == 5
    with pytest.raises(ConfigError) as err:
        MirrorSourceConfig({**BASE, "sync.topic.acls.interval.seconds": "0"}).sync_topic_acls_interval_s()
    assert "sync.topic.acls.interval.seconds" in issues_of(err)
    hb = MirrorHeartbeatConfig({**BASE, "emit.heartbeats.enabled": "false"})
    assert hb.emit_heartbeats_interval_s() == -1
    cp = MirrorCheckpointConfig(
        {**BASE, "sync.group.offsets.enabled": "true", "sync.group.offsets.interval.seconds": "2"}
    )
    assert cp.sync_group_offsets_interval_s() == 2
    assert cp.emit_checkpoints_interval_s() == 60


# -- clients --------------------------------------------------------------------------------------


def test_source_consumer_config_layering_and_client_id() -> None:
    cfg = MirrorSourceTaskConfig(
        {
            **BASE,
            "task.index": "3",
            "source.cluster.bootstrap.servers": "a:9092",
            "source.cluster.security.protocol": "SSL",
            "source.cluster.max.poll.records": "7",  # not a connection key: dropped
            "consumer.fetch.min.bytes": "10",
            "consumer.isolation.level": "read_uncommitted",
            "source.consumer.isolation.level": "read_committed",
            "consumer.poll.timeout.ms": "250",  # an MM2 key, never a client key
            "target.cluster.bootstrap.servers": "b:9092",
        }
    )
    c = cfg.source_consumer_config("replication-consumer")
    assert c["bootstrap.servers"] == "a:9092"
    assert c["security.protocol"] == "SSL"
    assert "max.poll.records" not in c
    assert c["fetch.min.bytes"] == "10"
    assert c["isolation.level"] == "read_committed"
    assert c["enable.auto.commit"] == "false"
    assert c["auto.offset.reset"] == "earliest"
    assert "poll.timeout.ms" not in c
    assert c["client.id"] == "A->B|MirrorSourceConnector-3|replication-consumer"
    assert cfg.consumer_poll_timeout_s == 0.25


@pytest.mark.parametrize(
    ("props", "want"),
    [
        ({}, "earliest"),  # MirrorMaker's default
        ({"consumer.auto.offset.reset": " Latest "}, "latest"),
        ({"source.consumer.auto.offset.reset": "largest"}, "latest"),
        ({"consumer.auto.offset.reset": "smallest"}, "earliest"),
        ({"consumer.auto.offset.reset": "beginning"}, "earliest"),
        ({"consumer.auto.offset.reset": "end"}, "latest"),
    ],
)
def test_offset_reset_is_read_once_in_kafka_and_librdkafka_spellings(props: dict[str, str], want: str) -> None:
    assert MirrorSourceConfig({**BASE, **props}).offset_reset == want


def test_an_offset_reset_a_mirror_cannot_start_from_is_one_error_naming_the_key() -> None:
    with pytest.raises(ConfigError) as err:
        _ = MirrorSourceConfig({**BASE, "consumer.auto.offset.reset": "none"}).offset_reset
    assert issues_of(err) == {
        "consumer.auto.offset.reset": "Invalid value none: MirrorSourceTask needs earliest or latest for "
        "partitions without a stored offset"
    }


def test_admin_and_producer_configs() -> None:
    cfg = MirrorSourceConfig(
        {
            **BASE,
            "target.cluster.bootstrap.servers": "b:1",
            "admin.timeout.ms": "5000",
            "admin.request.timeout.ms": "100",
            "target.admin.request.timeout.ms": "200",
            "producer.client.id": "me",
            "source.cluster.bootstrap.servers": "a:1",
            "producer.override.acks": "1",
        }
    )
    admin = cfg.target_admin_config("replication-target-admin")
    assert admin == {
        "bootstrap.servers": "b:1",
        "request.timeout.ms": "200",
        "client.id": "A->B|MirrorSourceConnector|replication-target-admin",
    }
    assert cfg.admin_timeout_s == 5.0
    prod = cfg.offset_syncs_topic_producer_config()
    assert prod["bootstrap.servers"] == "a:1"
    assert prod["client.id"] == "me|A->B|MirrorSourceConnector|offset-syncs-source-producer"
    assert "override.acks" not in prod


def test_offset_syncs_and_internal_topic_names() -> None:
    cfg = MirrorSourceConfig(BASE)
    assert cfg.offset_syncs_topic() == "mm2-offset-syncs.B.internal"
    cfg = MirrorSourceConfig({**BASE, "offset-syncs.topic.location": "target"})
    assert cfg.offset_syncs_topic() == "mm2-offset-syncs.A.internal"
    assert cfg.offset_syncs_topic_admin_config()["client.id"].endswith("|offset-syncs-target-admin")
    cp = MirrorCheckpointConfig({**BASE, "replication.policy.separator": "_"})
    assert cp.checkpoints_topic() == "A_checkpoints_internal"
    assert cp.offset_syncs_topic_consumer_config()["client.id"].endswith("|offset-syncs-source-consumer")


def test_task_configs_round_trip() -> None:
    cfg = MirrorSourceConfig(BASE)
    props = cfg.task_config_for_topic_partitions([TopicPartition("a-b-c", 0), TopicPartition("x", 12)], 2)
    task = MirrorSourceTaskConfig(props)
    assert task.task_topic_partitions() == [TopicPartition("a-b-c", 0), TopicPartition("x", 12)]
    assert task.entity_label() == "A->B|MirrorSourceConnector-2"
    assert MirrorSourceTaskConfig(BASE).entity_label() == "A->B|MirrorSourceConnector-?"
    cp = MirrorCheckpointConfig(BASE).task_config_for_consumer_groups(["g1", "g2"], 0)
    assert MirrorCheckpointTaskConfig(cp).task_consumer_groups() == ["g1", "g2"]


# -- cross-key validation ---------------------------------------------------------------------------


def test_checkpoint_cross_validation() -> None:
    errors = validate_checkpoint_connector_props(
        {**BASE, "emit.checkpoints.enabled": "false", "emit.offset-syncs.enabled": "false"}
    )
    assert set(errors) == {"emit.checkpoints.enabled", "emit.offset-syncs.enabled"}
    assert validate_checkpoint_connector_props({**BASE, "enabled": "false", "emit.checkpoints.enabled": "false"}) == {}


def test_source_cross_validation() -> None:
    errors = validate_source_connector_props({**BASE, "exactly.once.support": "required"})
    assert "read_committed" in errors["exactly.once.support"]
    assert (
        validate_source_connector_props(
            {**BASE, "exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"}
        )
        == {}
    )
    errors = validate_source_connector_props(
        {**BASE, "emit.offset-syncs.enabled": "false", "offset-syncs.topic.replication.factor": "1"}
    )
    assert set(errors) == {"emit.offset-syncs.enabled"}
    assert validate_source_connector_props({**BASE, "emit.offset-syncs.enabled": "false"}) == {}


# -- scheduler --------------------------------------------------------------------------------------


def test_scheduler_one_shot_errors_and_timeouts_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    s = Scheduler("test", timeout_s=0.3)
    try:
        with caplog.at_level(logging.ERROR, logger="mirror.connectors.scheduler"):
            s.execute(lambda: 1 / 0, "dividing")
            release, finished = threading.Event(), threading.Event()

            def sleeping() -> None:
                release.wait(30)
                finished.set()

            s.execute(sleeping, "sleeping")
            # execute() returned on its 0.3 s timeout: the job it ran is still waiting for its release
            assert not finished.is_set()
            release.set()
        messages = " ".join(r.getMessage() for r in caplog.records)
        assert "dividing" in messages and "timed out running task: sleeping" in messages
    finally:
        s.close()


def test_scheduler_repeating_delayed_and_disabled() -> None:
    s = Scheduler("test", timeout_s=2)
    runs: list[str] = []
    done = threading.Event()

    def job(name: str) -> None:
        runs.append(name)
        if runs.count("fast") >= 3:
            done.set()

    try:
        s.schedule_repeating(lambda: job("fast"), 0.05, "fast")
        s.schedule_repeating_delayed(lambda: job("slow"), 600, "slow")  # first run in 10 min: never here
        s.schedule_repeating(lambda: job("never"), -1, "disabled")
        assert done.wait(30)
        assert runs[0] == "fast" and "slow" not in runs and "never" not in runs
        with pytest.raises(ValueError):
            s.schedule_repeating(lambda: None, 0, "zero")
    finally:
        s.close()
    count = len(runs)
    assert twin_ticks(0.05, 4)  # four more "fast" ticks were due ...
    assert len(runs) == count  # ... and nothing ran after close
