"""The incremental cooperative assignor (KIP-415) driven through whole rebalance sequences, with a fake
clock; the scenarios and expected allocations follow Kafka's IncrementalCooperativeAssignorTest."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

import pytest

from connect_core.herder.distributed.assignor import (
    AssignmentContext,
    ClusterAssignment,
    ConnectorsAndTasks,
    EagerAssignor,
    IncrementalCooperativeAssignor,
    WorkerLoad,
)
from connect_core.herder.distributed.protocol import (
    CONFIG_MISMATCH,
    CONNECT_PROTOCOL_V1,
    CONNECT_PROTOCOL_V2,
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_assignment,
    serialize_metadata,
)
from connect_core.model import ConnectorTaskId

DEFAULT_DELAY = 300000
CONFIG_OFFSET = 618


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_000_000

    def __call__(self) -> int:
        return self.now

    def sleep(self, ms: int) -> None:
        self.now += ms


@dataclass
class Snapshot:
    task_counts: dict[str, int]
    offset: int = CONFIG_OFFSET

    def connectors(self) -> list[str]:
        return sorted(self.task_counts)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(connector, i) for i in range(self.task_counts.get(connector, 0))]


@dataclass
class Cluster:
    """Kafka's test harness: members' current assignments, configured connectors, a rebalance loop."""

    delay: int = DEFAULT_DELAY
    clock: FakeClock = field(default_factory=FakeClock)
    connectors: dict[str, int] = field(default_factory=lambda: {"connector1": 4, "connector2": 4})
    members: dict[str, ConnectorsAndTasks] = field(default_factory=lambda: {"worker1": ConnectorsAndTasks()})
    generation: int = 1000
    returned: ClusterAssignment | None = None

    def __post_init__(self) -> None:
        self.init_assignor()

    def init_assignor(self) -> None:
        self.assignor = IncrementalCooperativeAssignor(self.delay, self.clock)
        self.assignor.previous_generation_id = self.generation

    def add_workers(self, *names: str) -> None:
        for n in names:
            assert n not in self.members
            self.members[n] = ConnectorsAndTasks()

    def remove_workers(self, *names: str) -> None:
        for n in names:
            del self.members[n]

    def take_over(self) -> None:
        """Another member becomes the leader: a fresh assignor that assigned no generation yet."""
        self.assignor = IncrementalCooperativeAssignor(self.delay, self.clock)

    def rebalance(self, *, fail: bool = False, generation_mismatch: bool = False,
                  leaders: tuple[str, ...] = ()) -> ClusterAssignment:  # fmt: skip
        """One round; ``leaders``: the leader ids the members report (they matter after a take-over)."""
        self.generation += 1
        last_completed = self.generation - 2 if generation_mismatch else self.generation - 1
        copy = {w: ConnectorsAndTasks.of(a.connectors, a.tasks) for w, a in self.members.items()}
        self.returned = self.assignor.perform_task_assignment(
            Snapshot(dict(self.connectors)), last_completed, self.generation, copy, leaders
        )
        self.assert_no_redundant_assignments()
        if not fail:
            self.apply()
        return self.returned

    def apply(self) -> None:
        r = self.returned
        assert r is not None
        for w in r.all_workers:
            a = self.members.setdefault(w, ConnectorsAndTasks())
            revoked_c = set(r.newly_revoked_connectors.get(w, ()))
            revoked_t = set(r.newly_revoked_tasks.get(w, ()))
            a.connectors = [c for c in a.connectors if c not in revoked_c] + r.newly_assigned_connectors.get(w, [])
            a.tasks = [t for t in a.tasks if t not in revoked_t] + r.newly_assigned_tasks.get(w, [])
            assert set(a.connectors) == set(r.all_assigned_connectors[w])
            assert set(a.tasks) == set(r.all_assigned_tasks[w])

    # ---------------------------------------------------------------- assertions

    def connector_counts(self) -> list[int]:
        return sorted(len(a.connectors) for a in self.members.values())

    def task_counts(self) -> list[int]:
        return sorted(len(a.tasks) for a in self.members.values())

    def assert_allocations(self, connectors: list[int], tasks: list[int]) -> None:
        assert self.connector_counts() == sorted(connectors)
        assert self.task_counts() == sorted(tasks)

    def assert_workers(self, *names: str) -> None:
        assert self.returned is not None and self.returned.all_workers == set(names)

    def assert_no_revocations(self) -> None:
        r = self.returned
        assert r is not None
        assert all(not v for v in r.newly_revoked_connectors.values())
        assert all(not v for v in r.newly_revoked_tasks.values())

    def assert_empty_assignment(self) -> None:
        r = self.returned
        assert r is not None
        for m in (r.newly_assigned_connectors, r.newly_assigned_tasks, r.newly_revoked_connectors,
                  r.newly_revoked_tasks):  # fmt: skip
            assert all(not v for v in m.values())

    def assert_no_redundant_assignments(self) -> None:
        r = self.returned
        assert r is not None
        new_c = [c for v in r.newly_assigned_connectors.values() for c in v]
        new_t = [t for v in r.newly_assigned_tasks.values() for t in v]
        assert len(new_c) == len(set(new_c)), new_c
        assert len(new_t) == len(set(new_t)), new_t
        running_c = {c for a in self.members.values() for c in a.connectors}
        running_t = {t for a in self.members.values() for t in a.tasks}
        assert not running_c & set(new_c)
        assert not running_t & set(new_t)

    def assert_balanced_and_complete(self) -> None:
        cc, tc = self.connector_counts(), self.task_counts()
        assert cc[-1] - cc[0] <= 1, cc
        assert tc[-1] - tc[0] <= 1, tc
        running_c = [c for a in self.members.values() for c in a.connectors]
        running_t = [t for a in self.members.values() for t in a.tasks]
        assert sorted(running_c) == sorted(self.connectors)  # each exactly once
        expected_t = [ConnectorTaskId(c, i) for c, n in self.connectors.items() for i in range(n)]
        assert Counter(running_t) == Counter(expected_t)

    @property
    def delay_now(self) -> int:
        return self.assignor.delay


@pytest.fixture
def cluster() -> Cluster:
    return Cluster()


# ----------------------------------------------------------------------------- joins and revocations


def test_worker_joins_gets_half_after_revocation(cluster: Cluster) -> None:
    cluster.rebalance()
    assert cluster.delay_now == 0
    cluster.assert_workers("worker1")
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()

    cluster.add_workers("worker2")
    cluster.rebalance()  # revoke the excess from worker1 first...
    assert cluster.delay_now == 0
    cluster.assert_allocations([0, 1], [0, 4])

    cluster.rebalance()  # ...assign it in the follow-up round
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()

    cluster.rebalance()
    assert cluster.delay_now == 0
    cluster.assert_empty_assignment()


def test_successive_revoking_rebalances_back_off(cluster: Cluster) -> None:
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.assert_allocations([3], [12])

    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([0, 2], [0, 6])

    cluster.add_workers("worker3")  # right after a revoking round: no revocation, a backoff delay
    cluster.rebalance()
    assert cluster.delay_now == 40
    cluster.assert_no_revocations()
    cluster.assert_allocations([0, 1, 2], [3, 3, 6])

    cluster.clock.sleep(cluster.delay_now)
    cluster.add_workers("worker4")
    cluster.rebalance()  # backoff expired: revoke
    cluster.assert_allocations([0, 0, 1, 1], [0, 3, 3, 3])

    cluster.add_workers("worker5")
    cluster.rebalance()  # a second successive revoking round backs off longer
    assert cluster.delay_now == 1600
    cluster.assert_allocations([0, 0, 1, 1, 1], [1, 2, 3, 3, 3])

    cluster.clock.sleep(cluster.delay_now)
    cluster.add_workers("worker6")
    cluster.rebalance()
    assert cluster.delay_now == 0
    cluster.assert_allocations([0, 0, 0, 1, 1, 1], [0, 1, 2, 2, 2, 2])

    cluster.rebalance()
    cluster.assert_allocations([0, 0, 0, 1, 1, 1], [2, 2, 2, 2, 2, 2])
    cluster.assert_balanced_and_complete()


def test_immediate_revocations_when_max_delay_is_zero() -> None:
    cluster = Cluster(delay=0)
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([0, 2], [0, 6])
    cluster.add_workers("worker3")
    cluster.rebalance()  # successive revoking round, but no delay is allowed: revoke at once
    assert cluster.delay_now == 0
    cluster.assert_allocations([0, 1, 1], [3, 3, 4])
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1, 1], [4, 4, 4])
    cluster.assert_balanced_and_complete()


def test_backoff_is_capped_by_a_one_ms_max_delay() -> None:
    cluster = Cluster(delay=1)
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.add_workers("worker3")
    cluster.rebalance()
    assert cluster.delay_now == 1
    cluster.assert_allocations([0, 1, 2], [3, 3, 6])


def test_worker_joining_during_delayed_rebalance(cluster: Cluster) -> None:
    cluster.connectors["connector3"] = 4
    cluster.rebalance()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.add_workers("worker3")
    cluster.rebalance()
    assert cluster.delay_now > 0
    cluster.assert_no_revocations()
    cluster.assert_allocations([0, 1, 2], [3, 3, 6])

    cluster.clock.sleep(cluster.delay_now // 2)
    cluster.add_workers("worker4")
    cluster.rebalance()  # still within the backoff: no revocations
    assert cluster.delay_now > 0
    cluster.assert_no_revocations()
    cluster.assert_allocations([0, 0, 1, 2], [0, 3, 3, 6])

    cluster.clock.sleep(cluster.delay_now)
    cluster.add_workers("worker5")
    cluster.rebalance()
    assert cluster.delay_now == 0
    cluster.assert_allocations([0, 0, 0, 1, 1], [0, 0, 2, 3, 3])

    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([0, 0, 1, 1, 1], [2, 2, 2, 3, 3])
    cluster.assert_balanced_and_complete()


# ----------------------------------------------------------------------------- lost work and the delay


def test_worker_leaves_permanently_work_reassigned_after_delay(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([1, 1], [4, 4])

    cluster.remove_workers("worker2")
    cluster.rebalance()  # lost: hold it back for the full delay
    assert cluster.delay_now == DEFAULT_DELAY
    cluster.assert_workers("worker1")
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance()  # an incidental rebalance reports the remaining delay
    assert cluster.delay_now == DEFAULT_DELAY // 2
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2 + 1)
    cluster.rebalance()  # expired: the survivors take it
    assert cluster.delay_now == 0
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()


def test_worker_bounces_and_gets_its_work_back_within_delay(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    lost_connectors = list(cluster.members["worker2"].connectors)
    lost_tasks = list(cluster.members["worker2"].tasks)

    cluster.remove_workers("worker2")
    cluster.rebalance()
    assert cluster.delay_now == DEFAULT_DELAY
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance()
    assert cluster.delay_now == DEFAULT_DELAY // 2

    cluster.clock.sleep(DEFAULT_DELAY // 4)
    cluster.add_workers("worker2")  # it comes back (empty) before the delay runs out
    cluster.rebalance()
    assert cluster.delay_now == DEFAULT_DELAY // 4
    cluster.assert_workers("worker1", "worker2")
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 4)
    cluster.rebalance()  # expired: the returning worker gets the lost work back, nothing moves
    assert cluster.delay_now == 0
    cluster.assert_no_revocations()
    assert cluster.members["worker2"].connectors == lost_connectors
    assert sorted(cluster.members["worker2"].tasks) == sorted(lost_tasks)
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()


def test_scheduled_delay_disabled_reassigns_lost_work_at_once() -> None:
    cluster = Cluster(delay=0)
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.remove_workers("worker2")
    cluster.rebalance()
    assert cluster.delay_now == 0
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()


def test_new_leader_holds_the_dead_leaders_work_for_the_delay(cluster: Cluster) -> None:
    """Beyond Kafka (whose new leader reassigns a dead leader's work at once): the new leader rebuilds
    the last generation, so what no survivor reports is lost work and waits for the delay."""
    cluster.add_workers("worker2", "worker3")
    cluster.rebalance()
    cluster.assert_allocations([0, 1, 1], [2, 3, 3])
    dead_c, dead_t = list(cluster.members["worker1"].connectors), list(cluster.members["worker1"].tasks)
    assert dead_t

    cluster.remove_workers("worker1")  # the leader dies; the survivors still report it as their leader
    cluster.take_over()
    cluster.rebalance(leaders=("worker1",))
    assert cluster.delay_now == DEFAULT_DELAY
    taken = cluster.assignor.last_take_over
    assert taken is not None and taken.previous_leaders == ("worker1",)
    assert (taken.unreported.connectors, taken.unreported.tasks) == (sorted(dead_c), sorted(dead_t))
    cluster.assert_workers("worker2", "worker3")
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance(leaders=("worker2",))  # the new leader remembers its own round now
    assert cluster.assignor.last_take_over is None
    assert cluster.delay_now == DEFAULT_DELAY // 2
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance(leaders=("worker2",))  # expired: the survivors take it
    assert cluster.delay_now == 0
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()


def test_dead_leader_that_returns_within_the_delay_gets_its_work_back(cluster: Cluster) -> None:
    cluster.add_workers("worker2", "worker3")
    cluster.rebalance()
    dead_c, dead_t = list(cluster.members["worker1"].connectors), list(cluster.members["worker1"].tasks)

    cluster.remove_workers("worker1")
    cluster.take_over()
    cluster.rebalance(leaders=("worker1",))
    assert cluster.delay_now == DEFAULT_DELAY

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.add_workers("worker1")  # back, empty, as a plain member
    cluster.rebalance(leaders=("worker2",))
    assert cluster.delay_now == DEFAULT_DELAY // 2
    cluster.assert_empty_assignment()

    cluster.clock.sleep(DEFAULT_DELAY // 2)
    cluster.rebalance(leaders=("worker2",))
    cluster.assert_no_revocations()
    assert cluster.members["worker1"].connectors == dead_c
    assert sorted(cluster.members["worker1"].tasks) == sorted(dead_t)
    cluster.assert_allocations([0, 1, 1], [2, 3, 3])
    cluster.assert_balanced_and_complete()


def test_new_leader_assigns_work_that_never_started_at_once_and_holds_the_rest(cluster: Cluster) -> None:
    """A connector created just before the leader died ran nowhere: it is new work, not lost work."""
    cluster.add_workers("worker2", "worker3")
    cluster.rebalance()
    dead_t = list(cluster.members["worker1"].tasks)
    cluster.connectors["connector3"] = 2  # its config was written, the dying leader never assigned it
    created_t = [ConnectorTaskId("connector3", i) for i in range(2)]
    cluster.remove_workers("worker1")
    cluster.take_over()
    cluster.assignor.note_never_started(["connector3"], created_t)  # no status was ever written for them
    r = cluster.rebalance(leaders=("worker1",))
    assert cluster.delay_now == DEFAULT_DELAY  # worker1's work is still held ...
    assert sorted(c for cs in r.newly_assigned_connectors.values() for c in cs) == ["connector3"]
    assert sorted(t for ts in r.newly_assigned_tasks.values() for t in ts) == created_t  # ... the new work is not
    taken = cluster.assignor.last_take_over
    assert taken is not None
    assert (taken.never_started.connectors, taken.never_started.tasks) == (["connector3"], created_t)
    assert sorted(taken.unreported.tasks) == sorted(dead_t + created_t)

    cluster.clock.sleep(DEFAULT_DELAY)
    cluster.rebalance(leaders=("worker2",))
    cluster.assert_no_revocations()
    cluster.assert_balanced_and_complete()


def test_never_started_note_is_used_by_one_take_over_round_only(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assignor.note_never_started(["connector1"], ())  # not a take-over round: ignored, then dropped
    cluster.rebalance()
    cluster.assert_empty_assignment()
    cluster.remove_workers("worker1")
    cluster.take_over()
    cluster.rebalance(leaders=("worker1",))
    assert cluster.delay_now == DEFAULT_DELAY
    cluster.assert_empty_assignment()  # nothing was noted for this round: all of worker1's work is held


def test_new_leader_whose_predecessor_is_still_here_assigns_unreported_work_at_once(cluster: Cluster) -> None:
    """Leadership moved but nobody left: what nobody reports was never assigned (e.g. just created)."""
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.connectors["connector3"] = 2
    cluster.take_over()  # worker2 leads now; worker1, who led, is still a member
    cluster.rebalance(leaders=("worker1",))
    assert cluster.delay_now == 0
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 2], [5, 5])
    cluster.assert_balanced_and_complete()


def test_new_leader_after_a_leader_and_a_follower_died_holds_both_their_work(cluster: Cluster) -> None:
    cluster.add_workers("worker2", "worker3", "worker4")
    cluster.rebalance()
    cluster.rebalance()
    cluster.assert_allocations([0, 0, 1, 1], [2, 2, 2, 2])
    cluster.remove_workers("worker1", "worker3")  # worker1 led; worker3's id is unknown to the new leader
    cluster.take_over()
    cluster.rebalance(leaders=("worker1",))
    assert cluster.delay_now == DEFAULT_DELAY
    cluster.assert_empty_assignment()
    cluster.clock.sleep(DEFAULT_DELAY)
    cluster.rebalance(leaders=("worker2",))
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()


def test_new_leader_revokes_work_that_is_no_longer_configured(cluster: Cluster) -> None:
    cluster.add_workers("worker2", "worker3")
    cluster.rebalance()
    cluster.remove_workers("worker1")
    runs_c2 = {w: [t for t in a.tasks if t.connector == "connector2"] for w, a in cluster.members.items()}
    assert any(runs_c2.values())
    del cluster.connectors["connector2"]  # deleted while the leader was dying
    cluster.take_over()
    r = cluster.rebalance(leaders=("worker1",))
    assert {w: sorted(ts) for w, ts in r.newly_revoked_tasks.items() if ts} == {
        w: sorted(ts) for w, ts in runs_c2.items() if ts
    }
    assert all(t.connector != "connector2" for a in cluster.members.values() for t in a.tasks)
    assert all(c != "connector2" for a in cluster.members.values() for c in a.connectors)


def test_a_worker_that_leads_at_its_first_join_takes_over_too(cluster: Cluster) -> None:
    """It completed no generation (last completed -1) yet the members report a leader: not a fresh group."""
    cluster.add_workers("worker2", "worker3")
    cluster.rebalance()
    cluster.remove_workers("worker1")
    cluster.add_workers("worker9")  # a brand-new worker that happens to lead the next generation
    cluster.take_over()
    r = cluster.assignor.perform_task_assignment(
        Snapshot(dict(cluster.connectors)), -1, cluster.generation + 1,
        {w: ConnectorsAndTasks.of(a.connectors, a.tasks) for w, a in cluster.members.items()}, ("worker1", None),
    )  # type: ignore[arg-type]  # fmt: skip
    assert cluster.assignor.delay == DEFAULT_DELAY
    assert all(not v for v in r.newly_assigned_tasks.values())
    assert all(not v for v in r.newly_assigned_connectors.values())


def test_a_follower_forgets_what_it_remembered_from_leading(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.remove_workers("worker2")
    cluster.rebalance()
    assert cluster.assignor.scheduled_rebalance > 0
    cluster.assignor.forget()  # it joined a later generation as a follower
    fresh = IncrementalCooperativeAssignor(DEFAULT_DELAY, cluster.clock)
    assert vars(cluster.assignor).keys() == vars(fresh).keys()
    for name, value in vars(fresh).items():
        if not name.startswith("_") and name not in ("clock",):
            assert getattr(cluster.assignor, name) == value, name


def test_fresh_group_assigns_everything_at_once() -> None:
    """No member reports a leader (nothing ever ran): all configured work is created work."""
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.take_over()
    cluster.generation = -1
    cluster.rebalance()  # last completed -1, no leaders reported
    assert cluster.delay_now == 0 and cluster.assignor.last_take_over is None
    cluster.assert_allocations([1, 1], [4, 4])


def test_first_assignment_that_never_arrived_is_assigned_again(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance(fail=True)
    cluster.assert_allocations([0, 0], [0, 0])
    cluster.rebalance()  # same members: the "lost" work is simply assigned, no delay
    assert cluster.delay_now == 0
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()


@pytest.mark.parametrize("mismatch", [False, True])
def test_subsequent_assignment_that_never_arrived(mismatch: bool) -> None:
    cluster = Cluster()
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.add_workers("worker3")
    cluster.rebalance(fail=True)  # the revocations never reach the members
    cluster.assert_allocations([0, 1, 1], [0, 4, 4])

    cluster.rebalance(generation_mismatch=mismatch)  # successive revoking round: back off
    assert cluster.delay_now > 0
    cluster.assert_allocations([0, 1, 1], [0, 4, 4])

    cluster.clock.sleep(cluster.delay_now)
    cluster.rebalance()
    cluster.assert_allocations([0, 1, 1], [0, 3, 3])
    cluster.rebalance()
    cluster.assert_allocations([0, 1, 1], [2, 3, 3])
    cluster.assert_balanced_and_complete()


# ----------------------------------------------------------------------------- created, deleted, duplicated


def test_created_connector_spread_without_revocation(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.connectors["connector3"] = 6
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 2], [7, 7])
    cluster.assert_balanced_and_complete()


def test_deleted_connector_is_revoked(cluster: Cluster) -> None:
    cluster.connectors["connector3"] = 4
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.assert_allocations([1, 2], [6, 6])
    del cluster.connectors["connector3"]
    r = cluster.rebalance()
    revoked_c = [c for v in r.newly_revoked_connectors.values() for c in v]
    revoked_t = [t for v in r.newly_revoked_tasks.values() for t in v]
    assert revoked_c == ["connector3"]
    assert sorted(revoked_t) == [ConnectorTaskId("connector3", i) for i in range(4)]
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()


def test_task_count_shrink_revokes_removed_tasks(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.connectors["connector1"] = 1
    r = cluster.rebalance()
    revoked = sorted(t for v in r.newly_revoked_tasks.values() for t in v)
    assert revoked == [ConnectorTaskId("connector1", i) for i in (1, 2, 3)]
    assert cluster.task_counts()[-1] + cluster.task_counts()[0] == 5


def test_duplicated_tasks_are_revoked_everywhere_then_reassigned(cluster: Cluster) -> None:
    cluster.rebalance()
    cluster.assert_allocations([2], [8])
    cluster.members["worker2"] = ConnectorsAndTasks(
        ["connector1"], [ConnectorTaskId("connector1", i) for i in range(4)]
    )
    r = cluster.rebalance()
    assert cluster.delay_now == 0
    for w in ("worker1", "worker2"):  # both copies are stopped, so neither keeps running a duplicate
        assert "connector1" in r.newly_revoked_connectors[w]
    cluster.assert_allocations([0, 1], [0, 4])
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([1, 1], [4, 4])
    cluster.assert_balanced_and_complete()
    cluster.rebalance()
    cluster.assert_empty_assignment()


def test_duplicated_and_deleted_at_once(cluster: Cluster) -> None:
    cluster.rebalance()
    del cluster.connectors["connector1"]
    cluster.members["worker2"] = ConnectorsAndTasks(
        ["connector1"], [ConnectorTaskId("connector1", i) for i in range(4)]
    )
    cluster.rebalance()
    cluster.assert_allocations([0, 1], [0, 2])
    cluster.rebalance()
    cluster.assert_no_revocations()
    cluster.assert_allocations([0, 1], [2, 2])
    cluster.assert_balanced_and_complete()
    cluster.rebalance()
    cluster.assert_empty_assignment()


def test_no_configured_connectors_assigns_nothing(cluster: Cluster) -> None:
    cluster.connectors.clear()
    cluster.add_workers("worker2")
    r = cluster.rebalance()
    cluster.assert_empty_assignment()
    assert r.all_workers == {"worker1", "worker2"}


# ----------------------------------------------------------------------------- dealing


def load(worker: str, c_start: int, c_num: int, t_start: int, t_num: int) -> WorkerLoad:
    return WorkerLoad(
        worker,
        [f"connector{i}" for i in range(c_start, c_start + c_num)],
        [ConnectorTaskId("task", i) for i in range(t_start, t_start + t_num)],
    )


def test_assign_connectors_and_tasks_when_balanced() -> None:
    loads = [load(f"worker{i}", i * 2, 2, i * 2, 2) for i in range(3)]
    IncrementalCooperativeAssignor.assign_connectors(loads, [f"connector{i}" for i in range(6, 11)])
    IncrementalCooperativeAssignor.assign_tasks(loads, [ConnectorTaskId("task", i) for i in range(6, 11)])
    by = {w.worker: w for w in loads}
    assert by["worker0"].connectors[2:] == ["connector6", "connector9"]
    assert by["worker1"].connectors[2:] == ["connector7", "connector10"]
    assert by["worker2"].connectors[2:] == ["connector8"]
    assert [t.task for t in by["worker0"].tasks[2:]] == [6, 9]
    assert [t.task for t in by["worker1"].tasks[2:]] == [7, 10]
    assert [t.task for t in by["worker2"].tasks[2:]] == [8]


def test_assign_when_imbalanced_levels_everyone() -> None:
    loads = [load("worker0", 0, 2, 0, 2), load("worker1", 2, 3, 2, 3), load("worker2", 5, 4, 5, 4),
             WorkerLoad("worker3")]  # fmt: skip
    IncrementalCooperativeAssignor.assign_connectors(loads, [f"connector{i}" for i in range(9, 24)])
    IncrementalCooperativeAssignor.assign_tasks(loads, [ConnectorTaskId("task", i) for i in range(9, 24)])
    assert [(w.connectors_size(), w.tasks_size()) for w in loads] == [(6, 6)] * 4


@pytest.mark.parametrize("workers", [1, 2, 3, 5, 7])
@pytest.mark.parametrize("tasks", [0, 1, 4, 13])
def test_even_spread_from_scratch(workers: int, tasks: int) -> None:
    cluster = Cluster(connectors={f"c{i}": tasks for i in range(5)})
    cluster.add_workers(*(f"w{i}" for i in range(workers)))
    cluster.rebalance()
    cluster.assert_balanced_and_complete()
    cluster.rebalance()
    cluster.assert_empty_assignment()


# ----------------------------------------------------------------------------- lost-assignment bookkeeping


def configured_loads() -> dict[str, WorkerLoad]:
    return {"worker0": load("worker0", 0, 2, 0, 4), "worker1": load("worker1", 2, 2, 4, 4),
            "worker2": load("worker2", 4, 2, 8, 4)}  # fmt: skip


def test_lost_handling_bounce_assigns_directly_to_returning_worker() -> None:
    clock = FakeClock()
    a = IncrementalCooperativeAssignor(DEFAULT_DELAY, clock)
    loads = configured_loads()
    a.handle_lost_assignments(ConnectorsAndTasks(), ConnectorsAndTasks(), list(loads.values()))
    assert (a.candidate_workers_for_reassignment, a.scheduled_rebalance, a.delay) == ([], 0, 0)

    a.previous_members = set(loads)
    gone = loads.pop("worker1")
    lost = ConnectorsAndTasks.of(gone.connectors, gone.tasks)
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    assert a.candidate_workers_for_reassignment == []
    assert (a.scheduled_rebalance, a.delay) == (clock.now + DEFAULT_DELAY, DEFAULT_DELAY)

    a.previous_members = set(loads)
    clock.sleep(DEFAULT_DELAY // 2)
    loads["worker1"] = WorkerLoad("worker1")  # back, empty
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    assert a.candidate_workers_for_reassignment == ["worker1"]
    assert (a.scheduled_rebalance, a.delay) == (clock.now + DEFAULT_DELAY // 2, DEFAULT_DELAY // 2)

    a.previous_members = set(loads)
    clock.sleep(DEFAULT_DELAY // 2)
    to_reassign = ConnectorsAndTasks()
    a.handle_lost_assignments(lost, to_reassign, list(loads.values()))
    assert loads["worker1"].connectors == lost.connectors and loads["worker1"].tasks == lost.tasks
    assert to_reassign.is_empty()
    assert (a.candidate_workers_for_reassignment, a.scheduled_rebalance, a.delay) == ([], 0, 0)


def test_lost_handling_worker_bounces_back_but_finally_leaves() -> None:
    clock = FakeClock()
    a = IncrementalCooperativeAssignor(DEFAULT_DELAY, clock)
    loads = configured_loads()
    a.previous_members = set(loads)
    gone = loads.pop("worker1")
    lost = ConnectorsAndTasks.of(gone.connectors, gone.tasks)
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    clock.sleep(DEFAULT_DELAY // 2)
    loads["worker1"] = WorkerLoad("worker1")
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    assert a.candidate_workers_for_reassignment == ["worker1"]
    clock.sleep(DEFAULT_DELAY // 2)
    del loads["worker1"]  # gone again when the delay expires: spread as new work
    to_reassign = ConnectorsAndTasks()
    a.handle_lost_assignments(lost, to_reassign, list(loads.values()))
    assert to_reassign.connectors == lost.connectors and to_reassign.tasks == lost.tasks
    assert (a.candidate_workers_for_reassignment, a.scheduled_rebalance, a.delay) == ([], 0, 0)


def test_lost_handling_with_two_candidates_splits_the_work() -> None:
    clock = FakeClock()
    a = IncrementalCooperativeAssignor(DEFAULT_DELAY, clock)
    loads = configured_loads()
    a.previous_members = set(loads)
    gone = loads.pop("worker1")
    lost = ConnectorsAndTasks.of(gone.connectors, gone.tasks)
    loads["worker3"] = WorkerLoad("worker3")  # a brand-new worker joins as worker1 disappears
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    assert a.candidate_workers_for_reassignment == ["worker3"]
    clock.sleep(DEFAULT_DELAY // 2)
    loads["worker1"] = WorkerLoad("worker1")
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    assert set(a.candidate_workers_for_reassignment) == {"worker1", "worker3"}
    clock.sleep(DEFAULT_DELAY // 2)
    a.handle_lost_assignments(lost, ConnectorsAndTasks(), list(loads.values()))
    got_c = loads["worker1"].connectors + loads["worker3"].connectors
    got_t = loads["worker1"].tasks + loads["worker3"].tasks
    assert sorted(got_c) == sorted(lost.connectors) and sorted(got_t) == sorted(lost.tasks)
    assert loads["worker1"].size() == loads["worker3"].size() == 3


# ----------------------------------------------------------------------------- bytes in, bytes out


def members_bytes(states: dict[str, ExtendedWorkerState], sessioned: bool) -> list[tuple[str, bytes]]:
    return [(m, serialize_metadata(s, sessioned)) for m, s in states.items()]


@pytest.mark.parametrize(
    ("protocol", "version"), [("compatible", CONNECT_PROTOCOL_V1), ("sessioned", CONNECT_PROTOCOL_V2)]
)
def test_perform_assignment_encodes_for_the_chosen_protocol(protocol: str, version: int) -> None:
    snap = Snapshot({"c": 2})
    states = {
        "leader": ExtendedWorkerState("http://l:8083", CONFIG_OFFSET),
        "other": ExtendedWorkerState("http://o", 3),
    }
    ctx = AssignmentContext(snap, lambda: snap, -1, 0)
    result = IncrementalCooperativeAssignor(DEFAULT_DELAY, FakeClock()).perform_assignment(
        "leader", protocol, members_bytes(states, version == 2), ctx
    )
    decoded = {m: deserialize_assignment(b) for m, b in result.serialized.items()}
    assert set(decoded) == {"leader", "other"}
    for a in decoded.values():
        assert a is not None
        assert (a.version, a.error, a.leader, a.leader_url, a.offset) == (version, 0, "leader", "http://l:8083", 618)
    all_c = [c for a in decoded.values() if a for c in a.connectors]
    all_t = sorted(t for a in decoded.values() if a for t in a.tasks)
    assert all_c == ["c"] and all_t == [ConnectorTaskId("c", 0), ConnectorTaskId("c", 1)]
    assert result.leader_state is not None
    assert result.leader_state.owner_url("c") in {"http://l:8083", "http://o"}
    assert result.leader_state.owner_url(ConnectorTaskId("c", 5)) is None


def test_leader_behind_uses_fresh_snapshot_or_reports_config_mismatch() -> None:
    stale, fresh = Snapshot({"c": 1}, offset=5), Snapshot({"c": 1, "d": 1}, offset=9)
    states = {"leader": ExtendedWorkerState("http://l", 5), "ahead": ExtendedWorkerState("http://a", 9)}
    ok = IncrementalCooperativeAssignor(DEFAULT_DELAY, FakeClock()).perform_assignment(
        "leader", "sessioned", members_bytes(states, True), AssignmentContext(stale, lambda: fresh, -1, 0)
    )
    assert ok.config_snapshot is fresh
    assert {a.offset for a in ok.assignments.values()} == {9}
    assert sorted(c for a in ok.assignments.values() for c in a.connectors) == ["c", "d"]

    bad = IncrementalCooperativeAssignor(DEFAULT_DELAY, FakeClock()).perform_assignment(
        "leader", "sessioned", members_bytes(states, True), AssignmentContext(stale, lambda: stale, -1, 0)
    )
    assert bad.leader_state is None
    for a in bad.assignments.values():
        assert a.failed and a.error == CONFIG_MISMATCH and a.offset == 9 and not a.connectors and not a.tasks
    eager = EagerAssignor().perform_assignment(
        "leader", "default", members_bytes(states, False), AssignmentContext(stale, lambda: stale, -1, 0)
    )
    assert all(a.error == CONFIG_MISMATCH for a in eager.assignments.values())


def test_eager_assignor_round_robins_connectors_then_tasks() -> None:
    snap = Snapshot({"a": 2, "b": 1})
    states = {m: ExtendedWorkerState(f"http://{m}", CONFIG_OFFSET) for m in ("m2", "m1")}
    result = EagerAssignor().perform_assignment("m1", "default", members_bytes(states, False), AssignmentContext(
        snap, lambda: snap, -1, 0))  # fmt: skip
    a1, a2 = result.assignments["m1"], result.assignments["m2"]
    assert (a1.connectors, a2.connectors) == (("a",), ("b",))
    assert a1.tasks == (ConnectorTaskId("a", 0), ConnectorTaskId("b", 0))
    assert a2.tasks == (ConnectorTaskId("a", 1),)
    assert deserialize_assignment(result.serialized["m2"]) == ExtendedAssignment(
        0, 0, "m1", "http://m1", CONFIG_OFFSET, ("b",), (ConnectorTaskId("a", 1),)
    )


def test_members_report_previous_assignment_through_metadata() -> None:
    """Workers that already run work keep it: only the difference moves (the cooperative promise)."""
    snap = Snapshot({"c": 4})
    prev = ExtendedAssignment(CONNECT_PROTOCOL_V2, 0, "w1", "http://w1", CONFIG_OFFSET, ("c",),
                              tuple(ConnectorTaskId("c", i) for i in range(4)))  # fmt: skip
    states = {"w1": ExtendedWorkerState("http://w1", CONFIG_OFFSET, prev),
              "w2": ExtendedWorkerState("http://w2", CONFIG_OFFSET)}  # fmt: skip
    result = IncrementalCooperativeAssignor(DEFAULT_DELAY, FakeClock()).perform_assignment(
        "w1", "sessioned", members_bytes(states, True), AssignmentContext(snap, lambda: snap, -1, 0)
    )
    w1, w2 = result.assignments["w1"], result.assignments["w2"]
    assert w1.connectors == () and w1.revoked_connectors == ()
    assert len(w1.revoked_tasks) == 2 and w2.tasks == ()  # revoke first; assign in the follow-up round


def test_revocation_that_did_not_take_effect_is_applied_again(cluster: Cluster) -> None:
    """A member that never got its revocations still runs that work; if it is then deleted, it must be
    revoked (the leader re-bases on what members report, not on what it sent)."""
    cluster.rebalance()
    cluster.add_workers("worker2")
    r = cluster.rebalance(fail=True)  # worker1 would lose connector1 and its tasks, but never hears of it
    assert r.newly_revoked_connectors["worker1"] == ["connector1"]
    del cluster.connectors["connector1"]
    r = cluster.rebalance()
    assert r.newly_revoked_connectors["worker1"] == ["connector1"]
    assert sorted(r.newly_revoked_tasks["worker1"]) == [ConnectorTaskId("connector1", i) for i in range(4)]
    assert all(c != "connector1" for a in cluster.members.values() for c in a.connectors)


def test_expire_delay_reassigns_lost_work_in_the_next_round(cluster: Cluster) -> None:
    cluster.add_workers("worker2")
    cluster.rebalance()
    cluster.remove_workers("worker2")
    cluster.assignor.expire_delay()  # e.g. the leader knows worker2 stopped its work cleanly
    cluster.rebalance()
    assert cluster.delay_now == 0
    cluster.assert_allocations([2], [8])
    cluster.assert_balanced_and_complete()
