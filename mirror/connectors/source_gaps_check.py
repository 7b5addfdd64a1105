"""Saying records lost before they were mirrored: one ERROR line and the counters, per lost range.

Why apart from the task: the task's module is the record path; this runs only when a jump in the
offsets read turned out to be records deleted on the source (see :mod:`mirror.connectors.source_gaps`).
"""

from __future__ import annotations

import logging
from typing import Any

from mirror.connectors.source_gaps import REASON_RECORDS_LOST, LostRange, LostTotal, now_ms

log = logging.getLogger(__name__)

#: client.id role of the admin that looks up log starts after a jump in the offsets read
GAPS_ADMIN_ROLE = "source-gaps-admin"


def report_lost(lost: LostRange, total: LostTotal, flow: str, remote_topic: str, metrics: Any) -> None:
    """Log the range once, count it (events and offsets) and add it to the partition's total."""
    log.error("%s", lost.describe(flow))
    total.add(lost, now_ms())
    changed = getattr(metrics, "source_changed", None)
    if changed is not None:
        changed(remote_topic, lost.tp.partition, REASON_RECORDS_LOST, 1)
    counted = getattr(metrics, "records_lost", None)
    if counted is not None:
        counted(remote_topic, lost.tp.partition, lost.count)


__all__ = ["GAPS_ADMIN_ROLE", "report_lost"]
