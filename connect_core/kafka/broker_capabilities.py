"""What a cluster's brokers do where Kafka-protocol brokers differ and the product cares, learnt per cluster.

One :class:`BrokerCapabilities` per cluster (keyed by its bootstrap servers), got with
:func:`capabilities_for`. Today it holds one fact: whether a read_committed Fetch answer lists the
aborted transactions of the range it returns, as Apache Kafka's broker does (a consumer drops the
batches of those producers until their ABORT marker). Some brokers never list them although they
write correct COMMIT/ABORT markers; a reader that trusted their empty list would read aborted records.

How it is learnt: from evidence, never assumed, and without writing anything. Every read_committed
fetch of a transactional log the product makes (the exactly-once offsets view, and any raw reader that
calls :func:`record_fetch_answer`) is checked: an ABORT marker that follows data batches of the same
producer in one answer is an aborted transaction with data in the returned range, which a filtering
broker must list (Kafka indexes exactly the aborted transactions that hold data, and lists every one
that overlaps the fetched range). Listed: the broker filters; not listed: it does not. Until such an
answer is seen the answer is unknown and :attr:`~BrokerCapabilities.filters_aborted_transactions` is
False: the product takes the safe path and applies the markers itself, which is Kafka's answer on any
broker that writes markers. A "does not filter" verdict is kept for good; a later contradiction of a
"filters" verdict downgrades it (the safe side wins).

Rejected ways to learn it: the ApiVersions answer (which APIs a broker advertises says nothing about
how it answers a read_committed fetch: a broker may advertise everything and still not list aborted
transactions), and a probe transaction (it writes to a topic, needs transactional-id rights the user
may not have granted, and a probe killed mid-way leaves an open transaction behind).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol


class _Batch(Protocol):
    """What the evidence check reads of a record batch (kafka-python's ``DefaultRecordBatch``)."""

    @property
    def producer_id(self) -> int: ...

    @property
    def base_offset(self) -> int: ...

    @property
    def is_transactional(self) -> bool: ...

    @property
    def is_control_batch(self) -> bool: ...

    def __iter__(self) -> Any: ...


@dataclass(frozen=True)
class BrokerCapabilities:
    """What one cluster's brokers are known to do (each False until proven: False is the safe path).

    ``filters_aborted_transactions``: a read_committed Fetch answer lists the aborted transactions of
    its range, so a reader may drop aborted batches from that list as Kafka's consumer does. False
    when a broker was seen not to list one, and while nothing is known yet: apply the markers.

    ``aborted_listing_checked``: a fetch answer holding an aborted transaction with data has been
    checked, so ``filters_aborted_transactions`` is a verdict rather than the unknown default.
    """

    filters_aborted_transactions: bool = False
    aborted_listing_checked: bool = False


_UNKNOWN = BrokerCapabilities()
_known: dict[str, BrokerCapabilities] = {}
_lock = threading.Lock()


def cluster_key(client_props: Mapping[str, Any]) -> str:
    """The cache key of a cluster: its bootstrap servers, order and case aside."""
    servers = str(client_props.get("bootstrap.servers") or client_props.get("bootstrap_servers") or "")
    return ",".join(sorted({s.strip().lower() for s in servers.split(",") if s.strip()}))


def capabilities_for(client_props: Mapping[str, Any]) -> BrokerCapabilities:
    """What is known of the cluster these client properties reach (unknown: every capability False)."""
    with _lock:
        return _known.get(cluster_key(client_props), _UNKNOWN)


def record_fetch_answer(
    client_props: Mapping[str, Any], batches: Sequence[_Batch], aborted_transactions: Iterable[tuple[int, int]]
) -> BrokerCapabilities:
    """Learn from one partition's read_committed Fetch answer; what is known afterwards.

    ``aborted_transactions``: the answer's (producer id, first offset) pairs. Cheap when the answer
    holds no ABORT marker (one pass over the batch headers), so every fetch may call it.
    """
    verdict = aborted_listing_evidence(batches, aborted_transactions)
    key = cluster_key(client_props)
    with _lock:
        known = _known.get(key, _UNKNOWN)
        if verdict is None or (known.aborted_listing_checked and not known.filters_aborted_transactions):
            return known
        if verdict != known.filters_aborted_transactions or not known.aborted_listing_checked:
            known = BrokerCapabilities(filters_aborted_transactions=verdict, aborted_listing_checked=True)
            _known[key] = known
        return known


def aborted_listing_evidence(batches: Sequence[_Batch], aborted_transactions: Iterable[tuple[int, int]]) -> bool | None:
    """Whether one answer proves the broker lists aborted transactions: True (every aborted transaction
    with data in the answer is listed), False (one is not) or None (the answer holds none to judge by).

    A producer's data batches since its previous marker, followed by its ABORT marker, are an aborted
    transaction with data here; a filtering broker lists it with a first offset at or before them.
    """
    first_data: dict[int, int] = {}  # producer id -> its first data offset since its last marker
    last_marker: dict[int, int] = {}  # producer id -> the offset of its last marker in the answer
    judged: list[tuple[int, int, int]] = []  # (producer id, after this offset, at or before this one)
    for batch in batches:
        if batch.is_control_batch:
            start = first_data.pop(batch.producer_id, None)
            if start is not None and _is_abort(batch):
                judged.append((batch.producer_id, last_marker.get(batch.producer_id, -1), start))
            last_marker[batch.producer_id] = batch.base_offset
        elif batch.is_transactional:
            first_data.setdefault(batch.producer_id, batch.base_offset)
    if not judged:
        return None
    listed = list(aborted_transactions)
    return all(
        any(pid == producer_id and floor < first <= start for pid, first in listed)
        for producer_id, floor, start in judged
    )


def _is_abort(control_batch: _Batch) -> bool:
    """An ABORT marker (a COMMIT marker has ``commit`` true; an emptied control batch is neither)."""
    markers = list(control_batch)
    return bool(markers) and not any(bool(marker.commit) for marker in markers)


__all__ = ["BrokerCapabilities", "aborted_listing_evidence", "capabilities_for", "cluster_key", "record_fetch_answer"]
