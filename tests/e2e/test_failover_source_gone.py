"""Unplanned failover: the source cluster is gone, and the groups move to the target from its state alone.

Groups sit at random positions (the start, inside, the head) over a topic whose remote partitions held
records before mirroring (target offsets shifted, by a different amount per partition). ``mm2 run``
mirrors with the product's defaults (the offset-syncs and mappings topics on the source) and
checkpoints every group exactly; then the source broker is SIGKILLed. ``mm2 translate-offsets``
(dry run, then ``--apply``) places every group exactly at the first record it had not consumed
(0 re-read, 0 skipped) from the target's checkpoints alone, and the dry run says the source was
unreachable and how old each checkpoint is; ``mm2 verify`` and ``mm2 status`` answer one line, exit 2.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster
from mirror.client.formats import Checkpoint
from tests.e2e.mm2_helpers import (
    CHECKPOINTS,
    Mm2Process,
    commit_group,
    eventually,
    group_offsets,
    mm2_properties,
    write_properties,
)
from tests.e2e.mm2_helpers import mm2_command as mm2

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

NameFn = Callable[[str], str]
PARTITIONS = 3
PER_PARTITION = 120
SHIFT = {0: 5, 1: 0, 2: 11}  # records each remote partition held before mirroring
GROUPS = 6
STARTUP_S = 120.0
#: How long translate-offsets waits for the dead source before failing over from the checkpoints.
SOURCE_TIMEOUT = "3"


def latest_checkpoints(b: KafkaCluster) -> dict[tuple[str, int], int]:
    latest: dict[tuple[str, int], int] = {}
    if "A.checkpoints.internal" in b.topic_names():
        for msgs in b.read_all("A.checkpoints.internal").values():
            for m in msgs:
                cp = Checkpoint.decode(m.key(), m.value())
                latest[(cp.consumer_group_id, cp.topic_partition.partition)] = cp.downstream_offset
    return latest


def test_failover_from_the_targets_checkpoints_when_the_source_is_gone(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=PARTITIONS)
    b.create_topic(remote, partitions=PARTITIONS)
    b.produce(remote, [{"value": b"before-mirroring", "partition": p} for p, n in SHIFT.items() for _ in range(n)])
    a.produce(
        topic,
        [
            {"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": i % PARTITIONS}
            for i in range(PARTITIONS * PER_PARTITION)
        ],
    )
    rng = random.Random(26)
    positions = {
        unique_name(f"g{i}"): {
            p: rng.choice([0, PER_PARTITION, rng.randrange(1, PER_PARTITION)]) for p in range(PARTITIONS)
        }
        for i in range(GROUPS)
    }
    for group, at in positions.items():
        commit_group(a, group, {(topic, p): o for p, o in at.items()})
    exact = {(g, p): o + SHIFT[p] for g, at in positions.items() for p, o in at.items()}
    config = write_properties(
        tmp_path / "mm2.properties", mm2_properties({"A": a, "B": b}, ["A->B"], topics=topic, **CHECKPOINTS)
    )
    proc = Mm2Process(config, log_dir=tmp_path)
    try:
        eventually(
            lambda: {k: v for k, v in latest_checkpoints(b).items() if k[0] in positions} == exact or None,
            STARTUP_S,
            "exact checkpoints of every group on B",
            proc,
        )
        a.stop()  # SIGKILL: cluster A is gone, with the offset-syncs and mappings topics on it

        dry = mm2(
            "translate-offsets",
            str(config),
            "--source",
            "A",
            "--target",
            "B",
            "--timeout",
            SOURCE_TIMEOUT,
            "--master",
            "local[1]",
        )
        assert dry.returncode == 0, dry.stdout + dry.stderr
        lines = dry.stdout.splitlines()
        assert lines[0].startswith("source cluster 'A' is unreachable") and "last checkpoints" in lines[0], dry.stdout
        header = lines[1].split()
        rows = [dict(zip(header, line.split(), strict=True)) for line in lines[2:-1]]
        ours = [r for r in rows if r["group"] in positions]
        assert {(r["group"], int(r["partition"])): int(r["target_offset"]) for r in ours} == exact, dry.stdout
        assert all(r["status"] == "ok" and r["applied"] == "no" for r in ours), dry.stdout
        # an age as the report writes it: in seconds, in minutes past two (a slow machine gets there)
        assert all(re.fullmatch(r"\d+[sm]", r["checkpoint_age"]) for r in ours), dry.stdout
        assert all(group_offsets(b, g, remote, PARTITIONS) == {} for g in positions)  # a dry run writes nothing

        applied = mm2(
            "translate-offsets",
            str(config),
            "--source",
            "A",
            "--target",
            "B",
            "--timeout",
            SOURCE_TIMEOUT,
            "--master",
            "local[1]",
            "--apply",
            "--json",
        )
        assert applied.returncode == 0, applied.stdout + applied.stderr
        doc = json.loads(applied.stdout)
        ours_json = [g for g in doc["groups"] if g["group"] in positions]
        assert len(ours_json) == GROUPS
        assert all(g["source_unreachable"].startswith("source cluster 'A' is unreachable") for g in ours_json)
        assert all(p["applied"] and p["checkpoint_age_s"] is not None for g in ours_json for p in g["partitions"])
        # every group now resumes on B at exactly the first record it had not consumed on A
        assert {(g, p): o for g in positions for p, o in group_offsets(b, g, remote, PARTITIONS).items()} == exact

        commands = (
            (
                "verify",
                str(config),
                "--source",
                "A",
                "--target",
                "B",
                "--timeout",
                SOURCE_TIMEOUT,
                "--master",
                "local[1]",
            ),
            ("status", str(config)),
        )
        with ThreadPoolExecutor(2) as pool:  # each waits out its timeout on A: side by side
            answers = list(pool.map(lambda command: mm2(*command), commands))
        for answer in answers:
            problem = [ln for ln in answer.stderr.splitlines() if ln.strip()]
            assert answer.returncode == 2, answer.stdout + answer.stderr
            assert len(problem) == 1 and "'A'" in problem[0] and "unreachable" in problem[0], answer.stderr
    finally:
        proc.close()
