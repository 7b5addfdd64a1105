"""A source admin request repeated on a timer and never waited for: the task thread only polls it.

Why: a running source task looks things up on the source now and then (topic ids, log-start offsets)
from the thread that copies records, where an admin round trip would stall the copy. Both lookups keep
the same clockwork: a due time, one request in flight at a time, answers handed back by a ``poll`` once
they are in, the next request started by a later ``poll`` once due, and an admin client made only when
first needed. :class:`PeriodicRequest` is that clockwork; what is asked and what an answer means stay
with its users (:mod:`mirror.connectors.source_incarnation_watch`, :mod:`mirror.connectors.log_start_lookup`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from connect_core.kafka.admin import TopicAdmin

#: whatever stands for a request in flight (a future, or one per partition)
H = TypeVar("H")


class PeriodicRequest(Generic[H]):
    """Starts a request at most every ``interval_s`` (the first one ``interval_s`` after construction), one at
    a time; :meth:`poll` never blocks.

    ``done`` says whether a handle's answer is in.
    """

    def __init__(
        self, done: Callable[[H], bool], interval_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self._done = done
        self._interval_s = interval_s
        self._clock = clock
        self._due = clock() + interval_s
        self._pending: H | None = None

    def request_now(self) -> None:
        """Start the next request at the next :meth:`poll` (after the one in flight, if any, is answered)."""
        self._due = self._clock()

    def poll(self, start: Callable[[], H | None]) -> H | None:
        """The handle of the request answered since the last call (no new request starts in that call);
        otherwise None, having started the next request with ``start`` if it is due.

        ``start`` sends a request and returns its handle (None: nothing to ask, or it could not be sent; the
        next one is then due a whole interval later)."""
        pending = self._pending
        if pending is not None:
            if not self._done(pending):
                return None
            self._pending = None
            return pending
        if self._clock() < self._due:
            return None
        self._due = self._clock() + self._interval_s
        self._pending = start()
        return None

    def forget(self) -> None:
        """Drop the request in flight (closing): its answer is never handed out."""
        self._pending = None


class LazyAdmin:
    """A source admin client made at its first use (most lookups of a healthy source never happen), from
    whichever thread first needs it."""

    def __init__(self, admin_props: Mapping[str, Any], timeout_s: float, admin: TopicAdmin | None = None) -> None:
        self._props = dict(admin_props)
        self._timeout_s = timeout_s
        self._admin = admin
        self._lock = threading.Lock()

    def get(self) -> TopicAdmin:
        with self._lock:
            if self._admin is None:
                self._admin = TopicAdmin(self._props, timeout_s=self._timeout_s)
            return self._admin

    def close(self) -> None:
        """Drop the client (a request still using it keeps its own reference until it is answered)."""
        with self._lock:
            admin, self._admin = self._admin, None
        if admin is not None:
            admin.close()


__all__ = ["LazyAdmin", "PeriodicRequest"]
