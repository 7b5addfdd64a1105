"""The backfill leases topic on a flow's target: create, read, write, fence, and tail it for ``mm2 run``.

See :mod:`mirror.driver.backfill_leases` for what a lease means; this module only moves its records.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.admin import NewTopicSpec, TopicAdmin
from connect_core.kafka.clients import create_producer, producer_config
from connect_core.kafka.fencing import fence_transactional_ids as fence_producers
from connect_core.kafka.log import KafkaBasedLog
from connect_core.kafka.types import KafkaError, Message
from connect_core.storage.internal_topics import CONFIG_STORAGE, internal_topic_spec, store_client_props
from mirror.driver.backfill_leases import Lease, LeaseTable, decode_lease, encode_lease, lease_key, leases_topic
from mirror.driver.maker_config import SourceAndTarget
from mirror.driver.status import read_topic

log = logging.getLogger(__name__)

_TICK_S = 0.5
_FENCE_TIMEOUT_S = 30.0


def leases_topic_spec(worker_props: Mapping[str, Any], source: str) -> NewTopicSpec:
    """One compacted partition, replicated as the flow's config topic is."""
    config_spec = internal_topic_spec(worker_props, CONFIG_STORAGE)
    return NewTopicSpec(leases_topic(source), 1, config_spec.replication_factor, {"cleanup.policy": "compact"})


def create_leases_topic(worker_props: Mapping[str, Any], source: str) -> None:
    admin = TopicAdmin(store_client_props(worker_props))
    try:
        admin.create_topics_if_missing([leases_topic_spec(worker_props, source)])
    finally:
        admin.close()


def read_leases(worker_props: Mapping[str, Any], source: str) -> LeaseTable:
    """Every lease of the flows from ``source`` as the topic holds them now (empty if it does not exist)."""
    client_props = store_client_props(worker_props)
    table = LeaseTable()
    admin = TopicAdmin(client_props)
    try:
        exists = leases_topic(source) in admin.list_topics()
    finally:
        admin.close()

    def apply(key: bytes | None, value: bytes | None, _ts: int | None) -> None:
        table.apply(key, value)

    if exists:
        read_topic(client_props, leases_topic(source), apply)
    return table


def lease_history(worker_props: Mapping[str, Any], pair: SourceAndTarget) -> list[tuple[int, Lease | None]]:
    """Every record of the flow's lease still in the topic, in order: (offset, lease or None for a release)."""
    client_props = store_client_props(worker_props)
    key = lease_key(pair.source, pair.target)
    out: list[tuple[int, Lease | None]] = []

    def consume(msg: Message) -> None:
        if msg.key() == key:
            out.append((int(msg.offset() or 0), decode_lease(msg.key(), msg.value())))

    reader = KafkaBasedLog(leases_topic(pair.source), client_props, client_props, consume, read_only=True)
    try:
        reader.start()
    finally:
        reader.stop()
    return out


def write_lease(worker_props: Mapping[str, Any], pair: SourceAndTarget, lease: Lease | None) -> int:
    """Write (renew) ``lease``, or release the flow's lease when it is None (a tombstone); returns its offset."""
    key, value = encode_lease(lease) if lease is not None else (lease_key(pair.source, pair.target), None)
    producer = create_producer(producer_config(store_client_props(worker_props), {"enable.idempotence": True}))
    errors: list[KafkaError] = []
    offsets: list[int] = []

    def on_delivery(err: KafkaError | None, msg: Message) -> None:
        if err is not None:
            errors.append(err)
        else:
            offsets.append(int(msg.offset() or 0))

    producer.produce(leases_topic(pair.source), value, key, partition=0, on_delivery=on_delivery)
    if producer.flush(30) or errors or not offsets:
        raise ConnectError(
            f"cannot write the backfill lease of {pair} to {leases_topic(pair.source)}: "
            f"{errors[0].str() if errors else 'timed out'}"
        )
    return offsets[0]


def fence_transactional_ids(worker_props: Mapping[str, Any], ids: Iterable[str]) -> None:
    """Re-initialise each id with the flow's internal-topic clients: its earlier producer is fenced and its
    open transaction aborted."""
    conf = producer_config(store_client_props(worker_props))
    fence_producers(conf, ids, _FENCE_TIMEOUT_S, whose="the backfill's ")


class LeaseWatcher:
    """``mm2 run``'s view of one flow's backfill lease: read at start, tailed, checked against the clock.

    ``excluding()`` is the lease whose topics live tailing must leave alone: an active one, or an expired
    one whose transactional ids are not fenced yet (until then the dead job might still commit).
    ``on_change`` is called (from a background thread) whenever that answer changes.
    """

    def __init__(
        self,
        pair: SourceAndTarget,
        worker_props: Mapping[str, Any],
        on_change: Callable[[], None],
        clock: Callable[[], float] = time.time,
        fence: Callable[[Mapping[str, Any], Iterable[str]], None] = fence_transactional_ids,
    ) -> None:
        self.pair = pair
        self.worker_props = dict(worker_props)
        self._on_change = on_change
        self._clock = clock
        self._fence = fence
        self._table = LeaseTable()
        self._fenced: set[tuple[str, int]] = set()  # (job id, expiry) of expired leases already fenced
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._log: KafkaBasedLog | None = None
        self._thread: threading.Thread | None = None
        self._last: Lease | None = None

    def start(self) -> None:
        """Create the topic if missing and read it to the end (so the first configuration sees the lease)."""
        client_props = store_client_props(self.worker_props)
        self._log = KafkaBasedLog(
            leases_topic(self.pair.source),
            client_props,
            client_props,
            self._consume,
            read_only=True,
            topic_spec=leases_topic_spec(self.worker_props, self.pair.source),
        )
        self._log.start()
        self._settle()
        self._last = self.excluding()
        self._thread = threading.Thread(target=self._run, name=f"mm2-leases-{self.pair}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        if self._log is not None:
            self._log.stop()

    def excluding(self) -> Lease | None:
        with self._lock:
            lease = self._table.lease(self.pair.source, self.pair.target)
        if lease is None:
            return None
        if lease.active(self._now_ms()) or (lease.job_id, lease.expires_at_ms) not in self._fenced:
            return lease
        return None

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _consume(self, msg: Message) -> None:
        if msg.key() != lease_key(self.pair.source, self.pair.target):
            return
        with self._lock:
            self._table.apply(msg.key(), msg.value())

    def _settle(self) -> None:
        """Fence the transactional ids of an expired lease (once), so its topics can go back."""
        with self._lock:
            lease = self._table.lease(self.pair.source, self.pair.target)
        if lease is None or lease.active(self._now_ms()) or (lease.job_id, lease.expires_at_ms) in self._fenced:
            return
        try:
            self._fence(self.worker_props, lease.transactional_ids)
        except ConnectError as e:
            log.warning(
                "%s: the backfill lease of job %s expired but its transactions cannot be fenced yet; its "
                "topics stay excluded: %s",
                self.pair,
                lease.job_id,
                e,
            )
            return
        self._fenced.add((lease.job_id, lease.expires_at_ms))
        log.warning(
            "%s: the backfill lease of job %s expired (the job stopped renewing it): its transactions are "
            "fenced and live tailing takes back %s",
            self.pair,
            lease.job_id,
            ", ".join(lease.topics),
        )

    def _run(self) -> None:
        while not self._stop.wait(_TICK_S):
            try:
                self._settle()
                now = self.excluding()
                if _holding(now) != _holding(self._last):
                    self._last = now
                    self._on_change()
            except Exception:
                log.exception("%s: checking the backfill lease failed", self.pair)


def _holding(lease: Lease | None) -> tuple[str, tuple[str, ...]] | None:
    return None if lease is None else (lease.job_id, lease.topics)


__all__ = [
    "LeaseWatcher",
    "create_leases_topic",
    "fence_transactional_ids",
    "lease_history",
    "read_leases",
    "write_lease",
]
