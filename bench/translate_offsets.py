"""Offset translation for many groups: the ``mm2 translate-offsets`` Spark job vs Kafka's per-group loop.

    python -m bench.translate_offsets                       # 10,000 groups x 4 partitions, Spark local[2]
    python -m bench.translate_offsets --groups 500 --loop-sample 10

On embedded brokers started here (and killed at the end): source A with a 4-partition topic, target B
with the remote topic shifted by records written before mirroring, the offset mappings the source
task writes for a contiguous copy, every group committed on A at a random position, and the
checkpoints the checkpoint task would have emitted for them on B (``A.checkpoints.internal``).

(a) the Spark job (:func:`mirror.jobs.translate.job.run_job`, dry run) on ``local[2]``: lists the
    groups and their offsets on A, reads the translation data, describes the groups on B and plans
    every partition; timed with the SparkSession start, and without it.
(b) Kafka's ``RemoteClusterUtils.translateOffsets`` loop, done as Java does it: per group a new
    consumer assigned to partition 0 of the checkpoints topic, read from the beginning to the end,
    keeping that group's checkpoints. It is timed on ``--loop-sample`` groups and projected to all
    (reading the whole topic per group is quadratic: running it for 10,000 groups takes hours).

Both answers are checked: every job row is ``ok`` with 0 re-read at the expected offset, and the loop's
sampled groups agree with it. Target (issue "exact offset translation"): (a) < 60 s for 10,000 groups.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Sequence
from concurrent.futures import Future

from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, KafkaError
from confluent_kafka.admin import AdminClient

from bench import raw_clients
from bench._harness import broker_rss_line, embedded_clusters
from connect_core.kafka.types import ClientPartition
from embedded_kafka import EmbeddedKafkaCluster, unique_name
from mirror.client.formats import Checkpoint, OffsetAndMetadata, TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.driver.driver import make_config
from mirror.jobs.spark import spark_context
from mirror.jobs.translate.job import run_job
from mirror.jobs.translate.logic import GroupPlan

PARTITIONS = 4
TARGET_S = 60.0


def commit_groups(a: EmbeddedKafkaCluster, topic: str, positions: dict[str, list[int]]) -> None:
    """Commit every group's positions on A, many requests in flight at once."""
    admin = AdminClient({"bootstrap.servers": a.bootstrap_servers})
    pending: list[Future[object]] = []
    for group, pos in positions.items():
        tps = [ClientPartition(topic, p, o) for p, o in enumerate(pos)]
        pending.extend(
            admin.alter_consumer_group_offsets([ConsumerGroupTopicPartitions(group, tps)], request_timeout=60).values()
        )
        if len(pending) >= 500:
            for f in pending:
                f.result(timeout=120)
            pending.clear()
    for f in pending:
        f.result(timeout=120)


def write_records(cluster: EmbeddedKafkaCluster, topic: str, records: list[tuple[bytes, bytes]]) -> None:
    producer = cluster.producer(**{"linger.ms": 20, "batch.size": 1_000_000})
    for key, value in records:
        while True:
            try:
                producer.produce(topic, value, key, partition=0)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)


def remote_consumer_offsets(bootstrap: str, topic: str, group: str) -> dict[TopicPartition, OffsetAndMetadata]:
    """Kafka's ``MirrorClient.remoteConsumerOffsets``: read the whole checkpoints topic for one group."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "bench-loop",
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "allow.auto.create.topics": False,
        }
    )
    out: dict[TopicPartition, OffsetAndMetadata] = {}
    try:
        consumer.assign([ClientPartition(topic, 0, 0)])
        while True:
            first = consumer.poll(10.0)  # as Java's poll: returns as soon as records are there
            if first is None:
                raise TimeoutError("checkpoints topic not read to its end")
            msgs = [first, *consumer.consume(10_000, 0)]
            done = False
            for msg in msgs:
                err = msg.error()
                if err is not None:
                    if err.code() == KafkaError._PARTITION_EOF:
                        done = True
                    continue
                cp = Checkpoint.decode(msg.key(), msg.value())
                if cp.consumer_group_id == group:
                    out[cp.topic_partition] = cp.offset_and_metadata
            if done:
                return out
    finally:
        consumer.close()


def run(groups: int, records: int, loop_sample: int, master: str, seed: int) -> int:
    rng = random.Random(seed)
    with embedded_clusters("A", "B") as (a, b):
        topic = unique_name("bench-orders")
        remote = f"A.{topic}"
        shift = [3 + 11 * p for p in range(PARTITIONS)]
        started = time.perf_counter()
        a.create_topic(topic, partitions=PARTITIONS)
        b.create_topic(remote, partitions=PARTITIONS)
        raw_clients.produce(a.bootstrap_servers, topic, PARTITIONS, records * PARTITIONS, 100)
        raw_clients.produce(b.bootstrap_servers, remote, PARTITIONS, (records + max(shift)) * PARTITIONS, 100)
        a.create_topic("mm2-offset-mappings.B.internal", config={"cleanup.policy": "compact"})
        mappings = [OffsetMapping(TopicPartition(topic, p), 0, 0, shift[p], records) for p in range(PARTITIONS)]
        a.produce(
            "mm2-offset-mappings.B.internal",
            [{"key": m.record_key(), "value": m.record_value(), "partition": 0} for m in mappings],
        )
        names = [f"bench-group-{i:05d}" for i in range(groups)]
        positions = {g: [rng.randint(0, records) for _ in range(PARTITIONS)] for g in names}
        commit_groups(a, topic, positions)
        checkpoints_topic = "A.checkpoints.internal"
        b.create_topic(checkpoints_topic, config={"cleanup.policy": "compact"})
        write_records(
            b,
            checkpoints_topic,
            [
                (cp.record_key(), cp.record_value())
                for g, pos in positions.items()
                for p, o in enumerate(pos)
                for cp in [Checkpoint(g, TopicPartition(remote, p), o, shift[p] + o)]
            ],
        )
        print(
            f"{'setup':<28}: {groups} groups x {PARTITIONS} partitions committed, "
            f"{groups * PARTITIONS} checkpoints written in {time.perf_counter() - started:.1f} s",
            flush=True,
        )

        config = make_config(
            {
                "clusters": "A, B",
                "A.bootstrap.servers": a.bootstrap_servers,
                "B.bootstrap.servers": b.bootstrap_servers,
                "A->B.enabled": "true",
            }
        )
        t0 = time.perf_counter()
        with spark_context("bench translate-offsets", master) as spark:
            t1 = time.perf_counter()
            plans = run_job(config, "A", "B", "bench-group-.*", spark=spark)
            t2 = time.perf_counter()
        check_job(plans, positions, shift, remote)
        job_s, with_session_s = t2 - t1, t2 - t0
        print(
            f"{'(a) spark job':<28}: {groups} groups in {job_s:.1f} s ({groups / job_s:,.0f} groups/s), "
            f"{with_session_s:.1f} s with the SparkSession start ({master})",
            flush=True,
        )

        sample = rng.sample(names, min(loop_sample, groups))
        t3 = time.perf_counter()
        for g in sample:
            got = remote_consumer_offsets(b.bootstrap_servers, checkpoints_topic, g)
            want = {TopicPartition(remote, p): OffsetAndMetadata(shift[p] + o) for p, o in enumerate(positions[g])}
            if got != want:
                raise AssertionError(f"loop translation of {g}: {got} != {want}")
        loop_s = time.perf_counter() - t3
        per_group = loop_s / len(sample)
        projected = per_group * groups
        print(
            f"{'(b) per-group loop':<28}: {len(sample)} groups in {loop_s:.1f} s ({per_group * 1000:.0f} ms/group); "
            f"projected {groups} groups: {projected:.0f} s",
            flush=True,
        )
        print(f"{'ratio loop/job':<28}: {projected / with_session_s:.1f}")
        ok = "met" if with_session_s < TARGET_S else "MISSED"
        print(f"target < {TARGET_S:.0f} s for {groups} groups (job with session start): {with_session_s:.1f} s {ok}")
        print(broker_rss_line([a, b]))
    return 0


def check_job(plans: list[GroupPlan], positions: dict[str, list[int]], shift: list[int], remote: str) -> None:
    if {p.group for p in plans} != set(positions):
        raise AssertionError(f"job planned {len(plans)} groups, expected {len(positions)}")
    for plan in plans:
        for row in plan.partitions:
            want = shift[row.partition] + positions[plan.group][row.partition]
            if (row.status, row.target_topic, row.target_offset, row.reread) != ("ok", remote, want, 0):
                raise AssertionError(f"job row of {plan.group}: {row}")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.translate_offsets",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--groups", type=int, default=10_000, help="consumer groups (each on 4 partitions)")
    p.add_argument("--records", type=int, default=1000, help="records per partition (groups sit in 0..records)")
    p.add_argument("--loop-sample", type=int, default=20, help="groups the per-group loop is timed on")
    p.add_argument("--master", default="local[2]", help="Spark master")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run(args.groups, args.records, args.loop_sample, args.master, args.seed)


if __name__ == "__main__":
    sys.exit(main())
