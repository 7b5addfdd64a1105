"""mm2.properties semantics, after Kafka's MirrorMakerConfigTest cases (our own tests)."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError
from mirror.driver.maker_config import MirrorMakerConfig, SourceAndTarget

NAMES = {"tasks.max", "topics", "groups", "replication.factor", "security.protocol", "emit.heartbeats.enabled"}


def make(props: dict[str, str]) -> MirrorMakerConfig:
    return MirrorMakerConfig(props, lambda: NAMES)


def test_cluster_properties_reach_connector_config() -> None:
    cfg = make(
        {
            "clusters": "a, b",
            "a.bootstrap.servers": "servers-one",
            "b.bootstrap.servers": "servers-two",
            "security.protocol": "SSL",
            "replication.factor": "4",
        }
    )
    props = cfg.connector_base_config(SourceAndTarget("a", "b"), "MirrorSourceConnector")
    assert props["source.cluster.bootstrap.servers"] == "servers-one"
    assert props["target.cluster.bootstrap.servers"] == "servers-two"
    assert props["security.protocol"] == "SSL"
    assert props["replication.factor"] == "4"
    assert props["source.consumer.bootstrap.servers"] == "servers-one"
    assert props["target.producer.bootstrap.servers"] == "servers-two"
    assert props["name"] == "MirrorSourceConnector"
    assert props["connector.class"] == "org.apache.kafka.connect.mirror.MirrorSourceConnector"
    assert props["source.cluster.alias"] == "a"
    assert props["target.cluster.alias"] == "b"
    assert props["enabled"] == "false"


def test_flow_overrides_win_and_unknown_top_level_keys_dropped() -> None:
    cfg = make({"clusters": "a, b", "tasks.max": "1", "a->b.tasks.max": "123", "xxx": "yyy", "a->b.enabled": "true"})
    props = cfg.connector_base_config(SourceAndTarget("a", "b"), "MirrorSourceConnector")
    assert props["tasks.max"] == "123"
    assert props["enabled"] == "true"
    assert "xxx" not in props


def test_worker_config_defaults_and_prefixes() -> None:
    cfg = make(
        {
            "clusters": "a, b",
            "replication.policy.separator": "__",
            "offset.storage.replication.factor": "123",
            "b.status.storage.replication.factor": "456",
            "b.producer.client.id": "client-one",
            "b.security.protocol": "PLAINTEXT",
            "b.producer.security.protocol": "SASL",
            "ssl.truststore.password": "secret1",
            "producer.linger.ms": "7",
            "b.xxx": "yyy",
        }
    )
    a = cfg.worker_config(SourceAndTarget("b", "a"))
    assert a["client.id"] == "b->a"
    assert a["group.id"] == "b-mm2"
    assert a["offset.storage.replication.factor"] == "123"
    assert a["replication.policy.separator"] == "__"
    assert a["config.storage.topic"] == "mm2-configs.b.internal"
    assert a["offset.storage.topic"] == "mm2-offsets.b.internal"
    assert a["status.storage.topic"] == "mm2-status.b.internal"
    assert a["key.converter"] == "org.apache.kafka.connect.converters.ByteArrayConverter"
    b = cfg.worker_config(SourceAndTarget("a", "b"))
    assert b["status.storage.replication.factor"] == "456"
    assert b["producer.client.id"] == "client-one"
    assert b["producer.security.protocol"] == "SASL"
    assert b["consumer.security.protocol"] == "PLAINTEXT"
    assert b["ssl.truststore.password"] == "secret1"
    assert b["producer.ssl.truststore.password"] == "secret1"
    assert b["xxx"] == "yyy"
    assert "producer.linger.ms" not in b  # top-level producer.* never reaches the worker


@pytest.mark.parametrize(
    ("props", "count"),
    [
        ({"clusters": "a, b, c"}, 6),
        ({"clusters": "a, b, c", "emit.heartbeats.enabled": "false"}, 0),
        ({"clusters": "a, b, c", "a->b.emit.heartbeats.enabled": "false", "a->c.emit.heartbeats.enabled": "FALSE"}, 4),
        (
            {
                "clusters": "a, b, c, d, e, f",
                "emit.heartbeats.enabled": "false",
                "a->b.enabled": "true",
                "a->c.enabled": "true",
                "a->d.enabled": "TRUE",
                "a->e.enabled": "false",
                "a->f.enabled": "yes",  # Java's parseBoolean: anything but "true" is false
            },
            3,
        ),
        (
            {
                "clusters": "central, local_one, local_two, beats_emitter",
                "emit.heartbeats.enabled": "false",
                "central->local_one.enabled": "true",
                "central->local_two.enabled": "true",
                "beats_emitter->central.emit.heartbeats.enabled": "true",
            },
            3,
        ),
    ],
)
def test_cluster_pairs(props: dict[str, str], count: int) -> None:
    assert len(make(props).cluster_pairs()) == count


def test_herder_pairs_filtered_by_target() -> None:
    cfg = make(
        {"clusters": "a, b, c", "emit.heartbeats.enabled": "false", "a->b.enabled": "true", "a->c.enabled": "true"}
    )
    assert cfg.herder_pairs(["c"]) == [SourceAndTarget("a", "c")]
    with pytest.raises(ConfigError, match="no source->target replication flows"):
        cfg.herder_pairs(["a"])


def test_missing_clusters_is_named() -> None:
    with pytest.raises(ConfigError, match="clusters"):
        make({"a.bootstrap.servers": "x"})


def test_validation_names_each_mistake() -> None:
    cfg = make(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": "localhost:1",
            "A->C.enabled": "true",
            "A->B.enabled": "true",
        }
    )
    with pytest.raises(ConfigError) as info:
        cfg.validate(["Z"])
    text = str(info.value)
    assert "unknown cluster alias 'C'" in text and "A->C.enabled" in text
    assert "B.bootstrap.servers" in text
    assert "unknown cluster alias 'Z'" in text


def test_identity_policy_both_directions_rejected() -> None:
    base = {
        "clusters": "A, B",
        "A.bootstrap.servers": "a:1",
        "B.bootstrap.servers": "b:1",
        "A->B.enabled": "true",
        "B->A.enabled": "true",
    }
    make(base).validate()  # default policy: fine
    cfg = make({**base, "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"})
    with pytest.raises(ConfigError, match="IdentityReplicationPolicy"):
        cfg.validate()
    one_way = make({**base, "B->A.enabled": "false", "replication.policy.class": "IdentityReplicationPolicy"})
    one_way.validate()


def test_apache_sample_file_parses() -> None:
    sample = {
        "clusters": "A, B",
        "A.bootstrap.servers": "A_host1:9092, A_host2:9092, A_host3:9092",
        "B.bootstrap.servers": "B_host1:9092, B_host2:9092, B_host3:9092",
        "A->B.enabled": "true",
        "A->B.topics": ".*",
        "B->A.enabled": "true",
        "B->A.topics": ".*",
        "replication.factor": "1",
    }
    cfg = make(sample)
    cfg.validate()
    assert {str(p) for p in cfg.enabled_flows()} == {"A->B", "B->A"}
    assert cfg.connector_base_config(SourceAndTarget("A", "B"), "MirrorSourceConnector")["topics"] == ".*"


def test_exactly_once_per_target_reaches_the_worker_reads_committed_and_needs_internal_rest() -> None:
    base = {
        "clusters": "A, B",
        "A.bootstrap.servers": "a:9092",
        "B.bootstrap.servers": "b:9092",
        "A->B.enabled": "true",
        "B.exactly.once.source.support": "enabled",
    }
    cfg = make({**base, "dedicated.mode.enable.internal.rest": "true"})
    ab, ba = SourceAndTarget("A", "B"), SourceAndTarget("B", "A")
    assert cfg.worker_config(ab)["exactly.once.source.support"] == "enabled"
    assert "exactly.once.source.support" not in cfg.worker_config(ba)
    assert cfg.delivery_mode(ab) == "exactly-once" and cfg.delivery_mode(ba) == "at-least-once"
    source = cfg.connector_base_config(ab, "MirrorSourceConnector")
    assert source["source.consumer.isolation.level"] == "read_committed"
    assert source["source.consumer.max.poll.records"] == "10000"  # a transaction per poll: bigger polls
    assert "source.consumer.isolation.level" not in cfg.connector_base_config(ba, "MirrorSourceConnector")
    assert "source.consumer.max.poll.records" not in cfg.connector_base_config(ba, "MirrorSourceConnector")
    own = make({**base, "dedicated.mode.enable.internal.rest": "true", "A.consumer.max.poll.records": "700"})
    assert own.connector_base_config(ab, "MirrorSourceConnector")["source.consumer.max.poll.records"] == "700"
    mine = make(
        {
            **base,
            "dedicated.mode.enable.internal.rest": "true",
            "A->B.source.consumer.isolation.level": "read_uncommitted",
        }
    )
    assert (
        mine.connector_base_config(ab, "MirrorSourceConnector")["source.consumer.isolation.level"] == "read_uncommitted"
    )  # the user's own choice stays (the connector then reports UNSUPPORTED)
    assert cfg.problems() == []
    issues = make(base).problems()
    assert [(i.key, i.message) for i in issues] == [
        (
            "B.exactly.once.source.support",
            "exactly-once needs dedicated.mode.enable.internal.rest = true (KIP-710): the nodes fence zombie tasks "
            "over the internal REST API",
        )
    ]
    assert make(base).problems(only_targets=["A"]) == []  # a node that runs only A's herders is not concerned
    assert (
        make({**base, "B.exactly.once.source.support": "preparing"}).delivery_mode(ab)
        == "at-least-once (preparing exactly-once)"
    )
    bad = make({**base, "B.exactly.once.source.support": "on"}).problems()
    assert [i.key for i in bad] == ["B.exactly.once.source.support"]


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({}, "batch"),
        ({"A->B.batch.copy.enabled": "false"}, "record"),
        ({"batch.copy.enabled": "false"}, "record"),
        ({"A->B.transforms": "drop", "A->B.transforms.drop.type": "x.Filter"}, "record"),
        ({"A->B.value.converter": "org.apache.kafka.connect.json.JsonConverter"}, "record"),
        ({"value.converter": "org.apache.kafka.connect.storage.StringConverter"}, "record"),
        ({"B.exactly.once.source.support": "enabled"}, "batch"),
        ({"B.exactly.once.source.support": "enabled", "A->B.batch.copy.enabled": "false"}, "record"),
    ],
)
def test_the_copy_path_of_a_flow(extra: dict[str, str], path: str) -> None:
    """The live tasks' path (exactly-once flows copy batches inside their transactions too); the backfill
    asks the same rule."""
    cfg = MirrorMakerConfig(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": "a:9092",
            "B.bootstrap.servers": "b:9092",
            "A->B.enabled": "true",
            "batch.copy.enabled": "true",
            **extra,
        },
        lambda: NAMES | {"batch.copy.enabled"},
    )
    assert cfg.copy_path(SourceAndTarget("A", "B")) == path
    assert cfg.batch_copy_applies(SourceAndTarget("A", "B")) == (path == "batch")
