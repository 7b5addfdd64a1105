"""The transactional ids a backfill's tasks use, recorded before they start, so the next run fences only those.

A task's transactional id is that of its first unit (:func:`~mirror.jobs.backfill.plan.transactional_id`),
and a run may group the units otherwise than the one before it. Fencing the id of every partition covered
all groupings, but it leaves the target broker a transaction state per partition: at 2,000 partitions
the fence took 13 s on the embedded broker and every later transaction cost it several times the CPU. So
the Spark driver records the ids of the run's tasks in the flow's offsets topic (one compacted key per
flow) before the first task starts; the next run re-initialises exactly those (aborting what a killed
run left open, fencing a stray executor of it) and records its own. A flow no run recorded has nothing
to fence.
"""

from __future__ import annotations

from collections.abc import Iterable

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import create_producer
from connect_core.storage.offset_storage import (
    deserialize_offset_key,
    deserialize_offset_value,
    serialize_offset_key,
    serialize_offset_value,
)
from mirror.jobs.backfill.copy import BackfillClients, fence_ids, plain_producer_config
from mirror.jobs.backfill.plan import WorkUnit, transactional_id

#: the record's key: a connector name no connector has, so Connect's offset readers pass it by
RECORD_CONNECTOR = "mm2-backfill-transactional-ids"
_IDS = "transactional.ids"


def record_key(source: str, target: str) -> bytes:
    return serialize_offset_key(RECORD_CONNECTOR, {"source": source, "target": target})


def encode_ids(ids: Iterable[str]) -> bytes | None:
    """The record's value: the ids one per line in one string (offset values hold primitives only)."""
    return serialize_offset_value({_IDS: "\n".join(sorted(set(ids)))})


def decode_ids(value: bytes | None) -> list[str]:
    decoded = deserialize_offset_value(value)
    text = "" if decoded is None else str(decoded.get(_IDS) or "")
    return [line for line in text.split("\n") if line]


def task_ids(clients: BackfillClients, tasks: Iterable[list[WorkUnit]]) -> list[str]:
    return [transactional_id(clients.source, clients.target, units[0]) for units in tasks if units]


def recorded_ids(clients: BackfillClients) -> list[str]:
    """The ids the last run recorded for this flow (none if no run did)."""
    from mirror.driver.status import read_topic

    key = record_key(clients.source, clients.target)
    latest: list[list[str]] = [[]]

    def apply(k: bytes | None, value: bytes | None, _ts: int | None) -> None:
        if k == key and deserialize_offset_key(k) is not None:
            latest[0] = decode_ids(value)

    read_topic(clients.target_consumer, clients.offsets_topic, apply, clients.timeout_s)
    return latest[0]


def fence_earlier_runs(clients: BackfillClients) -> int:
    """Re-initialise the ids an earlier run recorded; how many there were."""
    ids = recorded_ids(clients)
    fence_ids(clients, ids)
    return len(ids)


def record_ids(clients: BackfillClients, ids: list[str]) -> None:
    """Write the ids this run's tasks will use, acknowledged before any task starts."""
    producer = create_producer(plain_producer_config(clients))
    try:
        producer.produce(clients.offsets_topic, encode_ids(ids), record_key(clients.source, clients.target))
        if producer.flush(clients.timeout_s) > 0:
            raise ConnectError(
                f"Cannot record the backfill's transactional ids in {clients.offsets_topic} "
                f"on cluster '{clients.target}' within {clients.timeout_s:.0f} s"
            )
    finally:
        producer.flush(0)
