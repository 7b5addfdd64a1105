"""The herder's side of zombie fencing on the leader, step by step, with the request queue run by hand.

The config store is the real config-log replay (:class:`ConfigState`) fed Java's records; the
worker, the fencer and the group member are stand-ins that record what they are asked. The herder
thread is this test's thread: each step drains the requests that are due, as a tick would.
"""

from __future__ import annotations

import threading
from types import SimpleNamespace
from typing import Any

import pytest

from connect_core.herder.distributed.fencing_rounds import FENCING_ATTEMPTS
from connect_core.herder.distributed.herder import DistributedHerder
from connect_core.herder.distributed.herder_requests import RequestQueue
from connect_core.model import ConnectorTaskId, State
from connect_core.runtime.distributed_config import DistributedConfig
from connect_core.storage import formats as f
from connect_core.storage.api import ClusterConfigState
from connect_core.storage.config_state import ConfigState
from connect_core.storage.memory import MemoryStatusBackingStore

CONNECTOR = "tests.distributed_plugins:IdleSourceConnector"
PROPS = {
    "bootstrap.servers": "127.0.0.1:1",
    "group.id": "g",
    "config.storage.topic": "c",
    "offset.storage.topic": "o",
    "status.storage.topic": "s",
    "key.converter": "org.apache.kafka.connect.storage.StringConverter",
    "value.converter": "org.apache.kafka.connect.storage.StringConverter",
    "exactly.once.source.support": "enabled",
}
T0, T1 = ConnectorTaskId("z", 0), ConnectorTaskId("z", 1)


class ConfigLog:
    """ConfigBackingStore over the pure replay; writes append Java's records."""

    def __init__(self) -> None:
        self.state = ConfigState()
        self.offset = 0
        self.written: list[tuple[str, bytes | None]] = []

    def put(self, key: str, value: bytes | None) -> None:
        self.written.append((key, value))
        self.state.apply(key, value, self.offset)
        self.offset += 1

    def tasks(self, n: int) -> None:
        for i in range(n):
            self.put(f.task_key("z", i), f.encode_task_config({"task.index": str(i)}))
        self.put(f.commit_key("z"), f.encode_task_commit(n))

    def snapshot(self) -> ClusterConfigState:
        return self.state.snapshot()

    def refresh(self, timeout_s: float) -> None:
        pass

    def put_task_count_record(self, connector: str, count: int) -> None:
        self.put(f.task_count_record_key(connector), f.encode_task_count_record(count))

    def set_update_listener(self, listener: Any) -> None:
        pass


class Worker:
    def __init__(self) -> None:
        self.started: list[ConnectorTaskId] = []

    def task_ids(self) -> set[ConnectorTaskId]:
        return set(self.started)

    def start_source_task(self, task: ConnectorTaskId, *args: Any) -> bool:
        self.started.append(task)
        return True


class Fencer:
    def __init__(self, failures: int = 0) -> None:
        self.calls: list[list[str]] = []
        self.failures = failures
        self.done = threading.Event()

    def __call__(self, connector: str, ids: list[str], props: Any) -> None:
        self.calls.append(ids)
        self.done.set()
        if self.failures > 0:
            self.failures -= 1
            raise RuntimeError("broker unreachable")


class Clock:
    now = 0.0

    def __call__(self) -> float:
        return self.now


def make(log: ConfigLog, fencer: Fencer) -> tuple[DistributedHerder, Worker, MemoryStatusBackingStore, Clock]:
    worker, status, clock = Worker(), MemoryStatusBackingStore(), Clock()
    h = DistributedHerder(DistributedConfig(dict(PROPS)), worker, "w1", "http://w1/", log, status,  # type: ignore[arg-type]
                          lambda *a: None, zombie_fencer=fencer)  # type: ignore[arg-type]  # fmt: skip
    h._requests = RequestQueue(clock=clock)
    h._member_id = "w1"
    h._assignment = SimpleNamespace(
        leader="w1",
        leader_url="http://w1/",
        tasks=[T0, T1],
        connectors=[],
        offset=0,
        error=0,
        revoked_connectors=(),
        revoked_tasks=(),
        delay=0,
    )
    return h, worker, status, clock


def tick(h: DistributedHerder, fencer: Fencer | None = None) -> None:
    """Wait for the fencing pool's work to be queued, then run what is due (a tick of the herder thread)."""
    if fencer is not None:
        assert fencer.done.wait(10)
        fencer.done.clear()
        h._fencing_pool.shutdown(wait=True)  # its follow-up is queued once the call returns
        h._fencing_pool = type(h._fencing_pool)(max_workers=1)
    while (req := h._requests.pop_due()) is not None:
        req.run()


@pytest.fixture
def log() -> ConfigLog:
    out = ConfigLog()
    out.put(f.connector_key("z"), f.encode_connector_config({"connector.class": CONNECTOR, "name": "z"}))
    return out


def test_first_generation_records_its_count_then_starts(log: ConfigLog) -> None:
    log.tasks(2)
    h, worker, _, _ = make(log, fencer := Fencer())
    h._config_state = log.snapshot()
    h._start_task(T0)
    assert worker.started == []  # not before the round of fencing
    assert log.written[-1] == ("tasks-fencing-z", b'{"task-count":2}')
    tick(h)
    assert worker.started == [T0] and fencer.calls == []
    # Covered now: the next task of the generation starts at once.
    h._start_task(T1)
    assert worker.started == [T0, T1]


def test_new_generation_fences_previous_ids_before_recording_and_starting(log: ConfigLog) -> None:
    log.tasks(2)
    log.put_task_count_record("z", 2)
    log.tasks(2)  # a new generation
    h, worker, _, _ = make(log, fencer := Fencer())
    h._config_state = log.snapshot()
    h._start_task(T0)
    h._start_task(T1)  # joins the round in flight
    tick(h, fencer)
    assert fencer.calls == [["g-z-0", "g-z-1"]]
    records = [k for k, _ in log.written]
    assert records[-2:] == ["commit-z", "tasks-fencing-z"]
    tick(h)
    assert sorted(worker.started) == [T0, T1]


def test_round_for_an_older_generation_starts_nothing(log: ConfigLog) -> None:
    log.tasks(2)
    log.put_task_count_record("z", 2)
    log.tasks(2)
    h, worker, status, clock = make(log, fencer := Fencer())
    h._config_state = log.snapshot()
    h._start_task(T0)
    log.tasks(2)  # newer task configs arrive while the leader fences
    h._on_task_config_update([T0, T1])
    h._config_state = log.snapshot()  # as the tick's config-update step does
    tick(h, fencer)
    clock.now += 60
    tick(h)
    assert worker.started == [] and log.written[-1][0] == "commit-z"  # no record for a stale round
    assert status.get_task(T0) is None  # not FAILED: the rebalance starts it again for the new configs
    assert h._tasks_awaiting_fencing == {}


def test_failed_fencing_is_retried_then_fails_the_task(log: ConfigLog) -> None:
    log.tasks(2)
    log.put_task_count_record("z", 2)
    log.tasks(2)
    h, worker, status, clock = make(log, fencer := Fencer(failures=FENCING_ATTEMPTS))
    h._config_state = log.snapshot()
    h._start_task(T0)
    for _ in range(FENCING_ATTEMPTS):
        tick(h, fencer)
        clock.now += 60
        tick(h)
    assert len(fencer.calls) == FENCING_ATTEMPTS and worker.started == []
    st = status.get_task(T0)
    assert st is not None and st.state is State.FAILED and "broker unreachable" in (st.trace or "")


def test_fencing_that_fails_once_is_retried_and_the_task_starts(log: ConfigLog) -> None:
    log.tasks(2)
    log.put_task_count_record("z", 2)
    log.tasks(2)
    h, worker, _, clock = make(log, fencer := Fencer(failures=1))
    h._config_state = log.snapshot()
    h._start_task(T0)
    tick(h, fencer)
    clock.now += 60
    tick(h)
    tick(h, fencer)
    tick(h)
    assert worker.started == [T0] and log.written[-1] == ("tasks-fencing-z", b'{"task-count":2}')


def follower(log: ConfigLog, forwarder: Any) -> tuple[DistributedHerder, Worker, MemoryStatusBackingStore, Clock]:
    from connect_core.herder.distributed.session_key import SessionKey

    worker, status, clock = Worker(), MemoryStatusBackingStore(), Clock()
    h = DistributedHerder(DistributedConfig(dict(PROPS)), worker, "w2", "http://w2/", log, status,  # type: ignore[arg-type]
                          lambda *a: None, zombie_fencer=Fencer(), fence_forwarder=forwarder,  # type: ignore[arg-type]
                          rest_namespace=("A", "B"))  # fmt: skip
    h._requests = RequestQueue(clock=clock)
    h._member_id = "w2"
    h._assignment = SimpleNamespace(leader="w1", leader_url="http://w1:8083/", tasks=[T0, T1], connectors=[],
                                    offset=0)  # fmt: skip
    h._session_key = SessionKey.generate("HmacSHA256", 256, 0)
    h._config_state = log.snapshot()
    return h, worker, status, clock


def run_forwards(h: DistributedHerder) -> None:
    h._forward_pool.shutdown(wait=True)
    h._forward_pool = type(h._forward_pool)(max_workers=1)
    tick(h)


def test_follower_asks_the_leader_with_a_signed_request_then_starts(log: ConfigLog) -> None:
    from connect_core.herder.distributed.session_key import InternalRequestSignature, check_signature

    log.tasks(2)
    sent: list[tuple[str, Any]] = []

    def forward(url: str, headers: Any) -> None:
        sent.append((url, headers))
        log.put_task_count_record("z", 2)  # what the leader does

    h, worker, _, _ = follower(log, forward)
    h._start_task(T1)
    run_forwards(h)
    assert [url for url, _ in sent] == ["http://w1:8083/A/B/connectors/z/fence"]
    check_signature(InternalRequestSignature.from_headers(b"", sent[0][1]), ["HmacSHA256"], h._session_key)
    assert worker.started == [T1]


def test_follower_without_internal_rest_fails_the_task_with_javas_message(log: ConfigLog) -> None:
    from connect_core.herder.distributed.leader_forwarding import NO_INTERNAL_REST_MESSAGE, no_internal_rest

    log.tasks(2)
    h, worker, status, clock = follower(log, no_internal_rest)
    h._start_task(T1)
    for _ in range(FENCING_ATTEMPTS):
        run_forwards(h)
        clock.now += 60
        tick(h)
    st = status.get_task(T1)
    assert worker.started == [] and st is not None and st.state is State.FAILED
    assert NO_INTERNAL_REST_MESSAGE in (st.trace or "")


def test_no_record_when_new_task_configs_arrive_between_fencing_and_recording(log: ConfigLog) -> None:
    log.tasks(2)
    log.put_task_count_record("z", 2)
    log.tasks(2)
    h, _, _, _ = make(log, fencer := Fencer())
    h._config_state = log.snapshot()
    fencing = h._fence_as_leader("z")
    assert fencer.done.wait(10)
    log.tasks(3)  # read by the herder only when it refreshes before writing the record
    tick(h, fencer)
    with pytest.raises(Exception, match="new task configurations were generated"):
        fencing.result(0)
    assert log.written[-1][0] == "commit-z" and h._active_fencings == {}
