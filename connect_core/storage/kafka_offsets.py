"""Source offsets in a compacted Kafka topic (``offset.storage.topic``), as Java's KafkaOffsetBackingStore.

Keys/values are Connect's exact bytes (see :mod:`connect_core.storage.offset_storage`), so Java
Connect and mm2 read each other's offsets. The topic is replayed last-value-wins (brokers that
never compact, like Tansu, are fine). ``get`` reads to the end of the log first, so a value
acknowledged before the call is always seen.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.types import Message
from connect_core.storage.internal_topics import OFFSET_STORAGE
from connect_core.storage.kafka_store import READ_WRITE_TIMEOUT_S, KafkaTopicStore
from connect_core.storage.memory import OffsetTable

log = logging.getLogger(__name__)

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
    ) -> None:
        self._lock = threading.Lock()
        self._table = OffsetTable()
        super().__init__(topic, client_props, admin=admin, timeout_s=timeout_s)

    def _consume(self, msg: Message) -> None:
        with self._lock:
            self._table.apply(msg.key(), msg.value())

    def get(self, keys: list[bytes]) -> dict[bytes, bytes | None]:
        try:
            self.read_to_end()
        except TimeoutError:
            raise ConnectError(f"Timed out reading offsets topic {self.topic} to its end") from None
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
        try:
            self.read_to_end()
        except TimeoutError:
            raise ConnectError(f"Timed out reading offsets topic {self.topic} to its end") from None
        with self._lock:
            return self._table.connector_partitions(connector)
