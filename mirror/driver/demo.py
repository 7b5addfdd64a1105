"""``mm2 demo``: MirrorMaker 2 working end to end on this machine in one command.

Starts two embedded clusters ``A`` and ``B`` (connect_core.embedded), creates sample topics on A
and a consumer group that makes progress, keeps producing a few records per second, runs the
real driver (:class:`mirror.driver.driver.MirrorMaker`) in-process for the flow ``A->B`` and prints the
records arriving on B and the ``mm2 status`` table periodically. Stops on Ctrl-C or after
``duration`` seconds, tearing everything down; nothing outside this process is touched.
"""

from __future__ import annotations

import gc
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from confluent_kafka import KafkaError
from confluent_kafka import TopicPartition as KafkaTopicPartition

from connect_core.embedded import EmbeddedKafkaCluster, KafkaCluster
from mirror.driver.status import collect_status
from mirror.driver.status_report import render_table

log = logging.getLogger(__name__)

TOPICS = {"orders": 3, "clicks": 2}
GROUP = "demo-app"
RECORDS_PER_SECOND = 4.0
STATUS_EVERY_S = 10.0


def demo_properties(a: str, b: str) -> dict[str, str]:
    """A small mm2.properties for the demo: A->B with fast refresh/checkpoint intervals."""
    return {
        "clusters": "A, B",
        "A.bootstrap.servers": a,
        "B.bootstrap.servers": b,
        "A->B.enabled": "true",
        "emit.heartbeats.enabled": "false",  # no B->A herder: the demo is one direction
        "A->B.emit.heartbeats.enabled": "true",
        "refresh.topics.interval.seconds": "2",
        "refresh.groups.interval.seconds": "2",
        "emit.checkpoints.interval.seconds": "1",
        "emit.heartbeats.interval.seconds": "1",
        "sync.group.offsets.enabled": "true",
        "sync.group.offsets.interval.seconds": "1",
        "B.offset.flush.interval.ms": "500",  # worker settings are per target cluster
        "replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        "offset.storage.partitions": "5",
        "status.storage.partitions": "1",
        "B.session.timeout.ms": "3000",
        "B.heartbeat.interval.ms": "1000",
        "offset.lag.max": "5",
    }


@dataclass
class DemoStats:
    produced: int = 0
    mirrored: int = 0
    per_topic: dict[str, int] = field(default_factory=dict)


class _Producer(threading.Thread):
    """A few records per second round-robin over the sample topics (one-record batches)."""

    def __init__(self, cluster: KafkaCluster, stats: DemoStats, rate: float = RECORDS_PER_SECOND) -> None:
        super().__init__(name="demo-producer", daemon=True)
        self._cluster = cluster
        self._stats = stats
        self._interval = 1.0 / rate
        self.halt = threading.Event()

    def run(self) -> None:
        producer = self._cluster.producer()
        topics = list(TOPICS)
        n = 0
        try:
            while not self.halt.is_set():
                topic = topics[n % len(topics)]
                producer.produce(topic, key=f"key-{n % 7}".encode(), value=f"{topic} event #{n}".encode(),
                                 headers=[("source", b"mm2-demo")])
                producer.poll(0)
                n += 1
                self._stats.produced = n
                self.halt.wait(self._interval)
        finally:
            producer.flush(5)


class _GroupCommitter:
    """Makes the demo group consume on A: commits end-offset-minus-a-bit now and then."""

    def __init__(self, cluster: KafkaCluster) -> None:
        self._cluster = cluster
        self._consumer = cluster.consumer(**{"group.id": GROUP})

    def commit_progress(self) -> None:
        offsets: list[KafkaTopicPartition] = []
        for topic, partitions in TOPICS.items():
            for p in range(partitions):
                _low, high = self._consumer.get_watermark_offsets(KafkaTopicPartition(topic, p), timeout=5)
                offsets.append(KafkaTopicPartition(topic, p, max(0, high - 2)))
        self._consumer.commit(offsets=offsets, asynchronous=False)

    def close(self) -> None:
        self._consumer.close()


class _Tail:
    """Reads what arrives on B's remote topics, to show records flowing."""

    def __init__(self, cluster: KafkaCluster) -> None:
        self._cluster = cluster
        self._consumer: Any = None
        self._assigned: set[str] = set()

    def poll(self, stats: DemoStats, emit: Callable[[str], None], max_lines: int = 2) -> None:
        remote = {f"A.{t}": n for t, n in TOPICS.items()}
        existing = set(remote) & self._cluster.topic_names()
        if existing - self._assigned:
            if self._consumer is None:
                self._consumer = self._cluster.consumer()
            self._assigned |= existing
            self._consumer.assign([KafkaTopicPartition(t, p, 0) for t in sorted(self._assigned)
                                   for p in range(remote[t])])
        if self._consumer is None:
            return
        shown = 0
        for msg in self._consumer.consume(500, 0.5):
            err = msg.error()
            if err is not None:
                if err.code() != KafkaError._PARTITION_EOF:
                    log.debug("tail: %s", err.str())
                continue
            stats.mirrored += 1
            stats.per_topic[msg.topic()] = stats.per_topic.get(msg.topic(), 0) + 1
            if shown < max_lines:
                value = (msg.value() or b"").decode("utf-8", "replace")
                emit(f"  mirrored  {msg.topic()}[{msg.partition()}]@{msg.offset()}  {value}")
                shown += 1

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()


def run_demo(duration_s: float | None, emit: Callable[[str], None] = print,
             should_stop: Callable[[], bool] = lambda: False, herder: str | None = None) -> DemoStats:
    """The whole demo; returns the counts (for tests). ``should_stop`` is polled (Ctrl-C handling)."""
    from mirror.driver.driver import MirrorMaker, make_config
    from mirror.driver.herder_factory import default_factory

    stats = DemoStats()
    a, b = EmbeddedKafkaCluster("A"), EmbeddedKafkaCluster("B")
    driver: MirrorMaker | None = None
    producer: _Producer | None = None
    committer: _GroupCommitter | None = None
    tail: _Tail | None = None
    try:
        a.start()
        b.start()
        emit(f"Started cluster A at {a.bootstrap_servers} and cluster B at {b.bootstrap_servers}")
        for topic, partitions in TOPICS.items():
            a.create_topic(topic, partitions)
        emit(f"Created topics on A: {', '.join(f'{t} ({n} partitions)' for t, n in TOPICS.items())}")
        producer = _Producer(a, stats)
        producer.start()
        committer = _GroupCommitter(a)
        time.sleep(1.0)
        committer.commit_progress()  # the group exists before MirrorMaker starts, so it is checkpointed
        config = make_config(demo_properties(a.bootstrap_servers, b.bootstrap_servers))
        driver = MirrorMaker(config, default_factory(herder))
        emit("Starting MirrorMaker for A->B (remote topics on B: A.orders, A.clicks) ...")
        driver.start(interrupted=should_stop)
        emit("MirrorMaker running. Records arriving on B:")
        tail = _Tail(b)
        started = time.monotonic()
        next_status = started + STATUS_EVERY_S
        while not should_stop():
            now = time.monotonic()
            if duration_s is not None and now - started >= duration_s:
                break
            tail.poll(stats, emit)
            if now >= next_status:
                committer.commit_progress()
                emit(f"-- produced {stats.produced} records on A, {stats.mirrored} mirrored to B so far --")
                try:
                    emit(render_table(collect_status(config, timeout_s=5)).rstrip())
                except Exception as e:  # status is a view; never stop the demo for it
                    emit(f"(status unavailable: {e})")
                next_status = now + STATUS_EVERY_S
        tail.poll(stats, emit, max_lines=0)
        emit(f"Demo finished: produced {stats.produced} records on A, {stats.mirrored} mirrored to B "
             f"({', '.join(f'{t}: {n}' for t, n in sorted(stats.per_topic.items())) or 'none yet'}).")
        return stats
    finally:
        if producer is not None:
            producer.halt.set()
            producer.join(5)
        if driver is not None:
            driver.stop(30)
            gc.collect()  # drop the connectors' admin clients before their brokers go away (no log noise)
        for closer in (tail, committer):
            if closer is not None:
                try:
                    closer.close()
                except Exception:
                    log.debug("closing a demo client failed", exc_info=True)
        b.stop()
        a.stop()
