"""A tiny multi-task source connector for the distributed-herder tests (no records, little CPU).

``tasks.max`` tasks, each idling in ``poll``; the worker's status records are what the tests watch.
Load it as ``tests.distributed_plugins:IdleSourceConnector`` (the repository root on sys.path).
"""

from __future__ import annotations

import threading

from connect_core.api.connector import SourceConnector
from connect_core.api.records import SourceRecord
from connect_core.api.task import SourceTask, Task
from connect_core.config.configdef import ConfigDef, Importance, Type


class IdleSourceTask(SourceTask):
    def __init__(self) -> None:
        self._stop = threading.Event()

    def start(self, props: dict[str, str]) -> None:
        self._stop.clear()

    def poll(self) -> list[SourceRecord] | None:
        self._stop.wait(0.5)
        return None

    def stop(self) -> None:
        self._stop.set()


class IdleSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[Task]:
        return IdleSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [{"task.index": str(i), "marker": self._props.get("marker", "")} for i in range(max_tasks)]

    def config(self) -> ConfigDef:
        return ConfigDef().define("marker", Type.STRING, "", importance=Importance.LOW)
