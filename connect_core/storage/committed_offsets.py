"""The offsets topic as a read_committed consumer sees it, whether or not the broker filters aborted records.

An exactly-once worker's source offsets are written inside the tasks' transactions. The worker's
offset store reads them with ``isolation.level=read_committed`` (as Java's), which hides an aborted
offset record only if the broker lists aborted transactions in its fetch answers; some brokers do not.
A task that took over from a frozen instance (a zombie whose open transaction its
``init_transactions`` just aborted) would then resume from the zombie's aborted offset and skip the
aborted records: lost on the target. So this view reads raw batches with read_committed Fetch requests
and decides per answer: where the cluster is known to list aborted transactions
(:mod:`connect_core.kafka.broker_capabilities`) it drops what the answer lists, as Kafka's consumer
does (:mod:`connect_core.kafka.aborted_list`); otherwise, the unknown case included, it applies the
rule from the transaction markers itself (:mod:`connect_core.kafka.transaction_markers`), which is
Kafka's answer on any broker that writes markers. Every answer also feeds the capability's evidence.
It is incremental: per partition a position and the batches still waiting for a marker; each lookup
catches up from there to the end a read_committed reader sees (the last stable offset).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any, Self

from connect_core.api.errors import ConnectError
from connect_core.kafka.aborted_list import listed_read_committed
from connect_core.kafka.broker_capabilities import record_fetch_answer
from connect_core.kafka.clients import text_props
from connect_core.kafka.raw_fetch import FetchedBatches, RawFetcher
from connect_core.kafka.security import kafka_python_security
from connect_core.kafka.transaction_markers import CommittedRecord, ReadCommittedFilter
from connect_core.storage.memory import OffsetTable

#: The broker's wait for a partition with nothing new: every lookup pays it once when all is read (some
#: brokers wait it out even then); a partition of many batches that answered nothing gets a longer one.
FIRST_WAIT_MS = 20
LONGEST_WAIT_MS = 5000


class _PartitionState:
    def __init__(self) -> None:
        self.position = 0
        self.rule = ReadCommittedFilter(keep_markers=False)  # lives as long as the worker

    def readable(self, answer: FetchedBatches, broker_filters: bool) -> list[CommittedRecord]:
        """What this answer makes readable: by the broker's list where it filters and no batch is still
        held for a marker (a switch never splits a transaction), else by the markers."""
        if broker_filters and self.rule.open == 0:
            return listed_read_committed(answer.batches, answer.aborted_transactions)
        return [record for batch in answer.batches for record in self.rule.add(batch)]


class CommittedOffsetView:
    """Last committed value per offset key of one offsets topic (see the module docstring)."""

    def __init__(self, topic: str, fetcher: RawFetcher, timeout_s: float, cluster: Mapping[str, Any]) -> None:
        """``cluster``: client properties naming the cluster (its ``bootstrap.servers``), whose
        capabilities decide how answers are read and learn from them."""
        self.topic = topic
        self._cluster = dict(cluster)
        self._fetcher = fetcher
        self._timeout_s = timeout_s
        self._table = OffsetTable()
        self._partitions: dict[int, _PartitionState] = {}
        self._lock = threading.Lock()

    @classmethod
    def for_client_props(cls, topic: str, client_props: Mapping[str, Any], timeout_s: float) -> Self:
        """A view reading through a kafka-python client with the store's bootstrap servers and security."""
        props = text_props(client_props)
        fetcher = RawFetcher(
            props.get("bootstrap.servers", ""),
            kafka_python_security(props),
            client_id=str(props.get("client.id") or f"connect-offsets-{topic}"),
            request_timeout_s=timeout_s,
            read_committed=True,
        )
        return cls(topic, fetcher, timeout_s, props)

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        with self._lock:
            self._catch_up()
            return self._table.get(keys)

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        with self._lock:
            self._catch_up()
            return self._table.connector_partitions(connector)

    def items(self) -> list[tuple[bytes, bytes | None]]:
        """Every key's last committed value (None for a tombstone), after reading to the end."""
        with self._lock:
            self._catch_up()
            return self._table.items()

    def close(self) -> None:
        self._fetcher.close()

    def _catch_up(self) -> None:
        """Read every partition to its current end (last stable offset), applying what became readable."""
        deadline = time.monotonic() + self._timeout_s
        if not self._partitions:
            self._partitions = {p: _PartitionState() for p in self._fetcher.partitions(self.topic)}
        behind = dict(self._partitions)
        wait_ms = FIRST_WAIT_MS
        while behind:
            answers = self._fetcher.fetch(self.topic, {p: state.position for p, state in behind.items()}, wait_ms)
            progressed = False
            for partition, answer in answers.items():
                state = behind[partition]
                state.position = max(state.position, answer.log_start_offset)
                capabilities = record_fetch_answer(self._cluster, answer.batches, answer.aborted_transactions)
                for record in state.readable(answer, capabilities.filters_aborted_transactions):
                    self._table.apply(record.key, record.value)
                if answer.batches:
                    state.position = answer.batches[-1].next_offset
                    progressed = True
                if state.position >= answer.end_offset:
                    del behind[partition]
            if not behind:
                return
            if time.monotonic() >= deadline:
                raise ConnectError(
                    f"Timed out reading offsets topic {self.topic} to its end (partitions {sorted(behind)} behind)"
                )
            if not progressed:  # nothing below the end: a broker that stopped scanning when its wait ran out
                wait_ms = min(wait_ms * 4, LONGEST_WAIT_MS)


def read_committed_offsets(
    topic: str, client_props: Mapping[str, Any], timeout_s: float
) -> list[tuple[bytes, bytes | None]]:
    """One read of an offsets topic to its end, each key's last committed value: for a reader that must
    not resume from an aborted transaction's offset record (a backfill resuming after a killed attempt)."""
    view = CommittedOffsetView.for_client_props(topic, client_props, timeout_s)
    try:
        return view.items()
    finally:
        view.close()
