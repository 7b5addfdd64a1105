"""Where a log's partitions end right now, from one short Fetch: the barrier of ``KafkaBasedLog.read_to_end``.

Java's KafkaBasedLog asks ListOffsets for the end offsets and reads until its positions reach them, so a
log already read to its end costs one round trip and its tail can long-poll at the consumer's default
wait. Some Kafka-protocol brokers (Tansu) answer ListOffsets LATEST with the last batch's base offset + 1,
but every Fetch answer carries the right high watermark and last stable offset. So the ends come from a
Fetch that waits a few milliseconds and asks for next to no records.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connect_core.kafka.clients import text_props
from connect_core.kafka.raw_fetch import RawFetcher
from connect_core.kafka.security import kafka_python_security

log = logging.getLogger(__name__)

#: The broker's wait for the probe: a broker given no time at all may leave partitions out of its answer.
PROBE_WAIT_MS = 5
#: Records are not wanted, only the answer's offsets (a broker still returns a first batch past this).
PROBE_PARTITION_BYTES = 1


def still_to_read(positions: Mapping[int, int], ends: Mapping[int, tuple[int, int]]) -> dict[int, int]:
    """Partition -> end offset, for each partition whose reader has not yet read to its end (pure).

    ``positions``: the reader's next offset per partition (negative before its first record);
    ``ends``: partition -> (end offset, log start) from a Fetch answer; a partition whose end is at or
    below its log start holds nothing to read.
    """
    return {p: end for p, (end, start) in ends.items() if end > start and positions.get(p, -1) < end}


class LogEnds:
    """The end offsets of one topic's partitions, as a reader of the given isolation level sees them."""

    def __init__(self, topic: str, client_props: Mapping[str, Any], read_committed: bool, timeout_s: float) -> None:
        self.topic = topic
        self._props = text_props(client_props)
        self._read_committed = read_committed
        self._timeout_s = timeout_s
        self._fetcher: RawFetcher | None = None

    def now(self, positions: Mapping[int, int]) -> dict[int, tuple[int, int]]:
        """Partition -> (end offset, log start), fetched at each reader position (ConnectError on failure)."""
        if self._fetcher is None:
            self._fetcher = RawFetcher(
                self._props.get("bootstrap.servers", ""),
                kafka_python_security(self._props),
                client_id=str(self._props.get("client.id") or f"log-ends-{self.topic}"),
                request_timeout_s=self._timeout_s,
                read_committed=self._read_committed,
            )
        answers = self._fetcher.fetch(
            self.topic, {p: max(0, o) for p, o in positions.items()}, PROBE_WAIT_MS, PROBE_PARTITION_BYTES
        )
        return {
            p: ((a.end_offset if self._read_committed else a.high_watermark), a.log_start_offset)
            for p, a in answers.items()
        }

    def close(self) -> None:
        if self._fetcher is not None:
            self._fetcher.close()
            self._fetcher = None


__all__ = ["PROBE_PARTITION_BYTES", "PROBE_WAIT_MS", "LogEnds", "still_to_read"]
