"""Source partitions' log-start offsets, looked up without blocking the task thread (I/O shell).

Why: the source task tombstones offset-mapping records below the source's log start
(:mod:`mirror.connectors.offset_mapping_retention`) from its own thread, which copies records; a
ListOffsets round trip there would stall the copy. :meth:`LogStartLookup.poll` starts one batched
request when due and hands back its answers on a later call, once they are in.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.types import AdminClient, ClientPartition, OffsetSpec
from mirror.client.formats import TopicPartition

log = logging.getLogger(__name__)

#: How often the log starts are looked up (retention moves in segments of hours, by default).
CHECK_INTERVAL_S = 300.0


class LogStartLookup:
    """One batched ListOffsets(EARLIEST) at a time, at most every ``interval_s``."""

    def __init__(
        self,
        admin_props: Mapping[str, Any],
        interval_s: float = CHECK_INTERVAL_S,
        timeout_s: float = 30.0,
        admin: AdminClient | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._props = dict(admin_props)
        self._admin = admin
        self._interval_s = interval_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._due = clock() + interval_s
        self._futures: dict[ClientPartition, Future[Any]] | None = None

    def poll(self, partitions: Callable[[], Iterable[TopicPartition]]) -> dict[TopicPartition, int]:
        """The answers of the request in flight once all are in (else {}); starts the next one when due."""
        futures = self._futures
        if futures is not None:
            if not all(f.done() for f in futures.values()):
                return {}
            self._futures = None
            out: dict[TopicPartition, int] = {}
            for ktp, future in futures.items():
                try:
                    out[TopicPartition(ktp.topic, ktp.partition)] = int(future.result().offset)
                except Exception as e:  # a partition without an answer keeps its records until next time
                    log.debug("No log-start offset for %s-%s: %s", ktp.topic, ktp.partition, e)
            return out
        if self._clock() < self._due:
            return {}
        self._due = self._clock() + self._interval_s
        wanted = {ClientPartition(tp.topic, tp.partition): OffsetSpec.earliest() for tp in partitions()}
        if wanted:
            try:
                if self._admin is None:
                    self._admin = create_admin(admin_config(self._props))
                self._futures = self._admin.list_offsets(wanted, request_timeout=self._timeout_s)
            except Exception as e:
                log.warning("Could not look up the source's log-start offsets: %s", e)
        return {}

    def close(self) -> None:
        self._admin = None
        self._futures = None


__all__ = ["CHECK_INTERVAL_S", "LogStartLookup"]
