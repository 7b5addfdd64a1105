"""``mm2 verify`` as a Spark job (local[2]) against two real clusters mirrored by the real source task.

The mirror is the real MirrorSourceConnector in a standalone herder whose offsets live in the flow's
Kafka offsets topic (``mm2-offsets.A.internal`` on B, as ``mm2 run`` keeps them), so the job reads
exactly what a running flow leaves behind: committed offsets, offset mappings and offset syncs.
Small chunks make every partition span several Spark tasks. One SparkContext serves the module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from connect_core.herder.standalone import build_standalone_herder
from connect_core.storage.offset_storage import serialize_offset_key, serialize_offset_value
from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.driver.driver import make_config
from mirror.driver.maker_config import MirrorMakerConfig
from mirror.driver.status import OffsetFold, read_topic
from mirror.jobs.spark import spark_context
from mirror.jobs.verify.job import run_job
from mirror.jobs.verify.logic import PartitionReport, Verification
from tests.integration.mirror.test_mirror_standalone import connector_config

pytestmark = [pytest.mark.integration, pytest.mark.spark]

NameFn = Callable[[str], str]
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"
OFFSETS_TOPIC = "mm2-offsets.A.internal"


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with spark_context("mm2-verify-tests", "local[2]") as session:
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


def committed(b: KafkaCluster) -> dict[tuple[str, int], int]:
    fold = OffsetFold("A")
    if OFFSETS_TOPIC in b.topic_names():
        read_topic({"bootstrap.servers": b.bootstrap_servers}, OFFSETS_TOPIC, fold.apply, 15)
    return fold.offsets


def mirror(a: KafkaCluster, b: KafkaCluster, topic: str, ends: dict[int, int], **extra: str) -> None:
    """Run the flow's source connector until its committed offsets reach ``ends`` (partition -> end offset)."""
    worker = {
        "bootstrap.servers": b.bootstrap_servers,
        "key.converter": BYTES,
        "value.converter": BYTES,
        "header.converter": BYTES,
        "offset.flush.interval.ms": "300",
        "offset.storage.topic": OFFSETS_TOPIC,
        "offset.storage.replication.factor": "1",
        "offset.storage.partitions": "1",
        "listeners": "http://127.0.0.1:0",
    }
    herder = build_standalone_herder(worker, worker_id="A->B", kafka_offsets=True)
    herder.start()
    want = {(topic, p): end - 1 for p, end in ends.items()}
    try:
        herder.put_connector_config(
            "MirrorSourceConnector",
            connector_config("MirrorSourceConnector", a, b, "A", "B", topics=topic, **extra),
            True,
        )
        wait_for(
            lambda: {k: v for k, v in committed(b).items() if k[0] == topic} == want,
            60,
            0.5,
            f"the flow did not commit {want}",
        )
    finally:
        herder.stop()


def by_partition(result: Verification) -> dict[int, PartitionReport]:
    return {r.partition: r for r in result.partitions}


def kinds(report: PartitionReport) -> tuple[int, int, int, int]:
    return report.compared, report.missing, report.extra, report.mismatched


def records(partition: int, start: int, count: int) -> list[dict[str, Any]]:
    """Keys (some null), values, duplicate headers on some, explicit timestamps."""
    return [
        {
            "key": None if i % 7 == 0 else f"k{i}".encode(),
            "value": f"p{partition}-v{i}".encode(),
            "partition": partition,
            "timestamp": 1_700_000_000_000 + i,
            "headers": [("h", b"x"), ("h", f"{i}".encode())] if i % 3 == 0 else None,
        }
        for i in range(start, start + count)
    ]


def test_shifted_mirror_is_equal_and_unmirrored_records_are_pending(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=3)
    b.create_topic(remote, partitions=3)
    shift = {0: 0, 1: 3, 2: 11}  # the remote topic held records before mirroring: target offsets shifted
    b.produce(remote, [{"value": b"before-mirroring", "partition": p} for p, n in shift.items() for _ in range(n)])
    a.produce(topic, [r for p in range(3) for r in records(p, 0, 150)])
    mirror(a, b, topic, {p: 150 for p in range(3)})

    config = mm2_config(a, b)
    result = run_job(config, "A", "B", topics=topic, spark=spark, chunk_records=40)
    assert result.equal, result.to_json()
    reports = by_partition(result)
    assert {p: kinds(r) for p, r in reports.items()} == {p: (150, 0, 0, 0) for p in range(3)}
    assert all(r.pending == 0 and r.first_difference is None and r.target_topic == remote for r in reports.values())
    assert all(r.chunks == 4 and r.chunks_hashed_equal == 4 for r in reports.values())

    a.produce(topic, records(2, 150, 25))  # the driver is stopped: written, not replicated
    result = run_job(config, "A", "B", topics=topic, spark=spark, chunk_records=40)
    assert result.equal, result.to_json()
    assert {p: (r.compared, r.pending) for p, r in by_partition(result).items()} == {
        0: (150, 0),
        1: (150, 0),
        2: (150, 25),
    }


def test_record_written_into_the_target_is_extra_at_that_partition_only(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [r for p in range(2) for r in records(p, 0, 50)])
    mirror(a, b, topic, {0: 50, 1: 50})
    b.produce(f"A.{topic}", [{"value": b"written-straight-into-the-target", "partition": 1}])
    a.produce(topic, [r for p in range(2) for r in records(p, 50, 20)])  # mirrored after the intruder
    mirror(a, b, topic, {0: 70, 1: 70})

    config = mm2_config(a, b)
    for chunk_records in (30, 50, 1000):  # the intruder inside a chunk, at a chunk's end, one chunk in all
        result = run_job(config, "A", "B", topics=topic, spark=spark, chunk_records=chunk_records)
        assert not result.equal
        reports = by_partition(result)
        assert kinds(reports[0]) == (70, 0, 0, 0) and reports[0].first_difference is None
        assert kinds(reports[1]) == (70, 0, 1, 0), (chunk_records, result.to_json())
        assert reports[1].first_difference == 50  # the source record the intruder precedes


def test_changed_value_is_mismatched_and_dropped_record_is_missing(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    a.create_topic(topic, partitions=2)
    batch = [r for p in range(2) for r in records(p, 0, 60)]
    for r in batch:
        if (r["partition"], r["timestamp"] % 1000) == (0, 17):
            r["headers"] = [("tamper", b"1")]  # the mirror's transform changes this record's value
        if (r["partition"], r["timestamp"] % 1000) == (1, 42):
            r["headers"] = [("drop", b"1")]  # ... and drops this one
    a.produce(topic, batch)
    mirror(
        a,
        b,
        topic,
        {0: 60, 1: 60},
        **{
            "transforms": "tamper,drop",
            "transforms.tamper.type": "tests.integration.mirror.jobs.tamper.TamperValue",
            "transforms.tamper.predicate": "tampered",
            "transforms.drop.type": "org.apache.kafka.connect.transforms.Filter",
            "transforms.drop.predicate": "dropped",
            "predicates": "tampered,dropped",
            "predicates.tampered.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            "predicates.tampered.name": "tamper",
            "predicates.dropped.type": "org.apache.kafka.connect.transforms.predicates.HasHeaderKey",
            "predicates.dropped.name": "drop",
        },
    )
    result = run_job(mm2_config(a, b), "A", "B", topics=topic, spark=spark, chunk_records=25)
    assert not result.equal
    reports = by_partition(result)
    assert kinds(reports[0]) == (60, 0, 0, 1) and reports[0].first_difference == 17, result.to_json()
    assert kinds(reports[1]) == (60, 1, 0, 0) and reports[1].first_difference == 42, result.to_json()


def test_records_resent_after_a_crash_are_extra_and_transaction_gaps_are_no_difference(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any
) -> None:
    a, b = two_clusters
    topic = unique_name("orders")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [r for p in range(2) for r in records(p, 0, 40)])
    producer = Producer(
        {
            "bootstrap.servers": a.bootstrap_servers,
            "transactional.id": f"{topic}-txn",
            "linger.ms": 0,
            "allow.auto.create.topics": False,
        }
    )
    producer.init_transactions(15)
    for t in range(4):  # each commit marker takes an offset: upstream gaps
        producer.begin_transaction()
        for p in range(2):
            for j in range(5):
                producer.produce(topic, f"p{p}-txn{t}-{j}".encode(), partition=p, timestamp=1_700_000_100_000 + j)
        producer.commit_transaction(15)
    producer.flush(15)
    offsets = {p: [m.offset() for m in msgs] for p, msgs in a.read_all(topic).items()}
    ends = {p: o[-1] + 1 for p, o in offsets.items()}
    assert all(end > len(offsets[p]) for p, end in ends.items()), (ends, {p: len(o) for p, o in offsets.items()})
    mirror(a, b, topic, ends)

    # A crash before the last offset flush: the committed offsets are older than what was copied, so the
    # mirror copies the records after them again.
    resume = {0: offsets[0][25], 1: offsets[1][50]}  # first record copied twice, per partition
    b.produce(
        OFFSETS_TOPIC,
        [
            {
                "key": serialize_offset_key("MirrorSourceConnector", {"cluster": "A", "partition": p, "topic": topic}),
                "value": serialize_offset_value({"offset": o - 1}),
            }
            for p, o in resume.items()
        ],
    )
    mirror(a, b, topic, ends)
    copies = {p: len(msgs) for p, msgs in b.read_all(f"A.{topic}").items()}
    duplicates = {p: sum(1 for o in offsets[p] if o >= resume[p]) for p in range(2)}
    assert copies == {p: len(offsets[p]) + duplicates[p] for p in range(2)}

    for chunk_records in (16, 1000):
        result = run_job(mm2_config(a, b), "A", "B", topics=topic, spark=spark, chunk_records=chunk_records)
        reports = by_partition(result)
        assert {p: kinds(r) for p, r in reports.items()} == {
            p: (len(offsets[p]), 0, duplicates[p], 0) for p in range(2)
        }, (chunk_records, result.to_json())
        assert all(r.pending == 0 for r in reports.values())


def test_a_flow_with_only_kafka_offset_syncs_is_aligned_at_its_sync_points(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, spark: Any
) -> None:
    """What Java MirrorMaker leaves behind: no offset mappings, offset syncs every 10 records (partition 1) or,
    after compaction, only the latest one (partition 0). The target held other records before mirroring,
    and one record was written straight into partition 1 between two copies."""
    a, b = two_clusters
    topic = unique_name("orders")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=2)
    b.create_topic(remote, partitions=2)
    a.produce(topic, [r for p in range(2) for r in records(p, 0, 100)])
    shift = {0: 5, 1: 3}
    b.produce(remote, [{"value": f"before-{i}".encode(), "partition": p} for p, n in shift.items() for i in range(n)])
    downstream: dict[tuple[int, int], int] = {}
    for p, msgs in a.read_all(topic).items():
        copies: list[dict[str, Any]] = []
        for m in msgs:
            if p == 1 and m.offset() == 60:
                copies.append({"value": b"written-straight-into-the-target", "partition": 1})
            downstream[(p, m.offset())] = shift[p] + len(copies)
            copies.append(
                {
                    "key": m.key(),
                    "value": m.value(),
                    "headers": m.headers(),
                    "timestamp": m.timestamp()[1],
                    "partition": p,
                }
            )
        b.produce(remote, copies)
    syncs = [OffsetSync(TopicPartition(topic, 0), 99, downstream[(0, 99)])]
    syncs += [OffsetSync(TopicPartition(topic, 1), u, downstream[(1, u)]) for u in [*range(0, 100, 10), 99]]
    a.create_topic("mm2-offset-syncs.B.internal", 1, {"cleanup.policy": "compact"})
    a.produce(
        "mm2-offset-syncs.B.internal",
        [{"key": s.record_key(), "value": s.record_value(), "partition": 0} for s in syncs],
    )
    b.create_topic(OFFSETS_TOPIC, 1, {"cleanup.policy": "compact"})
    b.produce(
        OFFSETS_TOPIC,
        [
            {
                "key": serialize_offset_key("MirrorSourceConnector", {"cluster": "A", "partition": p, "topic": topic}),
                "value": serialize_offset_value({"offset": 99}),
            }
            for p in range(2)
        ],
    )

    result = run_job(mm2_config(a, b), "A", "B", topics=topic, spark=spark, chunk_records=25)
    reports = by_partition(result)
    assert kinds(reports[0]) == (100, 0, 0, 0) and reports[0].chunks == 2, result.to_json()
    assert kinds(reports[1]) == (100, 0, 1, 0) and reports[1].first_difference == 60, result.to_json()
    assert reports[1].chunks == 4  # cut at the syncs 30, 60 and 90
