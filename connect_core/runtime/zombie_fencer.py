"""Fences the transactional producers of a connector's previous task generation (Java ``Worker.fenceZombies``).

Java calls ``Admin.fenceProducers``, which sends InitProducerId for each transactional id: the
broker bumps the id's epoch, aborts its open transaction, and any producer still holding an older
epoch gets PRODUCER_FENCED on its next produce or commit. confluent-kafka's admin client has no
``fence_producers``, so the same request is sent by a short-lived transactional producer per id
(``init_transactions``), with the connector's admin client settings (Java uses the admin config
too: the ``admin.`` worker keys and ``admin.override.`` connector keys, on the same cluster the
task producers write to).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from connect_core.kafka.clients import producer_config
from connect_core.kafka.fencing import FENCE_TIMEOUT_S, fence_transactional_ids
from connect_core.runtime.worker_config import ConnectorClientConfigOverridePolicy, admin_props

log = logging.getLogger(__name__)


class ProducerZombieFencer:
    """The herder's ``ZombieFencer``: fence ids by name with the connector's admin client settings."""

    def __init__(self, worker_props: Mapping[str, Any], policy: ConnectorClientConfigOverridePolicy,
                 timeout_s: float = FENCE_TIMEOUT_S) -> None:  # fmt: skip
        self._worker_props = dict(worker_props)
        self._policy = policy
        self._timeout_s = timeout_s

    def __call__(self, connector: str, transactional_ids: list[str], conn_props: Mapping[str, str]) -> None:
        java = admin_props(self._worker_props, conn_props, self._policy, f"connector-worker-adminclient-{connector}")
        conf = producer_config(java)
        log.info("Fencing out %d task producers of source connector %s", len(transactional_ids), connector)
        fence_transactional_ids(conf, transactional_ids, self._timeout_s)
        log.info("Fenced out %d task producers of source connector %s", len(transactional_ids), connector)
