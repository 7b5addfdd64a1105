"""The dead-letter queue of a sink connector (Java ``DeadLetterQueueReporter``).

A consumed record that a converter, a transformation or the task itself failed on is written, as
it was consumed (key, value, headers and timestamp bytes), to ``errors.deadletterqueue.topic.name``
on the worker's cluster. With ``errors.deadletterqueue.context.headers.enable`` the copy also carries
Java's ``__connect.errors.*`` headers, so tools written for Java Connect's DLQs read ours.

:func:`context_headers` is pure; :class:`DeadLetterQueueReporter` owns the producer. The runtime
flushes the reporter before every offset commit, so no offset is committed past a record whose
DLQ copy is not acknowledged.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.model import ConnectorTaskId
from connect_core.plugins import Plugins

log = logging.getLogger(__name__)

HEADER_PREFIX = "__connect.errors."
ERROR_HEADER_ORIG_TOPIC = HEADER_PREFIX + "topic"
ERROR_HEADER_ORIG_PARTITION = HEADER_PREFIX + "partition"
ERROR_HEADER_ORIG_OFFSET = HEADER_PREFIX + "offset"
ERROR_HEADER_CONNECTOR_NAME = HEADER_PREFIX + "connector.name"
ERROR_HEADER_TASK_ID = HEADER_PREFIX + "task.id"
ERROR_HEADER_STAGE = HEADER_PREFIX + "stage"
ERROR_HEADER_EXECUTING_CLASS = HEADER_PREFIX + "class.name"
ERROR_HEADER_EXCEPTION = HEADER_PREFIX + "exception.class.name"
ERROR_HEADER_EXCEPTION_MESSAGE = HEADER_PREFIX + "exception.message"
ERROR_HEADER_EXCEPTION_STACK_TRACE = HEADER_PREFIX + "exception.stacktrace"

DLQ_NUM_PARTITIONS = 1
FLUSH_TIMEOUT_S = 30.0


def class_name(cls: type) -> str:
    """The name reported for a class: Java's for bundled plugins, else the Python path."""
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return Plugins.java_name_of(cls)


def context_headers(
    task_id: ConnectorTaskId,
    topic: str,
    partition: int,
    offset: int,
    stage: str,
    executing_class: type | None,
    error: BaseException | None,
) -> list[tuple[str, bytes]]:
    """Java's error-context headers, in Java's order, values UTF-8 text."""
    headers = [
        (ERROR_HEADER_ORIG_TOPIC, topic.encode()),
        (ERROR_HEADER_ORIG_PARTITION, str(partition).encode()),
        (ERROR_HEADER_ORIG_OFFSET, str(offset).encode()),
        (ERROR_HEADER_CONNECTOR_NAME, task_id.connector.encode()),
        (ERROR_HEADER_TASK_ID, str(task_id.task).encode()),
        (ERROR_HEADER_STAGE, stage.encode()),
        (ERROR_HEADER_EXECUTING_CLASS, class_name(executing_class or type(None)).encode()),
    ]
    if error is not None:
        headers.append((ERROR_HEADER_EXCEPTION, class_name(type(error)).encode()))
        headers.append((ERROR_HEADER_EXCEPTION_MESSAGE, str(error).encode()))
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        headers.append((ERROR_HEADER_EXCEPTION_STACK_TRACE, trace.encode()))
    return headers


class DeadLetterQueueReporter:
    """Writes failed consumed records to the DLQ topic through its own producer."""

    def __init__(self, task_id: ConnectorTaskId, topic: str, producer: Any, context_headers_enabled: bool) -> None:
        self.task_id = task_id
        self.topic = topic
        self.producer = producer
        self.context_headers_enabled = context_headers_enabled
        self.failed = 0
        self.produced = 0

    @classmethod
    def create(
        cls,
        task_id: ConnectorTaskId,
        topic: str,
        replication_factor: int,
        context_headers_enabled: bool,
        admin_factory: Callable[[], Any],
        producer_factory: Callable[[], Any],
    ) -> DeadLetterQueueReporter:
        """Create the DLQ topic if it is missing (one partition, as Java), then the producer."""
        from connect_core.kafka.admin import NewTopicSpec

        admin = admin_factory()
        try:
            if topic not in admin.list_topics():
                log.error("Topic %s doesn't exist. Will attempt to create topic.", topic)
                result = admin.create_topics_if_missing([NewTopicSpec(topic, DLQ_NUM_PARTITIONS, replication_factor)])
                if not result.is_created_or_existing(topic):
                    raise ConnectError(f"Could not initialize dead letter queue with topic={topic}")
        except ConnectError:
            raise
        except Exception as e:
            raise ConnectError(f"Could not initialize dead letter queue with topic={topic}: {e}") from e
        finally:
            close = getattr(admin, "close", None)
            if close is not None:
                close()
        return cls(task_id, topic, producer_factory(), context_headers_enabled)

    def report(
        self,
        msg: Any,
        stage: str,
        executing_class: type | None,
        error: BaseException | None,
    ) -> Future[None]:
        """Send the consumed message ``msg`` (a client Message) as it was read; the future ends at the ack."""
        future: Future[None] = Future()
        headers = list(msg.headers() or [])
        if self.context_headers_enabled:
            headers.extend(context_headers(self.task_id, msg.topic(), msg.partition(), msg.offset(), stage,
                                           executing_class, error))  # fmt: skip
        ts_type, ts = msg.timestamp()
        kwargs: dict[str, Any] = {"key": msg.key(), "value": msg.value(), "headers": headers, "on_delivery":
                                  lambda err, _m: self._delivered(future, err)}  # fmt: skip
        if ts_type != 0 and ts is not None and ts >= 0:
            kwargs["timestamp"] = ts
        while True:
            try:
                self.producer.produce(self.topic, **kwargs)
                break
            except BufferError:
                self.producer.poll(0.05)
        self.producer.poll(0)
        return future

    def _delivered(self, future: Future[None], err: Any) -> None:
        if err is not None:
            self.failed += 1
            log.error("Could not produce message to dead letter queue. topic=%s: %s", self.topic, err)
            future.set_exception(ConnectError(f"Could not produce message to dead letter queue {self.topic}: {err}"))
        else:
            self.produced += 1
            future.set_result(None)

    def flush(self, timeout_s: float = FLUSH_TIMEOUT_S) -> bool:
        """Wait for every DLQ write; True when none is left."""
        return int(self.producer.flush(timeout_s)) == 0

    def close(self) -> None:
        try:
            self.producer.flush(5.0)
        except Exception:
            log.debug("DLQ producer flush at close failed", exc_info=True)
