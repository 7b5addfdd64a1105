"""How big and how long one backfill transaction may grow (pure logic, no I/O).

A task's transaction holds a chunk of each of its partitions. Bounded only per partition, a task with
many partitions kept one transaction open for its whole copy: past the producer's
``transaction.timeout.ms`` Kafka aborts it (and the job retries it, to the same end), and while it is
open the read_committed readers of the flow's offsets topic wait. So a transaction closes when its
records, its bytes or its age reach a bound, whichever comes first, and the producer's transaction
timeout leaves a margin over the age bound for the commit's final flush on a loaded machine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from connect_core.api.errors import ConfigError

#: Records per transaction: large enough that commits cost little, small enough that a retry redoes little.
DEFAULT_RECORDS = 50_000
#: Key and value bytes per transaction (about 50,000 records of 1 KB).
DEFAULT_BYTES = 64 * 1024 * 1024
#: Seconds a transaction stays open at most (before its commit).
DEFAULT_SECONDS = 10.0
#: transaction.timeout.ms is this many times the age bound: the rest is for the commit's flush of what
#: the producer still queues (its buffer, 32 MB by default) and for a busy machine.
TIMEOUT_MARGIN = 3.0
TIMEOUT_KEY = "transaction.timeout.ms"


@dataclass(frozen=True)
class TransactionBounds:
    """A transaction commits once it holds ``records`` records or ``bytes`` bytes, or is ``seconds`` old."""

    records: int = DEFAULT_RECORDS
    bytes: int = DEFAULT_BYTES
    seconds: float = DEFAULT_SECONDS

    @property
    def timeout_ms(self) -> int:
        """The producer's ``transaction.timeout.ms`` for this bound."""
        return int(self.seconds * TIMEOUT_MARGIN * 1000)


def transaction_bounds(
    producer_props: Mapping[str, Any], records: int = DEFAULT_RECORDS, max_bytes: int = DEFAULT_BYTES
) -> TransactionBounds:
    """The bounds for a target producer's settings: a ``transaction.timeout.ms`` the user set makes the age
    bound a third of it (when that is below the default), else the default age bound applies."""
    seconds = DEFAULT_SECONDS
    configured = str(producer_props.get(TIMEOUT_KEY, "")).strip()
    if configured:
        try:
            timeout_ms = int(configured)
        except ValueError:
            raise ConfigError(f"{TIMEOUT_KEY}={configured!r} of the target producer is not a number") from None
        if timeout_ms <= 0:
            raise ConfigError(f"{TIMEOUT_KEY}={configured!r} of the target producer must be positive")
        seconds = min(seconds, timeout_ms / 1000.0 / TIMEOUT_MARGIN)
    return TransactionBounds(records=max(1, records), bytes=max(1, max_bytes), seconds=seconds)


def with_transaction_timeout(producer_props: Mapping[str, Any], bounds: TransactionBounds) -> dict[str, Any]:
    """The producer settings with ``transaction.timeout.ms`` set from the bounds unless the user set it."""
    props = dict(producer_props)
    if not str(props.get(TIMEOUT_KEY, "")).strip():
        props[TIMEOUT_KEY] = str(bounds.timeout_ms)
    return props


__all__ = ["TIMEOUT_KEY", "TransactionBounds", "transaction_bounds", "with_transaction_timeout"]
