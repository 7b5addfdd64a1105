"""Mapping state of a transactional source stays small, and translation over it stays exact.

Every transaction leaves a commit marker in each partition it wrote: an upstream gap after every two
records here. ``mm2 run`` (product defaults) mirrors 3,000 committed transactions of 4 records over 2
partitions, produced while it runs, onto remote partitions whose offsets are shifted. The flow's
mappings topic then holds at most one record per 10 source transactions (one record per partition per
publication, not one per transaction), and ``mm2 translate-offsets`` places groups at the start, on a
record, on a marker and at the very end (after the last marker) exactly: 0 re-read.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from confluent_kafka import Producer

from embedded_kafka import KafkaCluster
from mirror.client.offset_mappings import decode_key
from tests.e2e.mm2_helpers import (
    Mm2Process,
    commit_group,
    eventually,
    mm2_properties,
    published_through,
    write_properties,
)
from tests.e2e.mm2_helpers import mm2_command as mm2

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

NameFn = Callable[[str], str]
PARTITIONS = 2
TRANSACTIONS = 3000
PER_TXN = 4  # records per transaction, 2 in each partition: offsets 3k, 3k+1, then the marker at 3k+2
END = 3 * TRANSACTIONS  # each partition's end offset (after the last marker)
SHIFT = 3  # records each remote partition held before mirroring
MAPPINGS = "mm2-offset-mappings.B.internal"
#: Where groups stopped on the source, in each partition.
POSITIONS = {"at-start": 0, "on-a-record": 3 * 100 + 1, "on-a-marker": 3 * 1500 + 2, "at-the-end": END}
STARTUP_S = 120.0


def target_offset(source_offset: int) -> int:
    """Target offset of the first record at or after ``source_offset`` (records before it, shifted)."""
    return SHIFT + 2 * (source_offset // 3) + min(source_offset % 3, 2)


def produce_transactions(a: KafkaCluster, topic: str, tid: str) -> None:
    producer = Producer(
        {
            "bootstrap.servers": a.bootstrap_servers,
            "transactional.id": tid,
            "linger.ms": 0,
            "allow.auto.create.topics": False,
        }
    )
    producer.init_transactions(30)
    for k in range(TRANSACTIONS):
        producer.begin_transaction()
        for i in range(PER_TXN):
            producer.produce(topic, f"t{k}-{i}".encode(), partition=i % PARTITIONS)
        producer.commit_transaction(30)


def mapping_records(a: KafkaCluster, topic: str) -> int:
    return sum(1 for msgs in a.read_all(MAPPINGS).values() for m in msgs if decode_key(m.key())[0].topic == topic)


def test_transactional_source_few_mapping_records_and_exact_translation(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    topic = unique_name("payments")
    a.create_topic(topic, partitions=PARTITIONS)
    b.create_topic(f"A.{topic}", partitions=PARTITIONS)
    b.produce(
        f"A.{topic}", [{"value": b"before-mirroring", "partition": p} for p in range(PARTITIONS) for _ in range(SHIFT)]
    )
    config = write_properties(tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics=topic))
    proc = Mm2Process(config, log_dir=tmp_path)
    try:
        produce_transactions(a, topic, unique_name("txn"))  # while mm2 starts and copies
        groups = {unique_name(name): position for name, position in POSITIONS.items()}
        for group, position in groups.items():
            commit_group(a, group, {(topic, p): position for p in range(PARTITIONS)})
        everything = dict.fromkeys(range(PARTITIONS), END)
        eventually(
            lambda: published_through(a, MAPPINGS, topic) == everything or None,
            STARTUP_S,
            "mappings through the last marker of every partition",
            proc,
        )

        records = mapping_records(a, topic)
        assert records <= TRANSACTIONS // 10, f"{records} mapping records for {TRANSACTIONS} transactions"

        translated = mm2(
            "translate-offsets", str(config), "--source", "A", "--target", "B", "--json", "--master", "local[1]"
        )
        assert translated.returncode == 0, translated.stdout + translated.stderr
        rows = {
            (g["group"], p["partition"]): (p["target_offset"], p["reread"], p["status"])
            for g in json.loads(translated.stdout)["groups"]
            if g["group"] in groups
            for p in g["partitions"]
        }
        assert rows == {(g, p): (target_offset(o), 0, "ok") for g, o in groups.items() for p in range(PARTITIONS)}
    finally:
        assert proc.terminate() == 0, proc.output()[-3000:]
        proc.close()
