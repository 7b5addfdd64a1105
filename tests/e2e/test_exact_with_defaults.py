"""Exact with the product's defaults: no ``offset.flush.interval.ms`` override (60 s by default).

A topic is mirrored onto a remote topic whose offsets are shifted (it held records before), its
consumer groups are idle on the source. Once the mirror has caught up, the flow's offset mappings
cover every copied record within 5 s; ``mm2 translate-offsets`` then places every group exactly
(0 re-read), ``mm2 verify`` compares every mirrored record, and the live checkpoints and synced group
offsets are exact (this test sets the checkpoint and group-sync intervals: they are what it is about).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster
from mirror.client.formats import Checkpoint
from tests.e2e.mm2_helpers import (
    CHECKPOINTS,
    GROUP_SYNC,
    Mm2Process,
    commit_group,
    eventually,
    group_offsets,
    mm2_properties,
    published_through,
    record_view,
    write_properties,
)
from tests.e2e.mm2_helpers import mm2_command as mm2

pytestmark = pytest.mark.e2e

NameFn = Callable[[str], str]
PARTITIONS = 3
PER_PARTITION = 200
PRE_EXISTING = 7  # records in each remote partition before mirroring: target offsets = source + 7
#: Where each idle group stopped on the source, per partition (the head, inside, the very start).
POSITIONS = {"at-start": 0, "early": 37, "middle": 100, "late": 163, "at-head": PER_PARTITION}
STARTUP_S = 90.0
#: How soon after the copies the state that makes translation exact must be readable.
PUBLISHED_WITHIN_S = 5.0


def caught_up(a: KafkaCluster, topic: str, b: KafkaCluster, remote: str) -> bool:
    if remote not in b.topic_names():
        return False
    src, dst = a.read_all(topic), b.read_all(remote)
    return all(
        [record_view(m) for m in dst.get(p, [])][PRE_EXISTING:] == [record_view(m) for m in src[p]]
        for p in range(PARTITIONS)
    )


def latest_checkpoints(b: KafkaCluster) -> dict[tuple[str, int], Checkpoint]:
    latest: dict[tuple[str, int], Checkpoint] = {}
    if "A.checkpoints.internal" in b.topic_names():
        for msgs in b.read_all("A.checkpoints.internal").values():
            for m in msgs:
                cp = Checkpoint.decode(m.key(), m.value())
                latest[(cp.consumer_group_id, cp.topic_partition.partition)] = cp
    return latest


@pytest.mark.parametrize("copy_path", ["batch", "record"])  # the record path is the default for now
def test_exact_within_seconds_with_the_default_offset_flush(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path, copy_path: str
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=PARTITIONS)
    b.create_topic(remote, partitions=PARTITIONS)
    b.produce(
        remote, [{"value": b"before-mirroring", "partition": p} for p in range(PARTITIONS) for _ in range(PRE_EXISTING)]
    )
    a.produce(
        topic,
        [
            {"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % PARTITIONS}
            for i in range(PARTITIONS * PER_PARTITION)
        ],
    )
    groups = {unique_name(name): position for name, position in POSITIONS.items()}
    for group, position in groups.items():
        commit_group(a, group, {(topic, p): position for p in range(PARTITIONS)})
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        topics=topic,
        **CHECKPOINTS,
        **GROUP_SYNC,
        **{"A->B.batch.copy.enabled": str(copy_path == "batch").lower()},
    )
    assert not any(k.endswith("offset.flush.interval.ms") for k in props)
    config = write_properties(tmp_path / "mm2.properties", props)
    proc = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(lambda: caught_up(a, topic, b, remote) or None, STARTUP_S, "the mirror caught up (lag 0)", proc)
        everything = dict.fromkeys(range(PARTITIONS), PER_PARTITION)
        eventually(
            lambda: published_through(a, "mm2-offset-mappings.B.internal", topic) == everything or None,
            PUBLISHED_WITHIN_S,
            "offset mappings covering every copied record",
            proc,
        )

        # both jobs only read: run side by side (each is mostly its Spark start)
        pair = (str(config), "--source", "A", "--target", "B", "--json", "--master", "local[1]")
        with ThreadPoolExecutor(2) as pool:
            translating, verifying = pool.submit(mm2, "translate-offsets", *pair), pool.submit(mm2, "verify", *pair)
            translated, verified = translating.result(), verifying.result()
        assert translated.returncode == 0, translated.stdout + translated.stderr
        rows = {
            (g["group"], p["partition"]): (p["source_offset"], p["target_offset"], p["reread"], p["status"])
            for g in json.loads(translated.stdout)["groups"]
            if g["group"] in groups
            for p in g["partitions"]
        }
        assert rows == {(g, p): (o, o + PRE_EXISTING, 0, "ok") for g, o in groups.items() for p in range(PARTITIONS)}

        assert verified.returncode == 0, verified.stdout + verified.stderr
        doc = json.loads(verified.stdout)
        assert doc["result"] == "equal"
        assert {p["partition"]: (p["compared"], p["pending"]) for p in doc["partitions"]} == dict.fromkeys(
            range(PARTITIONS), (PER_PARTITION, 0)
        )

        exact = {(g, p): o + PRE_EXISTING for g, o in groups.items() for p in range(PARTITIONS)}

        def checkpoints_exact() -> bool:
            rows = latest_checkpoints(b)
            return {k: cp.downstream_offset for k, cp in rows.items() if k[0] in groups} == exact

        eventually(lambda: checkpoints_exact() or None, 30, "exact checkpoints of every group", proc)

        def synced_exact() -> bool:
            return all(
                group_offsets(b, g, remote, PARTITIONS) == {p: exact[(g, p)] for p in range(PARTITIONS)} for g in groups
            )

        eventually(lambda: synced_exact() or None, 30, "exact group offsets on the target", proc)
        assert f"({copy_path} path)" in proc.output()
    finally:
        assert proc.terminate() == 0, proc.output()[-3000:]
        proc.close()
