"""What the two copy loops share: a copied run in flight, and what they use of the worker.

A run (consecutive messages of one source partition, or one source batch) is one SubmittedRecords handle
and one :class:`~connect_core.api.message_copy.CopyRun` for its route. Both loops hand a completed run to
:meth:`CopyingWorker.run_acknowledged`, the one place that makes it committable and tells its route, so the
message path and the batch path cannot drift apart in what an acknowledgement means.
"""

from __future__ import annotations

from typing import Any, Protocol

from connect_core.api.message_copy import CopyRoute
from connect_core.kafka.types import KafkaError
from connect_core.model import ConnectorTaskId
from connect_core.runtime.submitted_records import SubmittedRecord, SubmittedRecords


class CopiedRun(SubmittedRecord):
    """One run in flight: its SubmittedRecords handle and what its route hears of it (a ``CopyRun``)."""

    __slots__ = (
        "count",
        "delivered",
        "first_downstream",
        "first_timestamp",
        "first_upstream",
        "last_downstream",
        "last_timestamp",
        "last_upstream",
        "route",
        "skipped",
        "upstream_offsets",
        "value_bytes",
    )

    def __init__(self, owner: SubmittedRecords, route: CopyRoute, offset: dict[str, Any] | None, count: int) -> None:
        # key: set by SubmittedRecords.track
        super().__init__(owner, None, route.source_partition, offset)
        self.route = route
        self.count = count
        self.delivered = 0
        self.skipped = 0
        self.first_upstream = self.last_upstream = -1
        self.upstream_offsets: list[int] | None = None  # every record's offset, only when they are not consecutive
        self.value_bytes = 0
        self.first_timestamp = self.last_timestamp = -1
        self.first_downstream = self.last_downstream = -1


class CopyingWorker(Protocol):
    """What the copy loops use of the WorkerSourceTask they run for (declared here so that the loops and
    the task do not import each other)."""

    id: ConnectorTaskId
    producer: Any
    submitted: SubmittedRecords
    #: target topics known to exist (the loops add the ones they write to)
    known_topics: set[str]
    #: the worker creates missing topics (a run to a topic it does not know goes the general path)
    creates_topics: bool
    #: the first delivery failure that fails the task (None while there is none)
    producer_error: BaseException | None

    def produce_when_room(self, topic: str, value: Any, key: Any, p: int, cb: Any, t: int, headers: Any) -> None:
        """Produce once the producer's queue has room (serving delivery reports meanwhile)."""
        ...

    def run_acknowledged(self, run: CopiedRun) -> None:
        """Every record of ``run`` was delivered or skipped: it becomes committable and its route hears of it."""
        ...

    def record_send_failed(self, err: KafkaError, topic: str) -> bool:
        """A copied record the target refused: True when errors.tolerance=all skips it, else the task fails."""
        ...

    def send_failed(self, error: BaseException) -> None:
        """A send that fails the task (the first such error is the one it fails with)."""
        ...


__all__ = ["CopiedRun", "CopyingWorker"]
