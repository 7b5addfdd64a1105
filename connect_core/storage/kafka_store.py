"""What the three Kafka-backed stores (configs, offsets, statuses) share, as Java's stores share
their ``KafkaBasedLog`` use: one internal topic named by the worker config, replayed through a
:class:`~connect_core.kafka.log.KafkaBasedLog` whose consumer hands each record to the store, and
one timeout for reading that topic to its end and for waiting on writes.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, ClassVar, Self

from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.log import KafkaBasedLog
from connect_core.kafka.types import Message
from connect_core.storage.internal_topics import internal_topic_spec, store_client_props

log = logging.getLogger(__name__)

#: How long a store waits to read its topic to the end, or for its writes to be acknowledged.
READ_WRITE_TIMEOUT_S = 30.0


class KafkaTopicStore:
    """A store kept in one internal topic; subclasses apply each record in :meth:`_consume`.

    Subclasses set up their own state before calling ``super().__init__`` (the log's consumer
    thread calls :meth:`_consume` once :meth:`start` runs).
    """

    #: The worker-config prefix naming this store's topic (``offset.storage``, ``status.storage``, ...).
    storage: ClassVar[str]

    def __init__(
        self,
        topic: NewTopicSpec,
        client_props: Mapping[str, Any],
        *,
        admin: TopicAdmin | None = None,
        timeout_s: float = READ_WRITE_TIMEOUT_S,
        require_single_partition: str | None = None,
    ) -> None:
        self.topic = topic.name
        self._timeout_s = timeout_s
        self._log = KafkaBasedLog(
            topic.name,
            client_props,
            client_props,
            self._consume,
            admin=admin,
            topic_spec=topic,
            require_single_partition=require_single_partition,
        )

    @classmethod
    def from_worker_config(cls, worker_props: Mapping[str, Any], admin: TopicAdmin | None = None) -> Self:
        """The store on the topic the worker properties name (created with their settings if missing)."""
        return cls(internal_topic_spec(worker_props, cls.storage), store_client_props(worker_props), admin=admin)

    def _consume(self, msg: Message) -> None:
        raise NotImplementedError

    def start(self) -> None:
        log.info("Starting %s with topic %s", type(self).__name__, self.topic)
        self._log.start()

    def stop(self) -> None:
        self._log.stop()

    def read_to_end(self, timeout_s: float | None = None) -> None:
        """Wait until every record acknowledged so far is applied (default: the store's timeout).

        Raises TimeoutError when the topic's end is not reached in time.
        """
        self._log.read_to_end().result(timeout=self._timeout_s if timeout_s is None else timeout_s)
