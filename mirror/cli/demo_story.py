"""``mm2 demo``: the whole story of mm2 on two embedded clusters, each step checked and told in a line or two.

1. a backlog on A and a consumer group part of the way through it;
2. ``mm2 backfill`` copies the backlog on local Spark, exactly once;
3. ``mm2 run`` (the real driver, in this process) takes over from the backfill's offsets while new records are
   written: B must then hold every record of A once, in order (no gap, no duplicate at the seam);
4. ``mm2 verify`` proves the copy identical;
5. the consumer group fails over: ``mm2 translate-offsets --apply`` places it on B, and each partition's position
   must be the copy of the first record the group had not consumed on A (0 re-read, 0 skipped);
6. the running mirror re-reads its file: a topic added to it is mirrored without a restart.

The jobs run in one SparkContext (``local[2]``) the way their commands run them; every log line (the driver's,
Spark's, the Kafka clients') goes to the work directory's ``mm2.log``. The last line is the checked summary.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from embedded_kafka import EmbeddedKafkaCluster, KafkaCluster
from mirror.driver.demo import demo_properties, partition_differences
from mirror.driver.driver import MirrorMaker

TOPICS = {"orders": 3, "clicks": 2}
ADDED_TOPIC = ("payments", 2)
GROUP = "demo-app"
BACKLOG_PER_PARTITION = 4000
GROUP_POSITION = 2500  # the group consumed this far into each partition before the failover
LIVE_RECORDS = 300
ADDED_RECORDS = 100
MASTER = "local[2]"
WAIT_S = 90.0
READ_S = 30.0  # to read a topic to its end for a check


@dataclass
class Step:
    """One checked step of the story: what it showed, and whether its check held."""

    name: str
    ok: bool
    line: str


@dataclass
class StoryOutcome:
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and all(s.ok for s in self.steps)


def _views(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[Any, ...]]]:
    return {p: [record for _, record in log] for p, log in _logs(cluster, topic).items()}


def _logs(cluster: KafkaCluster, topic: str) -> dict[int, list[tuple[int, tuple[Any, ...]]]]:
    """Each partition's (offset, record) as a read_committed consumer sees them by Kafka's rule: a backfill task
    Spark retried leaves its aborted attempt in B's log, and the embedded broker hands aborted records to every
    reader (the story checks what a user's read_committed consumer would read)."""
    from connect_core.kafka.committed_reads import CommittedCursor, read_committed_to_end
    from connect_core.kafka.raw_fetch import RawFetcher

    fetcher = RawFetcher(cluster.bootstrap_servers, {}, "mm2-demo-check", read_committed=True)
    try:
        cursors = {p: CommittedCursor() for p in fetcher.partitions(topic)}
        logs: dict[int, list[tuple[int, tuple[Any, ...]]]] = {p: [] for p in cursors}
        for p, r in read_committed_to_end(
            fetcher, topic, cursors, {"bootstrap.servers": cluster.bootstrap_servers}, READ_S
        ):
            logs[p].append((r.offset, (r.key, r.value, r.headers, r.timestamp)))
        return logs
    finally:
        fetcher.close()


def _produce(cluster: KafkaCluster, topic: str, partitions: int, per_partition: int, start: int = 0) -> None:
    producer = cluster.producer(**{"linger.ms": 20})
    for p in range(partitions):
        for i in range(start, start + per_partition):
            producer.produce(
                topic,
                key=f"{topic}-{p}-{i % 97}".encode(),
                value=f"{topic} event {p}/{i}".encode(),
                partition=p,
                headers=[("source", b"mm2-demo")],
            )
            if i % 1000 == 0:
                producer.poll(0)
    if producer.flush(30):
        raise RuntimeError(f"A did not acknowledge every record of {topic}")


def _wait(check: Callable[[], bool], timeout_s: float = WAIT_S, every_s: float = 1.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(every_s)


def _identical(a: KafkaCluster, b: KafkaCluster, topics: dict[str, int]) -> list[str]:
    """Per remote topic, why B's partitions are not A's (empty when every record is there once, in order)."""
    names = b.topic_names()
    return [
        d
        for t in topics
        for d in (
            partition_differences(f"A.{t}", _views(a, t), _views(b, f"A.{t}"))
            if f"A.{t}" in names
            else [f"A.{t} does not exist on B"]
        )
    ]


def _counts_match(a: KafkaCluster, b: KafkaCluster, topics: dict[str, int]) -> bool:
    names = b.topic_names()
    for t in topics:
        if f"A.{t}" not in names:
            return False
        if {p: len(v) for p, v in _views(a, t).items()} != {p: len(v) for p, v in _views(b, f"A.{t}").items()}:
            return False
    return True


def _group_offsets(cluster: KafkaCluster, topic: str, partitions: int) -> dict[int, int]:
    from connect_core.kafka.types import ClientPartition as TopicPartition

    consumer = cluster.consumer(**{"group.id": GROUP, "enable.auto.commit": False})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return {tp.partition: tp.offset for tp in committed if tp.offset >= 0}
    finally:
        consumer.close()


def _commit_group(cluster: KafkaCluster) -> None:
    from connect_core.kafka.types import ClientPartition as TopicPartition

    consumer = cluster.consumer(**{"group.id": GROUP, "enable.auto.commit": False})
    try:
        consumer.commit(
            offsets=[TopicPartition(t, p, GROUP_POSITION) for t, n in TOPICS.items() for p in range(n)],
            asynchronous=False,
        )
    finally:
        consumer.close()


def failover_check(a: KafkaCluster, b: KafkaCluster) -> tuple[int, int, int]:
    """(partitions placed exactly, re-read, skipped): per partition, the record at the group's position on B must
    be the copy of the record at its position on A; records before it on B are the ones before it on A."""
    exact = reread = skipped = 0
    for topic, partitions in TOPICS.items():
        on_a, on_b = _logs(a, topic), _logs(b, f"A.{topic}")
        positions_a = _group_offsets(a, topic, partitions)
        positions_b = _group_offsets(b, f"A.{topic}", partitions)
        for p in range(partitions):
            pos_a, pos_b = positions_a.get(p), positions_b.get(p)
            if pos_a is None or pos_b is None:
                skipped += 1
                continue
            read_a, next_on_a = split_at_position(on_a[p], pos_a)
            read_b, next_on_b = split_at_position(on_b[p], pos_b)
            if next_on_a == next_on_b and read_a == read_b:
                exact += 1
            elif next_on_b is not None and next_on_b in read_a:
                reread += len(read_a) - read_a.index(next_on_b)
            else:
                skipped += 1
    return exact, reread, skipped


def split_at_position(
    log: list[tuple[int, tuple[Any, ...]]], position: int
) -> tuple[list[tuple[Any, ...]], tuple[Any, ...] | None]:
    """The records a consumer at ``position`` has read, and the next one it reads (None at the end): offsets,
    not list indexes, since commit markers and aborted records take offsets on B."""
    before = [record for offset, record in log if offset < position]
    after = next((record for offset, record in log if offset >= position), None)
    return before, after


@contextmanager
def _clusters() -> Iterator[tuple[EmbeddedKafkaCluster, EmbeddedKafkaCluster]]:
    a, b = EmbeddedKafkaCluster("A"), EmbeddedKafkaCluster("B")
    try:
        a.start()
        b.start()
        yield a, b
    finally:
        gc.collect()  # clients go with their last reference, before the brokers
        b.stop()
        a.stop()


class Story:
    """Runs the steps in order; ``say`` gets each line as it happens."""

    def __init__(self, workdir: Path, say: Callable[[str], None]) -> None:
        self.workdir = workdir
        self.say = say
        self.outcome = StoryOutcome()

    def _step(self, name: str, ok: bool, line: str) -> bool:
        mark = "ok" if ok else "FAILED"
        self.outcome.steps.append(Step(name, ok, line))
        self.say(f"  [{mark}] {line}")
        return ok

    def run(self) -> StoryOutcome:
        from mirror.driver.driver import make_config
        from mirror.driver.herder_factory import default_factory
        from mirror.jobs.backfill.job import run_job as backfill
        from mirror.jobs.spark import spark_context
        from mirror.jobs.translate.job import run_job as translate_offsets
        from mirror.jobs.verify.job import run_job as verify

        with _clusters() as (a, b):
            self.say(
                f"Two Kafka clusters on this machine: A (source) at {a.bootstrap_servers}, "
                f"B (target) at {b.bootstrap_servers}."
            )
            for topic, partitions in TOPICS.items():
                a.create_topic(topic, partitions)
                _produce(a, topic, partitions, BACKLOG_PER_PARTITION)
            _commit_group(a)
            backlog = BACKLOG_PER_PARTITION * sum(TOPICS.values())
            self.say(
                f"1. A backlog on A: {backlog:,} records in {', '.join(TOPICS)}; consumer group {GROUP} has "
                f"read {GROUP_POSITION:,} of each partition."
            )
            props = {
                **demo_properties(a.bootstrap_servers, b.bootstrap_servers),
                "A->B.topics": ", ".join(TOPICS),
                "sync.group.offsets.enabled": "false",
            }
            config_path = self.workdir / "mm2.properties"
            config_path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
            config = make_config(props)

            with spark_context("mm2 demo", MASTER) as spark:
                self.say(f"2. mm2 backfill copies the backlog on Spark ({MASTER}) ...")
                started = time.monotonic()
                report = backfill(config, "A", "B", spark=spark)
                copied = report.records_copied
                if not self._step(
                    "backfill",
                    copied == backlog and _counts_match(a, b, TOPICS),
                    f"{copied:,} of {backlog:,} records copied in {time.monotonic() - started:.0f} s, "
                    "exactly once, its positions handed to live mirroring",
                ):
                    return self.outcome

                self.say(f"3. mm2 run takes over while {LIVE_RECORDS} new records are written to A ...")
                driver = MirrorMaker(config, default_factory(None))
                try:
                    driver.start()
                    per_partition = LIVE_RECORDS // sum(TOPICS.values())
                    for topic, partitions in TOPICS.items():
                        _produce(a, topic, partitions, per_partition, start=BACKLOG_PER_PARTITION)
                    caught_up = _wait(lambda: _counts_match(a, b, TOPICS))
                    differences = _identical(a, b, TOPICS)
                    total = backlog + per_partition * sum(TOPICS.values())
                    if not self._step(
                        "live",
                        caught_up and not differences,
                        f"B holds all {total:,} records of A once each, in order: live mirroring "
                        "continued exactly where the backfill ended (0 missing, 0 duplicated)"
                        if caught_up and not differences
                        else f"B is not A: {'; '.join(differences[:3]) or 'not caught up in time'}",
                    ):
                        return self.outcome

                    self.say("4. mm2 verify compares A and B record for record ...")
                    verification = verify(config, "A", "B", spark=spark)
                    totals = verification.totals()
                    if not self._step(
                        "verify",
                        verification.equal,
                        f"{verification.outcome.upper()}: {totals['compared']:,} records compared, "
                        f"{totals['missing']} missing, {totals['mismatched']} different",
                    ):
                        return self.outcome

                    self.say(f"5. Consumer group {GROUP} fails over: mm2 translate-offsets --apply ...")
                    translate_offsets(config, "A", "B", GROUP, apply=True, spark=spark)
                    exact, reread, skipped = failover_check(a, b)
                    partitions = sum(TOPICS.values())
                    if not self._step(
                        "failover",
                        exact == partitions,
                        f"{GROUP} placed on B in {exact} of {partitions} partitions at exactly the "
                        f"first record it had not read on A ({reread} re-read, {skipped} skipped)",
                    ):
                        return self.outcome

                    self._reload_step(a, b, driver, props, config_path)
                finally:
                    driver.stop(30)
        return self.outcome

    def _reload_step(self, a: KafkaCluster, b: KafkaCluster, driver: MirrorMaker, props: dict[str, str],
                     config_path: Path) -> None:  # fmt: skip
        from mirror.cli.run_cmd import check_file, check_reachable
        from mirror.cli.run_reload import Reloader

        topic, partitions = ADDED_TOPIC
        a.create_topic(topic, partitions)
        _produce(a, topic, partitions, ADDED_RECORDS // partitions)
        self.say(f"6. {topic} is added to the running mirror's file, which it re-reads (as on SIGHUP) ...")
        changed = {**props, "A->B.topics": ", ".join([*TOPICS, topic])}
        config_path.write_text("".join(f"{k} = {v}\n" for k, v in changed.items()))
        applied = Reloader(config_path, None, driver, check_file, check_reachable).reload("the demo edited it")
        added = {topic: partitions}
        mirrored = applied is not None and _wait(lambda: _counts_match(a, b, added))
        self._step(
            "reload",
            mirrored and not _identical(a, b, added),
            f"all {ADDED_RECORDS} records of {topic} mirrored to A.{topic}, without a restart"
            if mirrored
            else f"A.{topic} did not receive {topic}'s records in time",
        )


__all__ = ["Story", "StoryOutcome", "failover_check", "split_at_position"]
