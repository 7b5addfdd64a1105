"""One consumer kept across the polls of a wait: a topic read to its end again and again.

Why: a test waiting on a topic (its end offsets growing, a record showing up) polls a condition every tenth
to half a second; :meth:`KafkaCluster.end_offsets` and :meth:`KafkaCluster.read_all` build an admin client
and a consumer on every call, and on a busy 2-core machine those clients cost more CPU than the wait's
subject. A :class:`TopicTail` keeps one consumer. Each :meth:`TopicTail.read_to_end` assigns it again at the
positions it reached, which makes the broker answer a fresh fetch per partition (librdkafka reports the end
of a partition again after an assignment): what it returns is as current as a new client's reading, and only
the records written since the last call travel.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from connect_core.kafka.types import AdminClient, ClientPartition, Consumer, KafkaError, KafkaException, Message

if TYPE_CHECKING:
    from embedded_kafka.cluster import KafkaCluster


class TopicTail:
    """Reads ``topic`` from ``positions`` (partition -> next offset) on; close it (or use ``with``) when done."""

    def __init__(self, cluster: KafkaCluster, topic: str, positions: dict[int, int], isolation: str) -> None:
        self.topic = topic
        self.positions = dict(positions)
        self._consumer: Consumer = cluster.consumer(**{"isolation.level": isolation})

    def read_to_end(self, timeout: float = 15.0) -> list[Message]:
        """The records written since the last call, up to each partition's end as the broker answers now;
        ``positions`` is then each partition's end (its high watermark, or last stable offset when read
        committed). TimeoutError when some partition does not answer within ``timeout``."""
        return self._read(timeout, whole=True)

    def end_offsets(self, timeout: float = 15.0) -> dict[int, int]:
        """Partition -> end offset now, from a fetch answered after this call began (records are skipped)."""
        self._read(timeout, whole=False)
        return dict(sorted(self.positions.items()))

    def _read(self, timeout: float, whole: bool) -> list[Message]:
        """Assign at ``positions`` and read until every partition answered a fresh fetch (the assignment drops
        what was fetched before it) and, when ``whole``, its records up to that answer's end are read."""
        consumer, topic = self._consumer, self.topic
        # One record back: the broker answers at once with it instead of holding the fetch for new records.
        consumer.assign([ClientPartition(topic, p, max(offset - 1, 0)) for p, offset in self.positions.items()])
        records: list[Message] = []
        answered: dict[int, int] = {}  # partition -> its end, from a fetch made since the assignment
        pending = set(self.positions)
        deadline = time.monotonic() + timeout
        while pending:
            if time.monotonic() >= deadline:
                raise TimeoutError(f"{topic} partitions {sorted(pending)} did not answer within {timeout}s")
            first = consumer.poll(0.1)  # returns at the first event (consume would wait out its timeout)
            for msg in [first, *consumer.consume(num_messages=1000, timeout=0)] if first is not None else []:
                err, partition, offset = msg.error(), msg.partition(), msg.offset()
                if partition is None or offset is None:
                    if err is not None and err.code() != KafkaError._PARTITION_EOF:
                        raise KafkaException(err)
                    continue
                if err is None:
                    if offset >= self.positions[partition]:  # not the record read again
                        records.append(msg)
                        self.positions[partition] = offset + 1
                elif err.code() == KafkaError._PARTITION_EOF:
                    self.positions[partition] = offset
                else:
                    raise KafkaException(err)
                answered[partition] = consumer.get_watermark_offsets(ClientPartition(topic, partition), cached=True)[1]
            for partition in list(pending):
                end = answered.get(partition)
                if end is not None and (not whole or self.positions[partition] >= end):
                    self.positions[partition] = max(self.positions[partition], end)
                    pending.discard(partition)
        consumer.unassign()  # no fetching between calls (an assigned consumer asks the broker ten times a second)
        return records

    def close(self) -> None:
        self._consumer.close()

    def __enter__(self) -> TopicTail:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


class TopicWatch:
    """A topic a wait polls before it may exist: one admin client looks for it until it does, then one
    :class:`TopicTail` reads it (from its start, or from its end offsets then: ``from_end``)."""

    def __init__(self, cluster: KafkaCluster, topic: str, from_end: bool = False) -> None:
        self._cluster = cluster
        self.topic = topic
        self._from_end = from_end
        self._admin: AdminClient | None = None
        self._tail: TopicTail | None = None

    def tail(self) -> TopicTail | None:
        """The topic's tail, or None while the topic does not exist."""
        if self._tail is None:
            if self._admin is None:
                self._admin = self._cluster.admin()
            found = self._admin.list_topics(timeout=10).topics.get(self.topic)  # full metadata: never creates
            if found is None or found.error is not None:
                return None
            self._tail = self._cluster.tail(self.topic, from_end=self._from_end)
        return self._tail

    def close(self) -> None:
        self._admin = None
        if self._tail is not None:
            self._tail.close()

    def __enter__(self) -> TopicWatch:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()


__all__ = ["TopicTail", "TopicWatch"]
