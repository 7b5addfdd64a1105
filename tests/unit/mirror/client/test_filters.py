"""Topic/group/config-property filters (Kafka's MirrorSourceConfigTest/MirrorCheckpointConfigTest filter cases)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from mirror.client.errors import MirrorConfigError
from mirror.client.filters import (
    DefaultConfigPropertyFilter,
    DefaultGroupFilter,
    DefaultTopicFilter,
    TopicFilter,
    config_property_filter_from_config,
    group_filter_from_config,
    parse_list,
    should_replicate_topic,
    topic_filter_from_config,
)
from mirror.client.policy import DefaultReplicationPolicy, IdentityReplicationPolicy


def test_parse_list_like_kafka_configdef() -> None:
    assert parse_list("") == []
    assert parse_list("   ") == []
    assert parse_list(None) == []
    assert parse_list("a") == ["a"]
    assert parse_list(" a ,b,  c ") == ["a", "b", "c"]
    assert parse_list("a,") == ["a", ""]  # Kafka keeps trailing empties (split with limit -1)
    assert parse_list(["x", "y"]) == ["x", "y"]


# -- topics ------------------------------------------------------------------------------------


def test_topic_matching() -> None:
    f = DefaultTopicFilter({"topics": "topic1"})
    assert f.should_replicate_topic("topic1")
    assert not f.should_replicate_topic("topic2")
    # full match, not search
    assert not f.should_replicate_topic("topic10")
    assert not f.should_replicate_topic("xtopic1")


def test_no_topics() -> None:
    f = DefaultTopicFilter({"topics": ""})
    assert not f.should_replicate_topic("topic1")
    assert not f.should_replicate_topic("topic2")
    assert not f.should_replicate_topic("")


def test_all_topics() -> None:
    f = DefaultTopicFilter({"topics": ".*"})
    assert f.should_replicate_topic("topic1")
    assert f.should_replicate_topic("topic2")


def test_list_of_topics() -> None:
    f = DefaultTopicFilter({"topics": "topic1, topic2"})
    assert f.should_replicate_topic("topic1")
    assert f.should_replicate_topic("topic2")
    assert not f.should_replicate_topic("topic3")


def test_alternation_is_full_match_for_every_item() -> None:
    f = DefaultTopicFilter({"topics": "a, ab.*"})
    assert f.should_replicate_topic("a")
    assert f.should_replicate_topic("abc")
    assert not f.should_replicate_topic("ba")


def test_default_topic_excludes_kafka_4() -> None:
    f = DefaultTopicFilter()
    assert f.should_replicate_topic("orders")
    assert not f.should_replicate_topic("mm2-offsets.A.internal")
    assert not f.should_replicate_topic("mm2-offset-syncs.B.internal")
    assert not f.should_replicate_topic("orders.replica")
    assert not f.should_replicate_topic("__consumer_offsets")
    # KIP-1074: no longer excluded by default
    assert f.should_replicate_topic("connect-offsets-internal")
    assert f.should_replicate_topic("orders.internal")
    assert f.should_replicate_topic("orders-internal")


def test_excludes_win_over_includes() -> None:
    f = DefaultTopicFilter({"topics": "orders.*", "topics.exclude": "orders-secret"})
    assert f.should_replicate_topic("orders-public")
    assert not f.should_replicate_topic("orders-secret")


def test_empty_exclude_excludes_nothing() -> None:
    f = DefaultTopicFilter({"topics.exclude": ""})
    assert f.should_replicate_topic("__consumer_offsets")
    assert f.should_replicate_topic("mm2-offsets.A.internal")


def test_trailing_comma_in_include_matches_empty_name_only() -> None:
    f = DefaultTopicFilter({"topics": "a,"})
    assert f.should_replicate_topic("a")
    assert f.should_replicate_topic("")
    assert not f.should_replicate_topic("b")


def test_deprecated_topics_blacklist() -> None:
    f = DefaultTopicFilter({"topics.blacklist": "topic-1"})
    assert not f.should_replicate_topic("topic-1")
    assert f.should_replicate_topic("topic-2")
    # replaces the default excludes, like the real key would
    assert f.should_replicate_topic("__consumer_offsets")


def test_new_key_wins_over_deprecated_one() -> None:
    f = DefaultTopicFilter({"topics.exclude": "topic-2", "topics.blacklist": "topic-1"})
    assert f.should_replicate_topic("topic-1")
    assert not f.should_replicate_topic("topic-2")


def test_already_parsed_list_values() -> None:
    f = DefaultTopicFilter({"topics": ["a", "b.*"], "topics.exclude": []})
    assert f.should_replicate_topic("bc")
    assert f.should_replicate_topic("a")
    assert not f.should_replicate_topic("c")


def test_invalid_regex_names_the_key() -> None:
    with pytest.raises(MirrorConfigError) as e:
        DefaultTopicFilter({"topics": "a(b"})
    assert e.value.issues[0].key == "topics"
    with pytest.raises(MirrorConfigError) as e2:
        DefaultTopicFilter({"topics.blacklist": "[x"})
    assert e2.value.issues[0].key == "topics.exclude"


def test_reconfigure_replaces_patterns() -> None:
    f = DefaultTopicFilter({"topics": "a"})
    f.configure({"topics": "b"})
    assert f.should_replicate_topic("b")
    assert not f.should_replicate_topic("a")


# -- groups ------------------------------------------------------------------------------------


def test_group_matching() -> None:
    f = DefaultGroupFilter({"groups": "group1"})
    assert f.should_replicate_group("group1")
    assert not f.should_replicate_group("group2")


def test_default_group_excludes() -> None:
    f = DefaultGroupFilter()
    assert f.should_replicate_group("billing")
    assert not f.should_replicate_group("console-consumer-1234")
    assert not f.should_replicate_group("connect-MirrorSourceConnector")
    assert not f.should_replicate_group("__internal")


def test_deprecated_groups_blacklist() -> None:
    f = DefaultGroupFilter({"groups.blacklist": "group-7"})
    assert not f.should_replicate_group("group-7")
    assert f.should_replicate_group("connect-x")
    f2 = DefaultGroupFilter({"groups.exclude": "g1", "groups.blacklist": "group-7"})
    assert f2.should_replicate_group("group-7")
    assert not f2.should_replicate_group("g1")


def test_no_groups() -> None:
    f = DefaultGroupFilter({"groups": ""})
    assert not f.should_replicate_group("group1")


# -- config properties -------------------------------------------------------------------------


def test_config_property_matching() -> None:
    f = DefaultConfigPropertyFilter({"config.properties.exclude": "prop2"})
    assert f.should_replicate_config_property("prop1")
    assert not f.should_replicate_config_property("prop2")


def test_default_config_property_excludes() -> None:
    f = DefaultConfigPropertyFilter()
    for prop in (
        "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas",
        "message.timestamp.difference.max.ms",
        "message.timestamp.type",
        "unclean.leader.election.enable",
        "min.insync.replicas",
    ):
        assert not f.should_replicate_config_property(prop), prop
    assert f.should_replicate_config_property("retention.ms")
    assert f.should_replicate_config_property("cleanup.policy")
    # escaped dots: a literal match only
    assert f.should_replicate_config_property("minXinsync.replicas")


def test_use_defaults_from() -> None:
    assert not DefaultConfigPropertyFilter().should_replicate_source_default("retention.ms")
    assert DefaultConfigPropertyFilter().use_defaults_from == "target"
    f = DefaultConfigPropertyFilter({"use.defaults.from": "source"})
    assert f.should_replicate_source_default("retention.ms")


def test_deprecated_config_properties_blacklist() -> None:
    f = DefaultConfigPropertyFilter({"config.properties.blacklist": "prop1"})
    assert not f.should_replicate_config_property("prop1")
    assert f.should_replicate_config_property("prop2")
    assert f.should_replicate_config_property("min.insync.replicas")


# -- filter classes ----------------------------------------------------------------------------


class OnlyOddTopics(TopicFilter):
    props: Mapping[str, Any] = {}

    def configure(self, props: Mapping[str, Any]) -> None:
        self.props = dict(props)

    def should_replicate_topic(self, topic: str) -> bool:
        return len(topic) % 2 == 1


def test_filters_from_config_defaults() -> None:
    assert isinstance(topic_filter_from_config({}), DefaultTopicFilter)
    assert isinstance(group_filter_from_config({}), DefaultGroupFilter)
    assert isinstance(config_property_filter_from_config({}), DefaultConfigPropertyFilter)


def test_filters_from_config_java_names() -> None:
    f = topic_filter_from_config(
        {"topic.filter.class": "org.apache.kafka.connect.mirror.DefaultTopicFilter", "topics": "x"}
    )
    assert f.should_replicate_topic("x") and not f.should_replicate_topic("y")
    g = group_filter_from_config(
        {"group.filter.class": "org.apache.kafka.connect.mirror.DefaultGroupFilter", "groups.blacklist": "g"}
    )
    assert not g.should_replicate_group("g")
    c = config_property_filter_from_config(
        {
            "config.property.filter.class": "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter",
            "config.properties.exclude": "p",
        }
    )
    assert not c.should_replicate_config_property("p")


def test_custom_filter_class_gets_all_props() -> None:
    f = topic_filter_from_config({"topic.filter.class": f"{__name__}.OnlyOddTopics", "a": "b"})
    assert isinstance(f, OnlyOddTopics)
    assert f.props == {"topic.filter.class": f"{__name__}.OnlyOddTopics", "a": "b"}
    assert f.should_replicate_topic("abc")
    assert not f.should_replicate_topic("ab")


def test_wrong_filter_kind_is_config_error() -> None:
    with pytest.raises(MirrorConfigError) as e:
        group_filter_from_config({"group.filter.class": "org.apache.kafka.connect.mirror.DefaultTopicFilter"})
    assert e.value.issues[0].key == "group.filter.class"
    with pytest.raises(MirrorConfigError):
        topic_filter_from_config({"topic.filter.class": "com.example.Missing"})


# -- MirrorSourceConnector's topic predicate ---------------------------------------------------


def test_replicates_heartbeats_by_default() -> None:
    p = DefaultReplicationPolicy()
    f = DefaultTopicFilter()
    assert should_replicate_topic("heartbeats", f, p, "target")
    assert should_replicate_topic("us-west.heartbeats", f, p, "target")


class Nothing(TopicFilter):
    def should_replicate_topic(self, topic: str) -> bool:
        return False


class Everything(TopicFilter):
    def should_replicate_topic(self, topic: str) -> bool:
        return True


def test_replicates_heartbeats_despite_filter() -> None:
    p = DefaultReplicationPolicy()
    assert should_replicate_topic("heartbeats", Nothing(), p, "target")
    assert should_replicate_topic("us-west.heartbeats", Nothing(), p, "target")
    p.configure({"replication.policy.separator": "_"})
    assert should_replicate_topic("heartbeats", Nothing(), p, "target")
    assert not should_replicate_topic("us-west.heartbeats", Nothing(), p, "target")


def test_heartbeats_replication_disabled() -> None:
    p = DefaultReplicationPolicy()
    assert not should_replicate_topic("heartbeats", Nothing(), p, "target", heartbeats_replication_enabled=False)
    assert not should_replicate_topic(
        "us-west.heartbeats", DefaultTopicFilter({"topics": "x"}), p, "target", heartbeats_replication_enabled=False
    )
    # ... unless the filter itself allows them
    assert should_replicate_topic("heartbeats", Everything(), p, "target", heartbeats_replication_enabled=False)


def test_never_internal_or_cycles() -> None:
    p = DefaultReplicationPolicy()
    e = Everything()
    assert not should_replicate_topic("__consumer_offsets", e, p, "target")
    assert not should_replicate_topic("source.checkpoints.internal", e, p, "target")
    assert not should_replicate_topic("target.topic1", e, p, "target")
    assert not should_replicate_topic("source.target.topic1", e, p, "target")
    assert should_replicate_topic("source.topic1", e, p, "target")
    assert not should_replicate_topic("target.heartbeats", e, p, "target")


def test_identity_policy_allows_what_looks_like_cycles() -> None:
    p = IdentityReplicationPolicy()
    p.configure({"source.cluster.alias": "source"})
    e = Everything()
    assert should_replicate_topic("target.topic1", e, p, "target")
    assert not should_replicate_topic("target.heartbeats", e, p, "target")
    assert should_replicate_topic("othersource.heartbeats", e, p, "target")
