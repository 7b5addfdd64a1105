"""The source task's start-time incarnation check: topic ids looked up, decisions applied, events said.

Why apart from the task: the task's module is the record path; this is one admin request at start and
the saying of an event (one ERROR line, a counter) when a mirrored source topic was recreated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from connect_core.kafka.admin import TopicAdmin
from mirror.client.formats import TopicPartition
from mirror.connectors.source_incarnation import (
    REASON_RECREATED,
    RecreatedAction,
    StartDecision,
    decide_start,
)

log = logging.getLogger(__name__)

#: client.id role of the admin that reads the source topics' ids at task start
INCARNATION_ADMIN_ROLE = "topic-incarnation-admin"

#: ``(remote topic, partition, reason, count)``: the metrics sink's hook for source changes
ChangeHook = Callable[[str, int, str, int], None]


def lookup_topic_ids(admin_props: Mapping[str, Any], topics: Sequence[str], timeout_s: float) -> dict[str, str]:
    """The source topics' ids now; {} when they cannot be read (then nothing is compared: no false alarm)."""
    if not topics:
        return {}
    admin = TopicAdmin(admin_props, timeout_s=timeout_s)
    try:
        return admin.topic_ids(topics, timeout_s)
    except Exception as e:  # best effort: a task must not fail to start because ids are unavailable
        log.warning("Could not read the source topics' ids (a recreated topic is detected at the next start): %s", e)
        return {}
    finally:
        admin.close()


def start_decisions(
    partitions: Sequence[TopicPartition],
    stored: Sequence[Mapping[str, Any] | None],
    topic_ids: Mapping[str, str],
    action: RecreatedAction,
    flow: str,
    remote_topic: Callable[[str], str],
    on_change: ChangeHook | None,
) -> list[StartDecision]:
    """Per partition where to start; each recreation found is logged once (ERROR) and counted.

    Raises :class:`~mirror.connectors.source_incarnation.SourceTopicRecreatedError` for ``fail``
    (logged once by the runtime as the task's failure).
    """
    out: list[StartDecision] = []
    for tp, value in zip(partitions, stored, strict=True):
        decision = decide_start(tp, value, topic_ids.get(tp.topic), action)
        event = decision.event
        if event is not None:
            log.error("%s", event.describe(flow, action))
            if on_change is not None:
                on_change(remote_topic(tp.topic), tp.partition, REASON_RECREATED, 1)
        out.append(decision)
    return out


__all__ = ["INCARNATION_ADMIN_ROLE", "ChangeHook", "lookup_topic_ids", "start_decisions"]
