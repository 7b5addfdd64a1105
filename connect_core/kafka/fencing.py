"""InitProducerId for transactional ids, to fence out the producers that hold them (Admin.fenceProducers).

For each id the broker bumps the epoch and aborts its open transaction; a producer still holding an
older epoch gets PRODUCER_FENCED on its next produce or commit. confluent-kafka's admin client has no
``fence_producers``, so a short-lived transactional producer per id sends the request
(``init_transactions``) and is dropped; it never opens a transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from confluent_kafka import KafkaException

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import create_producer

FENCE_TIMEOUT_S = 90.0  # Java: the REST request timeout bounds Admin.fenceProducers
MAX_PARALLEL = 8


def fence_transactional_ids(conf: Mapping[str, Any], transactional_ids: Iterable[str],
                            timeout_s: float = FENCE_TIMEOUT_S, *, whose: str = "",
                            warm_up_topic: str | None = None) -> None:  # fmt: skip
    """InitProducerId for every id (librdkafka producer config ``conf``); raise ConnectError on any failure.

    The one way the product fences: Connect's zombie fencing, ``mm2 run`` taking back an expired backfill
    lease, a backfill fencing an earlier run's ids. ``whose`` names the ids' owner in the error (``"the
    backfill's "``). ``warm_up_topic``: metadata of this topic is read first, twice, so librdkafka has a broker
    up before it looks for the transaction coordinator (it would otherwise wait out a 500 ms retry timer: the
    first answer may come from the bootstrap connection it then drops for the broker the answer names)."""
    ids = list(transactional_ids)
    if not ids:
        return

    def fence(transactional_id: str) -> None:
        producer = create_producer({**conf, "transactional.id": transactional_id, "enable.idempotence": True})
        try:
            if warm_up_topic is not None:
                producer.list_topics(warm_up_topic, timeout_s)
                producer.list_topics(warm_up_topic, timeout_s)
            producer.init_transactions(timeout_s)
        except KafkaException as e:
            raise ConnectError(f"Failed to fence out {whose}transactional id {transactional_id!r}: {e}") from e
        finally:
            producer.flush(0)

    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(ids)), thread_name_prefix="zombie-fencing") as pool:
        for future in [pool.submit(fence, i) for i in ids]:
            future.result()
