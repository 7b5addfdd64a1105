"""Saying records lost before they were mirrored: one ERROR line and the counters, per lost range.

Why apart from the task: the task's module is the record path; this runs only when a jump in the
offsets read turned out to be records deleted on the source (see :mod:`mirror.connectors.source_gaps`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.types import ClientPartition, OffsetSpec
from mirror.client.formats import TopicPartition
from mirror.connectors.source_gaps import REASON_RECORDS_LOST, LostRange, LostTotal, now_ms
from mirror.connectors.source_metrics import SourceMetrics

log = logging.getLogger(__name__)

#: client.id role of the admin that looks up log starts after a jump in the offsets read
GAPS_ADMIN_ROLE = "source-gaps-admin"


def report_lost(lost: LostRange, total: LostTotal, flow: str, remote_topic: str, metrics: SourceMetrics) -> None:
    """Log the range once, count it (events and offsets) and add it to the partition's total."""
    log.error("%s", lost.describe(flow))
    total.add(lost, now_ms())
    metrics.source_changed(remote_topic, lost.tp.partition, REASON_RECORDS_LOST, 1)
    metrics.records_lost(remote_topic, lost.tp.partition, lost.count)


def log_starts_now(
    admin_props: Mapping[str, Any], partitions: Sequence[TopicPartition], timeout_s: float
) -> dict[TopicPartition, int]:
    """The partitions' log starts, waited for (task start only: a stored position below one is a loss found
    before the first record is read, so that record already carries it). {} when they cannot be read."""
    if not partitions:
        return {}
    try:
        admin = create_admin(admin_config(admin_props))
        futures = admin.list_offsets(
            {ClientPartition(tp.topic, tp.partition): OffsetSpec.earliest() for tp in partitions},
            request_timeout=timeout_s,
        )
        return {
            TopicPartition(k.topic, k.partition): int(f.result(timeout=timeout_s).offset) for k, f in futures.items()
        }
    except Exception as e:  # best effort: a jump in the offsets read is still checked later
        log.warning("Could not read the source partitions' log starts at task start: %s", e)
        return {}


__all__ = ["GAPS_ADMIN_ROLE", "log_starts_now", "report_lost"]
