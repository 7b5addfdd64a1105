"""``mm2 translate-offsets`` as a Spark job (local[2]) against two real clusters mirrored by the real source task.

The remote topic held records before mirroring began (a different number per partition), so target
offsets are shifted; half of each source partition was written in transactions, whose commit markers
leave upstream offset gaps; and the mirror "crashed" once (stored offsets older than what it had
copied), so the second half of each partition was copied twice. 60 groups sit at random positions
over 4 partitions on the source (including the very start and the end). The dry run writes nothing;
``--apply`` writes every group-partition, after which a consumer of each group on the target reads
exactly the record its source position pointed at (at its newest copy); a group with a live member on
the target is reported and left alone; a target group ahead of the translation is not moved
backwards unless forced; failback (B->A) returns each group to the first record it had not consumed
on the original topic. One SparkContext serves the whole module.
"""

from __future__ import annotations

import base64
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Consumer, Producer

from connect_core.herder.standalone import build_standalone_herder
from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.offset_mappings import decode_mappings
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig
from mirror.jobs.spark import spark_context
from mirror.jobs.translate.job import run_job
from mirror.jobs.translate.logic import GroupPlan
from tests.integration.mirror.test_mirror_standalone import connector_config, worker_props

pytestmark = [pytest.mark.integration, pytest.mark.spark]

NameFn = Callable[[str], str]
PARTITIONS = 4
PER_PARTITION = 80  # plain records per partition, then TXN_RECORDS more in transactions (commit markers: gaps)
TXNS, PER_TXN = 8, 5
GROUPS = 60


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with spark_context("mm2-translate-offsets-tests", "local[2]") as session:
        yield session


def mm2_config(a: KafkaCluster, b: KafkaCluster) -> MirrorMakerConfig:
    return make_config(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": a.bootstrap_servers,
            "B.bootstrap.servers": b.bootstrap_servers,
            "A->B.enabled": "true",
            "admin.timeout.ms": "15000",
        }
    )


def value(partition: int, offset: int) -> bytes:
    return f"p{partition}-v{offset}".encode()


def rewind_stored_offsets(path: Path, topic: str, to: dict[int, int]) -> None:
    """A crash before the last offset flush: the stored source offsets are older than what was copied."""
    doc = json.loads(path.read_text())
    for entry in doc["entries"]:
        key = json.loads(base64.b64decode(entry[0]))
        if entry[1] is not None and key[1]["topic"] == topic:
            entry[1] = base64.b64encode(json.dumps({"offset": to[key[1]["partition"]]}).encode()).decode()
    path.write_text(json.dumps(doc))


@dataclass
class Mirrored:
    shift: dict[int, int]  # records in the remote topic before mirroring, per partition
    offsets: dict[int, list[int]]  # source offsets holding records (transaction markers leave gaps)
    resent: dict[int, int]  # index of the first record copied twice (after the crash), per partition

    def target_offset(self, p: int, pos: int) -> int:
        """Where a group at source offset ``pos`` resumes: the newest copy of the first record at or after it."""
        offsets, n, k = self.offsets[p], len(self.offsets[p]), self.resent[p]
        i = next((i for i, o in enumerate(offsets) if o >= pos), n)
        return self.shift[p] + (i if i < k else n + i - k)

    def end(self, p: int) -> int:
        return self.target_offset(p, self.offsets[p][-1] + 1)


def mirrored(a: KafkaCluster, b: KafkaCluster, topic: str, tmp_path: Path) -> Mirrored:
    """Mirror ``topic`` A->B with the real source task until every record is mapped, crash (stored offsets
    rewound), mirror again: the records after the stored offsets are copied twice."""
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=PARTITIONS)
    b.create_topic(remote, partitions=PARTITIONS)
    shift = {p: 5 + 7 * p for p in range(PARTITIONS)}
    b.produce(
        remote, [{"value": b"before-mirroring", "partition": p} for p in range(PARTITIONS) for _ in range(shift[p])]
    )
    a.produce(
        topic,
        [
            {"key": f"k{i}".encode(), "value": value(p, i), "partition": p}
            for i in range(PER_PARTITION)
            for p in range(PARTITIONS)
        ],
    )
    producer = Producer(
        {
            "bootstrap.servers": a.bootstrap_servers,
            "transactional.id": f"{topic}-txn",
            "linger.ms": 0,
            "allow.auto.create.topics": False,
        }
    )
    producer.init_transactions(15)
    for t in range(TXNS):
        producer.begin_transaction()
        for p in range(PARTITIONS):
            for j in range(PER_TXN):
                producer.produce(topic, f"p{p}-txn{t}-{j}".encode(), partition=p)  # every value unique
        producer.commit_transaction(15)
    producer.flush(15)
    offsets = {p: [m.offset() for m in msgs] for p, msgs in a.read_all(topic).items()}
    assert all(len(o) == PER_PARTITION + TXNS * PER_TXN and o[-1] > len(o) for o in offsets.values())

    result = Mirrored(shift, offsets, {p: len(o) // 2 for p, o in offsets.items()})

    def mapped_to_end() -> bool:
        """The newest mapping of every partition reaches the end, and the remote topic holds every copy."""
        if "mm2-offset-mappings.B.internal" not in a.topic_names():
            return False
        last: dict[int, int] = {}
        for m in a.read_all("mm2-offset-mappings.B.internal").get(0, []):
            for mapping in decode_mappings(m.key(), m.value()):
                if mapping.topic_partition.topic == topic and mapping.count:  # runs of records (no trailing gap)
                    last[mapping.topic_partition.partition] = mapping.upstream_end
        counts = {p: len(msgs) for p, msgs in b.read_all(remote).items()}
        return last == {p: o[-1] + 1 for p, o in offsets.items()} and counts == copies

    # Only the source connector runs: no checkpoint task may sync groups behind the job's back.
    offsets_file = tmp_path / "offsets"
    for crashed in (False, True):
        copies = {p: shift[p] + len(o) + (len(o) - result.resent[p] if crashed else 0) for p, o in offsets.items()}
        herder = build_standalone_herder(worker_props(b, offsets_file), worker_id="A->B")
        herder.start()
        try:
            herder.put_connector_config(
                "MirrorSourceConnector", connector_config("MirrorSourceConnector", a, b, "A", "B"), True
            )
            wait_for(mapped_to_end, 60, 0.5, "mirror did not map every record")
        finally:
            herder.stop()
        rewind_stored_offsets(offsets_file, topic, {p: o[result.resent[p] - 1] for p, o in offsets.items()})
    return result


def target_offsets(b: KafkaCluster, groups: list[str]) -> dict[str, dict[TopicPartition, int]]:
    admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 15)
    return {
        g: {tp: o.offset for tp, o in offsets.items() if o is not None}
        for g, offsets in admin.list_consumer_group_offsets(groups).items()
    }


def first_records(b: KafkaCluster, group: str, topic: str) -> dict[int, bytes | None]:
    """What a consumer of ``group`` on B reads first on each partition, resuming at its committed offsets."""
    consumer = Consumer(
        {
            "bootstrap.servers": b.bootstrap_servers,
            "group.id": group,
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "fetch.wait.max.ms": 100,
            "allow.auto.create.topics": False,
        }
    )
    try:
        committed = consumer.committed([ClientPartition(topic, p) for p in range(PARTITIONS)], timeout=10)
        assert all(tp.offset >= 0 for tp in committed), committed
        consumer.assign(committed)
        first: dict[int, bytes | None] = {}

        def done() -> bool:
            msg = consumer.poll(0.2)
            if msg is not None and msg.partition() not in first:
                first[msg.partition()] = None if msg.error() is not None else msg.value()  # error: EOF
            return len(first) == PARTITIONS

        wait_for(done, 20, 0.0, f"group {group} read nothing on some partition: {first}")
        return first
    finally:
        consumer.close()


def rows(plans: list[GroupPlan]) -> dict[tuple[str, int], Any]:
    return {(p.group, r.partition): r for p in plans for r in p.partitions}


def test_translate_apply_failback(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path, spark: Any
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    remote = f"A.{topic}"
    m = mirrored(a, b, topic, tmp_path)
    offsets = m.offsets
    end = {p: o[-1] + 1 for p, o in offsets.items()}
    source_values = {(m.partition(), m.offset()): m.value() for msgs in a.read_all(topic).values() for m in msgs}

    def first_at_or_after(p: int, pos: int) -> int | None:
        """Index of the first record at or after ``pos``; None at the end."""
        return next((i for i, o in enumerate(offsets[p]) if o >= pos), None)

    expected = m.target_offset

    rng = random.Random(13)
    prefix = unique_name("app")
    groups = [f"{prefix}-{i:02d}" for i in range(GROUPS)]
    live, ahead = f"{prefix}-live", f"{prefix}-ahead"
    positions: dict[str, dict[int, int]] = {}
    source_admin = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 15)
    for i, group in enumerate([*groups, live, ahead]):
        # the first and second groups sit at the very start and the very end of every partition
        pos = {p: 0 if i == 0 else end[p] if i == 1 else rng.randint(0, end[p]) for p in range(PARTITIONS)}
        positions[group] = pos
        source_admin.alter_consumer_group_offsets(
            group, {TopicPartition(topic, p): OffsetAndMetadata(o) for p, o in pos.items()}
        )
    target_admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 15)
    ahead_offsets = {TopicPartition(remote, p): OffsetAndMetadata(m.end(p)) for p in range(PARTITIONS)}
    assert all(e is None for e in target_admin.alter_consumer_group_offsets(ahead, ahead_offsets).values())
    config = mm2_config(a, b)
    pattern = f"{prefix}-.*"

    # A live member of `live` on the target.
    member = Consumer(
        {
            "bootstrap.servers": b.bootstrap_servers,
            "group.id": live,
            "session.timeout.ms": 6000,
            "enable.auto.commit": False,
            "allow.auto.create.topics": False,
        }
    )
    member.subscribe([remote])
    try:
        wait_for(lambda: (member.poll(0.2), member.assignment())[1], 30, 0.0, "live member never joined")
        wait_for(
            lambda: (
                MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 15).consumer_group_states([live]).get(live)
                == "STABLE"
            ),
            20,
            0.2,
            "live group not stable",
        )

        # Dry run: every group-partition translated exactly; nothing written.
        dry = run_job(config, "A", "B", pattern, spark=spark, groups_per_task=16)
        assert {p.group for p in dry} == {*groups, live, ahead}
        dry_rows = rows(dry)
        for group in [*groups, live, ahead]:
            for p in range(PARTITIONS):
                row = dry_rows[(group, p)]
                assert (row.target_topic, row.target_offset, row.reread) == (
                    remote,
                    expected(p, positions[group][p]),
                    0,
                ), (group, p, row)
                want = "active-on-target" if group == live else "ok"
                if group == ahead:
                    want = "ok" if first_at_or_after(p, positions[group][p]) is None else "behind-target"
                assert row.status == want, (group, p, row)
                assert not row.applied
        assert target_offsets(b, [*groups, live]) == {g: {} for g in [*groups, live]}

        # Apply: every group-partition written except the live group's and the ahead group's.
        applied = run_job(config, "A", "B", pattern, apply=True, spark=spark, groups_per_task=16)
        applied_rows = rows(applied)
        assert all(applied_rows[(g, p)].applied for g in groups for p in range(PARTITIONS))
        assert not any(applied_rows[(g, p)].applied for g in (live, ahead) for p in range(PARTITIONS))
        assert target_offsets(b, [live])[live] == {}  # left alone
        assert target_offsets(b, [ahead])[ahead] == {tp: o.offset for tp, o in ahead_offsets.items()}
    finally:
        member.close()

    # Failover: each group's consumer on the target reads exactly the record its source position pointed at.
    for group in groups:
        got = first_records(b, group, remote)
        want: dict[int, bytes | None] = {}
        for p in range(PARTITIONS):
            i = first_at_or_after(p, positions[group][p])
            want[p] = None if i is None else source_values[(p, offsets[p][i])]
        assert got == want, group

    # --force moves the ahead group backwards to its translation.
    forced = run_job(config, "A", "B", f"{ahead}", apply=True, force=True, spark=spark)
    assert all(r.applied for r in forced[0].partitions)
    assert target_offsets(b, [ahead])[ahead] == {
        TopicPartition(remote, p): expected(p, positions[ahead][p]) for p in range(PARTITIONS)
    }

    # Failback B->A: the groups' target positions go back to the original topic at their source positions.
    back = rows(run_job(config, "B", "A", pattern, spark=spark))
    for group in groups:
        for p in range(PARTITIONS):
            row = back[(group, p)]
            # back to the first record the group had not consumed (a position on a marker moves past it)
            i = first_at_or_after(p, positions[group][p])
            want_back = end[p] if i is None else offsets[p][i]
            assert (row.topic, row.target_topic, row.target_offset, row.reread) == (remote, topic, want_back, 0), (
                group,
                p,
                row,
            )
            assert row.status == "ok"  # at or after the source group's own commit: never backwards


def test_failback_from_the_other_sides_checkpoints_when_that_side_is_gone(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any
) -> None:
    """Failback B->A with B gone: groups that consumed ``A.orders`` on B go back to ``orders`` on A at the
    positions the B->A flow's checkpoints (in ``B.checkpoints.internal`` on A) recorded, with their ages."""
    a, b = two_clusters
    topic, group = unique_name("orders"), unique_name("g")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [{"value": value(p, i), "partition": p} for p in range(2) for i in range(50)])
    a.create_topic("B.checkpoints.internal")
    now = int(time.time() * 1000)
    # as the B->A checkpoint task writes them: the group at 30 and 12 of A.orders on B is at 25 and 12 of orders
    checkpoints = [
        (Checkpoint(group, TopicPartition(topic, 0), 30, 25), now - 8000),
        (Checkpoint(group, TopicPartition(topic, 1), 12, 12), now - 3000),
    ]
    a.produce(
        "B.checkpoints.internal",
        [{"key": c.record_key(), "value": c.record_value(), "timestamp": ts, "partition": 0} for c, ts in checkpoints],
    )
    config = make_config(
        {
            "clusters": "A, B",
            "A.bootstrap.servers": a.bootstrap_servers,
            "B.bootstrap.servers": b.bootstrap_servers,
            "A->B.enabled": "true",
            "B->A.enabled": "true",
            "admin.timeout.ms": "15000",
        }
    )
    b.stop()  # SIGKILL: cluster B is gone

    plans = run_job(config, "B", "A", apply=True, spark=spark, timeout_s=2)
    assert [p.group for p in plans] == [group]
    assert plans[0].source_unreachable is not None and "'B' is unreachable" in plans[0].source_unreachable
    rows = [
        (r.topic, r.partition, r.source_offset, r.target_topic, r.target_offset, r.applied) for r in plans[0].partitions
    ]
    assert rows == [(f"A.{topic}", 0, 30, topic, 25, True), (f"A.{topic}", 1, 12, topic, 12, True)]
    ages = [r.checkpoint_age_s for r in plans[0].partitions]
    assert all(age is not None for age in ages) and ages[0] >= 8 and ages[1] >= 3  # type: ignore[operator]
    assert target_offsets(a, [group])[group] == {TopicPartition(topic, 0): 25, TopicPartition(topic, 1): 12}
