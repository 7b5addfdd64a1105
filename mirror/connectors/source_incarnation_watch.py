"""The running source task's look-out for recreated source topics (issue 38).

Why: a topic deleted and recreated while a task reads it is otherwise found only at the task's next start.
Meanwhile the task may read the new incarnation at the old position (nothing there yet, or its records
above the old position taken for the old incarnation's). The task's source topic ids are looked up again
every :data:`WATCH_INTERVAL_S`, off the task thread (an admin round trip must not stall the copy), and a
changed id is handed to the task, which handles it as a start would (see ``source_incarnation``).

:func:`changed_topics` is the pure rule; :class:`TopicIdWatch` the I/O shell around it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from mirror.connectors.periodic_request import LazyAdmin, PeriodicRequest

log = logging.getLogger(__name__)

#: How often a running task looks its source topics' ids up again (one metadata + describe round trip).
WATCH_INTERVAL_S = 5.0

#: ``(topics, timeout_s) -> {topic: id}`` of the topics that exist now
IdLookup = Callable[[Sequence[str], float], dict[str, str]]


@dataclass(frozen=True)
class IncarnationChange:
    """A source topic found under a new id while the task reads it."""

    topic: str
    previous_topic_id: str
    topic_id: str


def changed_topics(known: dict[str, str], found: Mapping[str, str]) -> list[IncarnationChange]:
    """The topics whose id differs from the one known; ``known`` is updated to what was found.

    A topic missing from ``found`` (deleted and not recreated yet, or not answered) keeps its known id, so
    that its recreation is found whenever it comes; a topic first seen now is only remembered.
    """
    out: list[IncarnationChange] = []
    for topic, topic_id in sorted(found.items()):
        previous = known.get(topic)
        if previous is not None and previous != topic_id:
            out.append(IncarnationChange(topic, previous, topic_id))
        known[topic] = topic_id
    return out


class TopicIdWatch:
    """Looks the topic ids up in a thread of its own at most every ``interval_s``; :meth:`poll` never blocks."""

    def __init__(
        self,
        admin_props: Mapping[str, Any],
        topics: Sequence[str],
        known: Mapping[str, str],
        interval_s: float = WATCH_INTERVAL_S,
        timeout_s: float = 30.0,
        lookup: IdLookup | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._topics = sorted(set(topics))
        self.known: dict[str, str] = dict(known)
        self._timeout_s = timeout_s
        self._lookup = lookup or self._admin_lookup
        self._admin = LazyAdmin(admin_props, timeout_s)
        self._pool: ThreadPoolExecutor | None = None
        self._requests: PeriodicRequest[Future[dict[str, str]]] = PeriodicRequest(Future.done, interval_s, clock)
        self.started = 0  # lookups started so far
        self.answered = 0  # lookups answered so far (one at a time: the n-th answer is of the n-th start)

    def request_now(self) -> None:
        """Look up at the next :meth:`poll` (after one in flight): a fetcher saw a topic under a new id."""
        self._requests.request_now()

    def poll(self) -> list[IncarnationChange]:
        """Changes found by the lookup that has completed since the last call; starts the next one when due."""
        future = self._requests.poll(self._start)
        if future is None:
            return []
        try:
            found = future.result()
        except Exception as e:  # looked up again next time; nothing is decided on a failed lookup
            log.debug("Could not look up the source topics' ids: %s", e)
            self.started -= 1  # as if never started: whoever waits for an answer waits on
            return []
        self.answered += 1
        return changed_topics(self.known, found)

    def _start(self) -> Future[dict[str, str]] | None:
        if not self._topics:
            return None
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="topic-id-watch")
        future = self._pool.submit(self._lookup, self._topics, self._timeout_s)
        self.started += 1
        return future

    def _admin_lookup(self, topics: Sequence[str], timeout_s: float) -> dict[str, str]:
        return self._admin.get().topic_ids(topics, timeout_s)

    def close(self) -> None:
        """Stops looking; a lookup under way finishes in its thread and its admin is closed there after it."""
        self._requests.forget()
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.submit(self._admin.close)
            pool.shutdown(wait=False)
        else:
            self._admin.close()


__all__ = ["WATCH_INTERVAL_S", "IncarnationChange", "TopicIdWatch", "changed_topics"]
