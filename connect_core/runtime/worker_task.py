"""The thread and lifecycle every task loop shares (Kafka's ``WorkerTask``); the loops extend it.

:class:`WorkerTask` owns what the herder sees of a task: start, target-state transitions, stop,
the bounded wait for it, cancellation, and the status events (startup, pause, resume, shutdown,
failure with its trace). The task thread runs :meth:`WorkerTask._run`: wait while the connector
is paused at start, then the loop's own :meth:`~WorkerTask._initialize_and_start` and
:meth:`~WorkerTask._execute`, and whatever happens, :meth:`~WorkerTask._close`.

What is the loop's own stays in the subclass: the source loop's poll/send/offset flush
(:mod:`connect_core.runtime.worker_source_task`), the sink loop's consume/put/commit
(:mod:`connect_core.runtime.worker_sink_task`), and what each closes.

A cancelled task (graceful stop overran) writes no status any more: its listener is replaced by a
silent one, so an abandoned instance can never overwrite what its successor reports.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from connect_core.api.errors import ConnectError
from connect_core.api.task import Task
from connect_core.closing import close_quietly
from connect_core.model import ConnectorTaskId, TargetState
from connect_core.runtime.source_task_collaborators import NoTaskMetrics, SilentTaskListener, TaskMetrics
from connect_core.runtime.status import TaskStatusListener
from connect_core.runtime.tolerance import RetryWithToleranceOperator
from connect_core.storage.api import StatusBackingStore, TopicStatus

log = logging.getLogger(__name__)

#: How often a task waiting for its connector to be resumed looks again.
PAUSE_TICK_S = 0.1

TaskT = TypeVar("TaskT", bound=Task)


class TaskState(enum.Enum):
    INIT = "INIT"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


class TaskRestartRequested(Exception):
    """Raised by a task loop that wants this instance replaced by a fresh one: not a failure.

    The instance closes as on a stop, then asks :meth:`WorkerTask._request_restart` (the worker) to
    start its successor, which reports the task's status from then on."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


class WorkerTask(ABC, Generic[TaskT]):
    """One task on its own thread: the control the herder uses and the status it reports."""

    #: A non-ConnectError thrown after stop() was asked for is logged as a warning (no trace)
    #: rather than as an error; either way the failure is reported.
    _warn_on_failure_while_stopping: ClassVar[bool] = False

    def __init__(
        self,
        task_id: ConnectorTaskId,
        task: TaskT,
        task_props: dict[str, str],
        *,
        listener: TaskStatusListener,
        key_converter: Any,
        value_converter: Any,
        header_converter: Any,
        transformation_chain: Any,
        tolerance: RetryWithToleranceOperator | None,
        initial_state: TargetState,
        offset_flush_interval_s: float,
        offset_flush_timeout_s: float,
        status_store: StatusBackingStore | None,
        topic_tracking: bool,
        metrics: TaskMetrics | None,
        clock: Callable[[], float],
    ) -> None:
        self.id = task_id
        self.task = task
        self.task_props = task_props
        self._listener: TaskStatusListener = listener
        self.key_converter = key_converter
        self.value_converter = value_converter
        self.header_converter = header_converter
        self.chain = transformation_chain if transformation_chain else None
        self._stop_event = threading.Event()
        self.tolerance = tolerance or RetryWithToleranceOperator(stop_event=self._stop_event)
        self._target = initial_state
        self.flush_interval_s = offset_flush_interval_s
        self.flush_timeout_s = offset_flush_timeout_s
        self._status_store = status_store if topic_tracking else None
        self._active_topics: set[str] = set()
        self.metrics: TaskMetrics = metrics or NoTaskMetrics()
        self._clock = clock

        self._lock = threading.Lock()
        self._state = TaskState.INIT
        self._stopping = False
        self._cancelled = False
        self._failed = False
        self._started = False
        self._task_stopped = False
        self.restart_cause: BaseException | None = None  # set when the loop asked for a fresh instance
        self._stop_lock = threading.Lock()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"task-{task_id}", daemon=True)

    # ------------------------------------------------------------------ control (herder threads)

    def start(self) -> None:
        self._thread.start()

    def transition_to(self, state: TargetState) -> None:
        with self._lock:
            self._target = state

    def stop(self) -> None:
        """Ask the loop to finish (what it does then is the loop's own); it reports UNASSIGNED."""
        with self._lock:
            self._stopping = True
        self._stop_event.set()
        self.tolerance.stop()

    def await_stop(self, timeout_s: float) -> bool:
        return self._done.wait(max(0.0, timeout_s))

    def cancel(self) -> None:
        """Abandon a task that overran its graceful stop: no more status writes or offset commits."""
        with self._lock:
            self._cancelled = True
            self._stopping = True
            self._listener = SilentTaskListener()
        self._stop_event.set()
        self.tolerance.stop()
        self._on_cancel()
        # Last resort to unblock a poll() that never returns (the SPI allows stop() from another thread).
        threading.Thread(target=self._stop_task_quietly, name=f"cancel-{self.id}", daemon=True).start()

    def _on_cancel(self) -> None:
        """What the loop closes at once when cancelled, before the task is stopped from another thread."""

    @property
    def is_cancelled(self) -> bool:
        return self._cancelled

    @property
    def is_stopping(self) -> bool:
        """Asked to stop (or cancelled): such an instance is never restarted."""
        return self._stopping

    @property
    def target_state(self) -> TargetState:
        return self._target

    @property
    def is_failed(self) -> bool:
        return self._failed

    @property
    def is_running(self) -> bool:
        return self._thread.is_alive() and not self._done.is_set()

    def _target_paused(self) -> bool:
        # STOPPED connectors have their tasks removed by the herder; until then they idle like PAUSED.
        return self._target is not TargetState.STARTED

    # ------------------------------------------------------------------ status (silenced by cancel)

    def _report(self, event: str, error: BaseException | None = None) -> None:
        with self._lock:
            listener = self._listener
        try:
            if error is not None:
                listener.on_task_failure(self.id, error)
            else:
                getattr(listener, event)(self.id)
        except Exception:
            log.exception("Status listener failed for task %s", self.id)

    def _mark_paused(self) -> None:
        self._state = TaskState.PAUSED
        self._report("on_task_pause")

    def _mark_resumed(self) -> None:
        self._state = TaskState.RUNNING
        self._report("on_task_resume")

    def _record_active_topic(self, topic: str) -> None:
        self._active_topics.add(topic)
        assert self._status_store is not None
        try:
            self._status_store.put_topic(TopicStatus(topic, self.id.connector, self.id.task, int(time.time() * 1000)))
        except Exception:
            log.warning("Could not record active topic %s of connector %s", topic, self.id.connector, exc_info=True)

    # ------------------------------------------------------------------ the task thread

    def _run(self) -> None:
        try:
            try:
                self._do_run()
            except TaskRestartRequested as e:
                self.restart_cause = e.cause
                log.warning("Task %s is restarted from its last committed offsets after: %s", self.id, e.cause)
            except BaseException as e:
                self._failed = True
                if self._cancelled:
                    log.warning("Task %s threw after being cancelled: %s", self.id, e)
                elif self._warn_on_failure_while_stopping and self._stopping and not isinstance(e, ConnectError):
                    log.warning("Task %s threw an unexpected exception during shutdown: %s", self.id, e)
                    self._report("", e)
                else:
                    log.error("Task %s threw an uncaught and unrecoverable exception; it is killed and will not "
                              "recover until manually restarted", self.id, exc_info=True)  # fmt: skip
                    self._report("", e)
            finally:
                self._close()
            if not self._failed and (self.restart_cause is None or not self._restart_successor()):
                self._report("on_task_shutdown")
        finally:
            self._state = TaskState.STOPPED
            self._done.set()
            self._exited()

    def _do_run(self) -> None:
        if self._stopping:
            return
        if self._target_paused():
            self._report("on_task_pause")
            if not self._await_unpause():
                return
        self._initialize_and_start()
        self._state = TaskState.RUNNING
        self._report("on_task_startup")
        self._execute()

    def _await_unpause(self) -> bool:
        while self._target_paused() and not self._stopping:
            self._stop_event.wait(PAUSE_TICK_S)
        return not self._stopping

    @abstractmethod
    def _initialize_and_start(self) -> None:
        """Create the loop's clients, then ``task.initialize`` and ``task.start`` (setting ``_started``)."""

    @abstractmethod
    def _execute(self) -> None:
        """The loop itself, until stopped (or it throws); then what the loop does on a graceful end."""

    def _exited(self) -> None:
        """Called on the task thread once it is done (after STOPPED and the done event)."""

    def _restart_successor(self) -> bool:
        """Start a fresh instance in this one's place (closed by now); False when none was started."""
        if self._cancelled:
            return False
        try:
            return self._request_restart()
        except Exception as e:
            log.error("Task %s could not be restarted", self.id, exc_info=True)
            self._failed = True
            self._report("", e)
            return True

    def _request_restart(self) -> bool:
        """The worker's part of a restart (see :class:`TaskRestartRequested`); no restart by default."""
        return False

    # ------------------------------------------------------------------ close

    def _stop_task_quietly(self) -> None:
        with self._stop_lock:
            if self._task_stopped or not self._started:
                return
            self._task_stopped = True
        try:
            self.task.stop()
        except Exception:
            log.warning("Failed to stop task %s", self.id, exc_info=True)

    def _close(self) -> None:
        self._stop_task_quietly()
        self._close_clients()
        close_quietly((self.chain, self.key_converter, self.value_converter, self.header_converter), log, logging.DEBUG)

    @abstractmethod
    def _close_clients(self) -> None:
        """Close what the loop opened (after ``task.stop()``, before the converters and transformations)."""
