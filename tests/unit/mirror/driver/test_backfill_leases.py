"""Backfill leases, pure logic: the record format, expiry, the merge into the derived connector config, and
the driver deriving the same exclusion on every leadership (no broker: a fake lease view)."""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

from connect_core.api.errors import ConnectError
from mirror.client.filters import TOPICS_EXCLUDE_ALIAS_CONFIG, TOPICS_EXCLUDE_CONFIG, TOPICS_EXCLUDE_DEFAULT
from mirror.driver.backfill_leases import (
    Lease,
    LeaseTable,
    decode_lease,
    encode_lease,
    lease_key,
    leases_topic,
    next_expiry_s,
    with_lease,
)
from mirror.driver.driver import CONNECTOR_NAMES, MirrorMaker, desired_connector_configs, make_config
from mirror.driver.lease_store import LeaseWatcher
from mirror.driver.maker_config import SOURCE_CONNECTOR, SourceAndTarget
from tests.unit.mirror.driver.test_driver import AB, Factory, FakeFlow, _reuse, props, wait_until

LEASE = Lease("A", "B", "job1", ("orders", "pay.v1"), 10_000, ("mm2-backfill-A-B-orders-0",))


def test_a_lease_record_round_trips_and_a_tombstone_or_garbage_is_no_lease() -> None:
    key, value = encode_lease(LEASE)
    assert key == lease_key("A", "B") == b"A->B"
    assert decode_lease(key, value) == LEASE
    assert decode_lease(key, None) is None
    assert decode_lease(key, b"not json") is None
    assert decode_lease(key, b'{"job": "x"}') is None
    assert decode_lease(b"no arrow", value) is None
    assert leases_topic("A") == "mm2-backfill-leases.A.internal"


def test_a_lease_is_active_until_its_expiry_and_a_renewal_extends_it() -> None:
    assert LEASE.active(9_999) and not LEASE.active(10_000)
    renewed = LEASE.renewed(20_000, 60)
    assert renewed.expires_at_ms == 80_000 and renewed.topics == LEASE.topics and renewed.job_id == "job1"
    assert next_expiry_s(LEASE, 4_000) == 6.0
    assert next_expiry_s(LEASE, 10_000) is None and next_expiry_s(None, 0) is None


def test_the_table_keeps_the_latest_lease_per_flow_and_says_when_it_changed() -> None:
    table = LeaseTable()
    assert table.apply(*encode_lease(LEASE)) is True
    assert table.apply(*encode_lease(LEASE.renewed(50_000, 60))) is False, "a renewal changes nothing live"
    other = Lease("A", "B", "job2", ("orders",), 90_000)
    assert table.apply(*encode_lease(other)) is True, "taken over by another job"
    assert table.lease("A", "B") == other
    assert table.active("A", "B", 89_999) == other and table.active("A", "B", 90_000) is None
    assert table.apply(lease_key("A", "B"), None) is True, "released"
    assert table.lease("A", "B") is None
    assert table.apply(None, b"x") is False


def test_with_lease_adds_the_topics_to_the_exclusion_exactly() -> None:
    base = {"name": SOURCE_CONNECTOR, "topics": ".*"}
    assert with_lease(base, None) == base
    merged = with_lease(base, LEASE)
    assert merged[TOPICS_EXCLUDE_CONFIG] == f"{TOPICS_EXCLUDE_DEFAULT}, orders, pay\\.v1"
    assert with_lease(merged, LEASE) == merged, "idempotent: a new leader derives the same config"
    aliased = with_lease({TOPICS_EXCLUDE_ALIAS_CONFIG: "tmp.*"}, LEASE)
    assert aliased == {TOPICS_EXCLUDE_CONFIG: "tmp.*, orders, pay\\.v1"}
    assert with_lease({TOPICS_EXCLUDE_CONFIG: "x", TOPICS_EXCLUDE_ALIAS_CONFIG: "y"}, LEASE) == {
        TOPICS_EXCLUDE_CONFIG: "x, orders, pay\\.v1"
    }


def test_only_the_source_connector_config_carries_the_lease() -> None:
    config = make_config(props())
    plain = desired_connector_configs(config, AB)
    leased = desired_connector_configs(config, AB, LEASE)
    for name in CONNECTOR_NAMES:
        if name != SOURCE_CONNECTOR:
            assert leased[name] == plain[name]
    assert leased[SOURCE_CONNECTOR] == with_lease(plain[SOURCE_CONNECTOR], LEASE)


class FakeLeases:
    """A LeaseView the test switches by hand; ``on_change`` is what the driver gave it."""

    def __init__(self, lease: Lease | None) -> None:
        self.lease = lease
        self.on_change: Any = None
        self.started = threading.Event()
        self.stopped = threading.Event()

    def __call__(self, pair: SourceAndTarget, _worker_props: dict[str, str], on_change: Any) -> FakeLeases:
        assert pair == AB
        self.on_change = on_change
        return self

    def start(self) -> None:
        self.started.set()

    def stop(self) -> None:
        self.stopped.set()

    def excluding(self) -> Lease | None:
        return self.lease


def test_every_leadership_derives_the_exclusion_and_a_released_lease_gives_the_topics_back() -> None:
    config = make_config(props())
    factory = Factory()
    leases = FakeLeases(LEASE)
    first = MirrorMaker(config, factory, leases=leases)
    first.start()
    herder = factory.flows[AB].herder
    try:
        assert leases.started.is_set()
        wait_until(lambda: len(herder.puts) == 3)
        assert herder.configs[SOURCE_CONNECTOR] == with_lease(config.connector_base_config(AB, SOURCE_CONNECTOR), LEASE)
    finally:
        first.stop(5)
    assert leases.stopped.is_set()

    # a restarted node (a new leader) with the lease still held: the same config, nothing written
    reused: list[FakeFlow] = []
    second = MirrorMaker(config, lambda spec: _reuse(spec, factory.flows[AB], factory.log, reused), leases=leases)
    second.start()
    try:
        wait_until(lambda: second.leaderships_handled.get(AB) == 1)
        assert len(herder.puts) == 3
        leases.lease = None  # the job released it
        leases.on_change()
        wait_until(lambda: second.leaderships_handled.get(AB) == 2)
        assert herder.puts[3:] == [SOURCE_CONNECTOR]
        assert herder.configs[SOURCE_CONNECTOR] == config.connector_base_config(AB, SOURCE_CONNECTOR)
    finally:
        second.stop(5)


class Msg:
    def __init__(self, key: bytes, value: bytes | None) -> None:
        self._key, self._value = key, value

    def key(self) -> bytes:
        return self._key

    def value(self) -> bytes | None:
        return self._value


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_an_expired_lease_excludes_until_its_transactions_are_fenced_then_changes_once() -> None:
    clock = Clock()
    fenced: list[list[str]] = []
    fail = [True]

    def fence(_props: Mapping[str, Any], ids: Iterable[str]) -> None:
        if fail[0]:
            raise ConnectError("coordinator not available")
        fenced.append(list(ids))

    watcher = LeaseWatcher(AB, {}, lambda: None, clock=clock, fence=fence)
    watcher._consume(Msg(*encode_lease(LEASE)))
    watcher._consume(Msg(*encode_lease(Lease("A", "C", "other", ("x",), 1))))
    clock.now = 9.0
    watcher._settle()
    assert watcher.excluding() == LEASE and fenced == []
    clock.now = 11.0  # expired, but the fence fails: still excluded (the job might still commit)
    watcher._settle()
    assert watcher.excluding() == LEASE
    fail[0] = False
    watcher._settle()
    assert fenced == [list(LEASE.transactional_ids)] and watcher.excluding() is None
    watcher._settle()
    assert len(fenced) == 1, "fenced once"
    renewed_by_rerun = Lease("A", "B", "job2", ("orders",), 100_000)
    watcher._consume(Msg(*encode_lease(renewed_by_rerun)))
    assert watcher.excluding() == renewed_by_rerun
    watcher._consume(Msg(lease_key("A", "B"), None))
    assert watcher.excluding() is None
