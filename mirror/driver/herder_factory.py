"""The seam between the MirrorMaker driver and the Connect herders that run its flows.

The driver only needs, per flow ``S->T``: build a herder from the worker config, start it, stop
it gracefully, hand its :class:`~connect_core.herder.api.Herder` to REST, and be told when this
node becomes the group leader (so it can write the three connector configs, as Java's
``MirrorHerder.rebalanceSuccess`` does). Everything else about a herder is its own business, so
each runtime gets one small adapter here and the driver is tested against a fake one.

Which adapter runs: ``MM2_HERDER=distributed|standalone`` (environment) or the ``herder`` argument
of :func:`default_factory`; by default the distributed herder. The standalone herder keeps its
offsets and statuses in Kafka on the target (the same topics and byte formats the distributed
herder uses, so switching between them keeps every offset).

Each builder is imported directly and called with the arguments it declares, so the import
contracts see which runtime modules the driver uses and mypy sees any mismatch.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_core.herder.api import BuiltHerder, Herder
from connect_core.rest.client import RestClient
from mirror.driver.maker_config import SourceAndTarget
from mirror.driver.metrics import Mm2Metrics
from mirror.driver.metrics_bindings import FlowMetrics

log = logging.getLogger(__name__)

HERDER_ENV = "MM2_HERDER"
NOT_USED_URL = "NOTUSED"
DISTRIBUTED = "distributed"
STANDALONE = "standalone"


@dataclass
class HerderSpec:
    """Everything a factory needs to build one flow's herder."""

    pair: SourceAndTarget
    worker_props: dict[str, str]  # worker_config(pair), config providers already resolved
    worker_id: str  # "S->T", as Java's MirrorMaker names its workers
    on_became_leader: Callable[[], None]  # call (from any thread) each time this node becomes leader
    metrics: Mm2Metrics | None = None
    rest_url: str | None = None  # advertised URL of the shared REST server (None: REST disabled)
    rest_namespace: tuple[str, ...] = ()  # ("S", "T"): this herder's path prefix on that server
    rest_client: RestClient | None = None  # that server's client (its TLS settings): task configs to the leader
    extra: dict[str, Any] = field(default_factory=dict)
    # the three connector configs this flow's leader keeps written: a distributed herder's leader writes
    # those that differ while it assigns, so a fresh start assigns them without another rebalance
    desired_connectors: Callable[[], Mapping[str, Mapping[str, str]]] | None = None

    def flow_metrics(self) -> FlowMetrics | None:
        """The metric hooks of this flow (runtime states/flushes/rebalances, and a per-task sink)."""
        if self.metrics is None:
            return None
        return FlowMetrics(self.metrics, self.pair.source, self.pair.target)


class FlowHerder(Protocol):
    """One running flow as the driver sees it."""

    @property
    def herder(self) -> Herder: ...

    def start(self) -> None:
        """Start and join (distributed) or become the only member (standalone); may block a while."""
        ...

    def stop(self) -> None:
        """Graceful: tasks stop, offsets are flushed, the group is left."""
        ...


HerderFactory = Callable[[HerderSpec], FlowHerder]


class _Adapter:
    """Wraps a runtime herder object: start/stop names differ little, leadership hooks differ more."""

    def __init__(self, herder: BuiltHerder, spec: HerderSpec, closers: list[Callable[[], None]] | None = None) -> None:
        self._herder = herder
        self._spec = spec
        self._closers = closers or []

    @property
    def herder(self) -> Herder:
        return self._herder

    def start(self) -> None:
        self._herder.start()

    def stop(self) -> None:
        try:
            self._herder.stop()
        finally:
            for close in self._closers:
                try:
                    close()
                except Exception:
                    log.exception("Closing a resource of herder %s failed", self._spec.pair)


def standalone_factory(spec: HerderSpec) -> FlowHerder:
    """StandaloneHerder whose offsets and statuses live in the target's ``mm2-*.S.internal`` topics.

    A standalone herder is its own leader: the driver writes the connector configs right after
    start (``on_became_leader`` is called once the herder has started).
    """
    from connect_core.herder.standalone import build_standalone_herder

    flow = spec.flow_metrics()
    herder = build_standalone_herder(
        spec.worker_props,
        worker_id=spec.worker_id,
        runtime_metrics=flow,
        on_task_created=flow.attach if flow is not None else None,
        kafka_offsets=True,
        kafka_status=True,
    )

    class _Standalone(_Adapter):
        def start(self) -> None:
            super().start()
            spec.on_became_leader()

    return _Standalone(herder, spec)


def distributed_factory(spec: HerderSpec) -> FlowHerder:
    """DistributedHerder over the target's internal topics and group ``S-mm2``; leadership via its hook."""
    from connect_core.herder.distributed.builder import build_distributed_herder

    flow = spec.flow_metrics()
    herder = build_distributed_herder(
        spec.worker_props,
        worker_id=spec.worker_id,
        # Java advertises "NOTUSED" when internal REST is off: followers then cannot forward
        # task configs to the leader (KAFKA-9981), so multi-node flows should enable REST.
        advertised_url=spec.rest_url or NOT_USED_URL,
        rest_namespace=spec.rest_namespace or None,
        on_became_leader=spec.on_became_leader,
        runtime_metrics=flow,
        on_task_created=flow.attach if flow is not None else None,
        task_config_forwarder=spec.rest_client.post_task_configs if spec.rest_client is not None else None,
        fence_forwarder=spec.rest_client.put_fence if spec.rest_client is not None else None,
        internal_rest=spec.rest_client is not None,
        leader_connector_configs=spec.desired_connectors,
    )
    return _Adapter(herder, spec)


def default_factory(herder: str | None = None) -> HerderFactory:
    """The factory ``mm2 run`` uses (see the module docstring for the choice)."""
    choice = (herder or os.environ.get(HERDER_ENV) or "").strip().lower()
    if choice == DISTRIBUTED:
        return distributed_factory
    if choice == STANDALONE:
        return standalone_factory
    if choice:
        raise ValueError(f"{HERDER_ENV} must be '{DISTRIBUTED}' or '{STANDALONE}', not {choice!r}")
    return distributed_factory
