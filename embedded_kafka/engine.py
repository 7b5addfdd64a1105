"""Which broker engine the test suite (and ``mm2 demo``) runs against, chosen from the environment.

Pure logic on a mapping so it is unit-tested without touching ``os.environ``:

* any ``MM2_TEST_BOOTSTRAP_<ALIAS>`` set          -> ``external`` (real clusters someone runs for us)
* ``MM2_TEST_ENGINE=testcontainers``              -> ``testcontainers`` (Apache Kafka in Docker)
* ``MM2_TEST_ENGINE=tansu`` or nothing            -> ``tansu`` (embedded broker processes, the default)
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

ENGINE_ENV = "MM2_TEST_ENGINE"
BOOTSTRAP_ENV_PREFIX = "MM2_TEST_BOOTSTRAP_"
TESTCONTAINERS_IMAGE_ENV = "MM2_TEST_KAFKA_IMAGE"


class Engine(StrEnum):
    """A kind of Kafka-protocol cluster the fixtures can provide."""

    TANSU = "tansu"
    EXTERNAL = "external"
    TESTCONTAINERS = "testcontainers"


def bootstrap_env_var(alias: str) -> str:
    """Name of the environment variable giving the bootstrap servers of cluster ``alias``."""
    return BOOTSTRAP_ENV_PREFIX + alias.upper()


def external_bootstraps(env: Mapping[str, str]) -> dict[str, str]:
    """Alias -> bootstrap servers for every non-empty ``MM2_TEST_BOOTSTRAP_<ALIAS>``."""
    out: dict[str, str] = {}
    for key, value in env.items():
        if key.startswith(BOOTSTRAP_ENV_PREFIX) and value.strip():
            out[key[len(BOOTSTRAP_ENV_PREFIX) :].upper()] = value.strip()
    return out


def select_engine(env: Mapping[str, str]) -> Engine:
    """The engine the environment asks for; external bootstraps win over ``MM2_TEST_ENGINE``.

    An unknown ``MM2_TEST_ENGINE`` value is an error rather than a silent fallback, so a typo never
    makes a "real Kafka" CI job quietly run against Tansu.
    """
    if external_bootstraps(env):
        return Engine.EXTERNAL
    raw = env.get(ENGINE_ENV, "").strip().lower()
    if not raw:
        return Engine.TANSU
    try:
        return Engine(raw)
    except ValueError:
        allowed = ", ".join(e.value for e in Engine)
        raise ValueError(f"{ENGINE_ENV}={raw!r} is not one of: {allowed}") from None


def check_distinct_bootstraps(bootstraps: Mapping[str, str]) -> None:
    """Refuse two aliases pointing at the same cluster: "data on A is not on B" tests need two."""
    seen: dict[str, str] = {}
    for alias, servers in sorted(bootstraps.items()):
        norm = ",".join(sorted(s.strip().lower() for s in servers.split(",") if s.strip()))
        if norm in seen:
            raise ValueError(
                f"{bootstrap_env_var(alias)} and {bootstrap_env_var(seen[norm])} name the same cluster "
                f"({servers}); every alias needs its own cluster"
            )
        seen[norm] = alias
