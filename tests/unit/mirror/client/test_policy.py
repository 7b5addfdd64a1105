"""Replication policies (Kafka's ReplicationPolicyTest, MirrorClientTest naming cases, KIP-949, KIP-1074)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mirror.client.errors import MirrorConfigError
from mirror.client.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    is_cycle,
    java_split,
    policy_class,
    policy_from_config,
)


def default(**props: Any) -> DefaultReplicationPolicy:
    p = DefaultReplicationPolicy()
    p.configure({k.replace("_", "."): v for k, v in props.items()})
    return p


def identity(source: str | None = "source") -> IdentityReplicationPolicy:
    p = IdentityReplicationPolicy()
    p.configure({"source.cluster.alias": source} if source is not None else {})
    return p


# -- DefaultReplicationPolicy -----------------------------------------------------------------


def test_format_and_parse_remote_topics() -> None:
    p = DefaultReplicationPolicy()
    assert p.format_remote_topic("us-west", "orders") == "us-west.orders"
    assert p.topic_source("us-west.orders") == "us-west"
    assert p.upstream_topic("us-west.orders") == "orders"
    assert p.topic_source("orders") is None
    assert p.upstream_topic("orders") is None
    assert p.original_topic("orders") == "orders"
    assert p.topic_source("b.a.orders") == "b"
    assert p.upstream_topic("b.a.orders") == "a.orders"
    assert p.original_topic("b.a.orders") == "orders"


@pytest.mark.parametrize(
    ("topic", "source", "upstream"),
    [
        ("a.", None, None),  # Java String.split drops trailing empties
        ("a..", None, None),
        ("..", None, None),
        ("", None, None),
        (".a", "", "a"),  # leading empties are kept
        ("a.b.", "a", "b."),
        ("a..b", "a", ".b"),
    ],
)
def test_java_split_semantics(topic: str, source: str | None, upstream: str | None) -> None:
    p = DefaultReplicationPolicy()
    assert p.topic_source(topic) == source
    assert p.upstream_topic(topic) == upstream


def test_java_split_helper() -> None:
    assert java_split("a.b..", ".") == ["a", "b"]
    assert java_split("", ".") == []
    assert java_split("a___b", "__") == ["a", "_b"]


def test_custom_separator() -> None:
    p = default(replication_policy_separator="__")
    assert p.format_remote_topic("source1", "topic4") == "source1__topic4"
    assert p.topic_source("source1__source2__topic5") == "source1"
    assert p.upstream_topic("source1__source2__topic5") == "source2__topic5"
    assert p.original_topic("source1__source2__topic5") == "topic5"
    assert p.topic_source("source1.topic") is None
    # internal topics follow the separator by default (KIP-949)
    assert p.offset_syncs_topic("CLUSTER") == "mm2-offset-syncs__CLUSTER__internal"
    assert p.checkpoints_topic("CLUSTER") == "CLUSTER__checkpoints__internal"
    assert p.heartbeats_topic() == "heartbeats"


def test_internal_separator_disabled() -> None:
    p = default(replication_policy_separator="__", replication_policy_internal_topic_separator_enabled="false")
    assert p.offset_syncs_topic("CLUSTER") == "mm2-offset-syncs.CLUSTER.internal"
    assert p.checkpoints_topic("CLUSTER") == "CLUSTER.checkpoints.internal"
    assert p.is_checkpoints_topic("CLUSTER.checkpoints.internal")
    assert not p.is_checkpoints_topic("CLUSTER__checkpoints__internal")
    assert p.heartbeats_topic() == "heartbeats"
    # remote topics still use the custom separator
    assert p.format_remote_topic("a", "t") == "a__t"


def test_internal_separator_reenabled_on_reconfigure() -> None:
    p = DefaultReplicationPolicy()
    p.configure({"replication.policy.separator": "__", "replication.policy.internal.topic.separator.enabled": False})
    assert p.offset_syncs_topic("CLUSTER") == "mm2-offset-syncs.CLUSTER.internal"
    p.configure({"replication.policy.separator": "__", "replication.policy.internal.topic.separator.enabled": True})
    assert p.offset_syncs_topic("CLUSTER") == "mm2-offset-syncs__CLUSTER__internal"
    assert p.checkpoints_topic("CLUSTER") == "CLUSTER__checkpoints__internal"


def test_internal_separator_flag_ignored_without_separator() -> None:
    # Kafka reads the flag only when a separator is configured
    p = default(replication_policy_internal_topic_separator_enabled="false")
    assert p.internal_topic_separator_enabled
    assert p.offset_syncs_topic("X") == "mm2-offset-syncs.X.internal"


def test_flag_parsing_is_java_boolean() -> None:
    assert not default(
        replication_policy_separator="_", replication_policy_internal_topic_separator_enabled="no"
    ).internal_topic_separator_enabled
    assert default(
        replication_policy_separator="_", replication_policy_internal_topic_separator_enabled="TRUE"
    ).internal_topic_separator_enabled


def test_empty_separator_is_a_config_error() -> None:
    with pytest.raises(MirrorConfigError) as e:
        default(replication_policy_separator="")
    assert e.value.issues[0].key == "replication.policy.separator"


def test_default_internal_topic_names() -> None:
    p = DefaultReplicationPolicy()
    assert p.offset_syncs_topic("B") == "mm2-offset-syncs.B.internal"
    assert p.checkpoints_topic("A") == "A.checkpoints.internal"
    assert p.heartbeats_topic() == "heartbeats"


def test_internal_topics_kip_1074() -> None:
    p = DefaultReplicationPolicy()
    assert p.is_internal_topic("__consumer_offsets")
    assert p.is_internal_topic(".hiddentopic")
    assert p.is_internal_topic("mm2-offsets.CLUSTER.internal")
    assert p.is_internal_topic("mm2-offset-syncs.B.internal")
    assert p.is_internal_topic("A.checkpoints.internal")
    # 4.0: other "*.internal" / "*-internal" topics are ordinary topics now
    assert not p.is_internal_topic("mm2-offsets-CLUSTER-internal")
    assert not p.is_internal_topic("connect-offsets.internal")
    assert not p.is_internal_topic("orders-internal")
    assert not p.is_internal_topic("mm2-offsets_CLUSTER_internal")
    assert p.is_mm2_internal_topic("mm2-configs.A.internal")
    assert not p.is_mm2_internal_topic("__consumer_offsets")


def test_internal_topics_with_custom_separator() -> None:
    p = default(replication_policy_separator="_")
    assert p.is_internal_topic("mm2-offset-syncs_B_internal")
    assert p.is_internal_topic("A_checkpoints_internal")
    assert not p.is_internal_topic("mm2-offset-syncs.B.internal")
    assert p.is_internal_topic("__x")


def test_checkpoint_topic_detection() -> None:
    p = DefaultReplicationPolicy()
    assert p.is_checkpoints_topic("source1.checkpoints.internal")
    assert not p.is_checkpoints_topic("checkpoints.internal")
    assert not p.is_checkpoints_topic("checkpoints-internal")
    assert not p.is_checkpoints_topic("checkpoints.internal!")
    assert not p.is_checkpoints_topic("!checkpoints.internal")
    assert not p.is_checkpoints_topic("source1checkpointsinternal")


def test_heartbeat_topic_detection() -> None:
    p = DefaultReplicationPolicy()
    assert p.is_heartbeats_topic("heartbeats")
    assert p.is_heartbeats_topic("source1.heartbeats")
    assert p.is_heartbeats_topic("source2.source1.heartbeats")
    assert not p.is_heartbeats_topic("heartbeats!")
    assert not p.is_heartbeats_topic("!heartbeats")
    assert not p.is_heartbeats_topic("source1heartbeats")
    assert not p.is_heartbeats_topic("source1-heartbeats")


def test_heartbeats_with_custom_separator() -> None:
    p = default(replication_policy_separator="_")
    assert p.is_heartbeats_topic("heartbeats")
    assert p.is_heartbeats_topic("us-west_heartbeats")
    assert not p.is_heartbeats_topic("us-west.heartbeats")


# -- IdentityReplicationPolicy ----------------------------------------------------------------


def test_identity_topic_names() -> None:
    p = identity("primary")
    assert p.format_remote_topic("primary", "topic1") == "topic1"
    assert p.topic_source("topic1") == "primary"
    assert p.upstream_topic("topic1") == "topic1"
    assert p.original_topic("topic1") == "topic1"
    # heartbeats follow the default policy
    assert p.format_remote_topic("backup", "heartbeats") == "backup.heartbeats"
    assert p.topic_source("backup.heartbeats") == "backup"
    assert p.upstream_topic("backup.heartbeats") == "heartbeats"
    assert p.topic_source("heartbeats") is None
    assert p.is_heartbeats_topic("backup.heartbeats")
    assert p.is_heartbeats_topic("heartbeats")


def test_identity_without_source_alias() -> None:
    p = identity(None)
    assert p.source_cluster_alias is None
    assert p.topic_source("topic1") is None


def test_identity_anything_ending_in_heartbeats_uses_default_rules() -> None:
    p = identity("primary")
    assert p.format_remote_topic("a", "myheartbeats") == "a.myheartbeats"
    assert p.topic_source("myheartbeats") is None
    assert not p.is_heartbeats_topic("myheartbeats")


def test_identity_honours_separator() -> None:
    p = IdentityReplicationPolicy()
    p.configure({"source.cluster.alias": "s", "replication.policy.separator": "_"})
    assert p.format_remote_topic("s", "heartbeats") == "s_heartbeats"
    assert p.checkpoints_topic("s") == "s_checkpoints_internal"


# -- cycles (MirrorSourceConnectorTest) -------------------------------------------------------


def test_no_cycles_with_default_policy() -> None:
    p = DefaultReplicationPolicy()
    for t in (
        "target.topic1",
        "target.source.topic1",
        "source.target.topic1",
        "target.source.target.topic1",
        "source.target.source.topic1",
    ):
        assert is_cycle(p, t, "target"), t
    assert not is_cycle(p, "topic1", "target")
    assert not is_cycle(p, "source.topic1", "target")


def test_identity_policy_cannot_detect_cycles_except_heartbeats() -> None:
    p = identity("source")
    for t in ("target.topic1", "source.target.topic1", "topic1", "othersource.topic1"):
        assert not is_cycle(p, t, "target"), t
    for t in ("target.heartbeats", "target.source.heartbeats", "source.target.heartbeats"):
        assert is_cycle(p, t, "target"), t
    assert not is_cycle(p, "heartbeats", "target")
    assert not is_cycle(p, "othersource.heartbeats", "target")


def test_cycle_check_with_null_upstream_topic() -> None:
    class NullUpstream(DefaultReplicationPolicy):
        def upstream_topic(self, topic: str) -> str | None:
            return None

    assert not is_cycle(NullUpstream(), ".b", "target")


def test_cycle_check_terminates_on_looping_policy() -> None:
    class Looping(DefaultReplicationPolicy):
        def topic_source(self, topic: str) -> str | None:
            return "x"

        def upstream_topic(self, topic: str) -> str | None:
            return "a" if topic == "b" else "b"

    assert not is_cycle(Looping(), "a", "target")


# -- resolving policy classes ------------------------------------------------------------------


class CustomPolicy(DefaultReplicationPolicy):
    configured_with: Mapping[str, Any] | None = None

    def configure(self, props: Mapping[str, Any]) -> None:
        super().configure(props)
        self.configured_with = dict(props)


def test_policy_from_config_defaults() -> None:
    p = policy_from_config({})
    assert type(p) is DefaultReplicationPolicy
    assert p.format_remote_topic("a", "t") == "a.t"


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("org.apache.kafka.connect.mirror.DefaultReplicationPolicy", DefaultReplicationPolicy),
        ("org.apache.kafka.connect.mirror.IdentityReplicationPolicy", IdentityReplicationPolicy),
        ("IdentityReplicationPolicy", IdentityReplicationPolicy),
        ("mirror.client.policy.IdentityReplicationPolicy", IdentityReplicationPolicy),
        ("mirror.client.policy:DefaultReplicationPolicy", DefaultReplicationPolicy),
        (f"{__name__}.CustomPolicy", CustomPolicy),
        (CustomPolicy, CustomPolicy),
    ],
)
def test_policy_class_names(name: Any, cls: type[ReplicationPolicy]) -> None:
    assert policy_class(name) is cls


def test_policy_from_config_configures_with_all_props() -> None:
    props = {
        "replication.policy.class": f"{__name__}.CustomPolicy",
        "replication.policy.separator": "-",
        "source.cluster.alias": "A",
        "other": "x",
    }
    p = policy_from_config(props)
    assert isinstance(p, CustomPolicy)
    assert p.configured_with == props
    assert p.format_remote_topic("A", "t") == "A-t"


def test_identity_from_config_reads_source_alias() -> None:
    p = policy_from_config(
        {
            "replication.policy.class": "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
            "source.cluster.alias": "primary",
        }
    )
    assert p.topic_source("orders") == "primary"


@pytest.mark.parametrize(
    "name",
    [
        "org.apache.kafka.connect.mirror.NoSuchPolicy",
        "no_such_module.Policy",
        "mirror.client.policy.NoSuch",
        "mirror.client.filters.DefaultTopicFilter",
        "NoDots",
        "  ",
    ],
)
def test_bad_policy_class_is_config_error(name: str) -> None:
    with pytest.raises(MirrorConfigError) as e:
        policy_from_config({"replication.policy.class": name})
    assert e.value.issues[0].key == "replication.policy.class"


def test_policy_needing_arguments_is_config_error() -> None:
    class NeedsArgs(DefaultReplicationPolicy):
        def __init__(self, x: int) -> None:
            super().__init__()

    with pytest.raises(MirrorConfigError):
        policy_from_config({"replication.policy.class": NeedsArgs})


# -- IdentityReplicationPolicyTest (unconfigured) ---------------------------------------------


def test_identity_format_remote_topic() -> None:
    p = IdentityReplicationPolicy()
    assert p.format_remote_topic("source1", "aaa") == "aaa"
    assert p.format_remote_topic("source1", "heartbeats") == "source1.heartbeats"
    assert p.format_remote_topic("source2", "source1.heartbeats") == "source2.source1.heartbeats"
    p.configure({"replication.policy.separator": "__"})
    assert p.format_remote_topic("source1", "aaa") == "aaa"
    assert p.format_remote_topic("source1", "heartbeats") == "source1__heartbeats"


def test_identity_topic_source_unconfigured() -> None:
    p = IdentityReplicationPolicy()
    assert p.topic_source("source1.aaa") is None
    assert p.topic_source("heartbeats") is None
    assert p.topic_source("source1.heartbeats") == "source1"
    assert p.topic_source("source2.source1.heartbeats") == "source2"


def test_identity_upstream_and_original_topic() -> None:
    p = IdentityReplicationPolicy()
    assert p.upstream_topic("aaa") == "aaa"
    assert p.upstream_topic("source1.aaa") == "source1.aaa"
    assert p.upstream_topic("source1.heartbeats") == "heartbeats"
    assert p.original_topic("aaa") == "aaa"
    assert p.original_topic("source1.aaa") == "source1.aaa"
    assert p.original_topic("source2.source1.aaa") == "source2.source1.aaa"
    assert p.original_topic("heartbeats") == "heartbeats"
    assert p.original_topic("source2.source1.heartbeats") == "heartbeats"
