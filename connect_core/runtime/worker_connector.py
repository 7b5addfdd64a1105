"""One connector instance on its own thread (Kafka's ``WorkerConnector``).

Target-state changes are queued to the connector's thread, so a connector whose ``start`` or
``stop`` hangs never blocks the herder; a newer request pre-empts a pending one (its callback
gets an error). PAUSED and STOPPED both call ``connector.stop()``; a FAILED connector can only be
moved to STOPPED. ``cancel`` abandons an instance that did not shut down in time: it reports
UNASSIGNED once and then never writes its status again.
"""

from __future__ import annotations

import enum
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from connect_core.api.connector import Connector
from connect_core.api.errors import ConnectError
from connect_core.api.task import OffsetStorageReader
from connect_core.model import TargetState
from connect_core.runtime.status import ConnectorStatusListener

log = logging.getLogger(__name__)

StateCallback = Callable[[BaseException | None, TargetState | None], None]


class HerderHooks(Protocol):
    """What a connector's context forwards to its herder."""

    def request_task_reconfiguration(self, connector: str) -> None: ...


class _ConnectorState(enum.Enum):
    INIT = "INIT"
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"


class WorkerConnectorContext:
    """The ConnectorContext a running connector sees."""

    def __init__(self, owner: WorkerConnector, herder: HerderHooks | None, reader: OffsetStorageReader | None) -> None:
        self._owner = owner
        self._herder = herder
        self._reader = reader
        self.closed = False

    def request_task_reconfiguration(self) -> None:
        if self.closed or self._herder is None:
            return
        self._herder.request_task_reconfiguration(self._owner.name)

    def raise_error(self, error: BaseException) -> None:
        if not self.closed:
            self._owner.fail(error)

    def offset_storage_reader(self) -> OffsetStorageReader:
        if self._reader is None:
            raise ConnectError(f"Connector {self._owner.name} has no offset storage reader")
        return self._reader


class _SilentListener:
    def on_startup(self, connector: str) -> None:
        pass

    def on_pause(self, connector: str) -> None:
        pass

    def on_resume(self, connector: str) -> None:
        pass

    def on_stop(self, connector: str) -> None:
        pass

    def on_shutdown(self, connector: str) -> None:
        pass

    def on_failure(self, connector: str, error: BaseException) -> None:
        pass


class WorkerConnector:
    def __init__(
        self,
        name: str,
        connector: Connector,
        config: dict[str, str],
        listener: ConnectorStatusListener,
        herder: HerderHooks | None = None,
        offset_reader: OffsetStorageReader | None = None,
    ) -> None:
        self.name = name
        self.connector = connector
        self.config = config
        self._listener: ConnectorStatusListener = listener
        self.context = WorkerConnectorContext(self, herder, offset_reader)
        self._offset_reader = offset_reader
        self._state = _ConnectorState.INIT
        self._cond = threading.Condition()
        self._pending: tuple[TargetState, StateCallback | None] | None = None
        self._external_failure: BaseException | None = None
        self._stopping = False
        self._cancelled = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"connector-{name}", daemon=True)

    # ------------------------------------------------------------------ control (any thread)

    def start(self) -> None:
        self._thread.start()

    def transition_to(self, target: TargetState, callback: StateCallback | None = None) -> None:
        with self._cond:
            pre_empted = self._pending
            self._pending = (target, callback)
            self._cond.notify_all()
        if pre_empted is not None and pre_empted[1] is not None:
            pre_empted[1](
                ConnectError(
                    f"Could not begin changing connector state to {pre_empted[0].value} before another request to "
                    f"change state was made; the new request (which is to change the state to {target.value}) has "
                    "pre-empted this one"
                ),
                None,
            )

    def fail(self, error: BaseException) -> None:
        """The connector reported an error through its context (``raise_error``)."""
        with self._cond:
            self._external_failure = error
            self._cond.notify_all()

    def shutdown(self) -> None:
        with self._cond:
            self._stopping = True
            self._cond.notify_all()

    def await_shutdown(self, timeout_s: float) -> bool:
        return self._done.wait(max(0.0, timeout_s))

    def cancel(self) -> None:
        """Abandon a connector that did not stop in time: UNASSIGNED now, silence afterwards."""
        self._listener.on_shutdown(self.name)
        self._listener = _SilentListener()
        self._cancelled = True
        self.context.closed = True
        close = getattr(self._offset_reader, "close", None)
        if callable(close):
            try:
                close()
            except Exception:
                log.debug("Closing the offset reader of %s failed", self.name, exc_info=True)

    @property
    def is_running(self) -> bool:
        return self._state is _ConnectorState.STARTED

    @property
    def is_failed(self) -> bool:
        return self._state is _ConnectorState.FAILED

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return self.connector.task_configs(max_tasks)

    # ------------------------------------------------------------------ connector thread

    def _run(self) -> None:
        try:
            self._initialize()
            while True:
                with self._cond:
                    while self._pending is None and not self._stopping and self._external_failure is None:
                        self._cond.wait()
                    if self._stopping:
                        break
                    failure = self._external_failure
                    self._external_failure = None
                    pending = self._pending
                    self._pending = None
                if failure is not None and self._state is not _ConnectorState.FAILED:
                    self._on_failure(failure)
                if pending is not None:
                    self._do_transition(*pending)
            self._do_shutdown()
        finally:
            self._done.set()

    def _initialize(self) -> None:
        try:
            self.connector.initialize(self.context)
        except Exception as e:
            log.exception("Error initializing connector %s", self.name)
            self._on_failure(e)

    def _on_failure(self, error: BaseException) -> None:
        if self._state is _ConnectorState.FAILED:
            return
        self._listener.on_failure(self.name, error)
        self._state = _ConnectorState.FAILED

    def _do_transition(self, target: TargetState, callback: StateCallback | None) -> None:
        if self._state is _ConnectorState.FAILED and target is not TargetState.STOPPED:
            if callback is not None:
                callback(ConnectError(f"Cannot transition connector {self.name} to {target.value} since it has failed"),
                         None)  # fmt: skip
            return
        try:
            if target is TargetState.STARTED:
                self._do_start()
            else:
                self._suspend(target is TargetState.PAUSED)
        except Exception as e:
            if callback is not None:
                callback(ConnectError(f"Failed to transition connector {self.name} to state {target.value}: {e}"),
                         None)  # fmt: skip
            return
        if callback is not None:
            callback(None, target)

    def _do_start(self) -> None:
        if self._state is _ConnectorState.STARTED:
            return
        was_init = self._state is _ConnectorState.INIT
        try:
            self.connector.start(dict(self.config))
        except Exception as e:
            log.exception("Error while starting connector %s", self.name)
            self._on_failure(e)
            raise
        self._state = _ConnectorState.STARTED
        if was_init:
            self._listener.on_startup(self.name)
        else:
            self._listener.on_resume(self.name)

    def _suspend(self, paused: bool) -> None:
        new_state = _ConnectorState.PAUSED if paused else _ConnectorState.STOPPED
        if self._state is new_state:
            return
        try:
            if self._state is _ConnectorState.STARTED:
                self.connector.stop()
            if paused:
                self._listener.on_pause(self.name)
            else:
                self._listener.on_stop(self.name)
            self._state = new_state
        except Exception as e:
            log.exception("Error while %s connector %s", "pausing" if paused else "stopping", self.name)
            if paused:
                self._on_failure(e)
            else:
                self._state = _ConnectorState.STOPPED  # as Java: STOPPED even if stop() failed
                self._listener.on_stop(self.name)

    def _do_shutdown(self) -> None:
        with self._cond:
            pending = self._pending
            self._pending = None
        if pending is not None and pending[1] is not None:
            pending[1](
                ConnectError(
                    f"Could not begin changing connector state to {pending[0].value} as the connector has been "
                    "scheduled for shutdown"
                ),
                None,
            )
        try:
            if self._state is _ConnectorState.STARTED:
                self.connector.stop()
            self._state = _ConnectorState.STOPPED
            self._listener.on_shutdown(self.name)
        except Exception as e:
            log.exception("Error while shutting down connector %s", self.name)
            self._state = _ConnectorState.FAILED
            self._listener.on_failure(self.name, e)
        finally:
            self.context.closed = True

    def __repr__(self) -> str:
        return f"WorkerConnector({self.name}, {self._state.value})"


def describe(connector: Any) -> str:
    cls = type(connector)
    return f"{cls.__module__}.{cls.__qualname__}"
