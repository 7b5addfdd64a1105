"""Plugins for the REST lifecycle and hung-task tests: a counting source whose tasks can be told to fail, and that
counts every connector and task start, so a test can tell exactly what a REST restart restarted.

``TaskGate`` is process-wide state shared by the test and the tasks it controls (the worker runs
in-process). ``GatedSourceConnector`` also defines a PASSWORD key ``secret`` (values shorter than
12 characters are rejected) for the masking checks.
"""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

from connect_core.api import SourceRecord, SourceTask
from connect_core.api.errors import ConfigError
from connect_core.config.configdef import ConfigDef, Importance, Type
from tests.worker_plugins import CountingSourceConnector, CountingSourceTask


class TaskGate:
    """Which source partitions fail on poll, and how often each connector / task was started."""

    lock = threading.Lock()
    failing: set[int] = set()
    # a task owning a partition in ``holding`` blocks in poll (ignoring stop) until ``release`` is set,
    # then returns one "zombie" record with offset n = 999999
    holding: set[int] = set()
    hung = threading.Event()
    hung_thread: threading.Thread | None = None  # the thread blocked in the hanging poll
    release = threading.Event()
    connector_starts: Counter[str] = Counter()
    task_starts: Counter[tuple[str, str]] = Counter()

    @classmethod
    def reset(cls) -> None:
        with cls.lock:
            cls.failing = set()
            cls.holding = set()
            cls.hung = threading.Event()
            cls.hung_thread = None
            cls.release = threading.Event()
            cls.connector_starts.clear()
            cls.task_starts.clear()

    @classmethod
    def task_start_count(cls, connector: str, partitions: str) -> int:
        with cls.lock:
            return cls.task_starts[(connector, partitions)]

    @classmethod
    def connector_start_count(cls, connector: str) -> int:
        with cls.lock:
            return cls.connector_starts[connector]


class GatedSourceTask(CountingSourceTask):
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        with TaskGate.lock:
            TaskGate.task_starts[(self.name, props["partitions"])] += 1

    def poll(self) -> list[SourceRecord] | None:
        with TaskGate.lock:
            fail = any(p["p"] in TaskGate.failing for p in self.partitions)
        if fail:
            raise RuntimeError("gated failure for the audit test")
        with TaskGate.lock:
            hold = any(p["p"] in TaskGate.holding for p in self.partitions)
            hung, release = TaskGate.hung, TaskGate.release
        if hold:
            with TaskGate.lock:
                TaskGate.hung_thread = threading.current_thread()
            hung.set()
            release.wait(30)  # a badly behaved task: stop() does not wake it
            part = self.partitions[0]
            return [SourceRecord(part, {"n": 999999}, self.topic, None, b"zombie", b"zombie", None, None)]
        return super().poll()


def _long_secret(name: str, value: Any) -> None:
    if value is not None and len(value.value) < 12:
        # str(value) of a Password is "[hidden]": the message names the key, never the secret
        raise ConfigError(f"Invalid value {value} for configuration {name}: must be at least 12 characters", key=name)


class GatedSourceConnector(CountingSourceConnector):
    def start(self, props: dict[str, str]) -> None:
        super().start(props)
        with TaskGate.lock:
            TaskGate.connector_starts[self.name] += 1

    def task_class(self) -> type[SourceTask]:
        return GatedSourceTask

    def config(self) -> ConfigDef:
        return (
            super()
            .config()
            .define("secret", Type.PASSWORD, None, _long_secret, importance=Importance.LOW, documentation="a secret")
        )


GATED = "tests.gated_plugins:GatedSourceConnector"


class VariedSourceTask(CountingSourceTask):
    """Records whose shape varies with n: value None (a tombstone) when n % 3 == 0, an extra header
    ``drop`` when n % 5 == 0, and a map value ``{"p": p, "n": n}`` otherwise (for the JSON converter)."""

    def poll(self) -> list[SourceRecord] | None:
        records = super().poll()
        if not records:
            return records
        out = []
        for r in records:
            n = r.source_offset["n"] if r.source_offset else 0
            p = r.source_partition["p"] if r.source_partition else 0
            headers = list(r.headers or [])
            if n % 5 == 0:
                headers.append(("drop", b"yes"))
            value: Any = None if n % 3 == 0 else {"p": p, "n": n}
            out.append(SourceRecord(r.source_partition, r.source_offset, r.topic, None, r.key, value, headers,
                                    r.timestamp))  # fmt: skip
        return out


class VariedSourceConnector(CountingSourceConnector):
    def task_class(self) -> type[SourceTask]:
        return VariedSourceTask


VARIED = "tests.gated_plugins:VariedSourceConnector"
