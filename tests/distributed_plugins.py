"""Tiny source connectors for the distributed-worker tests (the repository root on sys.path).

``tests.distributed_plugins:IdleSourceConnector``: ``tasks.max`` tasks, each idling in ``poll`` (no
records, little CPU); the worker's status records are what the tests watch.
``tests.distributed_plugins:BoundarySourceConnector``: numbered records in transactions its task ends
itself (``transaction.boundary=connector``), one of them aborted.
"""

from __future__ import annotations

import threading

from connect_core.api.connector import ExactlyOnceSupport, SourceConnector, TransactionBoundaryDefinition
from connect_core.api.records import SourceRecord
from connect_core.api.schema import STRING_SCHEMA
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


class BoundarySourceTask(SourceTask):
    """Numbered records ``v-0`` ... ``v-<records-1>``, ``batch`` per poll, resuming after its stored offset. It
    asks for its transaction to end once ``commit.every`` records are in it: committed, except the
    ``abort.at``-th transaction (1-based), which it aborts (connector-defined boundaries, KIP-618)."""

    def start(self, props: dict[str, str]) -> None:
        self.topic = props["topic"]
        self.total = int(props["records"])
        self.batch = int(props["batch"])
        self.every = int(props["commit.every"])
        self.abort_at = int(props["abort.at"])
        self._stop = threading.Event()
        stored = self.context.offset_storage_reader().offset({"p": 0})
        self.next = 0 if stored is None else int(stored["n"]) + 1
        self.transaction = 1
        self.in_transaction = 0

    def poll(self) -> list[SourceRecord] | None:
        if self.next >= self.total:
            self._stop.wait(0.2)
            return None
        count = min(self.batch, self.total - self.next)
        batch = [
            SourceRecord({"p": 0}, {"n": n}, self.topic, 0, None, f"v-{n}", None, None, None, STRING_SCHEMA)
            for n in range(self.next, self.next + count)
        ]
        self.next += count
        self.in_transaction += count
        if self.in_transaction >= self.every:
            context = self.context.transaction_context()
            assert context is not None, "started without transaction.boundary=connector"
            if self.transaction == self.abort_at:
                context.abort_transaction()
            else:
                context.commit_transaction(batch[-1])
            self.transaction += 1
            self.in_transaction = 0
        return batch

    def stop(self) -> None:
        self._stop.set()


class BoundarySourceConnector(SourceConnector):
    """One :class:`BoundarySourceTask`; it defines its own transaction boundaries and supports exactly-once."""

    def start(self, props: dict[str, str]) -> None:
        self._props = dict(props)

    def stop(self) -> None:
        pass

    def task_class(self) -> type[Task]:
        return BoundarySourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        keys = ("topic", "records", "batch", "commit.every", "abort.at")
        return [{k: self._props[k] for k in keys}]

    def config(self) -> ConfigDef:
        out = ConfigDef().define("topic", Type.STRING, importance=Importance.HIGH, documentation="target topic")
        for key in ("records", "batch", "commit.every", "abort.at"):
            out = out.define(key, Type.INT, importance=Importance.HIGH, documentation=key)
        return out

    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED

    def can_define_transaction_boundaries(self, props: dict[str, str]) -> TransactionBoundaryDefinition:
        return TransactionBoundaryDefinition.SUPPORTED
