"""Optional source-task interface: copy the source's record batches as bytes (MirrorMaker's batch path).

A task that reads Kafka itself can hand the worker whole record batches instead of records; the worker
produces them unchanged (only the fields a producer owns are rewritten), never decoding a record. The
worker offers this only when nothing in its pipeline could change a record (no transformations or
predicates, ByteArrayConverter for keys, values and headers); the task accepts when its own configuration
allows (an exactly-once worker asks ``accepts_batch_copy`` before ``start``: the one transactional producer
the task's id may have is then the batch producer, initialised before the task reads its offsets), and then
hands out, in source order per partition:

* :class:`CopyBatch` - one batch to produce as it is to ``route.topic``/``route.partition``;
* :class:`DecodedRecords` - records of a batch the batch path cannot pass (old format, LogAppendTime,
  too large for the target, ...), sent through the record path. The worker keeps per-partition order
  across a switch of path by draining what the other path has in flight first.

Each batch is one run for the task's :class:`~connect_core.api.message_copy.CopyRoute`: ``dispatched``
once produced, ``acknowledged`` once the target holds it, its offset committed only then (one source
offset per batch end).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from connect_core.api.message_copy import CopyRoute
from connect_core.api.records import SourceRecord


@dataclass(slots=True)
class CopyBatch:
    """A source batch to produce unchanged (``batch`` is a :class:`connect_core.kafka.record_batch.RawBatch`)."""

    route: CopyRoute
    batch: Any


@dataclass(slots=True)
class DecodedRecords:
    """Records the record path must send (in order, before anything later of their partition);
    ``max_batch_bytes``: the target topic's limit a batch they are built into must stay below (None: unknown)."""

    records: list[SourceRecord]
    max_batch_bytes: int | None = None


BatchItem = CopyBatch | DecodedRecords


@runtime_checkable
class BatchCopyTask(Protocol):
    """Implemented, next to ``SourceTask``, by a task that can read its source as raw batches."""

    def accepts_batch_copy(self, props: dict[str, str]) -> bool:
        """Before ``start``: whether the task, offered the batch path, would read batches with ``props``."""
        ...

    def offer_batch_copy(self) -> None:
        """Called before ``start``: the worker can produce batches for this task."""
        ...

    @property
    def batch_copy_active(self) -> bool:
        """After ``start``: the task reads batches (``poll_batches``) instead of records (``poll``)."""
        ...

    def poll_batches(self, in_flight: bool) -> list[BatchItem] | None:
        """The next batches and decoded records in source order; ``in_flight``: copies are still
        unacknowledged (wait only briefly, the worker serves acknowledgements between calls)."""
        ...

    def batch_backlog(self) -> bool:
        """After a poll: whether the source answers read so far left records to read at once (a backlog)."""
        ...

    @property
    def batch_copy_max_in_flight_bytes(self) -> int:
        """The most bytes of batches produced and not yet acknowledged (fetching waits above it)."""
        ...

    @property
    def batch_copy_transaction_max_bytes(self) -> int:
        """Exactly-once, poll boundary: how many bytes one transaction may take over successive polls while
        the source has a backlog (0: a transaction per poll; :mod:`connect_core.runtime.transaction_span`)."""
        ...

    @property
    def batch_copy_transaction_max_ms(self) -> int:
        """Exactly-once, poll boundary: how long such a transaction may stay open."""
        ...

    def batch_read_handle(self) -> int | None:
        """While a read of the source is out: a file descriptor that is readable once the read has data to
        take, so the worker can wait for the first of it and the target's acknowledgements (None: none out)."""
        ...


__all__ = ["BatchCopyTask", "BatchItem", "CopyBatch", "DecodedRecords"]
