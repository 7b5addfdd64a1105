"""The seam between the MirrorMaker driver and the Connect herders that run its flows.

The driver only needs, per flow ``S->T``: build a herder from the worker config, start it, stop
it gracefully, hand its :class:`~connect_core.herder.api.Herder` to REST, and be told when this
node becomes the group leader (so it can write the three connector configs, as Java's
``MirrorHerder.rebalanceSuccess`` does). Everything else about a herder is its own business, so
each runtime gets one small adapter here and the driver is tested against a fake one.

Which adapter runs: ``MM2_HERDER=distributed|standalone`` (environment) or the ``herder`` argument
of :func:`default_factory`; by default the distributed herder when it can be imported, else the
standalone herder with Kafka-backed offset and status stores on the target (the same topics and
byte formats the distributed herder uses, so switching between them keeps every offset).
"""

from __future__ import annotations

import importlib
import inspect
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from connect_core.api.errors import ConnectError
from connect_core.herder.api import Herder
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
    rest_client: Any = None  # that server's RestClient (its TLS settings), to send task configs to the leader
    extra: dict[str, Any] = field(default_factory=dict)

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


def _accepts(func: Callable[..., Any], name: str) -> bool:
    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def _metric_kwargs(spec: HerderSpec) -> dict[str, Any]:
    """Every way a runtime builder may take metrics: the FlowMetrics, its runtime hooks, a task hook."""
    flow = spec.flow_metrics()
    if flow is None:
        return {}
    return {
        "metrics": spec.metrics,
        "metric_labels": (spec.pair.source, spec.pair.target),
        "flow_metrics": flow,
        "runtime_metrics": getattr(flow, "runtime", flow),
        "on_task_created": flow.attach,
    }


def _optional_kwargs(func: Callable[..., Any], candidates: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of ``candidates`` that ``func`` accepts (hooks the runtime may not have yet)."""
    return {k: v for k, v in candidates.items() if v is not None and _accepts(func, k)}


class _Adapter:
    """Wraps a runtime herder object: start/stop names differ little, leadership hooks differ more."""

    def __init__(self, herder: Any, spec: HerderSpec, closers: list[Callable[[], None]] | None = None) -> None:
        self._herder = herder
        self._spec = spec
        self._closers = closers or []

    @property
    def herder(self) -> Herder:
        return self._herder  # type: ignore[no-any-return]

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


def _builder(module: str, name: str) -> Any:
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError as e:
        raise ConnectError(f"{module} is not available in this build ({e})") from e


def standalone_factory(spec: HerderSpec) -> FlowHerder:
    """StandaloneHerder whose offsets and statuses live in the target's ``mm2-*.S.internal`` topics.

    A standalone herder is its own leader: the driver writes the connector configs right after
    start (``on_became_leader`` is called once the herder has started).
    """
    builder = _builder("connect_core.herder.standalone", "build_standalone_herder")
    if builder is None:
        raise ConnectError("connect_core.herder.standalone has no build_standalone_herder()")
    kwargs = _optional_kwargs(
        builder,
        {
            "worker_id": spec.worker_id,
            "kafka_offsets": True,
            "kafka_status": True,
            "advertised_url": spec.rest_url,
            **_metric_kwargs(spec),
        },
    )
    herder = builder(spec.worker_props, **kwargs)

    class _Standalone(_Adapter):
        def start(self) -> None:
            super().start()
            spec.on_became_leader()

    return _Standalone(herder, spec)


def distributed_factory(spec: HerderSpec) -> FlowHerder:
    """DistributedHerder over the target's internal topics and group ``S-mm2``; leadership via its hook."""
    builder = _builder("connect_core.herder.distributed", "build_distributed_herder")
    if builder is None:
        raise ConnectError("connect_core.herder.distributed has no build_distributed_herder()")
    kwargs = _optional_kwargs(
        builder,
        {
            "worker_id": spec.worker_id,
            **_metric_kwargs(spec),
            # Java advertises "NOTUSED" when internal REST is off: followers then cannot forward
            # task configs to the leader (KAFKA-9981), so multi-node flows should enable REST.
            "advertised_url": spec.rest_url or NOT_USED_URL,
            "rest_namespace": spec.rest_namespace or None,
            "on_became_leader": spec.on_became_leader,
            **({"task_config_forwarder": spec.rest_client.post_task_configs} if spec.rest_client else {}),
        },
    )
    herder = builder(spec.worker_props, **kwargs)
    if "on_became_leader" not in kwargs:
        hook = getattr(herder, "add_leadership_listener", None)
        if hook is None:
            raise ConnectError("the distributed herder offers no leadership hook (on_became_leader)")
        hook(lambda leader: spec.on_became_leader() if leader else None)
    return _Adapter(herder, spec)


def _importable(module: str, attr: str) -> bool:
    try:
        return hasattr(importlib.import_module(module), attr)
    except ImportError:
        return False


def default_factory(herder: str | None = None) -> HerderFactory:
    """The factory ``mm2 run`` uses (see the module docstring for the choice)."""
    choice = (herder or os.environ.get(HERDER_ENV) or "").strip().lower()
    if choice == DISTRIBUTED:
        return distributed_factory
    if choice == STANDALONE:
        return standalone_factory
    if choice:
        raise ValueError(f"{HERDER_ENV} must be '{DISTRIBUTED}' or '{STANDALONE}', not {choice!r}")
    if _importable("connect_core.herder.distributed", "build_distributed_herder"):
        return distributed_factory
    return standalone_factory
