"""Shared pytest fixtures: Kafka clusters for integration tests, on whatever engine the environment selects.

Engine (see ``embedded_kafka.engine``):

* ``MM2_TEST_BOOTSTRAP_A`` / ``_B`` / ``_C`` set -> those real clusters (shared by all tests);
* ``MM2_TEST_ENGINE=testcontainers``           -> Apache Kafka containers (one per alias, per session);
* otherwise                                    -> a fresh Tansu process per cluster per test.

External and container clusters outlive a test, so every test must name its topics and groups with
``unique_name(prefix)`` (fixture, or ``embedded_kafka.unique_name``).

Broker capability gaps skip, never fail: either mark the test
``@pytest.mark.requires_capability("create_partitions")`` (checked against every cluster the test's
cluster fixtures provide) or call the ``requires_capability(cluster_or_clusters, *names)`` fixture.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from embedded_kafka import (
    CAPABILITIES,
    BrokerStartError,
    ContainerKafkaCluster,
    EmbeddedKafkaCluster,
    Engine,
    KafkaCluster,
    capability_skip_reason,
    clusters_from_env,
    docker_available,
    select_engine,
)
from embedded_kafka import (
    free_port as _free_port,
)
from embedded_kafka import (
    unique_name as _unique_name,
)
from embedded_kafka.engine import bootstrap_env_var, external_bootstraps

# tests of the fixtures run an inner pytest session; run_lock lets `alone` tests have the machine to themselves;
# schedule orders the collection longest-first across the xdist workers
pytest_plugins = ["pytester", "tests.schedule", "tests.run_lock"]

REQUIRES_CAPABILITY = "requires_capability"

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{REQUIRES_CAPABILITY}(*names): skip unless every Kafka cluster of the test supports each broker "
        f"capability ({', '.join(CAPABILITIES)})",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests under tests/integration and tests/e2e get their tier marker without writing it; a test that
    uses a fixture named ``spark`` (a local SparkSession) gets the ``spark`` marker the same way. Tests
    that start Spark otherwise (a subprocess's ``--master local[N]``) carry ``@pytest.mark.spark``."""
    for item in items:
        parts = Path(str(item.path)).parts
        if "integration" in parts:
            item.add_marker(pytest.mark.integration)
        elif "e2e" in parts:
            item.add_marker(pytest.mark.e2e)
        if "spark" in getattr(item, "fixturenames", ()) and item.get_closest_marker("spark") is None:
            item.add_marker(pytest.mark.spark)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    """Remember each phase's report so cluster teardown can dump broker logs of failed tests."""
    report = yield
    setattr(item, f"_mm2_report_{call.when}", report)
    return report


# ---------------------------------------------------------------------- engine and clusters


@pytest.fixture(scope="session")
def kafka_engine() -> Engine:
    """The engine chosen from the environment for this whole run."""
    return select_engine(os.environ)


@pytest.fixture(scope="session")
def _container_pool(kafka_engine: Engine) -> Iterator[dict[str, KafkaCluster]]:
    """Containers are slow to start (~10 s), so each alias gets one per session, shared like external."""
    pool: dict[str, KafkaCluster] = {}
    yield pool
    for cluster in pool.values():
        cluster.stop()


@pytest.fixture
def cluster_factory(
    request: pytest.FixtureRequest, kafka_engine: Engine, _container_pool: dict[str, KafkaCluster]
) -> Iterator[ClusterFactory]:
    """``factory(["A", "B"])`` -> started clusters for those aliases; Tansu ones are stopped after the test.

    Skips (with the reason) when the environment cannot provide them or when the test's
    ``requires_capability`` marker names a capability one of them lacks.
    """
    owned: list[KafkaCluster] = []

    def factory(aliases: Sequence[str]) -> list[KafkaCluster]:
        if kafka_engine is Engine.EXTERNAL:
            given = external_bootstraps(os.environ)
            absent = [a for a in aliases if a.upper() not in given]
            if absent:
                pytest.skip("external clusters configured, but not " + ", ".join(bootstrap_env_var(a) for a in absent))
        if kafka_engine is Engine.TESTCONTAINERS:
            ok, why = docker_available()
            if not ok:
                pytest.skip(f"MM2_TEST_ENGINE=testcontainers but {why}")
        clusters: list[KafkaCluster] = []
        for cluster in clusters_from_env(aliases):
            if isinstance(cluster, ContainerKafkaCluster):
                cluster = _container_pool.setdefault(cluster.name, cluster)
            else:
                owned.append(cluster)
            clusters.append(cluster.start())
        marker_names = [n for m in request.node.iter_markers(REQUIRES_CAPABILITY) for n in m.args]
        if marker_names:
            reason = capability_skip_reason(clusters, marker_names)
            if reason:
                pytest.skip(reason)
        return clusters

    yield factory

    failed = any(
        getattr(getattr(request.node, f"_mm2_report_{phase}", None), "failed", False) for phase in ("setup", "call")
    )
    for cluster in owned:
        if failed and isinstance(cluster, EmbeddedKafkaCluster) and cluster.running:
            print(
                f"\n--- broker log of cluster {cluster.name} ({cluster.bootstrap_servers}) ---\n{cluster.log_tail(60)}",
                file=sys.stderr,
            )
        try:
            cluster.stop()
        except BrokerStartError:
            pass


@pytest.fixture
def durable_cluster_factory(request: pytest.FixtureRequest, kafka_engine: Engine) -> Iterator[ClusterFactory]:
    """``factory(["A", "B"])`` -> started embedded clusters on durable storage (S3 on a local moto
    server): a test may ``kill()`` and ``restart()`` their brokers and find its data again. Skips on
    external and container engines: the suite does not restart brokers it does not run."""
    if kafka_engine is not Engine.TANSU:
        pytest.skip(f"broker restarts need the embedded broker on durable storage, not engine {kafka_engine}")
    owned: list[EmbeddedKafkaCluster] = []

    def factory(aliases: Sequence[str]) -> list[KafkaCluster]:
        for alias in aliases:
            owned.append(EmbeddedKafkaCluster(alias, storage="s3"))
            owned[-1].start()
        return list(owned[-len(aliases) :])

    yield factory

    failed = any(
        getattr(getattr(request.node, f"_mm2_report_{phase}", None), "failed", False) for phase in ("setup", "call")
    )
    for cluster in owned:
        if failed and cluster.log_path is not None:
            print(f"\n--- broker log of durable cluster {cluster.name} ---\n{cluster.log_tail(60)}", file=sys.stderr)
        cluster.stop()


@pytest.fixture
def kafka_cluster(cluster_factory: ClusterFactory) -> KafkaCluster:
    """One started cluster, alias "A"."""
    return cluster_factory(["A"])[0]


@pytest.fixture
def two_clusters(cluster_factory: ClusterFactory) -> tuple[KafkaCluster, KafkaCluster]:
    """Two independent started clusters, aliases "A" and "B"."""
    a, b = cluster_factory(["A", "B"])
    return a, b


@pytest.fixture
def three_clusters(cluster_factory: ClusterFactory) -> tuple[KafkaCluster, KafkaCluster, KafkaCluster]:
    """Three independent started clusters, aliases "A", "B" and "C"."""
    a, b, c = cluster_factory(["A", "B", "C"])
    return a, b, c


# ---------------------------------------------------------------------- capabilities and helpers


@pytest.fixture
def requires_capability() -> Callable[..., None]:
    """``requires_capability(cluster_or_clusters, *names)``: skip with the probe's reason if any lacks one."""

    def check(clusters: KafkaCluster | Sequence[KafkaCluster], *names: str) -> None:
        group = [clusters] if isinstance(clusters, KafkaCluster) else list(clusters)
        reason = capability_skip_reason(group, names)
        if reason:
            pytest.skip(reason)

    return check


@pytest.fixture
def unique_name() -> Callable[[str], str]:
    """``unique_name(prefix)`` -> a topic/group name no other test has used (clusters may be shared)."""
    return _unique_name


@pytest.fixture
def free_port() -> int:
    """A loopback port that was free a moment ago."""
    return _free_port()


@pytest.fixture
def tmp_workdir(tmp_path: Path) -> Path:
    """An empty working directory for files a test's process writes (offsets, configs, logs)."""
    work = tmp_path / "work"
    work.mkdir()
    return work
