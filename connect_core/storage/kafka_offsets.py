"""Source offsets in a compacted Kafka topic (``offset.storage.topic``), as Java's KafkaOffsetBackingStore.

Keys/values are Connect's exact bytes (see :mod:`connect_core.storage.offset_storage`), so Java
Connect and mm2 read each other's offsets. The topic is replayed last-value-wins (brokers that
never compact are fine). ``get`` reads to the end of the log first, so a value
acknowledged before the call is always seen.

On a worker with ``exactly.once.source.support=enabled`` (as Java's store) the topic is read with
``isolation.level=read_committed``: offsets are written inside the source tasks' transactions, and an
aborted transaction's offsets must never be read back. Lookups then answer from a
:class:`~connect_core.storage.committed_offsets.CommittedOffsetView`: the same answer on brokers that
do not list aborted transactions in their fetch answers (it applies the transaction markers there).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, Self

from connect_core.api.errors import ConnectError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.types import Message
from connect_core.storage.committed_offsets import CommittedOffsetView
from connect_core.storage.internal_topics import OFFSET_STORAGE, internal_topic_spec, store_client_props
from connect_core.storage.kafka_store import READ_WRITE_TIMEOUT_S, KafkaTopicStore
from connect_core.storage.memory import OffsetTable

log = logging.getLogger(__name__)

_ISOLATION_LEVEL = "isolation.level"
_READ_COMMITTED = "read_committed"


class _SetCompletion:
    """Completes a ``set`` future once every record is acknowledged, or at the first failure."""

    def __init__(self, count: int, callback: Callable[[BaseException | None], None] | None) -> None:
        self.future: Future[None] = Future()
        self._remaining = count
        self._callback = callback
        self._lock = threading.Lock()
        if count == 0:
            self._finish(None)

    def record_done(self, error: BaseException | None, _msg: Message | None = None) -> None:
        with self._lock:
            if self.future.done():
                return
            self._remaining -= 1
            if error is None and self._remaining > 0:
                return
        self._finish(error)

    def _finish(self, error: BaseException | None) -> None:
        if self._callback is not None:
            try:
                self._callback(error)
            except Exception:
                log.exception("Offset write callback failed")
        if error is None:
            self.future.set_result(None)
        else:
            self.future.set_exception(error)


class KafkaOffsetBackingStore(KafkaTopicStore):
    storage = OFFSET_STORAGE

    def __init__(
        self,
        topic: NewTopicSpec,
        client_props: Mapping[str, Any],
        *,
        admin: TopicAdmin | None = None,
        timeout_s: float = READ_WRITE_TIMEOUT_S,
        exactly_once: bool = False,
    ) -> None:
        self._lock = threading.Lock()
        self._table = OffsetTable()
        self.exactly_once = exactly_once
        self._committed: CommittedOffsetView | None = None
        if exactly_once:
            client_props = _read_committed(client_props)
            self._committed = CommittedOffsetView.for_client_props(topic.name, client_props, timeout_s)
        super().__init__(topic, client_props, admin=admin, timeout_s=timeout_s)

    @classmethod
    def from_worker_config(
        cls, worker_props: Mapping[str, Any], admin: TopicAdmin | None = None, *, exactly_once: bool = False
    ) -> Self:
        """The store on the worker's offsets topic; ``exactly_once``: the worker runs exactly-once source tasks."""
        return cls(
            internal_topic_spec(worker_props, cls.storage),
            store_client_props(worker_props),
            admin=admin,
            exactly_once=exactly_once,
        )

    def stop(self) -> None:
        super().stop()
        if self._committed is not None:
            self._committed.close()

    def _consume(self, msg: Message) -> None:
        with self._lock:
            self._table.apply(msg.key(), msg.value())

    def _read_to_end(self) -> None:
        try:
            self.read_to_end()
        except TimeoutError:
            raise ConnectError(f"Timed out reading offsets topic {self.topic} to its end") from None

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        self._read_to_end()
        if self._committed is not None:
            return self._committed.get(keys)
        with self._lock:
            return self._table.get(keys)

    def set(
        self,
        values: dict[bytes, bytes | None],
        callback: Callable[[BaseException | None], None] | None = None,
    ) -> Future[None]:
        completion = _SetCompletion(len(values), callback)
        for k, v in values.items():
            self._log.send(k, v, completion.record_done)
        return completion.future

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        """Every partition with a live offset, after reading the log to its end."""
        self._read_to_end()
        if self._committed is not None:
            return self._committed.connector_partitions(connector)
        with self._lock:
            return self._table.connector_partitions(connector)


def _read_committed(client_props: Mapping[str, Any]) -> dict[str, Any]:
    """The store's client properties with read_committed forced (a different setting is overridden, loudly)."""
    props = dict(client_props)
    given = str(props.get(_ISOLATION_LEVEL, _READ_COMMITTED)).strip().lower()
    if given != _READ_COMMITTED:
        log.warning(
            "Overriding %s=%s with %s for the worker offsets topic consumer when exactly-once source "
            "support is enabled",
            _ISOLATION_LEVEL,
            given,
            _READ_COMMITTED,
        )
    props[_ISOLATION_LEVEL] = _READ_COMMITTED
    return props
