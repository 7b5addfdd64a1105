"""The coordinator's decisions that need no broker: join metadata, how an incremental assignment is
completed with the work a worker keeps, the order and thread of listener callbacks, eager revocation."""

from __future__ import annotations

import threading
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from kafka.net.compat import KafkaNetClient

from connect_core.herder.distributed.coordinator import WorkerCoordinator
from connect_core.herder.distributed.protocol import (
    CONFIG_MISMATCH,
    ConnectProtocolCompatibility,
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_assignment,
    deserialize_metadata,
    serialize_assignment,
    serialize_metadata,
)
from connect_core.model import ConnectorTaskId


def T(i: int) -> ConnectorTaskId:
    return ConnectorTaskId("c", i)


@dataclass
class Snapshot:
    offset: int = 3

    def connectors(self) -> list[str]:
        return ["c"]

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        return [T(0), T(1), T(2)]


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def on_assigned(self, assignment: ExtendedAssignment, generation: int) -> None:
        self.events.append(("assigned", assignment, generation, threading.current_thread().name))

    def on_revoked(self, leader: str | None, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]) -> None:
        self.events.append(("revoked", tuple(connectors), tuple(tasks)))


def run(coro: Coroutine[Any, Any, Any]) -> Any:
    """Drive a hook coroutine that never suspends (they only compute and queue)."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    raise AssertionError("coroutine suspended")


@pytest.fixture
def coordinator() -> Iterator[tuple[WorkerCoordinator, Recorder]]:
    client = KafkaNetClient(bootstrap_servers="127.0.0.1:9", client_id="unit")  # never started: no I/O
    listener = Recorder()
    coord = WorkerCoordinator(
        client,
        rest_url="http://me:8083/",
        config_snapshot=Snapshot,
        listener=listener,
        group_id="g",
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=20000,
    )
    yield coord, listener
    client.close()


def assignment(**kw: Any) -> ExtendedAssignment:
    base: dict[str, Any] = dict(version=2, error=0, leader="L", leader_url="http://L", offset=3)
    base.update(kw)
    return ExtendedAssignment(**base)


def test_join_metadata_carries_url_offset_and_current_assignment(coordinator: Any) -> None:
    coord, _ = coordinator
    protocols = coord.group_protocols()
    assert [name for name, _ in protocols] == ["sessioned", "compatible", "default"]
    state = deserialize_metadata(protocols[0][1])
    assert (state.url, state.offset, state.assignment.connectors) == ("http://me:8083/", 3, ())
    assert coord.need_rejoin()  # no assignment yet

    run(coord._on_join_complete_async(0, "me", "sessioned", serialize_assignment(assignment(tasks=(T(0),)), True)))
    state = deserialize_metadata(coord.group_protocols()[0][1])
    assert state.assignment.tasks == (T(0),)


def test_increment_is_completed_with_kept_work_and_callbacks_wait_for_the_herder_thread(coordinator: Any) -> None:
    coord, listener = coordinator
    first = assignment(connectors=("c",), tasks=(T(0), T(1)))
    run(coord._on_join_complete_async(4, "me", "sessioned", serialize_assignment(first, True)))
    assert listener.events == []  # queued, not delivered on the network thread
    coord._deliver_events()
    assert listener.events[0][1] == first and listener.events[0][2] == 4

    increment = assignment(tasks=(T(2),), revoked_tasks=(T(0),))
    run(coord._on_join_complete_async(5, "me", "sessioned", serialize_assignment(increment, True)))
    listener.events.clear()
    coord._deliver_events()
    kind, connectors, tasks = listener.events[0]
    assert (kind, connectors, tasks) == ("revoked", (), (T(0),))  # revocations come first
    kind, complete, generation, thread = listener.events[1]
    assert kind == "assigned" and generation == 5 and thread == threading.current_thread().name
    assert complete.connectors == ("c",) and set(complete.tasks) == {T(1), T(2)}
    assert complete.revoked_tasks == (T(0),)
    assert coord.assignment == complete and coord.last_completed_generation_id == 5
    coord.rejoin_needed = False  # BaseCoordinator clears it just before calling the hook
    assert not coord.need_rejoin()


def test_eager_protocol_revokes_everything_before_rejoining_once(coordinator: Any) -> None:
    coord, listener = coordinator
    first = assignment(version=0, connectors=("c",), tasks=(T(0),))
    run(coord._on_join_complete_async(1, "me", "default", serialize_assignment(first, False)))
    coord._deliver_events()
    assert coord.current_protocol is ConnectProtocolCompatibility.EAGER
    listener.events.clear()
    coord._prepare_join()
    coord._prepare_join()  # retries of the same rebalance do not revoke twice
    assert listener.events == [("revoked", ("c",), (T(0),))]


def test_cooperative_protocol_keeps_work_when_a_rebalance_starts(coordinator: Any) -> None:
    coord, listener = coordinator
    run(coord._on_join_complete_async(1, "me", "sessioned", serialize_assignment(assignment(tasks=(T(0),)), True)))
    coord._deliver_events()
    listener.events.clear()
    coord._prepare_join()
    assert listener.events == []


def test_failed_or_unreadable_assignment_means_rejoin(coordinator: Any) -> None:
    coord, listener = coordinator
    run(coord._on_join_complete_async(1, "me", "sessioned", serialize_assignment(assignment(error=CONFIG_MISMATCH),
                                                                                  True)))  # fmt: skip
    coord._deliver_events()
    assert listener.events[-1][1].failed and coord.need_rejoin()
    listener.events.clear()
    coord.rejoin_needed = False
    run(coord._on_join_complete_async(2, "me", "sessioned", b"\x00"))
    coord._deliver_events()
    assert listener.events == [] and coord.rejoin_needed


def test_leader_assigns_with_the_assignor_and_remembers_owners(coordinator: Any) -> None:
    coord, _ = coordinator
    coord.group_protocols()  # takes the config snapshot, as a join does
    members = [
        SimpleNamespace(member_id=m, metadata=serialize_metadata(ExtendedWorkerState(f"http://{m}", 3), True))
        for m in ("a", "b")
    ]
    out = coord._perform_assignment("a", "sessioned", members)
    decoded = {m: deserialize_assignment(b) for m, b in out.items()}
    assert set(decoded) == {"a", "b"}
    tasks = sorted(t for a in decoded.values() if a for t in a.tasks)
    assert tasks == [T(0), T(1), T(2)]
    assert all(a is not None and a.leader_url == "http://a" for a in decoded.values())
    assert coord._leader_state is not None and coord._leader_state.owner_url(T(0)) in {"http://a", "http://b"}


def test_before_assignment_hook_sees_the_incremental_round_only(coordinator: Any) -> None:
    coord, _ = coordinator
    seen: list[tuple[Any, list[str], int]] = []
    coord.before_assignment = lambda assignor, members, ctx: seen.append(
        (assignor, [m for m, _ in members], ctx.config_snapshot.offset)
    )
    meta = serialize_metadata(ExtendedWorkerState("http://a", 3), True)
    coord._perform_assignment("a", "sessioned", [SimpleNamespace(member_id="a", metadata=meta)])
    assert seen == [(coord.incremental_assignor, ["a"], 3)]
    coord._perform_assignment("a", "default", [SimpleNamespace(member_id="a", metadata=meta)])
    assert len(seen) == 1


def test_a_follower_that_later_leads_holds_its_dead_predecessors_work(coordinator: Any) -> None:
    """Beyond Kafka: the new leader rebuilds the last generation from the members' join metadata, so
    the dead leader's task (reported by nobody) waits for scheduled.rebalance.max.delay.ms."""
    coord, _ = coordinator
    coord.incremental_assignor.scheduled_rebalance = 12345  # left over from an earlier term as leader
    run(coord._on_join_complete_async(4, "me", "sessioned", serialize_assignment(assignment(tasks=(T(0),)), True)))
    assert coord.incremental_assignor.scheduled_rebalance == 0  # a follower forgets what it knew as leader
    assert coord.incremental_assignor.previous_generation_id == -1

    coord.group_protocols()
    followed_l = assignment(tasks=(T(1),))  # "b" also followed L; L, which ran T(2), is gone
    members = [
        SimpleNamespace(member_id="me", metadata=coord.group_protocols()[0][1]),
        SimpleNamespace(member_id="b", metadata=serialize_metadata(ExtendedWorkerState("http://b", 3, followed_l),
                                                                   True)),
    ]  # fmt: skip
    out = coord._perform_assignment("me", "sessioned", members)
    decoded = {m: deserialize_assignment(b) for m, b in out.items()}
    assert all(a is not None and a.delay == 300000 and not a.tasks and not a.connectors for a in decoded.values())
    take_over = coord.incremental_assignor.last_take_over
    assert take_over is not None and take_over.previous_leaders == ("L",)
    assert take_over.unreported.tasks == [T(2)] and take_over.unreported.connectors == ["c"]
