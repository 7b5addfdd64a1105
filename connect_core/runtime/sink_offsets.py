"""Which consumer offsets a sink task may commit (the bookkeeping of Java's ``WorkerSinkTask``), pure logic.

Offsets here are Kafka's "next offset to read". ``current`` advances only when ``put`` accepted a
batch (every consumed record of it counts, also those filtered out or sent to the dead-letter queue);
``last_committed`` is what the group holds. Before a commit the task's ``pre_commit`` answers with
the offsets it has made durable; an answer beyond what was delivered is ignored (as Java does), and a
commit that would change nothing is skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping

from connect_core.api.sink import TopicPartition

log = logging.getLogger(__name__)


class SinkOffsets:
    """Delivered and committed offsets of the partitions assigned to one sink task."""

    def __init__(self) -> None:
        self.assigned: set[TopicPartition] = set()
        self.current: dict[TopicPartition, int] = {}
        self.last_committed: dict[TopicPartition, int] = {}
        #: Positions the task asked for through ``context.offset`` (applied at the next poll).
        self.rewinds: dict[TopicPartition, int] = {}

    def assign(self, partitions: Iterable[TopicPartition], committed: Mapping[TopicPartition, int]) -> None:
        """New partitions; ``committed`` holds the group's offsets for those that have one."""
        for tp in partitions:
            self.assigned.add(tp)
            if tp in committed and committed[tp] >= 0:
                self.current[tp] = committed[tp]
                self.last_committed[tp] = committed[tp]

    def revoke(self, partitions: Iterable[TopicPartition]) -> None:
        for tp in partitions:
            self.assigned.discard(tp)
            self.current.pop(tp, None)
            self.last_committed.pop(tp, None)
            self.rewinds.pop(tp, None)

    def delivered(self, next_offsets: Mapping[TopicPartition, int]) -> None:
        """``put`` accepted a batch: these partitions are consumed up to (excluding) these offsets."""
        for tp, offset in next_offsets.items():
            if tp in self.assigned:
                self.current[tp] = offset

    def request_offsets(self, offsets: Mapping[TopicPartition, int]) -> None:
        """The task rewinds (or skips) partitions: consumption and the commit point move there."""
        for tp, offset in offsets.items():
            self.rewinds[tp] = offset
            if tp in self.assigned:
                self.current[tp] = offset

    def take_rewinds(self) -> dict[TopicPartition, int]:
        """The requested positions of assigned partitions, once."""
        out = {tp: o for tp, o in self.rewinds.items() if tp in self.assigned}
        self.rewinds.clear()
        return out

    def candidates(self, partitions: Iterable[TopicPartition] | None = None) -> dict[TopicPartition, int]:
        """What ``pre_commit`` is offered: the current offsets of ``partitions`` (default: all assigned)."""
        wanted = self.assigned if partitions is None else set(partitions)
        return {tp: o for tp, o in self.current.items() if tp in wanted}

    def committable(
        self, offered: Mapping[TopicPartition, int], task_answer: Mapping[TopicPartition, int]
    ) -> dict[TopicPartition, int] | None:
        """Offsets to commit after ``pre_commit`` answered ``task_answer``; None when nothing would change.

        Only partitions that were offered count; an offset past the offered one is ignored.
        """
        if not task_answer:
            return None
        result = {tp: self.last_committed[tp] for tp in offered if tp in self.last_committed}
        for tp, offset in task_answer.items():
            if tp not in offered:
                log.debug("Ignoring task provided offset %s/%s -- partition not assigned", tp, offset)
                continue
            if offset <= offered[tp]:
                result[tp] = offset
            else:
                log.warning("Ignoring invalid task provided offset %s/%s -- not yet consumed, currentOffset=%s",
                            tp, offset, offered[tp])  # fmt: skip
        if all(self.last_committed.get(tp) == o for tp, o in result.items()):
            return None
        return result

    def committed(self, offsets: Mapping[TopicPartition, int]) -> None:
        for tp, offset in offsets.items():
            if tp in self.assigned:
                self.last_committed[tp] = offset

    def reset_to_committed(self, partitions: Iterable[TopicPartition]) -> dict[TopicPartition, int]:
        """After a failed ``pre_commit``: consume again from the last committed offsets (returned)."""
        back = {tp: self.last_committed[tp] for tp in partitions if tp in self.last_committed}
        self.current.update(back)
        return back
