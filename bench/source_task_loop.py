"""Source-task loop benchmark: our Worker driving a trivial in-memory connector vs a bare produce loop.

    python -m bench.source_task_loop                      # 200k x 100 B and 100k x 1 KB, 4 partitions
    python -m bench.source_task_loop --records 50000 --size 1024 --partitions 8 --rounds 3

The connector's one task generates N records of S bytes (the same keys, values and round-robin
partitions as ``bench.raw_clients.produce``), one source partition per Kafka partition with an
increasing source offset. It runs in a StandaloneHerder (Worker + WorkerSourceTask: poll ->
transforms -> converters -> produce -> acks -> offset commit); the clock runs from the task's first
``poll`` to the target's acknowledgement of the last record. The yardstick is the raw
confluent-kafka produce loop writing the same records to the same embedded broker in the same run.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar

from bench import raw_clients
from bench._harness import (
    AckCounter,
    Line,
    best,
    broker_rss_line,
    embedded_clusters,
    parse_pairs,
    ratio_line,
    running_connector,
)
from bench.raw_clients import Rate
from connect_core.api.connector import SourceConnector
from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.api.task import SourceTask, Task
from connect_core.config.configdef import ConfigDef, Importance, Range, Type
from embedded_kafka import EmbeddedKafkaCluster, unique_name

BYTE_ARRAY = "org.apache.kafka.connect.converters.ByteArrayConverter"
CONNECTOR_CLASS = "bench.source_task_loop:BenchSourceConnector"

TOPIC = "topic"
RECORDS = "bench.records"
SIZE = "bench.record.size"
PARTITIONS = "bench.partitions"
BATCH = "bench.batch.size"

CONFIG_DEF = (
    ConfigDef()
    .define(TOPIC, Type.STRING, importance=Importance.HIGH, documentation="Topic to write to.")
    .define(RECORDS, Type.LONG, 100_000, Range.at_least(0), Importance.HIGH, "Records to generate.")
    .define(SIZE, Type.INT, 100, Range.at_least(0), Importance.HIGH, "Value size in bytes.")
    .define(PARTITIONS, Type.INT, 1, Range.at_least(1), Importance.HIGH, "Kafka partitions (round-robin).")
    .define(BATCH, Type.INT, 1000, Range.at_least(1), Importance.MEDIUM, "Records returned per poll().")
)


class BenchSourceTask(SourceTask):
    """Generates the records as cheaply as Python allows, so the runtime's cost is what is measured.

    Keys, partition maps and the value are built once; per record only the offset map and the
    SourceRecord are new (a real connector cannot do with less).
    """

    #: set by the benchmark before the connector starts; fed from ``commit_record``
    acks: ClassVar[AckCounter | None] = None
    #: ``perf_counter()`` of the first poll, the start of the measured interval
    first_poll_at: ClassVar[float | None] = None

    def start(self, props: dict[str, str]) -> None:
        cfg = CONFIG_DEF.parse(props)
        self._topic: str = cfg[TOPIC]
        self._total: int = cfg[RECORDS]
        self._partitions: int = cfg[PARTITIONS]
        self._batch: int = cfg[BATCH]
        self._value = raw_clients.payload(cfg[SIZE])
        self._keys = [b"key-" + str(i).encode() for i in range(1000)]
        self._source_partitions = [{"partition": p} for p in range(self._partitions)]
        self._next = 0
        self._stopped = threading.Event()

    def poll(self) -> list[SourceRecord] | None:
        if BenchSourceTask.first_poll_at is None:
            BenchSourceTask.first_poll_at = time.perf_counter()
        start = self._next
        end = min(start + self._batch, self._total)
        if start >= end:
            self._stopped.wait(0.1)  # all written: idle like a quiet source
            return None
        n = self._partitions
        topic, value, keys, sps = self._topic, self._value, self._keys, self._source_partitions
        records = [
            SourceRecord(sps[i % n], {"offset": i // n}, topic, i % n, keys[i % 1000], value) for i in range(start, end)
        ]
        self._next = end
        return records

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        acks = BenchSourceTask.acks
        if acks is not None:
            acks.add()

    def stop(self) -> None:
        self._stopped.set()


class BenchSourceConnector(SourceConnector):
    """One task; its config is the connector's."""

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        return None

    def task_class(self) -> type[Task]:
        return BenchSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self._props)]

    def config(self) -> ConfigDef:
        return CONFIG_DEF


# ---------------------------------------------------------------------------------------- runs


@dataclass
class Case:
    records: int
    size: int

    def __str__(self) -> str:
        return f"{self.records} x {self.size} B"


#: extra worker properties from ``--worker KEY=VALUE``
EXTRA_WORKER: dict[str, str] = {}


def worker_props(bootstrap: str) -> dict[str, str]:
    """Worker config; the producer gets the raw loop's batching so the ratio measures our overhead."""
    return {
        "bootstrap.servers": bootstrap,
        "key.converter": BYTE_ARRAY,
        "value.converter": BYTE_ARRAY,
        "header.converter": BYTE_ARRAY,
        "offset.flush.interval.ms": "1000",
        "producer.linger.ms": str(raw_clients.PRODUCER_TUNING["linger.ms"]),
        "producer.batch.size": str(raw_clients.PRODUCER_TUNING["batch.size"]),
        "producer.acks": "all",
        **EXTRA_WORKER,
    }


def connector_config(
    name: str, topic: str, case: Case, partitions: int, batch: int, transforms: bool
) -> dict[str, str]:
    config = {
        "name": name,
        "connector.class": CONNECTOR_CLASS,
        "tasks.max": "1",
        TOPIC: topic,
        RECORDS: str(case.records),
        SIZE: str(case.size),
        PARTITIONS: str(partitions),
        BATCH: str(batch),
    }
    if transforms:
        config.update(
            {
                "transforms": "hdr",
                "transforms.hdr.type": "org.apache.kafka.connect.transforms.InsertHeader",
                "transforms.hdr.header": "bench",
                "transforms.hdr.value.literal": "1",
            }
        )
    return config


def run_worker(
    cluster: EmbeddedKafkaCluster, case: Case, partitions: int, batch: int, transforms: bool, timeout_s: float
) -> Rate:
    """Run the connector in a fresh StandaloneHerder until every record is acknowledged."""
    topic = cluster.create_topic(unique_name("bench-worker"), partitions)
    BenchSourceTask.acks = acks = AckCounter(case.records)
    BenchSourceTask.first_poll_at = None
    name = unique_name("bench-source")
    config = connector_config(name, topic, case, partitions, batch, transforms)
    with running_connector(worker_props(cluster.bootstrap_servers), config) as run:
        done = acks.wait(timeout_s, run.check)
        started = BenchSourceTask.first_poll_at
        assert started is not None
    BenchSourceTask.acks = None
    ends = cluster.end_offsets(topic)
    if sum(ends.values()) != case.records:
        raise RuntimeError(f"worker wrote {sum(ends.values())} records, expected {case.records}: {ends}")
    first = acks.first_at if acks.first_at is not None else done
    print(
        f"    (first ack {first - started:.2f} s after the first poll; from then on "
        f"{Rate(case.records, case.records * case.size, done - first)})",
        flush=True,
    )
    return Rate(case.records, case.records * case.size, done - started)


def run_raw(cluster: EmbeddedKafkaCluster, case: Case, partitions: int) -> Rate:
    topic = cluster.create_topic(unique_name("bench-raw"), partitions)
    return raw_clients.produce(cluster.bootstrap_servers, topic, partitions, case.records, case.size)


def run_case(case: Case, partitions: int, rounds: int, batch: int, transforms: bool, timeout_s: float) -> float:
    """Fresh broker per case (Tansu keeps everything in memory); returns the best-round ratio."""
    print(
        f"== source task loop: {case}, {partitions} partitions, {rounds} round(s)"
        f"{', InsertHeader transform' if transforms else ''}",
        flush=True,
    )
    raws: list[Rate] = []
    workers: list[Rate] = []
    with embedded_clusters("src-loop") as (cluster,):
        for r in range(rounds):
            raws.append(run_raw(cluster, case, partitions))
            print(f"  round {r + 1} raw    : {raws[-1]}", flush=True)
            workers.append(run_worker(cluster, case, partitions, batch, transforms, timeout_s))
            print(f"  round {r + 1} worker : {workers[-1]}", flush=True)
        print(broker_rss_line([cluster]))
    raw, worker = best(raws), best(workers)
    print(Line("raw produce", raw))
    print(Line("worker source task", worker))
    print(ratio_line("ratio worker/raw", worker, raw), flush=True)
    return worker.records_per_s / raw.records_per_s if raw.records_per_s else 0.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m bench.source_task_loop",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--records", type=int, help="records per run (default: two cases, 200000x100 and 100000x1024)")
    p.add_argument("--size", type=int, help="record value size in bytes (with --records; default 100)")
    p.add_argument("--partitions", type=int, default=4)
    p.add_argument("--rounds", type=int, default=1, help="repeat raw+worker; the best round of each is compared")
    p.add_argument("--batch", type=int, default=1000, help="records per SourceTask.poll()")
    p.add_argument("--transform", action="store_true", help="add an InsertHeader transform to the connector")
    p.add_argument("--timeout", type=float, default=600.0, help="seconds to wait for the worker to finish")
    p.add_argument(
        "--worker",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra worker property (repeatable), e.g. producer.enable.idempotence=true",
    )
    return p.parse_args(argv)


def cases_from(args: argparse.Namespace) -> list[Case]:
    if args.records is None and args.size is None:
        return [Case(200_000, 100), Case(100_000, 1024)]
    return [Case(args.records or 100_000, args.size if args.size is not None else 100)]


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    EXTRA_WORKER.update(parse_pairs(args.worker))
    for case in cases_from(args):
        run_case(case, args.partitions, args.rounds, args.batch, args.transform, args.timeout)
    return 0


if __name__ == "__main__":
    # Run the copy imported under its real name: the Worker loads the connector by that name, and
    # its class attributes (the ack counter) must be the ones this run sets.
    from bench import source_task_loop

    sys.exit(source_task_loop.main())
