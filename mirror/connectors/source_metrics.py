"""What a MirrorSource task reports, and to whom: the metrics sink the task calls (per batch, never per record).

Why a module of its own: the task and its helpers (the start-time incarnation decisions, the report of
records deleted before they were mirrored) all report to the same sink; declaring every hook here, with a
base whose hooks do nothing, lets each of them call the sink directly instead of probing it for hooks.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol


class SourceMetrics(Protocol):
    """Where the task reports per-batch, per-remote-partition measurements (times in ms; ``topic`` is the
    remote topic)."""

    def polled(self, topic: str, partition: int, records: int, value_bytes: int, max_age_ms: float) -> None:
        """A poll returned ``records`` records of this remote partition."""

    def acknowledged(self, topic: str, partition: int, records: int, max_latency_ms: float) -> None:
        """The target acknowledged ``records`` records; latency = ack time - source timestamp."""

    def throughput(self, limit: float | None, rate: float) -> None:
        """The flow's throughput cap on this node and the rate it measured (bytes per second)."""

    def assigned(self, partitions: Iterable[tuple[str, int]]) -> None:
        """The task's remote partitions, once at start (so idle ones can show 0)."""

    def lag(self, topic: str, partition: int, records: int, last_timestamp_ms: int | None) -> None:
        """Records of the partition not on the target yet, and the newest source timestamp read (None: unknown)."""

    def offset_syncs_sent(self, topic: str, partition: int, count: int = 1) -> None:
        """``count`` offset syncs of the partition were sent."""

    def source_changed(self, topic: str, partition: int, reason: str, count: int = 1) -> None:
        """The source changed under the mirror (a topic recreated, records deleted before they were mirrored)."""

    def records_lost(self, topic: str, partition: int, count: int) -> None:
        """``count`` source offsets were deleted before they were mirrored."""


class SourceMetricsBase:
    """Every hook of :class:`SourceMetrics` doing nothing: a sink overrides the ones it records.

    The lag bookkeeping on the task's path runs only for a sink that overrides :meth:`lag`
    (:func:`reports_lag`)."""

    def polled(self, topic: str, partition: int, records: int, value_bytes: int, max_age_ms: float) -> None:
        return None

    def acknowledged(self, topic: str, partition: int, records: int, max_latency_ms: float) -> None:
        return None

    def throughput(self, limit: float | None, rate: float) -> None:
        return None

    def assigned(self, partitions: Iterable[tuple[str, int]]) -> None:
        return None

    def lag(self, topic: str, partition: int, records: int, last_timestamp_ms: int | None) -> None:
        return None

    def offset_syncs_sent(self, topic: str, partition: int, count: int = 1) -> None:
        return None

    def source_changed(self, topic: str, partition: int, reason: str, count: int = 1) -> None:
        return None

    def records_lost(self, topic: str, partition: int, count: int) -> None:
        return None


class NoOpSourceMetrics(SourceMetricsBase):
    """The default sink: measurements are dropped, and the task keeps no per-record bookkeeping for them."""


def reports_lag(sink: SourceMetrics) -> bool:
    """Whether the sink records lag: the task then keeps the bookkeeping lag needs (records in flight, the
    newest offset read) on its path, which a sink that drops lag should not pay for."""
    return type(sink).lag is not SourceMetricsBase.lag


__all__ = ["NoOpSourceMetrics", "SourceMetrics", "SourceMetricsBase", "reports_lag"]
