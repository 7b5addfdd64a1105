"""Raw confluent-kafka produce and consume loops: the yardsticks every benchmark divides by.

Settings match what a tuned replicator would use (linger 20 ms, 1 MB batches, acks=all), so a
ratio compares our overhead, not client tuning.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Any

from confluent_kafka import Consumer, KafkaError, Producer, TopicPartition

from connect_core.kafka.client_logging import RDKAFKA_LOG  # librdkafka lines through Python logging

PRODUCER_TUNING = {
    "linger.ms": 20,
    "batch.size": 1_000_000,
    "acks": "all",
    "allow.auto.create.topics": False,
    "queue.buffering.max.kbytes": 262_144,
}


@dataclass
class Rate:
    records: int
    bytes: int
    seconds: float

    @property
    def records_per_s(self) -> float:
        return self.records / self.seconds if self.seconds > 0 else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.bytes / self.seconds / 1e6 if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        return f"{self.records_per_s:>10,.0f} rec/s {self.mb_per_s:>8.1f} MB/s ({self.records} in {self.seconds:.2f} s)"


def payload(size: int) -> bytes:
    return os.urandom(size)


#: A well-tuned consumer: librdkafka's default ``fetch.queue.backoff.ms`` (1000) idles the fetcher a
#: whole second each time its prefetch queue was full, which with 100 B records ran the yardstick at a
#: tenth of its speed and flattered every ratio; bigger fetches and queues keep it busy.
CONSUMER_TUNING = {
    "fetch.wait.max.ms": 100,
    "fetch.queue.backoff.ms": 20,
    "fetch.max.bytes": 52_428_800,
    "max.partition.fetch.bytes": 10_485_760,
    "queued.max.messages.kbytes": 262_144,
    "queued.min.messages": 1_000_000,
}


def produce(bootstrap: str, topic: str, partitions: int, count: int, size: int, compression: str = "none") -> Rate:
    """Produce ``count`` records of ``size`` bytes round-robin over partitions; timed until all acked."""
    producer = Producer(
        {"bootstrap.servers": bootstrap, "logger": RDKAFKA_LOG, **PRODUCER_TUNING, "compression.type": compression}
    )
    # compressible like real data when a codec is asked for (random bytes would not compress at all)
    value = payload(size) if compression == "none" else payload((size + 1) // 2).hex().encode()[:size]
    key_base = b"key-"
    start = time.perf_counter()
    for i in range(count):
        while True:
            try:
                producer.produce(topic, value, key_base + str(i % 1000).encode(), partition=i % partitions)
                break
            except BufferError:
                producer.poll(0.01)
        if i % 10_000 == 0:
            producer.poll(0)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - start
    if remaining:
        raise RuntimeError(f"{remaining} records not acknowledged")
    return Rate(count, count * size, elapsed)


def consume(bootstrap: str, topic: str, partitions: int, count: int, wait_s: float = 1.0, **overrides: Any) -> Rate:
    """Read ``count`` records from offset 0 of every partition with batch consume()."""
    consumer = Consumer(
        {
            "bootstrap.servers": bootstrap,
            "logger": RDKAFKA_LOG,
            "group.id": f"bench-raw-{time.time_ns()}",
            "enable.auto.commit": False,
            "allow.auto.create.topics": False,
            "enable.partition.eof": False,
            **CONSUMER_TUNING,
            **overrides,
        }
    )
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    nbytes = 0
    start = time.perf_counter()
    deadline = start + 300
    while seen < count and time.perf_counter() < deadline:
        for msg in consumer.consume(num_messages=10_000, timeout=wait_s):
            err = msg.error()
            if err is not None and err.code() != KafkaError._PARTITION_EOF:
                raise RuntimeError(str(err))
            if err is None:
                seen += 1
                value = msg.value()
                nbytes += len(value) if value else 0
    elapsed = time.perf_counter() - start
    consumer.close()
    if seen < count:
        raise RuntimeError(f"consumed only {seen} of {count}")
    return Rate(seen, nbytes, elapsed)


def naive_copy(source: str, target: str, topic: str, target_topic: str, partitions: int, count: int) -> Rate:
    """The simplest Python consume -> produce loop (same partition, key, value, headers, timestamp).

    Not a yardstick to divide by: the ceiling any per-record Python replicator can reach here, so a
    mirror ratio can be split into "Python per record" and "our runtime". ``fetch.queue.backoff.ms``
    is lowered because a consumer that is drained slower than it fetches otherwise idles for
    librdkafka's default 1 s whenever its prefetch queue was full.
    """
    consumer = Consumer(
        {
            "bootstrap.servers": source,
            "logger": RDKAFKA_LOG,
            "group.id": f"bench-copy-{time.time_ns()}",
            "enable.auto.commit": False,
            "allow.auto.create.topics": False,
            **CONSUMER_TUNING,
        }
    )
    producer = Producer({"bootstrap.servers": target, "logger": RDKAFKA_LOG, **PRODUCER_TUNING})
    consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
    seen = 0
    nbytes = 0
    start = time.perf_counter()
    deadline = start + 300
    while seen < count and time.perf_counter() < deadline:
        for msg in consumer.consume(num_messages=1000, timeout=1.0):
            if msg.error() is not None:
                continue
            value = msg.value()
            while True:
                try:
                    producer.produce(
                        target_topic,
                        value,
                        msg.key(),
                        msg.partition() or 0,
                        timestamp=msg.timestamp()[1],
                        headers=msg.headers(),
                    )
                    break
                except BufferError:
                    producer.poll(0.01)
            seen += 1
            nbytes += len(value) if value else 0
        producer.poll(0)
    remaining = producer.flush(120)
    elapsed = time.perf_counter() - start
    consumer.close()
    if seen < count or remaining:
        raise RuntimeError(f"copied {seen} of {count}, {remaining} unacknowledged")
    return Rate(seen, nbytes, elapsed)
