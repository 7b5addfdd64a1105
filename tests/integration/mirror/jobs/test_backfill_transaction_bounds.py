"""A task's transaction closes on whichever bound it reaches first: records, bytes or age.

The per-task copy function runs on real brokers (no Spark) over 4 partitions with one bound made tight
and the others out of reach. Unbounded, the task's one transaction would leave one COMMIT marker per
partition; each bound alone leaves several, and what a read_committed consumer sees (applied from the
markers) is the source, once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from embedded_kafka import KafkaCluster
from mirror.jobs.backfill.copy import copy_units
from mirror.jobs.backfill.flow import create_internal_topics, create_target_topics, prepare
from tests.integration.mirror.jobs.test_backfill_job import mm2_config, produce_backlog, read_partition
from tests.oracle.committed_reader import read_topic_committed

pytestmark = pytest.mark.integration

PARTITIONS, PER_PARTITION = 4, 5_000
NEVER = {"chunk_records": 10**9, "chunk_bytes": 10**12, "chunk_seconds": 10**6}


@pytest.mark.parametrize(
    ("bound", "value"),
    [
        ("chunk_records", 1_500),  # a transaction-wide count, not one partition's
        ("chunk_bytes", 100_000),  # about 1,300 records of ~75 bytes
        ("chunk_seconds", 0.0),  # due at once: commits before every consumed batch (at most 2,000 records)
    ],
)
def test_each_bound_alone_closes_transactions(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: Callable[[str], str], bound: str, value: Any
) -> None:
    a, b = two_clusters
    topic = unique_name(f"bounded-{bound.split('_')[1]}")
    a.create_topic(topic, partitions=PARTITIONS)
    produce_backlog(a, topic, PARTITIONS, PER_PARTITION)
    prepared = prepare(mm2_config(a, b), "A", "B", topic)
    create_target_topics(prepared.flow, prepared.missing_topics, prepared.source_counts)
    create_internal_topics(prepared.flow)
    clients = replace(prepared.clients, **{**NEVER, bound: value})

    results = copy_units(clients, list(prepared.plan.units))
    assert sum(r.records for r in results) == PARTITIONS * PER_PARTITION
    for p, log in read_topic_committed(b, f"A.{topic}").items():
        assert sum(1 for _offset, _pid, commit in log.markers if commit) >= 3, f"partition {p}: {log.markers}"
        assert not log.open and [(r.key, r.value, r.headers, r.timestamp) for r in log.committed] == read_partition(
            a, topic, p, PER_PARTITION
        )
