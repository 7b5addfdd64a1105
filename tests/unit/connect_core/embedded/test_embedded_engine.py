"""Engine selection and cluster construction from the environment (no broker started)."""

from __future__ import annotations

import pytest

from embedded_kafka import (
    BrokerStartError,
    ContainerKafkaCluster,
    EmbeddedKafkaCluster,
    Engine,
    ExternalKafkaCluster,
    clusters_from_env,
    make_cluster,
    select_engine,
)
from embedded_kafka.engine import (
    bootstrap_env_var,
    check_distinct_bootstraps,
    external_bootstraps,
)


def test_default_engine_is_tansu() -> None:
    assert select_engine({}) is Engine.TANSU
    assert select_engine({"MM2_TEST_ENGINE": ""}) is Engine.TANSU
    assert select_engine({"MM2_TEST_ENGINE": " Tansu "}) is Engine.TANSU


def test_testcontainers_engine_is_chosen_by_name() -> None:
    assert select_engine({"MM2_TEST_ENGINE": "testcontainers"}) is Engine.TESTCONTAINERS


def test_external_bootstraps_win_over_the_engine_variable() -> None:
    env = {"MM2_TEST_ENGINE": "testcontainers", "MM2_TEST_BOOTSTRAP_A": "kafka-a:9092"}
    assert select_engine(env) is Engine.EXTERNAL


def test_blank_bootstrap_does_not_select_external() -> None:
    assert select_engine({"MM2_TEST_BOOTSTRAP_A": "  "}) is Engine.TANSU


def test_unknown_engine_is_an_error_not_a_silent_fallback() -> None:
    with pytest.raises(ValueError, match="MM2_TEST_ENGINE='kafak'"):
        select_engine({"MM2_TEST_ENGINE": "kafak"})


def test_external_bootstraps_by_alias() -> None:
    env = {
        "MM2_TEST_BOOTSTRAP_A": "a1:9092,a2:9092",
        "MM2_TEST_BOOTSTRAP_b": " b:9092 ",
        "MM2_TEST_BOOTSTRAP_C": "",
        "OTHER": "x",
    }
    assert external_bootstraps(env) == {"A": "a1:9092,a2:9092", "B": "b:9092"}
    assert bootstrap_env_var("c") == "MM2_TEST_BOOTSTRAP_C"


def test_two_aliases_on_one_cluster_are_refused() -> None:
    check_distinct_bootstraps({"A": "a:9092", "B": "b:9092"})
    with pytest.raises(ValueError, match="same cluster"):
        check_distinct_bootstraps({"A": "x:1,y:2", "B": "Y:2, x:1"})


def test_make_cluster_per_engine() -> None:
    assert isinstance(make_cluster("A", Engine.TANSU, {}), EmbeddedKafkaCluster)
    container = make_cluster("A", Engine.TESTCONTAINERS, {"MM2_TEST_KAFKA_IMAGE": "apache/kafka:3.8.0"})
    assert isinstance(container, ContainerKafkaCluster)
    external = make_cluster("b", Engine.EXTERNAL, {"MM2_TEST_BOOTSTRAP_B": "b:9092"})
    assert isinstance(external, ExternalKafkaCluster)
    assert external.bootstrap_servers == "b:9092"
    assert external.name == "b"


def test_external_alias_without_variable_names_the_variable() -> None:
    with pytest.raises(BrokerStartError, match="needs MM2_TEST_BOOTSTRAP_C"):
        make_cluster("C", Engine.EXTERNAL, {"MM2_TEST_BOOTSTRAP_A": "a:9092"})


def test_clusters_from_env_keeps_alias_order_and_engine() -> None:
    clusters = clusters_from_env(["A", "B", "C"], {})
    assert [c.name for c in clusters] == ["A", "B", "C"]
    assert all(c.engine is Engine.TANSU for c in clusters)
    env = {"MM2_TEST_BOOTSTRAP_A": "a:1", "MM2_TEST_BOOTSTRAP_B": "b:1"}
    assert [c.bootstrap_servers for c in clusters_from_env(["A", "B"], env)] == ["a:1", "b:1"]
    with pytest.raises(ValueError, match="same cluster"):
        clusters_from_env(["A"], {"MM2_TEST_BOOTSTRAP_A": "a:1", "MM2_TEST_BOOTSTRAP_B": "a:1"})


def test_unstarted_embedded_cluster_has_no_bootstrap() -> None:
    cluster = EmbeddedKafkaCluster("A")
    assert cluster.name == "A"
    assert cluster.cluster_id == "A"
    assert not cluster.running
    assert cluster.log_path is None
    with pytest.raises(BrokerStartError, match="not started"):
        _ = cluster.bootstrap_servers
    assert "EmbeddedKafkaCluster(name='A'" in repr(cluster)
    cluster.stop()  # stopping a never-started cluster is harmless
