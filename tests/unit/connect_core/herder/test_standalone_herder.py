"""StandaloneHerder + Worker with in-memory stores and producers: the Herder contract's semantics."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from connect_core.api.errors import AlreadyExistsError, BadRequestError, NotFoundError
from connect_core.herder.standalone import STOPPED_OFFSETS_MESSAGE, StandaloneHerder
from connect_core.model import ConnectorTaskId, RestartRequest, State, TargetState
from connect_core.runtime.worker import Worker
from connect_core.runtime.worker_config import StandaloneConfig
from connect_core.storage.memory import MemoryOffsetBackingStore, MemoryStatusBackingStore
from tests.worker_plugins import BAD_CONNECTOR, BYTES, CONNECTOR, FakeProducer, Registry


def wait_for(cond: Callable[[], bool], timeout: float = 30.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if cond():
                return
        except (NotFoundError, KeyError):
            pass
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


class Env:
    def __init__(self, **worker_props: str) -> None:
        self.producers: list[FakeProducer] = []
        self.offsets = MemoryOffsetBackingStore()
        props = {"key.converter": BYTES, "value.converter": BYTES, "offset.flush.interval.ms": "50",
                 "task.shutdown.graceful.timeout.ms": "2000", **worker_props}  # fmt: skip
        self.worker = Worker("w1:8083", StandaloneConfig(props), self.offsets, status_store=MemoryStatusBackingStore(),
                             producer_factory=self._producer)  # fmt: skip
        self.herder = StandaloneHerder(self.worker, kafka_cluster_id="cid")

    def _producer(self, props: dict[str, Any]) -> FakeProducer:
        p = FakeProducer()
        self.producers.append(p)
        return p

    def sent(self) -> int:
        return sum(len(p.log) for p in self.producers)

    def committed(self, name: str = "c") -> dict[int, int]:
        return {p["p"]: o["n"] for p, o in self.herder.connector_offsets(name)}

    def state(self, name: str = "c") -> tuple[State, list[State]]:
        s = self.herder.connector_status(name)
        return s.connector.state, [t.state for _, t in sorted(s.tasks.items())]


def config(**extra: str) -> dict[str, str]:
    return {"connector.class": CONNECTOR, "topic": "out", "records": "20", "source.partitions": "2",
            "tasks.max": "2", **extra}  # fmt: skip


@pytest.fixture
def env() -> Iterator[Env]:
    Registry.reset()
    e = Env()
    e.herder.start()
    yield e
    e.herder.stop()


def test_create_runs_tasks_and_commits(env: Env) -> None:
    created, info = env.herder.put_connector_config("c", config(), False)
    assert created and info.name == "c" and info.type == "source"
    assert info.config["name"] == "c"
    assert [t.task for t in info.tasks] == [0, 1]
    wait_for(lambda: env.state() == (State.RUNNING, [State.RUNNING, State.RUNNING]), what="running")
    wait_for(lambda: env.committed() == {0: 19, 1: 19}, what="offsets")
    assert env.herder.connectors() == ["c"]
    assert env.herder.connector_active_topics("c") == ["out"]
    tc = env.herder.task_configs("c")
    assert tc[0].config["task.class"] == "tests.worker_plugins:CountingSourceTask"
    assert env.herder.worker_id() == "w1:8083" and env.herder.kafka_cluster_id() == "cid"
    with pytest.raises(AlreadyExistsError):
        env.herder.put_connector_config("c", config(), False)


def test_invalid_config_rejected_with_java_message(env: Env) -> None:
    with pytest.raises(BadRequestError) as e:
        env.herder.put_connector_config("bad", {"connector.class": BAD_CONNECTOR, "records": "5000", "tasks.max": "0"},
                                        False)  # fmt: skip
    text = str(e.value)
    assert text.startswith("Connector configuration is invalid and contains the following 3 error(s):")
    assert "too many records" in text and "topic" in text
    assert env.herder.connectors() == []
    infos = env.herder.validate_connector_config({"connector.class": CONNECTOR, "name": "x", "topic": "t",
                                                  "producer.override.acks": "1"})  # fmt: skip
    assert infos.error_count == 0 and infos.name == CONNECTOR
    names = [v.name for _, v in infos.configs]
    assert "tasks.max" in names and "records" in names and "producer.override.acks" in names
    with pytest.raises(BadRequestError):
        env.herder.validate_connector_config({"name": "x"})


def test_override_policy_none_rejects_overrides() -> None:
    e = Env(**{"connector.client.config.override.policy": "None"})
    infos = e.herder.validate_connector_config({**config(), "name": "c", "producer.override.acks": "1"})
    assert infos.error_count == 1
    errors = [v.errors for _, v in infos.configs if v.name == "producer.override.acks"]
    assert errors == [["The 'None' policy does not allow 'acks' to be overridden in the connector configuration."]]


def test_pause_resume_stop_and_offsets(env: Env) -> None:
    env.herder.put_connector_config("c", config(records="1000000", batch="5", **{"poll.sleep": "0.01"}), False)
    wait_for(lambda: env.sent() > 100, what="records flowing")
    env.herder.pause_connector("c")
    wait_for(lambda: env.state() == (State.PAUSED, [State.PAUSED, State.PAUSED]), what="paused")
    with pytest.raises(BadRequestError) as e:
        env.herder.reset_connector_offsets("c")
    assert str(e.value) == STOPPED_OFFSETS_MESSAGE.format(name="c")
    env.herder.resume_connector("c")
    wait_for(lambda: env.state() == (State.RUNNING, [State.RUNNING, State.RUNNING]), what="resumed")
    env.herder.stop_connector("c")
    wait_for(lambda: env.state() == (State.STOPPED, []), what="stopped, tasks gone")
    assert env.herder.task_configs("c") == []
    assert env.worker.task_ids() == set()
    committed = env.committed()
    assert set(committed) == {0, 1}
    msg = env.herder.alter_connector_offsets("c", [({"p": 0}, {"n": 4}), ({"p": 1}, None)])
    assert msg == "The offsets for this connector have been altered successfully"
    assert env.committed() == {0: 4}
    with pytest.raises(BadRequestError):
        env.herder.alter_connector_offsets("c", [({"p": 0}, {"bad": 1})])
    assert env.herder.reset_connector_offsets("c") == "The offsets for this connector have been reset successfully"
    assert env.committed() == {}
    # resume from STOPPED regenerates task configs and starts from the (reset) beginning
    env.herder.resume_connector("c")
    wait_for(lambda: env.state() == (State.RUNNING, [State.RUNNING, State.RUNNING]), what="running again")


def test_restart_kip745_and_delete(env: Env) -> None:
    env.herder.put_connector_config("c", config(**{"fail.at": "3", "batch": "1"}), False)
    wait_for(lambda: env.state() == (State.RUNNING, [State.FAILED, State.FAILED]), what="tasks failed")
    before = dict(Registry.started)
    result = env.herder.restart_connector_and_tasks(RestartRequest("c", only_failed=True, include_tasks=True))
    assert result is not None
    assert result.connector.state is State.RUNNING  # only_failed: the running connector is left alone
    assert [t.state for _, t in sorted(result.tasks.items())] == [State.RESTARTING, State.RESTARTING]
    wait_for(lambda: Registry.started["c"] == before["c"] + 2, what="tasks restarted")
    wait_for(lambda: env.state()[1] == [State.FAILED, State.FAILED], what="failed again (resumed at 3)")
    full = env.herder.restart_connector_and_tasks(RestartRequest("c", include_tasks=True))
    assert full is not None and full.connector.state is State.RESTARTING
    env.herder.restart_task(ConnectorTaskId("c", 1))
    with pytest.raises(NotFoundError):
        env.herder.restart_task(ConnectorTaskId("c", 7))
    with pytest.raises(NotFoundError):
        env.herder.restart_connector_and_tasks(RestartRequest("nope"))
    env.herder.delete_connector_config("c")
    assert env.herder.connectors() == []
    with pytest.raises(NotFoundError):
        env.herder.connector_status("c")
    with pytest.raises(NotFoundError):
        env.herder.connector_info("c")
    assert env.worker.task_ids() == set() and env.worker.connector_names() == set()


def test_tasks_max_enforced(env: Env) -> None:
    env.herder.put_connector_config("c", config(**{"generate.tasks": "3"}), False)
    wait_for(lambda: env.state()[0] is State.FAILED, what="connector FAILED")
    status = env.herder.connector_status("c")
    assert "has generated 3 tasks, which is greater than 2" in (status.connector.trace or "")
    assert env.herder.task_configs("c") == []


def test_reconfigure_on_config_change_and_request(env: Env) -> None:
    env.herder.put_connector_config("c", config(), False)
    wait_for(lambda: env.state() == (State.RUNNING, [State.RUNNING, State.RUNNING]), what="running")
    _, info = env.herder.put_connector_config("c", config(**{"tasks.max": "1"}), True)
    assert [t.task for t in info.tasks] == [0]
    wait_for(lambda: env.state() == (State.RUNNING, [State.RUNNING]), what="one task")
    patched = env.herder.patch_connector_config("c", {"records": "30", "batch": None})
    assert patched.config["records"] == "30"
    started, stopped, asked = Registry.started["c"], Registry.stopped["c"], Registry.task_config_calls["c"]
    env.herder.request_task_reconfiguration("c")  # unchanged configs: no restart
    wait_for(lambda: Registry.task_config_calls["c"] > asked, what="the request served")
    env.herder.task_configs("c")  # takes the herder's lock: the request's decision is complete
    assert (Registry.started["c"], Registry.stopped["c"]) == (started, stopped)


def test_initial_state_stopped_and_paused(env: Env) -> None:
    env.herder.put_connector_config("s", config(), False, TargetState.STOPPED)
    wait_for(lambda: env.state("s") == (State.STOPPED, []), what="created stopped")
    env.herder.put_connector_config("p", config(), False, TargetState.PAUSED)
    wait_for(lambda: env.state("p")[0] is State.PAUSED, what="created paused")
    assert env.herder.task_configs("p") == []


def test_plugins_listed() -> None:
    e = Env()
    names = {p.class_name for p in e.herder.connector_plugins()}
    assert "org.apache.kafka.connect.mirror.MirrorSourceConnector" in names
    assert all(p.type in ("source", "sink") for p in e.herder.connector_plugins())
    assert any(p.type == "converter" for p in e.herder.connector_plugins(False))
