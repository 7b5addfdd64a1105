"""Translation after an exactly-once mirror is exact (0 re-read, 0 skipped) for groups anywhere.

``mm2 run`` with ``B.exactly.once.source.support = enabled`` copies two topics of A: one written
plainly, one by a transactional producer (a commit marker after each of its transactions, so upstream
offset gaps). Records arrive in bursts, each copied before the next is written, so every burst is its
own transaction on B too: a COMMIT marker follows each, and the target offsets of consecutive copies
jump over them (the remote partitions also held records before mirroring: target offsets shifted).

Exact means: a group placed at target offset ``t`` reads from B exactly the records it had not
consumed on A - the copies of every source record at or after its committed offset ``o``, nothing
before it (the records before mirroring included). Checked for every source offset of every partition
through the flow's offset mappings, then end to end for groups committed on A at the start, on the
first and the last copy of a target transaction (either side of a marker), mid-transaction, on a
source marker and at the end: ``mm2 translate-offsets``, the live checkpoints on B and the group
offsets synced to B each place them exactly, and every offset sync names the committed copy of its
record. B is read with the suite's read_committed reader. Run on both copy paths (``batch.copy.enabled``):
the record path, and the batch path, where each source batch is one offset sync and mapping run.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import pytest
from confluent_kafka import Producer

from embedded_kafka import KafkaCluster, free_port
from mirror.client.formats import Checkpoint, OffsetSync, TopicPartition
from mirror.connectors.offset_mapping_index import OffsetMappingIndex
from tests.e2e.mm2_helpers import (
    CHECKPOINTS,
    GROUP_SYNC,
    NEW_GROUPS,
    Mm2Process,
    commit_group,
    eventually,
    group_offsets,
    mm2_properties,
    published_through,
    status_json,
    write_properties,
)
from tests.e2e.mm2_helpers import mm2_command as mm2
from tests.oracle.committed_reader import PartitionLog, read_topic_committed

pytestmark = [pytest.mark.e2e, pytest.mark.spark]

NameFn = Callable[[str], str]
PARTITIONS = 2
BURSTS = 8
PER_BURST = 5  # records per partition per burst
SHIFT = 3  # records each remote partition held before mirroring
MAPPINGS = "mm2-offset-mappings.B.internal"
SYNCS = "mm2-offset-syncs.B.internal"
STARTUP_S = 120.0


@dataclass
class Layout:
    """One partition after the mirror: source offsets of its records, target offsets of their copies."""

    source: list[int]  # offsets of the committed records on A, in order
    source_end: int  # A's high watermark (after the last marker of a transactional source)
    copies: list[int]  # copies[i]: target offset of the copy of source[i]
    first_copy_floor: int  # target offset of the last record on B that is not a copy (-1: none)
    target_end: int
    markers: list[int]  # target offsets of the COMMIT markers between copies

    def exact(self, source_offset: int, target_offset: int | None) -> bool:
        """A group at ``target_offset`` reads exactly the copies of the records at or after ``source_offset``."""
        if target_offset is None:
            return False
        k = bisect_left(self.source, source_offset)  # first record the group had not consumed
        below = self.copies[k - 1] if k else self.first_copy_floor
        above = self.copies[k] if k < len(self.copies) else self.target_end
        return below < target_offset <= above

    def synced(self, sync: OffsetSync) -> bool:
        """The sync's downstream offset is that of the committed copy of its upstream record."""
        i = bisect_left(self.source, sync.upstream_offset)
        return (
            i < len(self.source) and self.source[i] == sync.upstream_offset and self.copies[i] == sync.downstream_offset
        )


def layout(a_log: PartitionLog, b_log: PartitionLog) -> Layout:
    where = {r.value: r.offset for r in b_log.committed}
    source = [r.offset for r in a_log.committed]
    copies = [where[r.value] for r in a_log.committed]
    pre = [r.offset for r in b_log.committed if r.value == b"before-mirroring"]
    # every committed record on B is a record before mirroring or the copy of one source record, in order
    assert len(b_log.committed) == len(pre) + len(copies) and copies == sorted(copies)
    assert b_log.aborted == 0 and b_log.open == 0
    return Layout(
        source,
        a_log.high_watermark,
        copies,
        max(pre, default=-1),
        b_log.high_watermark,
        [offset for offset, _pid, commit in b_log.markers if commit],
    )


def write_burst(a: KafkaCluster, plain: str, txn: Producer, transactional: str, burst: int) -> None:
    a.produce(
        plain,
        [
            {"value": f"{plain}-{burst}-{p}-{i}".encode(), "partition": p}
            for p in range(PARTITIONS)
            for i in range(PER_BURST)
        ],
    )
    txn.begin_transaction()
    for p in range(PARTITIONS):
        for i in range(PER_BURST):
            txn.produce(transactional, f"{transactional}-{burst}-{p}-{i}".encode(), partition=p)
    txn.commit_transaction(30)


def copied(b: KafkaCluster, remote: str, count: int) -> bool:
    if remote not in b.topic_names():
        return False
    return all(len(log.committed) == SHIFT + count for log in read_topic_committed(b, remote).values())


def latest_checkpoints(b: KafkaCluster) -> dict[tuple[str, str, int], int]:
    """(group, source topic, partition) -> downstream offset of its newest checkpoint on B."""
    latest: dict[tuple[str, str, int], int] = {}
    if "A.checkpoints.internal" in b.topic_names():
        for log in read_topic_committed(b, "A.checkpoints.internal").values():
            for r in log.committed:
                cp = Checkpoint.decode(r.key, r.value)
                tp = cp.topic_partition  # the remote topic's
                latest[(cp.consumer_group_id, tp.topic.removeprefix("A."), tp.partition)] = cp.downstream_offset
    return latest


def group_positions(layouts: dict[tuple[str, int], Layout], txn_topic: str) -> dict[str, dict[tuple[str, int], int]]:
    """Where each group stops on A (per source topic-partition), chosen from where the copies landed on B."""

    def around_marker(lay: Layout, before: bool) -> int:
        # a marker in the middle: the source record copied right before it, or right after it
        marker = lay.markers[len(lay.markers) // 2]
        i = lay.copies.index(marker - 1) if before else lay.copies.index(marker + 1)
        return lay.source[i]

    def mid_transaction(lay: Layout) -> int:
        # a copy with copies right before and after it, the one nearest the middle
        inside = [
            i
            for i in range(1, len(lay.copies) - 1)
            if lay.copies[i] - 1 == lay.copies[i - 1] and lay.copies[i] + 1 == lay.copies[i + 1]
        ]
        return lay.source[min(inside, key=lambda i: abs(i - len(lay.copies) // 2))]

    def on_source_marker(lay: Layout) -> int:
        gaps = [lay.source[i] + 1 for i in range(len(lay.source) - 1) if lay.source[i + 1] > lay.source[i] + 1]
        return gaps[len(gaps) // 2]

    kinds: dict[str, Callable[[Layout], int]] = {
        "at-start": lambda lay: 0,
        "last-copy-before-a-marker": lambda lay: around_marker(lay, True),
        "first-copy-after-a-marker": lambda lay: around_marker(lay, False),
        "mid-transaction": mid_transaction,
        "at-the-end": lambda lay: lay.source_end,
    }
    out = {kind: {tp: fn(lay) for tp, lay in layouts.items()} for kind, fn in kinds.items()}
    out["on-a-source-marker"] = {tp: on_source_marker(lay) for tp, lay in layouts.items() if tp[0] == txn_topic}
    return out


@pytest.mark.parametrize("path", ["batch", "record"])
def test_translation_after_an_exactly_once_mirror_is_exact_for_groups_anywhere(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path, path: str
) -> None:
    a, b = two_clusters
    plain, transactional = unique_name("plain"), unique_name("payments")
    topics = (plain, transactional)
    for topic in topics:
        a.create_topic(topic, partitions=PARTITIONS)
        b.create_topic(f"A.{topic}", partitions=PARTITIONS)
        b.produce(
            f"A.{topic}",
            [{"value": b"before-mirroring", "partition": p} for p in range(PARTITIONS) for _ in range(SHIFT)],
        )
    props = mm2_properties(
        {"A": a, "B": b},
        ["A->B"],
        **{
            "topics": f"{plain},{transactional}",
            "A->B.batch.copy.enabled": str(path == "batch").lower(),
            "tasks.max": "1",
            # what this test is about; Apache's dedicated mode needs the internal REST API for it (KIP-710)
            "B.exactly.once.source.support": "enabled",
            "dedicated.mode.enable.internal.rest": "true",
            "listeners": f"http://127.0.0.1:{free_port()}",
            # the groups are committed once the copy is done: found, checkpointed and synced within seconds
            **NEW_GROUPS,
            **CHECKPOINTS,
            **GROUP_SYNC,
        },
    )
    config = write_properties(tmp_path / "mm2.properties", props)
    txn = Producer(
        {
            "bootstrap.servers": a.bootstrap_servers,
            "transactional.id": unique_name("txn"),
            "linger.ms": 0,
            "allow.auto.create.topics": False,
        }
    )
    txn.init_transactions(30)
    proc = Mm2Process(config, log_dir=tmp_path)
    try:
        for burst in range(BURSTS):
            write_burst(a, plain, txn, transactional, burst)
            # each burst copied (committed on B) before the next is written: its own transaction on B
            for topic in topics:
                eventually(
                    partial(copied, b, f"A.{topic}", (burst + 1) * PER_BURST),
                    STARTUP_S,
                    f"burst {burst} of {topic} committed on B",
                    proc,
                )
        flow = next(f for f in status_json(config)["flows"] if f["flow"] == "A->B")
        assert flow["delivery"] == "exactly-once" and flow["copy_path"] == path
        assert ("copy path: batch)" in proc.output()) == (path == "batch"), proc.output()[-3000:]

        a_logs = {t: read_topic_committed(a, t) for t in topics}
        ends = {t: {p: log.high_watermark for p, log in a_logs[t].items()} for t in topics}

        def mapped(topic: str) -> bool | None:
            return published_through(a, MAPPINGS, topic) == ends[topic] or None

        for topic in topics:
            eventually(
                partial(mapped, topic), 30, f"offset mappings through the end of every partition of {topic}", proc
            )
        layouts = {
            (t, p): layout(a_logs[t][p], log) for t in topics for p, log in read_topic_committed(b, f"A.{t}").items()
        }
        for (topic, p), lay in layouts.items():
            # a marker after every burst at least, so translation must step over them to be exact
            assert len(lay.markers) >= BURSTS, (topic, p, lay.markers)
            assert lay.copies[0] == SHIFT and lay.copies[-1] > SHIFT + len(lay.copies) - 1

        # every source offset of every partition, through the flow's offset mappings
        index = OffsetMappingIndex()
        for msgs in a.read_all(MAPPINGS).values():
            for m in msgs:
                index.on_record(m.key(), m.value())
        wrong = {
            (t, p, o): index.translate(TopicPartition(t, p), o)
            for (t, p), lay in layouts.items()
            for o in range(lay.source_end + 1)
            if not lay.exact(o, index.translate(TopicPartition(t, p), o))
        }
        assert not wrong, f"inexact translations (topic, partition, source offset) -> target offset: {wrong}"

        # Kafka's offset syncs (Java MirrorMaker reads them): each names the committed copy of its record
        syncs = [OffsetSync.decode(m.key(), m.value()) for msgs in a.read_all(SYNCS).values() for m in msgs]
        assert {s.topic_partition.topic for s in syncs} == set(topics)
        bad = [s for s in syncs if not layouts[(s.topic_partition.topic, s.topic_partition.partition)].synced(s)]
        assert not bad, bad

        positions = group_positions(layouts, transactional)
        groups = {unique_name(kind): offsets for kind, offsets in positions.items()}
        for group, offsets in groups.items():
            commit_group(a, group, offsets)
        expected = {(g, t, p): o for g, offsets in groups.items() for (t, p), o in offsets.items()}

        def inexact(found: Mapping[tuple[str, str, int], int | None]) -> dict[tuple[str, str, int], int | None]:
            return {k: found.get(k) for k, o in expected.items() if not layouts[k[1:]].exact(o, found.get(k))}

        translated = mm2(
            "translate-offsets", str(config), "--source", "A", "--target", "B", "--json", "--master", "local[1]"
        )
        assert translated.returncode == 0, translated.stdout + translated.stderr
        rows = [
            (g["group"], r)
            for g in json.loads(translated.stdout)["groups"]
            if g["group"] in groups
            for r in g["partitions"]
        ]
        assert len(rows) == len(expected)
        assert all(
            (r["source_offset"], r["reread"], r["status"]) == (expected[(g, r["topic"], r["partition"])], 0, "ok")
            for g, r in rows
        ), rows
        assert not inexact({(g, r["topic"], r["partition"]): r["target_offset"] for g, r in rows}), rows

        def checkpoints_exact() -> bool:
            found = {k: v for k, v in latest_checkpoints(b).items() if k in expected}
            return len(found) == len(expected) and not inexact(found)

        eventually(lambda: checkpoints_exact() or None, 30, "exact checkpoints of every group", proc)

        def synced_exact() -> bool:
            found: dict[tuple[str, str, int], int | None] = {}
            for g in groups:
                for t in topics:
                    found |= {(g, t, p): o for p, o in group_offsets(b, g, f"A.{t}", PARTITIONS).items()}
            return not inexact(found)

        eventually(lambda: synced_exact() or None, 30, "exact group offsets on the target", proc)
    finally:
        assert proc.terminate() == 0, proc.output()[-3000:]
        proc.close()
