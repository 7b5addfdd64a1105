"""Records deleted on the source before they were mirrored: found from a jump in the offsets read (pure).

Why: when retention or DeleteRecords removes records the task has not read yet, the next fetch cannot
serve its position. Kafka answers OFFSET_OUT_OF_RANGE and the consumer resets to the log start (Java
MirrorMaker's behaviour, silently); some brokers serve the next record they still have. Either way the
first offset read is above the one the task needed. That jump alone proves nothing (transaction markers,
aborted transactions and compaction leave gaps too): the records in ``[needed, min(log start, read))``
are the ones gone before they were mirrored, so each jump is checked against the log start, looked up
after the jump (a log start only moves forward: whatever lies below it now and was never read is lost).

The task notes jumps (:meth:`GapTracker.jumped`, once per run of messages, never per record), looks
the log starts of :meth:`GapTracker.partitions` up without blocking, and hands them to
:meth:`GapTracker.resolve`, which returns the lost ranges to say and count.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mirror.client.formats import TopicPartition

#: Entry of the Connect offset value that keeps the partition's records lost so far (Java MM2 ignores it).
LOST_KEY = "mm2.records.lost"
#: Metric/alert reason of records deleted on the source before they were mirrored.
REASON_RECORDS_LOST = "records-lost"


@dataclass(frozen=True)
class LostRange:
    """Offsets ``first`` .. ``end - 1`` of a source partition were deleted before they were mirrored."""

    tp: TopicPartition
    first: int
    end: int  # exclusive: the log start (or the first offset read, if lower)
    log_start: int

    @property
    def count(self) -> int:
        return self.end - self.first

    def describe(self, flow: str) -> str:
        """The one ERROR line of the event: flow, topic, partition, offsets and count."""
        return (
            f"{flow}: {self.count} records of source topic {self.tp.topic} partition {self.tp.partition} "
            f"(offsets {self.first} to {self.end - 1}) were deleted on the source (retention or deleted "
            f"records; log start now {self.log_start}) before they were mirrored: they are not on the target"
        )


@dataclass
class LostTotal:
    """What a partition has lost so far, carried with its committed offset (for ``mm2 status``)."""

    count: int = 0
    last_first: int = -1
    last_end: int = -1
    detected_at_ms: int = 0

    def add(self, lost: LostRange, now_ms: int) -> None:
        self.count += lost.count
        self.last_first, self.last_end, self.detected_at_ms = lost.first, lost.end, now_ms

    def encode(self) -> str:
        return json.dumps(
            {
                "count": self.count,
                "last.first": self.last_first,
                "last.end": self.last_end,
                "detected.at.ms": self.detected_at_ms,
            },
            separators=(",", ":"),
            sort_keys=True,
        )

    @classmethod
    def decode(cls, raw: Any) -> LostTotal | None:
        if not isinstance(raw, str):
            return None
        try:
            data = json.loads(raw)
            return cls(int(data["count"]), int(data["last.first"]), int(data["last.end"]), int(data["detected.at.ms"]))
        except (KeyError, TypeError, ValueError, AttributeError):
            return None


@dataclass
class GapTracker:
    """Jumps in the offsets read, waiting for the partitions' log starts."""

    #: tp -> the jumps (needed, read) seen since its last log-start answer (those of one lookup's round trip)
    pending: dict[TopicPartition, list[tuple[int, int]]] = field(default_factory=dict)

    def jumped(self, tp: TopicPartition, needed: int, read: int) -> None:
        """The partition's next record was ``needed`` and the first one read is ``read`` (> needed)."""
        self.pending.setdefault(tp, []).append((needed, read))

    def partitions(self) -> list[TopicPartition]:
        return list(self.pending)

    def resolve(self, log_starts: Mapping[TopicPartition, int]) -> list[LostRange]:
        """The lost ranges among the pending jumps whose log start is known now (those are settled).

        Each jump is checked on its own: offsets read between two jumps were mirrored, whatever the
        log start is now.
        """
        out: list[LostRange] = []
        for tp, start in log_starts.items():
            for needed, read in self.pending.pop(tp, ()):
                end = min(start, read)
                if end > needed:
                    out.append(LostRange(tp, needed, end, start))
        return out


def now_ms() -> int:
    return int(time.time() * 1000)


__all__ = ["LOST_KEY", "REASON_RECORDS_LOST", "GapTracker", "LostRange", "LostTotal", "now_ms"]
