"""How far one exactly-once transaction reaches on the batch path while the source has a backlog.

With ``transaction.boundary = poll`` a transaction ends once what one poll returned was dispatched. On the batch
path a poll is one Fetch (a few MB), and every commit first waits for each copied batch of the transaction to be
acknowledged: the pipeline to the target runs dry once per transaction. Measured with the embedded brokers
(600k x 1 KB, 4 partitions, bench.mirror_throughput): a transaction per Fetch (~5.7 MB) ran at 0.66-0.75 of
the at-least-once batch path, 16 MB transactions at 0.88, 40 MB at 1.01; EndTxn itself was ~1 ms of the ~13 ms
each commit cost.

So while polls come back full and the source's answers show more to read at once (a backlog), one
transaction spans consecutive polls until it holds ``max_bytes`` or has been open ``max_s``; a poll that
reached the end, one that is not full, or the task stopping ends it as before. Readers see records at most
``max_s`` later than per-poll commits would show them, and only while catching up. Pure logic: the task tells
it what happened, it answers whether a commit may wait.
"""

from __future__ import annotations

#: A poll of at least this many records means the source has a backlog (the next poll returns at once).
BACKLOG_POLL_RECORDS = 500


class TransactionSpan:
    """The open transaction's size and age against its limits (``max_bytes`` 0: a transaction per poll)."""

    __slots__ = ("_bytes", "_opened_at", "max_bytes", "max_s")

    def __init__(self, max_bytes: int, max_s: float) -> None:
        self.max_bytes = max_bytes
        self.max_s = max_s
        self._bytes = 0
        self._opened_at: float | None = None

    def dispatched(self, nbytes: int, now: float) -> None:
        """``nbytes`` went into the open transaction (the first dispatch opens the span)."""
        if self._opened_at is None:
            self._opened_at = now
        self._bytes += nbytes

    def may_wait(self, last_poll_records: int, backlog: bool, now: float) -> bool:
        """Whether the commit a poll boundary asks for now may wait for the next poll's batches."""
        if self._opened_at is None or not backlog or last_poll_records < BACKLOG_POLL_RECORDS:
            return False
        return self._bytes < self.max_bytes and now - self._opened_at < self.max_s

    def ended(self) -> None:
        """The transaction committed or aborted: the next dispatch opens a new span."""
        self._bytes = 0
        self._opened_at = None


__all__ = ["BACKLOG_POLL_RECORDS", "TransactionSpan"]
