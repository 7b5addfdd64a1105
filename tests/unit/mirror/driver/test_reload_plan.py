"""Which differences of a re-read mm2.properties a running ``mm2 run`` applies, and which wait for a restart."""

from __future__ import annotations

from mirror.driver.driver import make_config
from mirror.driver.maker_config import SOURCE_CONNECTOR, SourceAndTarget
from mirror.driver.reload_plan import is_connection_key, plan_reload

AB, AC, BC, CA = (SourceAndTarget(s, t) for s, t in (("A", "B"), ("A", "C"), ("B", "C"), ("C", "A")))


def props(**extra: str) -> dict[str, str]:
    base = {
        "clusters": "A, B, C",
        "A.bootstrap.servers": "a:9092",
        "B.bootstrap.servers": "b:9092",
        "C.bootstrap.servers": "c:9092",
        "emit.heartbeats.enabled": "false",
        "A->B.enabled": "true",
        "A->C.enabled": "true",
        "B->C.enabled": "true",
        "topics": "orders",
    }
    base.update(extra)
    return {k: v for k, v in base.items() if v != "<unset>"}


def test_the_same_file_changes_nothing() -> None:
    plan = plan_reload(make_config(props()), make_config(props()), None)
    assert not plan.changes_anything
    assert plan.kept == [AB, AC, BC] and plan.added == [] and plan.removed == [] and plan.needs_restart == []


def test_flows_added_and_removed() -> None:
    new = props(**{"B->C.enabled": "<unset>", "C->A.enabled": "true"})
    plan = plan_reload(make_config(props()), make_config(new), None)
    assert plan.added == [CA] and plan.removed == [BC] and plan.kept == [AB, AC]
    assert plan.needs_restart == []


def test_connector_settings_are_applied_to_the_flows_they_reach() -> None:
    new = props(**{"A->C.topics": "orders, events", "tasks.max": "4", "A.consumer.fetch.min.bytes": "10"})
    plan = plan_reload(make_config(props()), make_config(new), None)
    assert plan.needs_restart == []
    assert plan.config.connector_base_config(AC, SOURCE_CONNECTOR)["topics"] == "orders, events"
    assert plan.connector_changes(AC) == ["source.consumer.fetch.min.bytes", "tasks.max", "topics"]
    assert plan.connector_changes(AB) == ["source.consumer.fetch.min.bytes", "tasks.max"]
    assert plan.connector_changes(BC) == ["tasks.max"]


def test_restart_only_settings_are_named_and_keep_their_running_values() -> None:
    running = make_config(props(**{"B.offset.flush.interval.ms": "60000"}))
    new = props(
        **{
            "B.offset.flush.interval.ms": "500",  # worker setting of A->B's herder
            "A.bootstrap.servers": "elsewhere:9092",  # source connection of running flows
            "C.ssl.truststore.location": "/x.pem",  # security of the target of A->C, B->C
            "listeners": "http://:9999",  # process setting
            "replication.policy.separator": "_",  # would rename every remote topic
            "A->B.topics": "orders, more",  # ... while a connector setting in the same file is applied
        }
    )
    plan = plan_reload(running, make_config(new), None)
    assert plan.changes_anything
    assert plan.needs_restart == [
        "A.bootstrap.servers",
        "B.offset.flush.interval.ms",
        "C.ssl.truststore.location",
        "listeners",
        "replication.policy.separator",
    ]
    assert plan.config.raw["B.offset.flush.interval.ms"] == "60000"
    assert plan.config.raw["A.bootstrap.servers"] == "a:9092"
    assert "C.ssl.truststore.location" not in plan.config.raw and "listeners" not in plan.config.raw
    assert plan.config.worker_config(AB) == running.worker_config(AB)
    assert plan.connector_changes(AB) == ["topics"]
    assert plan.connector_changes(AC) == []


def test_settings_of_clusters_only_new_flows_use_are_taken_as_written() -> None:
    running = make_config(
        props(
            **{
                "clusters": "A, B",
                "A->C.enabled": "<unset>",
                "B->C.enabled": "<unset>",
                "C.bootstrap.servers": "<unset>",
            }
        )
    )
    new = props(**{"C.bootstrap.servers": "c2:9092", "C.offset.flush.interval.ms": "500"})
    plan = plan_reload(running, make_config(new), None)
    assert plan.added == [AC, BC] and plan.needs_restart == []
    assert plan.config.worker_config(AC)["bootstrap.servers"] == "c2:9092"


def test_a_source_clusters_non_connection_settings_are_connector_settings() -> None:
    new = props(**{"A.consumer.max.poll.records": "50", "A.sasl.mechanism": "PLAIN"})
    plan = plan_reload(make_config(props()), make_config(new), None)
    assert plan.needs_restart == ["A.sasl.mechanism"]
    assert "source.consumer.max.poll.records" in plan.connector_changes(AB)


def test_clusters_option_limits_the_flows_considered() -> None:
    new = props(**{"B.offset.flush.interval.ms": "500", "C.offset.flush.interval.ms": "500"})
    plan = plan_reload(make_config(props()), make_config(new), ["C"])
    assert plan.kept == [AC, BC]
    assert plan.needs_restart == ["C.offset.flush.interval.ms"]  # B's herders do not run on this node
    assert plan.config.raw["B.offset.flush.interval.ms"] == "500"


def test_connection_keys() -> None:
    assert is_connection_key("bootstrap.servers") and is_connection_key("consumer.ssl.keystore.location")
    assert is_connection_key("sasl.jaas.config") and is_connection_key("security.protocol")
    assert not is_connection_key("consumer.fetch.min.bytes") and not is_connection_key("topics")


def test_a_restart_only_change_alone_is_still_reported() -> None:
    plan = plan_reload(make_config(props()), make_config(props(**{"B.offset.flush.interval.ms": "500"})), None)
    assert (
        plan.changes_anything
        and plan.changed_keys == frozenset()
        and plan.needs_restart == ["B.offset.flush.interval.ms"]
    )
