"""Target partitions that already hold records the flow did not copy, found before anything is written.

A backfill copies a partition from where the flow's offsets say it stands. With no position there (a
lost offsets topic, a target once written by another mirror or by hand) yet records in the target
partition, it would copy the whole backlog again behind them: duplicates no reader can tell apart.
Such partitions are named in the plan and the job refuses them unless forced.

"Holds records" is what a read_committed consumer sees: a killed earlier run's aborted transaction
leaves nothing (on Apache Kafka; brokers that show aborted records to read_committed consumers count
them). Partitions
a running ``mm2 run`` of the flow is copying are not foreign: its positions reach the offsets topic at
its next flush or when the backfill takes the partitions from it.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable, Mapping
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import consumer_config, create_consumer
from connect_core.kafka.types import OFFSET_BEGINNING, ClientPartition, KafkaError
from connect_core.storage.internal_topics import store_client_props
from mirror.connectors.config import TASK_TOPIC_PARTITIONS
from mirror.jobs.backfill.flow import PreparedBackfill
from mirror.jobs.backfill.handoff import read_config_topic
from mirror.jobs.backfill.plan import assigned_partitions

_SHOWN = 20


def candidates(prepared: PreparedBackfill, live: Iterable[tuple[str, int]] = ()) -> list[tuple[str, int, str]]:
    """(source topic, partition, remote topic) of planned units the flow holds no position for, whose remote
    topic existed at planning and that no live task of the flow is copying."""
    missing, running = set(prepared.missing_topics), set(live)
    return [
        (u.topic, u.partition, u.target_topic)
        for u in prepared.plan.units
        if (u.topic, u.partition) not in prepared.committed
        and u.topic not in missing
        and (u.topic, u.partition) not in running
    ]


def live_partitions(prepared: PreparedBackfill, client_props: Mapping[str, Any]) -> set[tuple[str, int]]:
    """Source partitions the flow's current task configs assign to live tasks (none if it never ran)."""
    if not prepared.flow_has_run:
        return set()
    view = read_config_topic(prepared.flow, dict(client_props))
    return {tp for props in view.tasks.values() for tp in assigned_partitions(props.get(TASK_TOPIC_PARTITIONS))}


def holding_records(
    consumer_props: Mapping[str, Any], partitions: list[tuple[str, int]], timeout_s: float
) -> list[tuple[str, int]]:
    """Those of ``partitions`` (target topic, partition) where a read_committed consumer finds a record."""
    if not partitions:
        return []
    consumer = create_consumer(
        consumer_config(
            consumer_props,
            {
                "group.id": f"mm2-backfill-foreign-{uuid.uuid4().hex[:8]}",
                "enable.auto.commit": False,
                "enable.partition.eof": True,
                "isolation.level": "read_committed",
                "max.partition.fetch.bytes": 1024,
            },
        )
    )
    found: set[tuple[str, int]] = set()
    settled: set[tuple[str, int]] = set()
    try:
        consumer.assign([ClientPartition(t, p, OFFSET_BEGINNING) for t, p in partitions])
        deadline = time.monotonic() + timeout_s
        while len(settled) < len(partitions):
            if time.monotonic() >= deadline:
                late = ", ".join(f"{t}-{p}" for t, p in partitions if (t, p) not in settled)
                raise ConnectError(f"cannot read target partitions {late} within {timeout_s:g}s")
            for msg in consumer.consume(500, 0.2):
                tp = (str(msg.topic()), int(msg.partition() or 0))
                err = msg.error()
                if err is not None and err.code() != KafkaError._PARTITION_EOF:
                    raise ConnectError(f"cannot read target partition {tp[0]}-{tp[1]}: {err.str()}")
                if err is None:
                    found.add(tp)
                if tp not in settled:
                    settled.add(tp)
                    consumer.pause([ClientPartition(*tp)])
    finally:
        consumer.close()
    return [tp for tp in partitions if tp in found]


def foreign_partitions(prepared: PreparedBackfill) -> list[tuple[str, int]]:
    """(target topic, partition) of planned units whose target partition holds records the flow did not copy."""
    live = live_partitions(prepared, store_client_props(prepared.flow.worker_props))
    checked = [(remote, p) for _topic, p, remote in candidates(prepared, live)]
    return holding_records(prepared.clients.target_consumer, checked, prepared.clients.timeout_s)


def describe(partitions: list[tuple[str, int]]) -> str:
    """``A.orders-0, A.orders-2`` (the first few, then how many more)."""
    names = [f"{t}-{p}" for t, p in sorted(partitions)]
    shown = ", ".join(names[:_SHOWN])
    return shown if len(names) <= _SHOWN else f"{shown} and {len(names) - _SHOWN} more"


__all__ = ["candidates", "describe", "foreign_partitions", "holding_records", "live_partitions"]
