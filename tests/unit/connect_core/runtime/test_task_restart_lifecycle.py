"""A task loop that asks for a fresh instance (``TaskRestartRequested``): what the status listener hears.

The instance is closed like a stopped one; then the successor reports (the old instance reports nothing),
or, when no successor was started (the task was being stopped), the old one reports its shutdown, or,
when starting the successor failed, the old one reports that failure.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from connect_core.api.task import Task
from connect_core.model import ConnectorTaskId, TargetState
from connect_core.runtime.worker_task import TaskRestartRequested, WorkerTask

TID = ConnectorTaskId("conn", 0)


class Listener:
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_task_startup(self, task: ConnectorTaskId) -> None:
        self.events.append("startup")

    def on_task_pause(self, task: ConnectorTaskId) -> None:
        self.events.append("pause")

    def on_task_resume(self, task: ConnectorTaskId) -> None:
        self.events.append("resume")

    def on_task_shutdown(self, task: ConnectorTaskId) -> None:
        self.events.append("shutdown")

    def on_task_failure(self, task: ConnectorTaskId, error: BaseException) -> None:
        self.events.append(f"failure: {error}")


class NoopTask(Task):
    def version(self) -> str:
        return "1"

    def start(self, props: dict[str, str]) -> None:
        pass

    def stop(self) -> None:
        pass


class Loop(WorkerTask[NoopTask]):
    """A loop that asks for a restart at once; ``restart`` is the worker's answer."""

    def __init__(self, listener: Listener, restart: Callable[[], bool]) -> None:
        super().__init__(
            TID, NoopTask(), {}, listener=listener, key_converter=None, value_converter=None, header_converter=None,
            transformation_chain=None, tolerance=None, initial_state=TargetState.STARTED, offset_flush_interval_s=1.0,
            offset_flush_timeout_s=1.0, status_store=None, topic_tracking=False, metrics=None, clock=time.monotonic,
        )  # fmt: skip
        self._restart = restart
        self.closed = False

    def _initialize_and_start(self) -> None:
        self._started = True

    def _execute(self) -> None:
        raise TaskRestartRequested(RuntimeError("producer lost its state"))

    def _close_clients(self) -> None:
        self.closed = True

    def _request_restart(self) -> bool:
        assert self.closed, "the successor starts only once this instance is closed"
        return self._restart()


def _run(restart: Callable[[], bool]) -> tuple[Loop, Listener]:
    listener = Listener()
    loop = Loop(listener, restart)
    loop.start()
    assert loop.await_stop(30.0)
    return loop, listener


def test_a_restarted_instance_reports_nothing_after_its_startup_its_successor_reports() -> None:
    loop, listener = _run(lambda: True)
    assert listener.events == ["startup"]
    assert not loop.is_failed
    assert isinstance(loop.restart_cause, RuntimeError)


def test_an_instance_not_replaced_reports_its_shutdown() -> None:
    loop, listener = _run(lambda: False)
    assert listener.events == ["startup", "shutdown"]
    assert not loop.is_failed


def test_an_instance_whose_successor_could_not_start_reports_that_failure() -> None:
    def broken() -> bool:
        raise RuntimeError("no producer for you")

    loop, listener = _run(broken)
    assert listener.events == ["startup", "failure: no producer for you"]
    assert loop.is_failed


class StalledLoop(Loop):
    """Asks for its restart only once cancelled (a failure met while the worker gave up on the instance)."""

    def _execute(self) -> None:
        self._stop_event.wait(30.0)
        raise TaskRestartRequested(RuntimeError("producer lost its state"))


def test_a_cancelled_instance_is_never_restarted() -> None:
    asked: list[bool] = []

    def restart() -> bool:
        asked.append(True)
        return True

    listener = Listener()
    loop = StalledLoop(listener, restart)
    loop.start()
    deadline = time.monotonic() + 30.0
    while listener.events != ["startup"] and time.monotonic() < deadline:
        time.sleep(0.01)
    loop.cancel()
    assert loop.await_stop(30.0)
    assert asked == []
    assert listener.events == ["startup"]  # a cancelled instance writes no status
