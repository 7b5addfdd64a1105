"""End offsets as of now, from the high watermark a fetch response carries.

The high watermark comes back with every fetch, on Kafka and on brokers whose ListOffsets LATEST is
approximate (Tansu answers with the last batch's base offset + 1); one small fetch per partition
costs about as much as a ListOffsets round. Used where a figure must be right *now* (``mm2
status``: how far the target really is).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Mapping
from typing import Any

from confluent_kafka import KafkaError

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import consumer_config, create_consumer
from connect_core.kafka.types import ClientPartition

TopicPartitionKey = tuple[str, int]


def high_watermarks(
    consumer_props: Mapping[str, Any], positions: Mapping[TopicPartitionKey, int], timeout_s: float
) -> dict[TopicPartitionKey, int]:
    """(topic, partition) -> high watermark, fetching each partition once from ``positions[tp]``.

    Start each partition at an offset known to exist (a fetch from there returns at most one
    small batch); an offset below the log start falls back to the earliest one. ConnectError when
    a partition answers with an error or not within ``timeout_s``.
    """
    if not positions:
        return {}
    conf = consumer_config(
        consumer_props,
        {
            "group.id": f"mm2-watermarks-{uuid.uuid4().hex[:8]}",  # assign() only: never joins, never commits
            "enable.auto.commit": False,
            "enable.partition.eof": True,
            "auto.offset.reset": "earliest",
            "max.partition.fetch.bytes": 1024,
            "fetch.wait.max.ms": 100,
        },
    )
    consumer = create_consumer(conf)
    try:
        consumer.assign([ClientPartition(t, p, max(0, o)) for (t, p), o in positions.items()])
        ends: dict[TopicPartitionKey, int] = {}
        deadline = time.monotonic() + timeout_s
        while len(ends) < len(positions):
            if time.monotonic() >= deadline:
                missing = sorted(f"{t}-{p}" for t, p in set(positions) - set(ends))
                raise ConnectError(f"No fetch response for {', '.join(missing)} within {timeout_s:g}s")
            for msg in consumer.consume(500, 0.1):
                err = msg.error()
                if err is not None and err.code() != KafkaError._PARTITION_EOF:
                    raise ConnectError(f"Cannot fetch {msg.topic()}-{msg.partition()}: {err.str()}")
            for t, p in positions:
                if (t, p) not in ends:
                    _low, high = consumer.get_watermark_offsets(ClientPartition(t, p), cached=True)
                    if high >= 0:
                        ends[(t, p)] = int(high)
        return ends
    finally:
        consumer.close()
