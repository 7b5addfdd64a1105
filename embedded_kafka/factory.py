"""Build the clusters the environment asks for (used by the pytest fixtures and ``mm2 demo``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from embedded_kafka.cluster import (
    ContainerKafkaCluster,
    EmbeddedKafkaCluster,
    ExternalKafkaCluster,
    KafkaCluster,
)
from embedded_kafka.engine import (
    TESTCONTAINERS_IMAGE_ENV,
    Engine,
    bootstrap_env_var,
    check_distinct_bootstraps,
    external_bootstraps,
    select_engine,
)
from embedded_kafka.errors import BrokerStartError


def make_cluster(alias: str, engine: Engine, env: Mapping[str, str] | None = None) -> KafkaCluster:
    """An unstarted cluster named ``alias`` of the given engine (external ones read their env var)."""
    env = os.environ if env is None else env
    if engine is Engine.TANSU:
        return EmbeddedKafkaCluster(alias)
    if engine is Engine.TESTCONTAINERS:
        return ContainerKafkaCluster(alias, image=env.get(TESTCONTAINERS_IMAGE_ENV) or None)
    bootstraps = external_bootstraps(env)
    servers = bootstraps.get(alias.upper())
    if servers is None:
        raise BrokerStartError(
            f"external cluster {alias!r} needs {bootstrap_env_var(alias)} "
            f"(set: {', '.join(sorted(bootstrap_env_var(a) for a in bootstraps)) or 'none'})"
        )
    return ExternalKafkaCluster(alias, servers)


def clusters_from_env(aliases: Sequence[str], env: Mapping[str, str] | None = None) -> list[KafkaCluster]:
    """Unstarted clusters for ``aliases`` on the engine the environment selects."""
    env = os.environ if env is None else env
    engine = select_engine(env)
    if engine is Engine.EXTERNAL:
        check_distinct_bootstraps(external_bootstraps(env))
    return [make_cluster(alias, engine, env) for alias in aliases]
