"""The MirrorMaker driver against fake herders: which herders, in which order, which configs written."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from connect_core.api.errors import ConfigError, ConflictError, NotFoundError, NotLeaderError
from connect_core.model import ConnectorInfo, TargetState
from mirror.driver.driver import (
    CONNECTOR_NAMES,
    MirrorMaker,
    configure_connectors,
    connectors_to_write,
    desired_connector_configs,
    make_config,
    rest_path,
)
from mirror.driver.herder_factory import HerderSpec
from mirror.driver.maker_config import (
    CHECKPOINT_CONNECTOR,
    HEARTBEAT_CONNECTOR,
    SOURCE_CONNECTOR,
    SourceAndTarget,
)

AB = SourceAndTarget("A", "B")


def props(**extra: str) -> dict[str, str]:
    base = {
        "clusters": "A, B, C",
        "A.bootstrap.servers": "a:9092",
        "B.bootstrap.servers": "b:9092",
        "C.bootstrap.servers": "c:9092",
        "A->B.enabled": "true",
        "emit.heartbeats.enabled": "false",
    }
    base.update(extra)
    return base


class ConfigHerder:
    """Just the config part of a herder: a dict, with switchable leadership and failures."""

    def __init__(self) -> None:
        self.configs: dict[str, dict[str, str]] = {}
        self.puts: list[str] = []
        self.not_leader = False
        self.reject: set[str] = set()
        self.conflicts = 0
        self._lock = threading.Lock()  # the driver writes the three configs concurrently

    def connector_config(self, name: str) -> dict[str, str]:
        if name not in self.configs:
            raise NotFoundError(name)
        return dict(self.configs[name])

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        assert allow_replace
        with self._lock:
            return self._put(name, config)

    def _put(self, name: str, config: dict[str, str]) -> tuple[bool, ConnectorInfo]:
        if self.not_leader:
            raise NotLeaderError("not leader", "http://leader:8083/")
        if self.conflicts > 0:
            self.conflicts -= 1
            raise ConflictError("rebalance in progress")
        if name in self.reject:
            raise ConfigError("emit.checkpoints.enabled: can't run with this false", key="emit.checkpoints.enabled")
        created = name not in self.configs
        self.configs[name] = dict(config)
        self.puts.append(name)
        return created, ConnectorInfo(name, dict(config), [], "source")


class FakeFlow:
    """A FlowHerder that behaves like a standalone one (leader as soon as started)."""

    def __init__(
        self, spec: HerderSpec, log: list[str], on_stop: Callable[[], None] = lambda: None, leader: bool = True
    ) -> None:
        self.spec = spec
        self._herder = ConfigHerder()
        self._log = log
        self._on_stop = on_stop
        self._leader = leader
        self.stopped = threading.Event()

    @property
    def herder(self) -> Any:
        return self._herder

    def start(self) -> None:
        self._log.append(f"start {self.spec.worker_id}")
        if self._leader:
            self.spec.on_became_leader()

    def stop(self) -> None:
        self._on_stop()
        self._log.append(f"stop {self.spec.worker_id}")
        self.stopped.set()


class Factory:
    """Makes FakeFlows; ``followers`` names the flows that never become leader, ``on_stop`` runs in each stop()."""

    def __init__(self, followers: frozenset[str] = frozenset()) -> None:
        self.flows: dict[SourceAndTarget, FakeFlow] = {}
        self.log: list[str] = []
        self.followers = followers
        self.on_stop: Callable[[], None] = lambda: None

    def __call__(self, spec: HerderSpec) -> FakeFlow:
        flow = FakeFlow(spec, self.log, lambda: self.on_stop(), leader=str(spec.pair) not in self.followers)
        self.flows[spec.pair] = flow
        return flow


def wait_until(predicate: Any, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met")
        time.sleep(0.01)


# ------------------------------------------------------------------------------- pure helpers


def test_connectors_to_write_keeps_java_order_and_skips_equal_configs() -> None:
    desired = {n: {"name": n, "x": "1"} for n in CONNECTOR_NAMES}
    assert connectors_to_write(desired, {}) == [SOURCE_CONNECTOR, HEARTBEAT_CONNECTOR, CHECKPOINT_CONNECTOR]
    current: dict[str, dict[str, str] | None] = {n: dict(c) for n, c in desired.items()}
    assert connectors_to_write(desired, current) == []
    current[HEARTBEAT_CONNECTOR] = {"name": HEARTBEAT_CONNECTOR, "x": "2"}
    current[SOURCE_CONNECTOR] = None
    assert connectors_to_write(desired, current) == [SOURCE_CONNECTOR, HEARTBEAT_CONNECTOR]
    # an extra stored key is a difference too (Java compares the maps with equals)
    current = {n: {**c, "extra": "y"} for n, c in desired.items()}
    assert connectors_to_write(desired, current) == list(CONNECTOR_NAMES)


def test_desired_configs_come_from_connector_base_config() -> None:
    config = make_config(props(**{"A->B.topics": "orders.*", "tasks.max": "3"}))
    desired = desired_connector_configs(config, AB)
    assert set(desired) == set(CONNECTOR_NAMES)
    for name, cfg in desired.items():
        assert cfg == config.connector_base_config(AB, name)
        assert cfg["name"] == name
        assert cfg["source.cluster.alias"] == "A" and cfg["target.cluster.alias"] == "B"
        assert cfg["topics"] == "orders.*" and cfg["tasks.max"] == "3"


def test_rest_path_percent_encodes_aliases() -> None:
    assert rest_path(AB) == "/A/B"
    assert rest_path(SourceAndTarget("us west", "eu/1")) == "/us%20west/eu%2F1"


def test_configure_connectors_writes_only_differences() -> None:
    herder = ConfigHerder()
    desired = {n: {"name": n} for n in CONNECTOR_NAMES}
    assert configure_connectors(herder, desired, AB) == list(CONNECTOR_NAMES)
    assert configure_connectors(herder, desired, AB) == []
    desired[CHECKPOINT_CONNECTOR] = {"name": CHECKPOINT_CONNECTOR, "groups": "g.*"}
    assert configure_connectors(herder, desired, AB) == [CHECKPOINT_CONNECTOR]
    assert herder.configs[CHECKPOINT_CONNECTOR]["groups"] == "g.*"


def test_configure_connectors_stops_when_leadership_is_lost() -> None:
    herder = ConfigHerder()
    herder.not_leader = True
    assert configure_connectors(herder, {n: {"name": n} for n in CONNECTOR_NAMES}, AB) == []
    assert herder.configs == {}


def test_configure_connectors_skips_a_rejected_config_and_writes_the_rest() -> None:
    herder = ConfigHerder()
    herder.reject = {HEARTBEAT_CONNECTOR}
    written = configure_connectors(herder, {n: {"name": n} for n in CONNECTOR_NAMES}, AB)
    assert written == [SOURCE_CONNECTOR, CHECKPOINT_CONNECTOR]


def test_configure_connectors_retries_while_the_herder_rebalances(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("mirror.driver.driver._CONFLICT_BACKOFF_S", 0.001)
    herder = ConfigHerder()
    herder.conflicts = 3
    assert configure_connectors(herder, {n: {"name": n} for n in CONNECTOR_NAMES}, AB) == list(CONNECTOR_NAMES)


# ------------------------------------------------------------------------------- the driver


def test_one_herder_per_pair_started_in_order_with_worker_config_and_id() -> None:
    config = make_config(props(**{"emit.heartbeats.enabled": "true"}))
    factory = Factory()
    mm = MirrorMaker(config, factory)
    mm.start()
    try:
        expected = config.cluster_pairs()
        assert len(expected) == 6  # heartbeats on: every ordered pair
        assert factory.log == [f"start {p}" for p in expected]
        for pair, flow in factory.flows.items():
            assert flow.spec.worker_id == f"{pair.source}->{pair.target}"
            assert flow.spec.worker_props == config.worker_config(pair)
            assert flow.spec.worker_props["group.id"] == f"{pair.source}-mm2"
            assert flow.spec.rest_url is None  # REST is off by default
    finally:
        assert mm.stop(5)


def test_clusters_option_keeps_only_flows_into_those_targets() -> None:
    config = make_config(props(**{"emit.heartbeats.enabled": "true"}))
    factory = Factory()
    mm = MirrorMaker(config, factory, clusters=["B"])
    mm.start()
    try:
        assert sorted(map(str, factory.flows)) == ["A->B", "C->B"]
    finally:
        mm.stop(5)


def test_leader_writes_the_three_connector_configs() -> None:
    config = make_config(props())
    factory = Factory()
    mm = MirrorMaker(config, factory)
    mm.start()
    try:
        herder = factory.flows[AB].herder
        wait_until(lambda: len(herder.configs) == 3)
        assert sorted(herder.puts) == sorted(CONNECTOR_NAMES)
        for name in CONNECTOR_NAMES:
            assert herder.configs[name] == config.connector_base_config(AB, name)
        assert herder.configs[SOURCE_CONNECTOR]["enabled"] == "true"
    finally:
        mm.stop(5)


def test_becoming_leader_again_rewrites_only_changed_configs() -> None:
    factory = Factory()
    first = MirrorMaker(make_config(props()), factory)
    first.start()
    herder = factory.flows[AB].herder
    wait_until(lambda: len(herder.puts) == 3)
    first.stop(5)

    # a restarted node with an edited file becomes leader over the same stored configs
    changed = make_config(props(**{"A->B.topics": "orders"}))
    reused: list[FakeFlow] = []
    second = MirrorMaker(changed, lambda spec: _reuse(spec, factory.flows[AB], factory.log, reused))
    second.start()
    try:
        wait_until(lambda: second.leaderships_handled.get(AB) == 1)  # the whole leadership, all three decided
        assert sorted(herder.puts[3:]) == sorted(CONNECTOR_NAMES)
        assert herder.configs[SOURCE_CONNECTOR]["topics"] == "orders"
        reused[0].spec.on_became_leader()  # leadership again, nothing changed: nothing written
        wait_until(lambda: second.leaderships_handled.get(AB) == 2)
        assert len(herder.puts) == 6
    finally:
        second.stop(5)


def _reuse(spec: HerderSpec, old: FakeFlow, log: list[str], made: list[FakeFlow]) -> FakeFlow:
    flow = FakeFlow(spec, log)
    flow._herder = old._herder
    made.append(flow)
    return flow


def test_follower_writes_nothing() -> None:
    # Every other flow leads: once the driver has handled all their leaderships, it has handled
    # everything start-up gave it, so the follower's empty herder is a decision, not a race.
    config = make_config(props(**{"emit.heartbeats.enabled": "true"}))
    factory = Factory(followers=frozenset({"A->B"}))
    mm = MirrorMaker(config, factory)
    mm.start()
    try:
        leaders = [p for p in factory.flows if p != AB]
        assert len(leaders) == 5
        wait_until(lambda: all(mm.leaderships_handled.get(p) == 1 for p in leaders))
        assert all(len(factory.flows[p].herder.puts) == 3 for p in leaders)
        assert factory.flows[AB].herder.puts == []
        assert AB not in mm.leaderships_handled
    finally:
        mm.stop(5)


def test_stop_stops_every_herder_and_reports_clean() -> None:
    config = make_config(props(**{"emit.heartbeats.enabled": "true"}))
    factory = Factory()
    mm = MirrorMaker(config, factory)
    mm.start()
    # Each stop() returns only once all six are inside stop() at the same time: stopped in parallel.
    # One after another, the first would break the barrier after 20 s and the stop would not be clean.
    barrier = threading.Barrier(len(factory.flows), timeout=20)
    factory.on_stop = barrier.wait
    assert mm.stop(60) is True
    assert all(f.stopped.is_set() for f in factory.flows.values())


def test_stop_gives_up_after_the_timeout() -> None:
    factory = Factory()
    hung = threading.Event()
    release = threading.Event()

    def hang() -> None:
        hung.set()
        release.wait(60)

    factory.on_stop = hang
    mm = MirrorMaker(make_config(props()), factory)
    mm.start()
    try:
        assert mm.stop(0.3) is False
        # it gave up: the herder's stop is still hanging when stop() has returned
        assert hung.is_set() and not factory.flows[AB].stopped.is_set()
    finally:
        release.set()
    assert factory.flows[AB].stopped.wait(10)


def test_interrupted_start_starts_no_further_herders() -> None:
    config = make_config(props(**{"emit.heartbeats.enabled": "true"}))
    factory = Factory()
    started = iter(range(100))
    mm = MirrorMaker(config, factory)
    mm.start(interrupted=lambda: next(started) >= 2)
    assert len(factory.flows) == 2
    assert mm.stop(5)
    assert factory.log[-2:] == [f"stop {p}" for p in reversed(list(factory.flows))]


def test_worker_configs_are_resolved_but_connector_configs_stay_raw(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MM2_TEST_B_SERVERS", "b-resolved:9092")
    monkeypatch.setenv("MM2_TEST_TOPICS", "resolved-topics")
    config = make_config(
        props(**{"B.bootstrap.servers": "${env:MM2_TEST_B_SERVERS}", "A->B.topics": "${env:MM2_TEST_TOPICS}"})
    )
    factory = Factory()
    mm = MirrorMaker(config, factory)
    mm.start()
    try:
        flow = factory.flows[AB]
        assert flow.spec.worker_props["bootstrap.servers"] == "b-resolved:9092"
        wait_until(lambda: len(flow.herder.configs) == 3)
        assert flow.herder.configs[SOURCE_CONNECTOR]["topics"] == "${env:MM2_TEST_TOPICS}"
    finally:
        mm.stop(5)


def test_no_flows_is_a_config_error() -> None:
    config = make_config(props(**{"A->B.enabled": "false"}))
    with pytest.raises(ConfigError, match="no source->target replication flows"):
        MirrorMaker(config, Factory())


# ------------------------------------------------------------------------------- reload


def test_reload_stops_removed_flows_starts_added_ones_and_updates_kept_connectors() -> None:
    from mirror.driver.reload_plan import plan_reload

    running = make_config(props(**{"B->C.enabled": "true", "A->C.enabled": "true"}))
    factory = Factory()
    mm = MirrorMaker(running, factory)
    mm.start()
    try:
        ac, bc, ca = SourceAndTarget("A", "C"), SourceAndTarget("B", "C"), SourceAndTarget("C", "A")
        wait_until(lambda: all(mm.leaderships_handled.get(p) == 1 for p in (AB, ac, bc)))
        ab_herder = factory.flows[AB].herder
        new = make_config(props(**{"A->C.enabled": "true", "C->A.enabled": "true", "A->B.topics": "orders, events"}))
        assert mm.reload(plan_reload(running, new, None))
        assert factory.flows[bc].stopped.is_set() and not factory.flows[AB].stopped.is_set()
        assert mm.pairs == [AB, ac, ca]
        assert factory.log == ["start A->B", "start A->C", "start B->C", "stop B->C", "start C->A"]
        wait_until(
            lambda: all(mm.leaderships_handled.get(p) == 2 for p in (AB, ac)) and mm.leaderships_handled.get(ca) == 1
        )
        assert len(factory.flows[ac].herder.puts) == 3  # unchanged flow: compared, nothing written
        # the kept flow: a connector config update of each connector whose config changed (a flow's own
        # settings reach all three, as in Java), and no other write
        assert sorted(ab_herder.puts) == sorted(CONNECTOR_NAMES * 2)
        assert ab_herder.configs[SOURCE_CONNECTOR]["topics"] == "orders, events"
        assert len(factory.flows[ca].herder.puts) == 3
    finally:
        assert mm.stop(5)
    assert factory.log.count("stop B->C") == 1  # a removed flow is not stopped twice


def test_reload_on_a_follower_leaves_the_write_to_the_leader() -> None:
    from mirror.driver.reload_plan import plan_reload

    running = make_config(props())
    factory = Factory()
    mm = MirrorMaker(running, factory)
    mm.start()
    try:
        herder = factory.flows[AB].herder
        wait_until(lambda: mm.leaderships_handled.get(AB) == 1)
        herder.not_leader = True  # leadership moved to another node
        mm.reload(plan_reload(running, make_config(props(**{"A->B.topics": "events"})), None))
        wait_until(lambda: mm.leaderships_handled.get(AB) == 2)
        assert len(herder.puts) == 3 and "topics" not in herder.configs[SOURCE_CONNECTOR]
        assert mm.config.connector_base_config(AB, SOURCE_CONNECTOR)["topics"] == "events"  # its view, if it leads
    finally:
        mm.stop(5)
