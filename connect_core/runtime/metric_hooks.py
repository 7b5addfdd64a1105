"""The metric hooks a herder hands its worker and status recorder, as protocols.

One implementation serves every runtime: mm2's per-flow adapter on Prometheus
(``mirror.driver.metrics_bindings.RuntimeMetrics``). Declared here so the herder builders take a
typed argument (a product whose adapter lacks a hook is a type error, not a silent no-op) while
connect_core names nothing of the product built on it.
"""

from __future__ import annotations

from typing import Protocol

from connect_core.model import ConnectorTaskId
from connect_core.runtime.sink_metrics import SinkTaskMetrics
from connect_core.runtime.source_task_collaborators import TaskMetrics
from connect_core.runtime.status import StateMetrics


class RuntimeMetrics(StateMetrics, Protocol):
    """Connector/task states (:class:`StateMetrics`) and each task's own batch/flush sink."""

    def for_task(self, task: ConnectorTaskId) -> TaskMetrics:
        """The sink of ``task``'s source loop (called once when the worker creates the task)."""
        ...

    def for_sink_task(self, task: ConnectorTaskId) -> SinkTaskMetrics:
        """The sink-task metrics of ``task`` (Connect's sink-task-metrics group), once per task instance."""
        ...


class RebalanceMetrics(RuntimeMetrics, Protocol):
    """What a distributed herder reports besides states: the rebalances of its group."""

    def rebalance_started(self) -> None:
        """This worker's assignment was revoked or it began to (re)join the group."""
        ...

    def rebalance_completed(self) -> None:
        """A new assignment arrived (the duration runs since :meth:`rebalance_started`)."""
        ...
