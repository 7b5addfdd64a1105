"""``mm2 verify`` throughput: the Spark job on ``local[2]`` vs a raw consumer reading both sides.

    python -m bench.verify_throughput                          # 600,000 records of 512 B over 4 partitions
    python -m bench.verify_throughput --records 20000 --size 100 --rounds 1

On embedded brokers started here (and killed at the end): source A with a topic, target B with the remote
topic holding records written before mirroring (target offsets shifted) and then a copy of every source
record (same partition, key, value, headers, timestamp), and the flow state a mirror leaves behind: the
committed MirrorSource offsets in ``mm2-offsets.A.internal`` on B and the offset mappings on A.

(a) raw: one confluent-kafka consumer reads every source record, then every target record (batch
    ``consume`` with big fetches and short waits, nothing else done with them): the floor of any
    verification that reads both sides.
(b) the verify job (:func:`mirror.jobs.verify.job.run_job`) on a running SparkSession: plans the chunks,
    executors read both sides, digest and compare; the result must be equal over every record.

Both are timed in the same run; the rates are source records (and their value bytes) verified per
second. Target (issue "mm2 verify"): (b) >= 0.5 x (a). The best of ``--rounds`` rounds is reported
(a shared 2-core machine: slow rounds measure the neighbours).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from bench import raw_clients
from bench._harness import best, broker_rss_line, embedded_clusters, ratio_line
from bench.raw_clients import Rate
from connect_core.storage.offset_storage import serialize_offset_key, serialize_offset_value
from embedded_kafka import EmbeddedKafkaCluster, unique_name
from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.driver.driver import make_config
from mirror.jobs.spark import spark_context
from mirror.jobs.verify.job import run_job
from mirror.jobs.verify.logic import DEFAULT_CHUNK_RECORDS

TARGET_RATIO = 0.5


def flow_state(
    a: EmbeddedKafkaCluster, b: EmbeddedKafkaCluster, topic: str, partitions: int, per_partition: int, shift: list[int]
) -> None:
    """What a mirror that copied everything leaves behind: committed offsets on B, offset mappings on A."""
    b.create_topic("mm2-offsets.A.internal", config={"cleanup.policy": "compact"})
    b.produce(
        "mm2-offsets.A.internal",
        [
            {
                "key": serialize_offset_key("MirrorSourceConnector", {"cluster": "A", "partition": p, "topic": topic}),
                "value": serialize_offset_value({"offset": per_partition - 1}),
            }
            for p in range(partitions)
        ],
    )
    a.create_topic("mm2-offset-mappings.B.internal", config={"cleanup.policy": "compact"})
    a.produce(
        "mm2-offset-mappings.B.internal",
        [
            {"key": m.record_key(), "value": m.record_value(), "partition": 0}
            for p in range(partitions)
            for m in [OffsetMapping(TopicPartition(topic, p), 0, 0, shift[p], per_partition)]
        ],
    )


def raw_consume(bootstrap: str, topic: str, partitions: int, count: int) -> Rate:
    """``raw_clients.consume`` without its tail wait: batch ``consume`` with a short timeout, so the last,
    partial batch does not wait up to a second for records that will never come (which would make the
    yardstick look slower than a raw reader is), and big fetches."""
    return raw_clients.consume(
        bootstrap,
        topic,
        partitions,
        count,
        wait_s=0.05,
        **{"max.partition.fetch.bytes": 8 * 1024 * 1024, "fetch.max.bytes": 64 * 1024 * 1024},
    )


def raw_both_sides(
    a: EmbeddedKafkaCluster,
    b: EmbeddedKafkaCluster,
    topic: str,
    remote: str,
    partitions: int,
    records: int,
    shifted: int,
) -> Rate:
    source = raw_consume(a.bootstrap_servers, topic, partitions, records)
    target = raw_consume(b.bootstrap_servers, remote, partitions, records + shifted)
    return Rate(records, source.bytes, source.seconds + target.seconds)


def run(records: int, size: int, partitions: int, rounds: int, master: str, chunk_records: int) -> int:
    per_partition = records // partitions
    records = per_partition * partitions
    with embedded_clusters("A", "B") as (a, b):
        topic = unique_name("bench-orders")
        remote = f"A.{topic}"
        shift = [7 * p for p in range(partitions)]
        started = time.perf_counter()
        a.create_topic(topic, partitions=partitions)
        b.create_topic(remote, partitions=partitions)
        b.produce(
            remote, [{"value": b"before-mirroring", "partition": p} for p in range(partitions) for _ in range(shift[p])]
        )
        produced = raw_clients.produce(a.bootstrap_servers, topic, partitions, records, size)
        copied = raw_clients.naive_copy(a.bootstrap_servers, b.bootstrap_servers, topic, remote, partitions, records)
        flow_state(a, b, topic, partitions, per_partition, shift)
        print(
            f"{'setup':<28}: {records} records of {size} B on {partitions} partitions produced "
            f"({produced.records_per_s:,.0f} rec/s) and copied ({copied.records_per_s:,.0f} rec/s) in "
            f"{time.perf_counter() - started:.1f} s",
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
        raw_rates: list[Rate] = []
        job_rates: list[Rate] = []
        t0 = time.perf_counter()
        with spark_context("bench verify", master) as spark:
            session_s = time.perf_counter() - t0
            for _ in range(rounds):
                raw_rates.append(raw_both_sides(a, b, topic, remote, partitions, records, sum(shift)))
                t1 = time.perf_counter()
                result = run_job(config, "A", "B", topics=topic, spark=spark, chunk_records=chunk_records)
                elapsed = time.perf_counter() - t1
                totals = result.totals()
                if not result.equal or totals["compared"] != records or totals["pending"]:
                    raise AssertionError(f"verification of an identical mirror: {result.to_json()}")
                job_rates.append(Rate(records, result.source_bytes, elapsed))
        raw, job = best(raw_rates), best(job_rates)
        print(f"{'(a) raw consume A+B':<28}: {raw}")
        print(f"{'(b) verify ' + master:<28}: {job}")
        print(f"{'SparkSession start':<28}: {session_s:.1f} s (not in (b))")
        print(ratio_line("ratio verify/raw", job, raw))
        ratio = job.records_per_s / raw.records_per_s if raw.records_per_s else 0.0
        ok = "met" if ratio >= TARGET_RATIO else "MISSED"
        print(f"target ratio >= {TARGET_RATIO} ({records} x {size} B, {partitions} p): {ratio:.2f} {ok}")
        print(broker_rss_line([a, b]))
    return 0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.verify_throughput",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--records", type=int, default=600_000, help="source records in all")
    p.add_argument("--size", type=int, default=512, help="value bytes per record")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--rounds", type=int, default=3, help="rounds of (a) and (b); the best of each is reported")
    p.add_argument("--chunk-records", type=int, default=DEFAULT_CHUNK_RECORDS, help="source records per chunk")
    p.add_argument("--master", default="local[2]", help="Spark master")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return run(args.records, args.size, args.partitions, args.rounds, args.master, args.chunk_records)


if __name__ == "__main__":
    sys.exit(main())
