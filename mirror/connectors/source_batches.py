"""The MirrorSource task's batch reader: the assigned partitions read as raw batches, in source order, each
batch passed on as bytes or, when it cannot be, as decoded records for the record path.

Per partition it keeps the next offset to fetch and a read_committed rule
(:class:`~connect_core.kafka.committed_batches.CommittedBatches`: aborted transactions and control
batches never reach the target; an open transaction waits, the fetch stopping at the last stable
offset). A batch goes to the record path when :func:`~connect_core.kafka.record_batch.ineligible_reason`
says so (old format, LogAppendTime, offset gaps, above the target topic's ``max.message.bytes``) or when
the partition's position lies inside it (a resume from a record-path offset: only its records from the
position on are sent). Each reason is logged once per partition, never per batch.

The broker's wait in each Fetch is the flow's ``fetch.max.wait.ms`` (as the record path's consumer), not
the task's poll wait: the task only waits that long for the answer, the Fetch staying in flight across
polls. A broker that needs longer to serve a partition (one that lists its stored batch objects within
the wait: connect_core.kafka.fetch_fairness) got 100 ms while copies were in flight and then answered
nothing for some partitions, ever.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kafka.record import MemoryRecords  # type: ignore[import-untyped]

from connect_core.api.batch_copy import BatchItem, CopyBatch, DecodedRecords
from connect_core.api.records import SourceRecord
from connect_core.api.schema import OPTIONAL_BYTES_SCHEMA
from connect_core.kafka.batch_fetcher import BatchFetcher
from connect_core.kafka.committed_batches import CommittedBatches
from connect_core.kafka.record_batch import RawBatch, ineligible_reason
from mirror.client.formats import OFFSET_KEY

log = logging.getLogger(__name__)

#: Apache Kafka's default max.message.bytes (topic) / message.max.bytes (broker).
DEFAULT_MAX_MESSAGE_BYTES = 1048588
#: Offsets asked for before the first fetch of a partition that starts at the end.
LATEST = -1
#: The broker's wait per Fetch when the flow sets none (Kafka's consumer default for fetch.max.wait.ms).
DEFAULT_FETCH_WAIT_MS = 500
_POSITION_INSIDE = "the resume position lies inside the batch"


@dataclass
class PartitionReader:
    """One assigned partition: where to fetch next, its transaction rule, what the source last reported."""

    route: Any  # the task's route (CopyRoute): topic/partition on the target, source partition map
    position: int
    resume_from: int  # the first offset to copy: a batch that starts before it is copied from it on only
    rule: CommittedBatches = field(default_factory=CommittedBatches)
    high_watermark: int = -1
    reasons: set[str] = field(default_factory=set)
    held: bool = False  # left out of the Fetches (see SourceBatches.hold)
    skip_answer: bool = False  # the answer of the Fetch in flight predates a reposition: dropped

    @property
    def caught_up(self) -> bool:
        """Everything up to the high watermark was fetched and nothing waits for a marker."""
        return 0 <= self.high_watermark <= self.position and not self.rule.holding


class SourceBatches:
    """Reads the task's partitions as raw batches (task thread)."""

    def __init__(
        self,
        fetcher: BatchFetcher,
        max_message_bytes: Callable[[str], int],
        fetch_wait_ms: int = DEFAULT_FETCH_WAIT_MS,
    ) -> None:
        self._fetcher = fetcher
        self._max_message_bytes = max_message_bytes
        self._fetch_wait_ms = fetch_wait_ms
        self._fetch_bytes = (fetcher.max_bytes, fetcher.partition_max_bytes)  # as configured
        self.partitions: dict[tuple[str, int], PartitionReader] = {}
        self.fallback_batches = 0

    def assign(self, topic: str, partition: int, route: Any, position: int) -> None:
        """Read ``topic``-``partition`` from ``position`` (an offset, or :data:`LATEST`)."""
        self.partitions[(topic, partition)] = PartitionReader(route, position, position)

    def hold(self, topic: str, partition: int) -> None:
        """Fetch nothing more of the partition until :meth:`reposition` (an answer in flight is dropped)."""
        reader = self.partitions.get((topic, partition))
        if reader is not None:
            reader.held = True
            reader.skip_answer = self._fetcher.pending

    def reposition(self, topic: str, partition: int, position: int) -> None:
        """Read the partition from ``position`` on, as newly assigned (a new incarnation of its topic)."""
        reader = self.partitions.get((topic, partition))
        if reader is None:
            return
        fresh = PartitionReader(reader.route, position, position)
        fresh.skip_answer = reader.skip_answer or self._fetcher.pending
        self.partitions[(topic, partition)] = fresh

    def recreated_topics(self) -> set[str]:
        """Topics the fetcher saw under a new id: not fetched until :meth:`accept_incarnation`."""
        return self._fetcher.recreated_topics()

    def accept_incarnation(self, topic: str) -> None:
        """Fetch ``topic`` again (its partitions were repositioned, or it turned out unchanged)."""
        self._fetcher.accept_incarnation(topic)

    def backlog(self) -> bool:
        """Whether the last answers left a partition below its high watermark (more to read at once)."""
        return any(0 <= r.position < r.high_watermark for r in self.partitions.values() if not r.held)

    @property
    def wait_handle(self) -> int | None:
        """While a Fetch is out: a descriptor readable once its answer has data to read (None otherwise)."""
        return self._fetcher.wait_handle

    @property
    def fetch_max_bytes(self) -> int:
        """The configured most bytes of one Fetch (``fetch.max.bytes``)."""
        return self._fetch_bytes[0]

    def limit_fetch(self, most: int) -> None:
        """Ask each Fetch from now on for at most ``most`` bytes (and each partition for as many), within the
        configured sizes; a broker still answers a batch larger than that whole."""
        total, partition = self._fetch_bytes
        self._fetcher.max_bytes = min(total, most)
        self._fetcher.partition_max_bytes = min(partition, most)

    def read(self, max_wait_ms: int, block: bool = True) -> tuple[list[BatchItem], list[PartitionReader]]:
        """One Fetch over every partition: the items to send (source order per partition) and the
        partitions the answer covered (their high watermarks updated). Waits up to ``max_wait_ms`` for the
        answer (``block`` False: not at all, the caller serves acknowledgements); without one yet nothing
        is returned and the Fetch stays in flight for the next call."""
        if not self._fetcher.pending:
            for asked in self.partitions.values():
                asked.skip_answer = False  # answers from here on are of the positions asked now
            wanted = {tp: max(p.position, 0) for tp, p in self.partitions.items() if not p.held}
            if not wanted:
                return [], []
            self._fetcher.send(wanted, self._fetch_wait_ms)
        answers = self._fetcher.receive(max_wait_ms if block else 0)
        if answers is None:
            return [], []
        items: list[BatchItem] = []
        seen: list[PartitionReader] = []
        for tp, answer in answers.items():
            reader = self.partitions.get(tp)
            if reader is None or reader.held or reader.skip_answer:
                continue
            seen.append(reader)
            reader.high_watermark = answer.high_watermark
            if reader.position == LATEST:
                reader.position = reader.resume_from = answer.high_watermark  # nothing before the end is copied
                continue
            if answer.fetch_offset > reader.position:
                reader.position = answer.fetch_offset  # below the log start: records deleted before copied
            if not answer.batches:
                continue
            reader.position = answer.batches[-1].next_offset
            for batch in reader.rule.add(answer.batches, answer.aborted):
                self._pass(reader, batch, items)
        return items, seen

    def _pass(self, reader: PartitionReader, batch: RawBatch, items: list[BatchItem]) -> None:
        route = reader.route
        position = reader.resume_from
        if batch.base_offset < position:
            reason: str | None = _POSITION_INSIDE
        else:
            reason = ineligible_reason(batch, self._max_message_bytes(route.topic))
        if reason is None:
            items.append(CopyBatch(route, batch))
            return
        if reason not in reader.reasons:
            reader.reasons.add(reason)
            log.info(
                "Copying batches of %s-%d through the record path where needed: %s",
                route.topic,
                route.partition,
                reason,
            )
        self.fallback_batches += 1
        records = decoded_records(route, batch, position)
        if records:
            items.append(DecodedRecords(records, self._max_message_bytes(route.topic)))

    def close(self) -> None:
        self._fetcher.close()


def decoded_records(route: Any, batch: RawBatch, from_offset: int) -> list[SourceRecord]:
    """The batch's records at or after ``from_offset`` as the record path's SourceRecords (the same fields
    the consumer-based path gives: key, value, headers, timestamp - LogAppendTime's when the batch has it)."""
    memory = MemoryRecords(bytes(batch.data))
    out: list[SourceRecord] = []
    schema = OPTIONAL_BYTES_SCHEMA
    sp = route.source_partition
    while (decoded := memory.next_batch()) is not None:
        for record in decoded:
            if record.offset < from_offset:
                continue
            ts = record.timestamp
            out.append(
                SourceRecord(
                    sp,
                    {OFFSET_KEY: record.offset},
                    route.topic,
                    route.partition,
                    record.key,
                    record.value,
                    list(record.headers or []),
                    ts if ts is not None and ts >= 0 else None,
                    schema,
                    schema,
                )
            )
    return out


__all__ = [
    "DEFAULT_FETCH_WAIT_MS",
    "DEFAULT_MAX_MESSAGE_BYTES",
    "LATEST",
    "PartitionReader",
    "SourceBatches",
    "decoded_records",
]
