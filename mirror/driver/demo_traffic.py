"""``mm2 demo``'s own clients and what they count: sample records produced on A, their copies read on B.

:class:`TrafficStats` is the pure part (thread-safe counters per topic and partition, latency
samples); :class:`SampleProducer`, :class:`GroupCommitter` and :class:`RemoteTail` are the thin
clients around it. Every client here is closed by its owner before the clusters stop.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connect_core.kafka.types import ClientPartition, KafkaError, Message
from embedded_kafka import KafkaCluster

LATENCY_SAMPLES = 20  # per topic: the last few seconds at the demo's rate


@dataclass(frozen=True)
class TopicRow:
    """One line of the live view."""

    topic: str
    remote_topic: str
    produced: int
    mirrored: int
    latency_p50_ms: float | None
    latency_max_ms: float | None

    @property
    def lag(self) -> int:
        return max(self.produced - self.mirrored, 0)


@dataclass
class _Topic:
    remote: str
    produced: dict[int, int] = field(default_factory=dict)
    mirrored: dict[int, int] = field(default_factory=dict)
    latencies_ms: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCY_SAMPLES))


class TrafficStats:
    """Records acknowledged on A and read on B, per topic and partition; latency from A's timestamp."""

    def __init__(self, remote_topics: Mapping[str, str]) -> None:
        self._topics = {t: _Topic(r) for t, r in remote_topics.items()}
        self._by_remote = {r: t for t, r in remote_topics.items()}
        self._lock = threading.Lock()

    def on_produced(self, topic: str, partition: int) -> None:
        with self._lock:
            counts = self._topics[topic].produced
            counts[partition] = counts.get(partition, 0) + 1

    def on_mirrored(self, remote_topic: str, partition: int, latency_ms: float | None) -> None:
        with self._lock:
            t = self._topics[self._by_remote[remote_topic]]
            t.mirrored[partition] = t.mirrored.get(partition, 0) + 1
            if latency_ms is not None:
                t.latencies_ms.append(max(latency_ms, 0.0))

    def rows(self) -> list[TopicRow]:
        with self._lock:
            out = []
            for name, t in self._topics.items():
                samples = list(t.latencies_ms)
                out.append(
                    TopicRow(
                        name,
                        t.remote,
                        sum(t.produced.values()),
                        sum(t.mirrored.values()),
                        statistics.median(samples) if samples else None,
                        max(samples) if samples else None,
                    )
                )
            return out

    @property
    def produced(self) -> int:
        return sum(r.produced for r in self.rows())

    @property
    def mirrored(self) -> int:
        return sum(r.mirrored for r in self.rows())

    def drained(self) -> bool:
        """Every partition has had as many records read on B as were acknowledged on A."""
        with self._lock:
            return all(t.mirrored.get(p, 0) >= n for t in self._topics.values() for p, n in t.produced.items())


class SampleProducer(threading.Thread):
    """A few records per second, round-robin over the sample topics; counts what A acknowledged."""

    def __init__(self, cluster: KafkaCluster, topics: list[str], stats: TrafficStats, rate: float) -> None:
        super().__init__(name="demo-producer", daemon=True)
        self._cluster = cluster
        self._topics = topics
        self._stats = stats
        self._interval = 1.0 / rate
        self.halt = threading.Event()
        self.error: BaseException | None = None

    def _acked(self, err: KafkaError | None, msg: Message) -> None:
        if err is None:
            self._stats.on_produced(str(msg.topic()), int(msg.partition() or 0))

    def run(self) -> None:
        producer = self._cluster.producer()
        n = 0
        try:
            while not self.halt.is_set():
                topic = self._topics[n % len(self._topics)]
                producer.produce(
                    topic,
                    key=f"key-{n % 7}".encode(),
                    value=f"{topic} event #{n}".encode(),
                    headers=[("source", b"mm2-demo")],
                    on_delivery=self._acked,
                )
                n += 1
                deadline = time.monotonic() + self._interval
                while not self.halt.is_set() and time.monotonic() < deadline:
                    producer.poll(0.05)  # acknowledgements are counted as they arrive
            producer.flush(10)
        except BaseException as e:  # shown by the demo; the thread must not die silently
            self.error = e
        finally:
            producer.purge()
            producer.close()


class GroupCommitter:
    """Makes the demo group consume on A: commits end-offset-minus-a-bit, so checkpoints have work."""

    def __init__(self, cluster: KafkaCluster, group: str, topics: Mapping[str, int]) -> None:
        self._topics = topics
        self._consumer = cluster.consumer(**{"group.id": group})

    def commit_progress(self) -> None:
        offsets: list[ClientPartition] = []
        for topic, partitions in self._topics.items():
            for p in range(partitions):
                _low, high = self._consumer.get_watermark_offsets(ClientPartition(topic, p), timeout=5)
                offsets.append(ClientPartition(topic, p, max(0, high - 2)))
        self._consumer.commit(offsets=offsets, asynchronous=False)

    def close(self) -> None:
        self._consumer.close()


class RemoteTail:
    """Reads B's remote topics from the start as they appear, counting records and their latency."""

    def __init__(self, cluster: KafkaCluster, remote_partitions: Mapping[str, int], stats: TrafficStats) -> None:
        self._cluster = cluster
        self._remote = dict(remote_partitions)
        self._stats = stats
        self._consumer: Any = None
        self._assigned: set[str] = set()

    def poll(self, timeout_s: float) -> None:
        if len(self._assigned) < len(self._remote):
            existing = set(self._remote) & self._cluster.topic_names()
            if existing - self._assigned:
                if self._consumer is None:
                    self._consumer = self._cluster.consumer()
                self._assigned |= existing
                self._consumer.assign(
                    [ClientPartition(t, p, 0) for t in sorted(self._assigned) for p in range(self._remote[t])]
                )
        if self._consumer is None:
            time.sleep(timeout_s)
            return
        messages = self._consumer.consume(500, timeout_s)
        now_ms = time.time() * 1000
        for msg in messages:
            if msg.error() is not None:
                continue  # partition EOF events; anything else shows up as a lag that does not drain
            _kind, ts = msg.timestamp()
            self._stats.on_mirrored(str(msg.topic()), int(msg.partition() or 0), now_ms - ts if ts > 0 else None)

    def close(self) -> None:
        if self._consumer is not None:
            self._consumer.close()
            self._consumer = None
