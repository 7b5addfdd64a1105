"""A source partition truncated under the mirror: its end offset fell below a position already mirrored.

Why: an unclean leader election (or a replica restored from an older copy) can leave a partition's log
shorter than what the mirror already copied. The records the target holds past the new end exist nowhere
on the source any more, and the source will write *other* records at those offsets: resuming at the old
position skips them silently, and offset syncs of the two histories would mix. A recreated topic also
ends below the old position; it is told apart by its topic id (``source_incarnation``), so a truncation
is only ever decided within one incarnation.

Pure logic: the task reads end offsets (a fetch's high watermark, or ListOffsets) and applies the decision.
Not wired into the task yet (issue 38): the decision and its wording are fixed here first.
"""

from __future__ import annotations

from dataclasses import dataclass

from mirror.client.formats import TopicPartition

#: Metric/alert reason of a truncation.
REASON_TRUNCATED = "truncated"


@dataclass(frozen=True)
class Truncation:
    """A partition whose end lies below the last offset mirrored from it."""

    tp: TopicPartition
    mirrored_through: int  # the last offset copied to the target
    end_offset: int  # the partition's end now (the next offset the source will write)

    @property
    def count(self) -> int:
        """Offsets mirrored that the source no longer has (they will be written again with other records)."""
        return self.mirrored_through + 1 - self.end_offset

    def describe(self, flow: str) -> str:
        """The one ERROR line of the event: flow, topic, partition, offsets and count."""
        return (
            f"{flow}: source topic {self.tp.topic} partition {self.tp.partition} was truncated: it ends at offset "
            f"{self.end_offset}, below offset {self.mirrored_through} already mirrored; {self.count} mirrored "
            f"records (offsets {self.end_offset} to {self.mirrored_through}) are no longer on the source and the "
            "source will write other records at those offsets"
        )


def truncation(
    tp: TopicPartition,
    mirrored_through: int,
    end_offset: int,
    topic_id_then: str | None = None,
    topic_id_now: str | None = None,
) -> Truncation | None:
    """The truncation of ``tp``, or None.

    * nothing mirrored yet, or the end unknown (negative): nothing to compare;
    * another topic id now than when the position was mirrored: a recreation, not a truncation;
    * an end past the last offset mirrored: the log still holds everything mirrored (an end *equal* to
      ``mirrored_through`` means that record is gone: the end is the next offset to be written).
    """
    if mirrored_through < 0 or end_offset < 0:
        return None
    if topic_id_then and topic_id_now and topic_id_then != topic_id_now:
        return None
    if end_offset > mirrored_through:
        return None
    return Truncation(tp, mirrored_through, end_offset)


__all__ = ["REASON_TRUNCATED", "Truncation", "truncation"]
