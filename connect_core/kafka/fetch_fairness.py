"""Fairness of a multi-partition Fetch: every partition below its end gets served, whatever the broker.

A broker serves the partitions of a Fetch in the order the request lists them, within the request's wait.
Apache Kafka answers data that is there at once, but a broker may spend the wait on the first partitions
and leave the later ones empty: Tansu's S3 engine lists every batch object of a partition per fetch and
stops when the wait runs out, so with a short wait, many batches or a slow object store (a cold start
after a restart, a busy machine) the partitions late in the request - or all of them - come back empty
below their high watermark, every time. Two remedies, both free on a broker that answers at once:

* :func:`rotated`: each request starts at the next partition (Kafka's consumer rotates its fetch order
  for the same reason, KIP-74), so no partition stays last;
* :class:`FetchWait`: an answer that left a partition below its end empty doubles the wait asked next
  (up to a cap); once every partition is caught up the wait relaxes towards the configured one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

#: The longest wait a Fetch is ever given when the broker keeps leaving partitions unserved.
MAX_FETCH_WAIT_MS = 10_000
#: The first raised wait when the asked one was (near) zero.
_MIN_RAISED_MS = 50


def rotated(items: Sequence[T], start: int) -> list[T]:
    """``items`` starting at index ``start`` (modulo their number), the ones before it moved to the end."""
    if not items:
        return []
    k = start % len(items)
    return [*items[k:], *items[:k]]


class FetchWait:
    """The wait a Fetch asks for: the caller's, or more while the broker needs more to serve every partition."""

    def __init__(self, cap_ms: int = MAX_FETCH_WAIT_MS) -> None:
        self.cap_ms = cap_ms
        self.floor_ms = 0  # 0: the caller's wait stands
        self.raised = 0  # answers that left a partition below its end unserved (each raised the wait)

    def for_request(self, asked_ms: int) -> int:
        """The wait to put in the next Fetch, given the one the caller asks for."""
        return min(self.cap_ms, max(asked_ms, self.floor_ms))

    def answered(self, used_ms: int, starved: bool, caught_up: bool) -> bool:
        """After an answer to a Fetch that waited ``used_ms``: ``starved`` - a partition below its end got
        nothing; ``caught_up`` - every partition was at its end. Returns True when the wait was raised."""
        if starved:
            self.raised += 1
            raised = min(self.cap_ms, max(_MIN_RAISED_MS, 2 * used_ms))
            grew = raised > self.floor_ms
            self.floor_ms = max(self.floor_ms, raised)
            return grew
        if caught_up:
            self.floor_ms //= 2  # nothing was left to serve: the shorter wait answers new data sooner
        return False


__all__ = ["MAX_FETCH_WAIT_MS", "FetchWait", "rotated"]
