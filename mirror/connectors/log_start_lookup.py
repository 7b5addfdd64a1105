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

from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.types import AdminClient, ClientPartition, OffsetSpec
from mirror.client.formats import TopicPartition
from mirror.connectors.periodic_request import LazyAdmin, PeriodicRequest

log = logging.getLogger(__name__)

#: one future per partition asked
Requested = dict[ClientPartition, Future[Any]]

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
        self._admin = LazyAdmin(admin_props, timeout_s, None if admin is None else TopicAdmin(client=admin))
        self._timeout_s = timeout_s
        self._requests: PeriodicRequest[Requested] = PeriodicRequest(_all_done, interval_s, clock)

    def poll(self, partitions: Callable[[], Iterable[TopicPartition]]) -> dict[TopicPartition, int]:
        """The answers of the request in flight once all are in (else {}); starts the next one when due."""
        futures = self._requests.poll(lambda: self._start(partitions))
        if futures is None:
            return {}
        out: dict[TopicPartition, int] = {}
        for ktp, future in futures.items():
            try:
                out[TopicPartition(ktp.topic, ktp.partition)] = int(future.result().offset)
            except Exception as e:  # a partition without an answer keeps its records until next time
                log.debug("No log-start offset for %s-%s: %s", ktp.topic, ktp.partition, e)
        return out

    def _start(self, partitions: Callable[[], Iterable[TopicPartition]]) -> Requested | None:
        wanted = {ClientPartition(tp.topic, tp.partition): OffsetSpec.earliest() for tp in partitions()}
        if not wanted:
            return None
        try:
            requested: Requested = self._admin.get().client.list_offsets(wanted, request_timeout=self._timeout_s)
        except Exception as e:
            log.warning("Could not look up the source's log-start offsets: %s", e)
            return None
        return requested

    def close(self) -> None:
        self._admin.close()
        self._requests.forget()


def _all_done(futures: Requested) -> bool:
    return all(f.done() for f in futures.values())


__all__ = ["CHECK_INTERVAL_S", "LogStartLookup"]
