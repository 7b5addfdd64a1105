"""What an ``mm2`` process imports to start: a feature the command does not use stays out of its start-up.

The suite launches hundreds of mm2 processes and users wait for each, so import CPU counts. A fresh
interpreter imports what ``mm2`` (``mirror.cli.app:main``, pyproject's [project.scripts]) imports before
parsing, then what ``mm2 run`` and ``mm2 status`` import before any flow starts; each stage's
``sys.modules`` is checked against the modules that must be imported only when needed.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Out of every start-up (the help, run and status): each is needed only by a feature the user configures.
NEVER_AT_START = (
    "pyspark",  # the 'spark' extra and a JVM: only backfill, verify and translate-offsets run a Spark job
    "cryptography",  # ~40 ms: only a cluster with JKS/PKCS12/PEM stores needs them read (connect_core.kafka.stores)
    "mirror.jobs.spark",  # the batch jobs' Spark helpers; the CLI's error table imports it only on an error
    "mirror.jobs.verify.job",  # `mm2 run` checks its verify settings always, runs the job only if configured
    "mirror.jobs.verify.plan",
)
# Out of the help's start-up: run and status use them at once, a help text never does.
NOT_FOR_HELP = (
    "mirror.client",  # policies, filters, record formats: what a flow reads (backfill_leases defers it)
    "connect_core.api",  # the Connect API: the CLI's error table imports its errors only on an error
    "apscheduler",  # the connectors' and the scheduled verification's scheduler
    "kafka",  # kafka-python and confluent-kafka: the clients
    "confluent_kafka",
)

_PROBE = """
import json, sys
import mirror.cli.app
help_modules = sorted(sys.modules)
import mirror.cli.run_cmd, mirror.cli.status_cmd, mirror.driver.driver, mirror.driver.lease_store
import mirror.jobs.verify.schedule
print(json.dumps({"help": help_modules, "commands": sorted(sys.modules)}))
"""


def _loaded() -> dict[str, list[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert result.returncode == 0, result.stderr
    loaded: dict[str, list[str]] = json.loads(result.stdout)
    return loaded


def _among(modules: Iterable[str], packages: Iterable[str]) -> list[str]:
    wanted = tuple(packages)
    return sorted(m for m in modules if any(m == p or m.startswith(f"{p}.") for p in wanted))


def test_start_up_imports_no_feature_it_does_not_use() -> None:
    loaded = _loaded()
    assert _among(loaded["help"], NEVER_AT_START + NOT_FOR_HELP) == []
    assert _among(loaded["commands"], NEVER_AT_START) == []
    # the probe reaches what it checks: the run modules did import the clients
    assert _among(loaded["commands"], ("confluent_kafka",)) != []
