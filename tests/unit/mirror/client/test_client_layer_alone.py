"""The client layer is what a consumer application imports for failover: no Kafka client library, no
Connect runtime, no Spark comes with it."""

from __future__ import annotations

import json
import subprocess
import sys


def test_importing_mirror_client_brings_no_client_library_runtime_or_spark() -> None:
    code = (
        "import json, sys, mirror.client, mirror.client.remote_topics, mirror.client.offset_mappings; "
        "print(json.dumps(sorted(sys.modules)))"
    )
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True, timeout=60).stdout
    )
    heavy = (
        "confluent_kafka",
        "kafka",
        "pyspark",
        "connect_core.runtime",
        "connect_core.herder",
        "connect_core.storage",
        "connect_core.rest",
        "mirror.connectors",
        "mirror.driver",
        "mirror.jobs",
    )
    assert [m for m in loaded if m.startswith(heavy)] == []
