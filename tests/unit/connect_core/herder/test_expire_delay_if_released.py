"""The leader's release check: a departed worker's lost-work delay is expired only when its work was
released cleanly (the status topic shows none of it RUNNING/PAUSED/RESTARTING).

:class:`~connect_core.herder.distributed.release_rule.ReleaseRule` reads only the status store, so it
runs here with a real memory status store, a real assignor and join metadata encoded as the members
send it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import SimpleNamespace

from connect_core.herder.distributed.assignor import IncrementalCooperativeAssignor
from connect_core.herder.distributed.protocol import (
    CONNECT_PROTOCOL_V2,
    NO_ERROR,
    ExtendedAssignment,
    ExtendedWorkerState,
    serialize_metadata,
)
from connect_core.herder.distributed.release_rule import ReleaseRule
from connect_core.model import ConnectorTaskId, State
from connect_core.storage.api import ConnectorStatus, TaskStatus
from connect_core.storage.memory import MemoryStatusBackingStore

NOW = 100_000
GENERATION = 7  # the last completed generation
DELAY_DUE = NOW + 300_000
T0, T1, T2 = (ConnectorTaskId("c", i) for i in range(3))


@dataclass
class Snapshot:
    tasks_by_connector: dict[str, list[ConnectorTaskId]] = field(default_factory=lambda: {"c": [T0, T1, T2]})
    offset: int = 5

    def connectors(self) -> list[str]:
        return list(self.tasks_by_connector)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        return self.tasks_by_connector[connector]


class ReadCountingStatusStore(MemoryStatusBackingStore):
    def __init__(self) -> None:
        super().__init__()
        self.reads: list[float] = []

    def read_to_end(self, timeout_s: float) -> None:
        self.reads.append(timeout_s)


def member(member_id: str, connectors: tuple[str, ...] = (), tasks: tuple[ConnectorTaskId, ...] = (),
           leader: str = "w1") -> tuple[str, bytes]:  # fmt: skip
    assignment = ExtendedAssignment(CONNECT_PROTOCOL_V2, NO_ERROR, leader, f"http://{leader}/", 5, connectors, tasks)
    return member_id, serialize_metadata(ExtendedWorkerState(f"http://{member_id}/", 5, assignment), sessioned=True)


def assignor_after_departure() -> IncrementalCooperativeAssignor:
    """w3 was in the previous round and a lost-work delay is pending."""
    assignor = IncrementalCooperativeAssignor(300_000, clock=lambda: NOW)
    assignor.previous_generation_id = GENERATION  # this worker (w1) assigned it
    assignor.previous_members = {"w1", "w2", "w3"}
    assignor.scheduled_rebalance = DELAY_DUE
    return assignor


def run(
    store: MemoryStatusBackingStore,
    assignor: IncrementalCooperativeAssignor,
    members: list[tuple[str, bytes]],
    snapshot: Snapshot | None = None,
) -> None:
    ctx = SimpleNamespace(config_snapshot=snapshot or Snapshot(), last_completed_generation_id=GENERATION)
    ReleaseRule(store, 30.0).expire_delay_if_released(assignor, members, ctx)  # type: ignore[arg-type]


SURVIVORS = [member("w1", ("c",), (T0,)), member("w2", (), (T1,))]  # nobody reports T2 (w3 ran it)


def test_cleanly_released_work_expires_the_delay_now() -> None:
    store = ReadCountingStatusStore()
    store.put(TaskStatus(T2, State.UNASSIGNED, "w3"))  # w3 stopped T2 before leaving (SIGTERM)
    assignor = assignor_after_departure()
    run(store, assignor, SURVIVORS)
    assert assignor.scheduled_rebalance == NOW  # due now: this round reassigns T2
    assert store.reads == [2.0]  # the status topic is read to its end first (at most 2 s)


def test_work_still_running_on_the_departed_worker_keeps_the_delay() -> None:
    for state in (State.RUNNING, State.PAUSED, State.RESTARTING):
        store = ReadCountingStatusStore()
        store.put(TaskStatus(T2, state, "w3"))  # w3 crashed (SIGKILL): its status still says it runs T2
        assignor = assignor_after_departure()
        run(store, assignor, SURVIVORS)
        assert assignor.scheduled_rebalance == DELAY_DUE, state


def test_a_departed_connector_still_running_keeps_the_delay() -> None:
    store = ReadCountingStatusStore()
    store.put(ConnectorStatus("c", State.RUNNING, "w3"))
    store.put(TaskStatus(T2, State.UNASSIGNED, "w3"))
    assignor = assignor_after_departure()
    run(store, assignor, [member("w1", (), (T0,)), member("w2", (), (T1,))])  # nobody reports connector c
    assert assignor.scheduled_rebalance == DELAY_DUE


def test_work_without_any_status_counts_as_released() -> None:
    store = ReadCountingStatusStore()
    assignor = assignor_after_departure()
    run(store, assignor, SURVIVORS)
    assert assignor.scheduled_rebalance == NOW


def test_nothing_to_do_when_nobody_departed_or_everything_is_reported() -> None:
    store = ReadCountingStatusStore()
    store.put(TaskStatus(T2, State.UNASSIGNED, "w3"))
    joined = assignor_after_departure()
    joined.previous_members = {"w1", "w2"}  # a member joined, none left
    run(store, joined, [*SURVIVORS, member("w3")])
    assert joined.scheduled_rebalance == DELAY_DUE

    first = IncrementalCooperativeAssignor(300_000, clock=lambda: NOW)  # w2 leads now; w1, who led, is still here
    run(store, first, SURVIVORS)
    assert first.scheduled_rebalance == 0

    reported = assignor_after_departure()  # w3 left, but the survivors report all of its work
    run(store, reported, [member("w1", ("c",), (T0, T2)), member("w2", (), (T1,))])
    assert reported.scheduled_rebalance == DELAY_DUE
    assert store.reads == []  # no status read when there is nothing to decide


def new_leader() -> IncrementalCooperativeAssignor:
    """w1 has just taken over the lead: it followed in the last generation and remembers nothing."""
    return IncrementalCooperativeAssignor(300_000, clock=lambda: NOW)


# The survivors w1 and w2 report w3 as their leader; w3 ran T2 and is gone.
AFTER_LEADER_LEFT = [member("w1", ("c",), (T0,), leader="w3"), member("w2", (), (T1,), leader="w3")]


def test_a_departed_leader_that_released_its_work_lets_the_new_leader_reassign_it_now() -> None:
    store = ReadCountingStatusStore()
    store.put(TaskStatus(T2, State.UNASSIGNED, "w3"))  # the old leader stopped T2 before leaving (SIGTERM)
    assignor = new_leader()
    run(store, assignor, AFTER_LEADER_LEFT)
    assert assignor.scheduled_rebalance == NOW


def test_a_crashed_leader_keeps_the_delay_on_its_work() -> None:
    store = ReadCountingStatusStore()
    store.put(TaskStatus(T2, State.RUNNING, "w3"))  # SIGKILLed: its status still says it runs T2
    assignor = new_leader()
    run(store, assignor, AFTER_LEADER_LEFT)
    assert assignor.scheduled_rebalance == 0  # no expiry: the assignor then holds T2 for the delay
    assert store.reads == [2.0]


def test_a_new_leader_learns_which_unreported_work_never_started() -> None:
    store = ReadCountingStatusStore()
    store.put(TaskStatus(T2, State.RUNNING, "w3"))  # the dead leader ran T2; nobody ever ran T3 (just created)
    t3 = ConnectorTaskId("c", 3)
    assignor = new_leader()
    run(store, assignor, AFTER_LEADER_LEFT, Snapshot({"c": [T0, T1, T2, t3]}))
    assert assignor.scheduled_rebalance == 0  # T2 keeps the delay
    assert assignor._never_started.tasks == [t3] and assignor._never_started.connectors == []

    follower_left = assignor_after_departure()  # not a take-over: nothing is noted
    run(store, follower_left, SURVIVORS, Snapshot({"c": [T0, T1, T2, t3]}))
    assert follower_left._never_started.is_empty()
