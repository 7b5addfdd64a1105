"""Connector and task status listeners that write to a StatusBackingStore (Java AbstractHerder's role).

The worker reports lifecycle events (startup, pause, resume, shutdown, failure...) to a listener;
this one turns them into :class:`ConnectorStatus`/:class:`TaskStatus` records. Shutdown and
failure use ``put_safe`` so a worker that lost a task cannot overwrite its new owner's status,
and an optional :class:`StateMetrics` hook mirrors states into metrics.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from typing import Protocol

from connect_core.model import ConnectorTaskId, State
from connect_core.storage.api import ConnectorStatus, StatusBackingStore, TaskStatus

log = logging.getLogger(__name__)


def trace_of(error: BaseException) -> str:
    """The error's full traceback text (what REST shows as ``trace``)."""
    return "".join(traceback.format_exception(type(error), error, error.__traceback__))


class ConnectorStatusListener(Protocol):
    def on_startup(self, connector: str) -> None: ...

    def on_pause(self, connector: str) -> None: ...

    def on_resume(self, connector: str) -> None: ...

    def on_stop(self, connector: str) -> None: ...

    def on_shutdown(self, connector: str) -> None: ...

    def on_failure(self, connector: str, error: BaseException) -> None: ...


class TaskStatusListener(Protocol):
    def on_task_startup(self, task: ConnectorTaskId) -> None: ...

    def on_task_pause(self, task: ConnectorTaskId) -> None: ...

    def on_task_resume(self, task: ConnectorTaskId) -> None: ...

    def on_task_shutdown(self, task: ConnectorTaskId) -> None: ...

    def on_task_failure(self, task: ConnectorTaskId, error: BaseException) -> None: ...


class StateMetrics(Protocol):
    """Optional observer of state changes (metrics); every method must be cheap and must not raise."""

    def connector_state(self, connector: str, state: State) -> None: ...

    def task_state(self, task: ConnectorTaskId, state: State) -> None: ...

    def task_failed(self, task: ConnectorTaskId) -> None: ...


class NoStateMetrics:
    def connector_state(self, connector: str, state: State) -> None:
        pass

    def task_state(self, task: ConnectorTaskId, state: State) -> None:
        pass

    def task_failed(self, task: ConnectorTaskId) -> None:
        pass


class StatusRecorder:
    """Both listener protocols plus the herder-driven events (deletion, restart), over one store."""

    def __init__(
        self,
        store: StatusBackingStore,
        worker_id: str,
        generation: Callable[[], int] = lambda: 0,
        metrics: StateMetrics | None = None,
    ) -> None:
        self.store = store
        self.worker_id = worker_id
        self._generation = generation
        self.metrics: StateMetrics = metrics or NoStateMetrics()

    def _connector(self, name: str, state: State, trace: str | None = None, safe: bool = False) -> None:
        status = ConnectorStatus(name, state, self.worker_id, trace, self._generation())
        try:
            (self.store.put_safe if safe else self.store.put)(status)
        except Exception:
            log.exception("Could not record status %s of connector %s", state.value, name)
        self._metric(lambda: self.metrics.connector_state(name, state))

    def _task(self, task: ConnectorTaskId, state: State, trace: str | None = None, safe: bool = False) -> None:
        status = TaskStatus(task, state, self.worker_id, trace, self._generation())
        try:
            (self.store.put_safe if safe else self.store.put)(status)
        except Exception:
            log.exception("Could not record status %s of task %s", state.value, task)
        self._metric(lambda: self.metrics.task_state(task, state))

    @staticmethod
    def _metric(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.debug("State metrics hook failed", exc_info=True)

    # connector events
    def on_startup(self, connector: str) -> None:
        self._connector(connector, State.RUNNING)

    def on_pause(self, connector: str) -> None:
        self._connector(connector, State.PAUSED)

    def on_resume(self, connector: str) -> None:
        self._connector(connector, State.RUNNING)

    def on_stop(self, connector: str) -> None:
        self._connector(connector, State.STOPPED)

    def on_shutdown(self, connector: str) -> None:
        self._connector(connector, State.UNASSIGNED, safe=True)

    def on_failure(self, connector: str, error: BaseException) -> None:
        self._connector(connector, State.FAILED, trace_of(error), safe=True)

    def on_restart(self, connector: str) -> None:
        self._connector(connector, State.RESTARTING)

    def on_deletion(self, connector: str) -> None:
        for status in self.store.get_all_tasks(connector):
            self.on_task_deletion(status.id)
        self._connector(connector, State.DESTROYED)

    # task events
    def on_task_startup(self, task: ConnectorTaskId) -> None:
        self._task(task, State.RUNNING)

    def on_task_pause(self, task: ConnectorTaskId) -> None:
        self._task(task, State.PAUSED)

    def on_task_resume(self, task: ConnectorTaskId) -> None:
        self._task(task, State.RUNNING)

    def on_task_shutdown(self, task: ConnectorTaskId) -> None:
        self._task(task, State.UNASSIGNED, safe=True)

    def on_task_failure(self, task: ConnectorTaskId, error: BaseException) -> None:
        self._task(task, State.FAILED, trace_of(error), safe=True)
        self._metric(lambda: self.metrics.task_failed(task))

    def on_task_restart(self, task: ConnectorTaskId) -> None:
        self._task(task, State.RESTARTING)

    def on_task_deletion(self, task: ConnectorTaskId) -> None:
        self._task(task, State.DESTROYED)
