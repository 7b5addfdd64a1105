"""The offsets topic as a read_committed consumer sees it, whether or not the broker filters aborted records.

An exactly-once worker's source offsets are written inside the tasks' transactions. The worker's
offset store reads them with ``isolation.level=read_committed`` (as Java's), which hides an aborted
offset record only if the broker lists aborted transactions in its fetch answers; some brokers do not.
A task that took over from a frozen instance (a zombie whose open transaction its
``init_transactions`` just aborted) would then resume from the zombie's aborted offset and skip the
aborted records: lost on the target. So this view reads raw batches through
:func:`connect_core.kafka.committed_reads.read_committed_to_end`, which applies the broker's list where the
cluster is known to filter and the transaction markers otherwise. It is incremental: per partition a
cursor (position and the batches still waiting for a marker); each lookup catches up from there to the
end a read_committed reader sees (the last stable offset).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Self

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import text_props
from connect_core.kafka.committed_reads import CommittedCursor, CommittedReadTimeout, read_committed_to_end
from connect_core.kafka.raw_fetch import RawFetcher
from connect_core.kafka.security import kafka_python_security
from connect_core.storage.memory import OffsetTable


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
        self._partitions: dict[int, CommittedCursor] = {}
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
        if not self._partitions:
            self._partitions = {p: CommittedCursor() for p in self._fetcher.partitions(self.topic)}
        try:
            for _, record in read_committed_to_end(
                self._fetcher, self.topic, self._partitions, self._cluster, self._timeout_s
            ):
                self._table.apply(record.key, record.value)
        except CommittedReadTimeout as e:
            raise ConnectError(
                f"Timed out reading offsets topic {self.topic} to its end (partitions {e.behind} behind)"
            ) from None


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
