"""Test plugins for the worker/herder tests: a counting source connector and an in-memory producer.

``CountingSourceConnector`` emits ``records`` records per source partition (``{"p": i}``) with
offsets ``{"n": k}``, resuming after the committed offset, so a restart shows what was committed.
``FakeProducer`` is a stand-in for confluent_kafka.Producer in unit tests (no wire involved):
it acknowledges on ``poll``/``flush``, can be told to fail sends or to fill its queue.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any

from connect_core.api import RecordMetadata, SourceConnector, SourceRecord, SourceTask
from connect_core.api.errors import ConfigError
from connect_core.config.configdef import ConfigDef, Importance, Type


class Registry:
    """Observations shared between test code and task instances (keyed by connector name)."""

    lock = threading.Lock()
    commits: dict[str, int] = defaultdict(int)
    committed_records: dict[str, list[tuple[Any, Any]]] = defaultdict(list)
    started: dict[str, int] = defaultdict(int)
    stopped: dict[str, int] = defaultdict(int)
    alter_calls: dict[str, list[Any]] = defaultdict(list)
    task_config_calls: dict[str, int] = defaultdict(int)  # proof a reconfiguration request was served

    @classmethod
    def reset(cls) -> None:
        with cls.lock:
            for d in (
                cls.commits,
                cls.committed_records,
                cls.started,
                cls.stopped,
                cls.alter_calls,
                cls.task_config_calls,
            ):
                d.clear()


class CountingSourceTask(SourceTask):
    def start(self, props: dict[str, str]) -> None:
        self.name = props["connector.name"]
        self.topic = props["topic"]
        self.total = int(props.get("records", "10"))
        self.batch = int(props.get("batch", "5"))
        self.fail_at = int(props.get("fail.at", "-1"))
        self.poll_sleep = float(props.get("poll.sleep", "0.02"))
        self.poll_delay = float(props.get("poll.delay", "0"))
        self.partitions = [{"p": int(p)} for p in props["partitions"].split(",") if p != ""]
        reader = self.context.offset_storage_reader()
        self.next: dict[int, int] = {}
        for partition, offset in reader.offsets(self.partitions):
            self.next[partition["p"]] = 0 if offset is None else int(offset["n"]) + 1
        self.emitted = 0
        self._stop = threading.Event()
        with Registry.lock:
            Registry.started[self.name] += 1

    def poll(self) -> list[SourceRecord] | None:
        if self._stop.is_set():
            return None
        out: list[SourceRecord] = []
        if self.poll_delay:
            self._stop.wait(self.poll_delay)
        per_partition = max(1, self.batch // max(1, len(self.partitions)))
        for part in self.partitions:
            p = part["p"]
            taken = 0
            while self.next[p] < self.total and taken < per_partition:
                taken += 1
                n = self.next[p]
                if n == self.fail_at:
                    raise RuntimeError(f"boom at {n}")
                out.append(
                    SourceRecord(
                        part,
                        {"n": n},
                        self.topic,
                        None,
                        f"k{p}-{n}".encode(),
                        f"v{p}-{n}".encode(),
                        [("h", b"x")],
                        1_700_000_000_000 + n,
                    )
                )
                self.next[p] = n + 1
        if not out:
            self._stop.wait(self.poll_sleep)
            return None
        self.emitted += len(out)
        return out

    def commit(self) -> None:
        with Registry.lock:
            Registry.commits[self.name] += 1

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        with Registry.lock:
            Registry.committed_records[self.name].append(
                (record.source_offset["n"] if record.source_offset else None, metadata)
            )

    def stop(self) -> None:
        self._stop.set()
        with Registry.lock:
            Registry.stopped[self.name] += 1


class CountingSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        self.props = dict(props)
        self.name = props["name"]

    def stop(self) -> None:
        pass

    def task_class(self) -> type[SourceTask]:
        return CountingSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with Registry.lock:
            Registry.task_config_calls[self.name] += 1
        partitions = int(self.props.get("source.partitions", "1"))
        tasks = int(self.props.get("generate.tasks", "0")) or min(max_tasks, partitions)
        groups: list[list[str]] = [[] for _ in range(tasks)]
        for p in range(partitions):
            groups[p % tasks].append(str(p))
        base = {
            k: v
            for k, v in self.props.items()
            if k in ("topic", "records", "batch", "fail.at", "poll.sleep", "poll.delay")
        }
        return [{**base, "connector.name": self.name, "partitions": ",".join(g)} for g in groups]

    def config(self) -> ConfigDef:
        return (
            ConfigDef()
            .define("topic", Type.STRING, importance=Importance.HIGH, documentation="target topic")
            .define("records", Type.INT, 10, importance=Importance.LOW)
            .define("source.partitions", Type.INT, 1, importance=Importance.LOW)
        )

    def alter_offsets(self, connector_config: dict[str, str], offsets: list[Any]) -> bool:
        for _, offset in offsets:
            if offset is not None and "n" not in offset:
                from connect_core.api.errors import BadRequestError

                raise BadRequestError("offsets need an 'n'")
        with Registry.lock:
            Registry.alter_calls[connector_config["name"]].append(offsets)
        return True


class BadConfigConnector(CountingSourceConnector):
    def validate(self, props: dict[str, str]) -> list[Any]:
        values = super().validate(props)
        for v in values:
            if v.name == "records" and v.value is not None and v.value > 1000:
                v.add_error("too many records")
        return values

    def start(self, props: dict[str, str]) -> None:
        if props.get("explode") == "true":
            raise ConfigError("exploded on start", key="explode")
        super().start(props)


CONNECTOR = "tests.worker_plugins:CountingSourceConnector"
BAD_CONNECTOR = "tests.worker_plugins:BadConfigConnector"
BYTES = "org.apache.kafka.connect.converters.ByteArrayConverter"


class _Msg:
    __slots__ = ("_offset", "_partition", "_topic", "_ts", "headers", "key", "value")

    def __init__(self, topic: str, partition: int, offset: int, ts: int, key: Any, value: Any, headers: Any) -> None:
        self._topic = topic
        self._partition = partition
        self._offset = offset
        self._ts = ts
        self.key = key
        self.value = value
        self.headers = headers

    def topic(self) -> str:
        return self._topic

    def partition(self) -> int:
        return self._partition

    def offset(self) -> int:
        return self._offset

    def timestamp(self) -> tuple[int, int]:
        return (1, self._ts)


class FakeProducer:
    """Queues sends; ``poll``/``flush`` deliver them (in order) unless ``hold`` is set."""

    def __init__(self, max_queue: int = 1_000_000) -> None:
        self.max_queue = max_queue
        self.queue: list[tuple[_Msg, Any]] = []
        self.log: list[_Msg] = []
        self.offsets: dict[tuple[str, int], int] = defaultdict(int)
        self.fail_topics: set[str] = set()
        self.hold = False
        self.buffer_errors = 0
        self.purged = False
        self.lock = threading.Lock()

    def produce(self, topic: str, value: Any = None, key: Any = None, partition: int = -1, on_delivery: Any = None,
                timestamp: int = 0, headers: Any = None) -> None:  # fmt: skip
        with self.lock:
            if len(self.queue) >= self.max_queue:
                self.buffer_errors += 1
                raise BufferError("Local: Queue full")
            p = max(partition, 0)
            msg = _Msg(topic, p, -1, timestamp, key, value, headers)
            self.queue.append((msg, on_delivery))

    def _deliver(self, limit: int | None = None) -> int:
        from confluent_kafka import KafkaError

        with self.lock:
            if self.hold:
                return 0
            batch, self.queue = (self.queue, []) if limit is None else (self.queue[:limit], self.queue[limit:])
        for msg, cb in batch:
            if msg.topic() in self.fail_topics:
                err: Any = KafkaError(KafkaError.TOPIC_AUTHORIZATION_FAILED, "not authorized", fatal=False)
            else:
                err = None
                key = (msg.topic(), msg.partition())
                msg._offset = self.offsets[key]
                self.offsets[key] += 1
                self.log.append(msg)
            if cb is not None:
                cb(err, msg)
        return len(batch)

    def poll(self, timeout: float = 0) -> int:
        n = self._deliver()
        if not n and timeout:
            time.sleep(min(timeout, 0.01))
        return n

    def flush(self, timeout: float = 0) -> int:
        self._deliver()
        with self.lock:
            return len(self.queue)

    def purge(self, *args: Any, **kwargs: Any) -> None:
        with self.lock:
            self.queue.clear()
            self.purged = True

    def __len__(self) -> int:
        return len(self.queue)
