"""Who runs which connector and task: the group leader's assignors (Kafka's KIP-415
``IncrementalCooperativeAssignor`` and the eager ``EagerAssignor``), as pure code.

The incremental cooperative assignor works from what each member reports it runs (its previous
assignment, in the join metadata) and its own memory of the last round:

* **created** work (configured, neither previously assigned nor running) is spread over the least
  loaded workers;
* **deleted** work (previously assigned, no longer configured) is revoked from whoever runs it;
* **duplicated** work (run by two workers) is revoked from all of them and reassigned next round;
* **lost** work (previously assigned, now run by nobody: its worker left) is held back for up to
  ``scheduled.rebalance.max.delay.ms`` so a bouncing worker can get it back; the delay is sent to
  every member, which rejoins when it runs out. When it expires, lost work goes to the workers that
  joined empty during the delay (the returning ones), or is spread as new work;
* **load balancing**: workers above their fair share (``total // workers``, plus one for
  ``total % workers`` of them) have the excess revoked; it is assigned in the follow-up rebalance
  the revoking members start. Back-to-back revoking rounds back off exponentially (1 ms x 40^n, at
  most the max delay), so a cluster that keeps changing does not thrash.

**A new leader** (beyond Kafka): Kafka's new leader has no memory of the last round, so the dead
leader's work looks *created* and is reassigned at once, ignoring the delay. Here a worker that did
not assign the last completed generation rebuilds it instead: everything configured or reported was
assigned, and the previous members were the present ones plus the leader(s) the members report in
their join metadata. Work nobody reports is then *lost*, and held for the delay if a reported leader
is gone (the dead leader's work, or of any worker that died with it); with every reported leader
present, nobody left and it is assigned at once as before.

Revocation happens before reassignment: a revoked connector or task is never assigned in the same
round, so it never runs twice. Members get only *incremental* changes (newly assigned, revoked); the
coordinator adds the rest back.

The clock is injected (``clock() -> milliseconds``), so delay logic is testable without sleeping.
Not thread-safe: the coordinator calls it from one thread. Pure: no I/O, no Kafka client.

Ordering differences from Kafka (which iterates ``HashMap``s): members and candidate workers are
visited in member-id order; counts and guarantees are the same, the particular worker chosen may differ.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

from connect_core.herder.distributed.protocol import (
    CONFIG_MISMATCH,
    NO_ERROR,
    ConnectProtocolCompatibility,
    ExtendedAssignment,
    ExtendedWorkerState,
    deserialize_metadata,
    serialize_assignment_for,
)
from connect_core.model import ConnectorTaskId

T = TypeVar("T")


def monotonic_ms() -> int:
    """The default clock: a monotonic millisecond count (delays are differences, never wall time)."""
    return int(time.monotonic() * 1000)


class ConfigSnapshot(Protocol):
    """The part of a config-log snapshot the assignors read (``ClusterConfigState`` satisfies it)."""

    @property
    def offset(self) -> int: ...

    def connectors(self) -> Iterable[str]: ...

    def tasks(self, connector: str) -> Iterable[ConnectorTaskId]: ...


# ----------------------------------------------------------------------------- value types


def _unique(items: Iterable[T]) -> list[T]:
    return list(dict.fromkeys(items))


@dataclass
class ConnectorsAndTasks:
    """An ordered set of connectors and of tasks (insertion order, no duplicates)."""

    connectors: list[str] = field(default_factory=list)
    tasks: list[ConnectorTaskId] = field(default_factory=list)

    @classmethod
    def of(cls, connectors: Iterable[str] = (), tasks: Iterable[ConnectorTaskId] = ()) -> ConnectorsAndTasks:
        return cls(_unique(connectors), _unique(tasks))

    def add_all(self, other: ConnectorsAndTasks) -> None:
        self.add(other.connectors, other.tasks)

    def add(self, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> None:
        have_c, have_t = set(self.connectors), set(self.tasks)
        for c in connectors:
            if c not in have_c:
                have_c.add(c)
                self.connectors.append(c)
        for t in tasks:
            if t not in have_t:
                have_t.add(t)
                self.tasks.append(t)

    def size(self) -> int:
        return len(self.connectors) + len(self.tasks)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class WorkerLoad:
    """One worker's (mutable) connectors and tasks while the assignor builds the next assignment."""

    worker: str
    connectors: list[str] = field(default_factory=list)
    tasks: list[ConnectorTaskId] = field(default_factory=list)

    def connectors_size(self) -> int:
        return len(self.connectors)

    def tasks_size(self) -> int:
        return len(self.tasks)

    def size(self) -> int:
        return len(self.connectors) + len(self.tasks)

    def is_empty(self) -> bool:
        return not self.connectors and not self.tasks


@dataclass
class ClusterAssignment:
    """The result of one round: per worker, what is newly assigned, revoked, and everything it will run."""

    newly_assigned_connectors: dict[str, list[str]] = field(default_factory=dict)
    newly_assigned_tasks: dict[str, list[ConnectorTaskId]] = field(default_factory=dict)
    newly_revoked_connectors: dict[str, list[str]] = field(default_factory=dict)
    newly_revoked_tasks: dict[str, list[ConnectorTaskId]] = field(default_factory=dict)
    all_assigned_connectors: dict[str, list[str]] = field(default_factory=dict)
    all_assigned_tasks: dict[str, list[ConnectorTaskId]] = field(default_factory=dict)

    @property
    def all_workers(self) -> set[str]:
        out: set[str] = set()
        for m in (
            self.newly_assigned_connectors,
            self.newly_assigned_tasks,
            self.newly_revoked_connectors,
            self.newly_revoked_tasks,
            self.all_assigned_connectors,
            self.all_assigned_tasks,
        ):
            out.update(m)
        return out


@dataclass
class LeaderState:
    """What the leader knows after assigning: who runs what, to route requests to a connector's owner."""

    all_members: dict[str, ExtendedWorkerState]
    connector_owners: dict[str, str]
    task_owners: dict[ConnectorTaskId, str]

    @classmethod
    def build(
        cls,
        members: Mapping[str, ExtendedWorkerState],
        connectors: Mapping[str, Iterable[str]],
        tasks: Mapping[str, Iterable[ConnectorTaskId]],
    ) -> LeaderState:
        return cls(
            dict(members),
            {c: w for w, cs in connectors.items() for c in cs},
            {t: w for w, ts in tasks.items() for t in ts},
        )

    def owner_url(self, target: str | ConnectorTaskId) -> str | None:
        """REST URL of the worker running ``target`` (a connector name or a task id), if any."""
        if isinstance(target, ConnectorTaskId):
            owner = self.task_owners.get(target)
        else:
            owner = self.connector_owners.get(target)
        if owner is None or owner not in self.all_members:
            return None
        return self.all_members[owner].url


@dataclass(frozen=True)
class TakeOver:
    """A round in which this worker rebuilt the last generation of a leader it took over from."""

    previous_leaders: tuple[str, ...]  # as the members report them (empty: unknown)
    unreported: ConnectorsAndTasks  # configured work no member reports: lost, unless nobody left
    never_started: ConnectorsAndTasks  # the part of it no worker ever started: new work, assigned now


@dataclass
class AssignmentContext:
    """What the leader's coordinator gives an assignor for one round."""

    config_snapshot: ConfigSnapshot  # taken when this worker sent its join metadata
    fresh_snapshot: Callable[[], ConfigSnapshot]  # re-read, used when other members are ahead of us
    last_completed_generation_id: int  # generation this worker last completed a join in (-1 if none)
    generation_id: int  # the generation being assigned


@dataclass
class GroupAssignment:
    """An assignor's output: each member's assignment, its SyncGroup bytes, and the leader's view."""

    assignments: dict[str, ExtendedAssignment]
    serialized: dict[str, bytes]
    leader_state: LeaderState | None
    config_snapshot: ConfigSnapshot  # the snapshot the assignment was computed from


def _ensure_leader_config(max_offset: int, ctx: AssignmentContext) -> tuple[ConfigSnapshot, int] | None:
    """The snapshot to assign from and the offset to announce, or None when this leader is behind
    another member's config offset even after re-reading its config snapshot."""
    if ctx.config_snapshot.offset >= max_offset:
        # Ahead of every member only when the leader wrote configs while assigning: announce its own
        # offset, so members read those writes before they act on the assignment.
        return ctx.config_snapshot, ctx.config_snapshot.offset
    fresh = ctx.fresh_snapshot()
    return (fresh, fresh.offset) if fresh.offset >= max_offset else None


def _decode_members(members: Sequence[tuple[str, bytes]]) -> dict[str, ExtendedWorkerState]:
    return {member_id: deserialize_metadata(metadata) for member_id, metadata in members}


def reported_leaders(states: Mapping[str, ExtendedWorkerState]) -> set[str]:
    """The leader ids of the generations the members last completed, from their join metadata."""
    return {s.assignment.leader for s in states.values() if s.assignment.leader}


# ----------------------------------------------------------------------------- eager (V0)


class EagerAssignor:
    """Round-robin everything over the members sorted by id: all connectors first, then all tasks.

    Every rebalance starts from scratch (eager members stop everything when a rebalance starts).
    Connectors and tasks are dealt in one sequence so that, with one task per connector, connectors
    and tasks do not all land on alternate workers.
    """

    def perform_assignment(
        self, leader_id: str, protocol: str, members: Sequence[tuple[str, bytes]], ctx: AssignmentContext
    ) -> GroupAssignment:
        states = _decode_members(members)
        max_offset = max(s.offset for s in states.values())
        leader_url = states[leader_id].url
        leader_config = _ensure_leader_config(max_offset, ctx)
        connectors: dict[str, list[str]] = {}
        tasks: dict[str, list[ConnectorTaskId]] = {}
        leader_state: LeaderState | None = None
        snapshot: ConfigSnapshot
        if leader_config is None:
            error, offset = CONFIG_MISMATCH, max_offset
            snapshot = ctx.config_snapshot
        else:
            error = NO_ERROR
            snapshot, offset = leader_config
            ids = sorted(states)
            position = 0
            configured = sorted(snapshot.connectors())
            for c in configured:
                connectors.setdefault(ids[position % len(ids)], []).append(c)
                position += 1
            for c in configured:
                for t in sorted(snapshot.tasks(c)):
                    tasks.setdefault(ids[position % len(ids)], []).append(t)
                    position += 1
            leader_state = LeaderState.build(states, connectors, tasks)
        out = {
            m: ExtendedAssignment(
                0, error, leader_id, leader_url, offset, tuple(connectors.get(m, ())), tuple(tasks.get(m, ()))
            )
            for m in states
        }
        return GroupAssignment(out, {m: serialize_assignment_for(0, a) for m, a in out.items()}, leader_state, snapshot)


# ----------------------------------------------------------------------------- incremental cooperative


class _ExponentialBackoff:
    """Kafka's ``ExponentialBackoff`` without jitter: ``initial * multiplier^attempts``, capped."""

    def __init__(self, initial: int, multiplier: int, maximum: int) -> None:
        self.initial = min(maximum, initial)
        self.multiplier = multiplier
        self.maximum = maximum
        self.exp_max = math.log(maximum / max(initial, 1)) / math.log(multiplier) if maximum > self.initial else 0.0

    def backoff(self, attempts: int) -> int:
        if self.exp_max == 0:
            return self.initial
        exp = min(float(attempts), self.exp_max)
        return min(int(self.initial * math.pow(self.multiplier, exp)), self.maximum)


class IncrementalCooperativeAssignor:
    """KIP-415 assignment with lost-work delay and revocation backoff; keeps state between rounds.

    Only the current leader's instance matters. A worker taking over the lead rebuilds the last
    generation from the members' join metadata (see the module docstring), so its predecessor's work
    is held for the delay like any departed worker's; a delay its predecessor was running restarts.
    """

    def __init__(self, max_delay_ms: int, clock: Callable[[], int] = monotonic_ms) -> None:
        self.max_delay = max_delay_ms
        self.clock = clock
        self.previous_assignment = ConnectorsAndTasks()
        self.previous_revocation = ConnectorsAndTasks()
        self.revoked_in_previous = False
        self.candidate_workers_for_reassignment: list[str] = []
        self.scheduled_rebalance = 0
        self.delay = 0
        self.previous_generation_id = -1
        self.previous_members: set[str] = set()
        self.num_successive_revoking_rebalances = 0
        self.last_take_over: TakeOver | None = None  # set by a round that rebuilt a predecessor's memory
        self._never_started = ConnectorsAndTasks()  # see note_never_started; used by the next round only
        self._revoking_backoff = _ExponentialBackoff(0 if max_delay_ms == 0 else 1, 40, max_delay_ms)

    # ------------------------------------------------------------------ bytes in, bytes out

    def perform_assignment(
        self, leader_id: str, protocol: str, members: Sequence[tuple[str, bytes]], ctx: AssignmentContext
    ) -> GroupAssignment:
        """Decode the members' metadata, assign, and encode each member's assignment for ``protocol``."""
        states = _decode_members(members)
        max_offset = max(s.offset for s in states.values())
        version = ConnectProtocolCompatibility.from_protocol(protocol).version
        leader_url = states[leader_id].url
        leader_config = _ensure_leader_config(max_offset, ctx)
        if leader_config is None:
            assignments = self._fill(states, CONFIG_MISMATCH, leader_id, leader_url, max_offset, ClusterAssignment(), 0,
                                     version)  # fmt: skip
            return GroupAssignment(
                assignments,
                {m: serialize_assignment_for(version, a) for m, a in assignments.items()},
                None,
                ctx.config_snapshot,
            )
        snapshot, offset = leader_config
        member_assignments = {
            m: ConnectorsAndTasks.of(s.assignment.connectors, s.assignment.tasks) for m, s in states.items()
        }
        cluster = self.perform_task_assignment(
            snapshot, ctx.last_completed_generation_id, ctx.generation_id, member_assignments,
            reported_leaders(states),
        )  # fmt: skip
        leader_state = LeaderState.build(states, cluster.all_assigned_connectors, cluster.all_assigned_tasks)
        assignments = self._fill(states, NO_ERROR, leader_id, leader_url, offset, cluster, self.delay, version)
        return GroupAssignment(
            assignments,
            {m: serialize_assignment_for(version, a) for m, a in assignments.items()},
            leader_state,
            snapshot,
        )

    @staticmethod
    def _fill(
        members: Iterable[str],
        error: int,
        leader_id: str,
        leader_url: str,
        offset: int,
        cluster: ClusterAssignment,
        delay: int,
        version: int,
    ) -> dict[str, ExtendedAssignment]:
        return {
            m: ExtendedAssignment(
                version,
                error,
                leader_id,
                leader_url,
                offset,
                tuple(cluster.newly_assigned_connectors.get(m, ())),
                tuple(cluster.newly_assigned_tasks.get(m, ())),
                tuple(cluster.newly_revoked_connectors.get(m, ())),
                tuple(cluster.newly_revoked_tasks.get(m, ())),
                delay,
            )
            for m in members
        }

    # ------------------------------------------------------------------ the algorithm

    def perform_task_assignment(
        self,
        config: ConfigSnapshot,
        last_completed_generation_id: int,
        current_generation_id: int,
        member_assignments: Mapping[str, ConnectorsAndTasks],
        previous_leaders: Iterable[str] = (),
    ) -> ClusterAssignment:
        """One round: from each member's current assignment, compute increments and revocations.

        ``previous_leaders`` are the leader ids the members report in their join metadata; they only
        matter when this worker did not assign the last completed generation (it has taken over).
        """
        members = {m: ConnectorsAndTasks.of(member_assignments[m].connectors, member_assignments[m].tasks)
                   for m in sorted(member_assignments)}  # fmt: skip
        configured_connectors = sorted(set(config.connectors()))
        configured = ConnectorsAndTasks.of(
            configured_connectors, (t for c in configured_connectors for t in config.tasks(c))
        )
        active = ConnectorsAndTasks.of(
            (c for a in members.values() for c in a.connectors), (t for a in members.values() for t in a.tasks)
        )
        leaders = {leader for leader in previous_leaders if leader}
        self.last_take_over = None
        never_started, self._never_started = self._never_started, ConnectorsAndTasks()
        if self.took_over(last_completed_generation_id, leaders):
            self._rebuild_last_generation(configured, active, members, leaders, never_started)
        elif self.previous_generation_id != last_completed_generation_id:
            # The last round's assignment may never have reached the members (the leader failed to
            # sync): do not trust our memory of it.
            self.previous_assignment = ConnectorsAndTasks()

        if not self.previous_revocation.is_empty():
            # A revocation we sent did not take effect: start again from what is actually running.
            active_c, active_t = set(active.connectors), set(active.tasks)
            if any(c in active_c for c in self.previous_revocation.connectors) or any(
                t in active_t for t in self.previous_revocation.tasks
            ):
                self.previous_assignment = ConnectorsAndTasks.of(active.connectors, active.tasks)
            self.previous_revocation = ConnectorsAndTasks()

        deleted = _diff(self.previous_assignment, configured)
        duplicated = _duplicated(members)
        lost = _diff(self.previous_assignment, active, deleted)
        created = _diff(configured, self.previous_assignment, active)

        current_worker_assignment = _worker_assignment(members, deleted)

        to_revoke: dict[str, ConnectorsAndTasks] = {}
        deleted_to_revoke = _intersection(deleted, members)
        _add_all(to_revoke, deleted_to_revoke)
        duplicated_to_revoke = _intersection(duplicated, members)
        _add_all(to_revoke, duplicated_to_revoke)

        next_worker_assignment = [WorkerLoad(m, list(a.connectors), list(a.tasks)) for m, a in members.items()]
        _remove_all(next_worker_assignment, deleted_to_revoke)
        _remove_all(next_worker_assignment, duplicated_to_revoke)

        lost_to_reassign = ConnectorsAndTasks()
        self.handle_lost_assignments(lost, lost_to_reassign, next_worker_assignment)

        if self.delay == 0:
            balancing = self._load_balancing_revocations(configured, next_worker_assignment)
            if self.revoked_in_previous and balancing:
                self.num_successive_revoking_rebalances += 1
                self.delay = self._revoking_backoff.backoff(self.num_successive_revoking_rebalances)
                if self.delay != 0:
                    self.scheduled_rebalance = self.clock() + self.delay
                else:
                    _add_all(to_revoke, balancing)
                    _remove_all(next_worker_assignment, balancing)
            elif balancing:
                _add_all(to_revoke, balancing)
                _remove_all(next_worker_assignment, balancing)
                self.revoked_in_previous = True
            elif self.revoked_in_previous:
                # The previous round revoked and this one need not: the load has converged.
                self.revoked_in_previous = False
                self.num_successive_revoking_rebalances = 0
        else:
            self.revoked_in_previous = False

        to_assign = ConnectorsAndTasks.of(created.connectors, created.tasks)
        to_assign.add_all(lost_to_reassign)
        self.assign_connectors(next_worker_assignment, to_assign.connectors)
        self.assign_tasks(next_worker_assignment, to_assign.tasks)

        next_connectors = {w.worker: w.connectors for w in next_worker_assignment}
        next_tasks = {w.worker: w.tasks for w in next_worker_assignment}
        current_connectors = {w.worker: w.connectors for w in current_worker_assignment}
        current_tasks = {w.worker: w.tasks for w in current_worker_assignment}

        revoked_connectors = {w: r.connectors for w, r in to_revoke.items()}
        revoked_tasks = {w: r.tasks for w, r in to_revoke.items()}

        self.previous_assignment = self._compute_previous_assignment(to_revoke, next_connectors, next_tasks, lost)
        self.previous_generation_id = current_generation_id
        self.previous_members = set(members)

        return ClusterAssignment(
            _diff_map(next_connectors, current_connectors),
            _diff_map(next_tasks, current_tasks),
            revoked_connectors,
            revoked_tasks,
            _diff_map(next_connectors, revoked_connectors),
            _diff_map(next_tasks, revoked_tasks),
        )

    def took_over(self, last_completed_generation_id: int, previous_leaders: Collection[str]) -> bool:
        """Whether this worker leads a group whose last completed generation another leader assigned.

        Either it completed a generation it did not assign, or it never completed one while the
        members report a leader (it joined an existing group and leads at once).
        """
        if self.previous_generation_id < last_completed_generation_id:
            return True
        return self.previous_generation_id == -1 and bool(previous_leaders)

    def last_generation_members(self, members: Collection[str], last_completed_generation_id: int,
                                previous_leaders: Collection[str]) -> set[str]:  # fmt: skip
        """The members of the last round as far as this leader can tell (for "has anyone left?")."""
        leaders = {leader for leader in previous_leaders if leader}
        if self.took_over(last_completed_generation_id, leaders):
            return set(members) | leaders
        return set(self.previous_members)

    def _rebuild_last_generation(
        self,
        configured: ConnectorsAndTasks,
        active: ConnectorsAndTasks,
        members: Mapping[str, ConnectorsAndTasks],
        previous_leaders: set[str],
        never_started: ConnectorsAndTasks,
    ) -> None:
        """Stand in for the memory of the leader this worker took over from.

        That leader assigned all configured work (and whatever members still report), and led a
        group of at least the present members and itself. What no member reports is therefore lost
        work, held for the delay when a previous leader is gone. Revocation state from an earlier
        term of this worker's own no longer applies; a pending delay is kept (the herder may have
        expired it just before this round because the departed workers released their work).
        Work known never to have started anywhere (``never_started``) was not assigned yet: it stays
        out, so it is assigned at once as created work.
        """
        previous = _diff(configured, never_started)
        previous.add_all(active)
        self.previous_assignment = previous
        self.previous_members = set(members) | previous_leaders
        self.previous_revocation = ConnectorsAndTasks()
        self.revoked_in_previous = False
        self.num_successive_revoking_rebalances = 0
        unreported = _diff(configured, active)
        self.last_take_over = TakeOver(
            tuple(sorted(previous_leaders)),
            unreported,
            ConnectorsAndTasks.of(
                (c for c in unreported.connectors if c in set(never_started.connectors)),
                (t for t in unreported.tasks if t in set(never_started.tasks)),
            ),
        )

    def note_never_started(self, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> None:
        """Tell the next round which work no worker has ever started (no status was ever written).

        Only a round that takes over uses it: such work, though nobody reports it, was never assigned
        (created just before the old leader died), so it is assigned at once instead of held as lost.
        """
        self._never_started = ConnectorsAndTasks.of(connectors, tasks)

    def forget(self) -> None:
        """Drop everything remembered from leading: called when this worker joins as a follower."""
        self.previous_assignment = ConnectorsAndTasks()
        self.previous_revocation = ConnectorsAndTasks()
        self.revoked_in_previous = False
        self.candidate_workers_for_reassignment = []
        self.scheduled_rebalance = 0
        self.delay = 0
        self.previous_generation_id = -1
        self.previous_members = set()
        self.num_successive_revoking_rebalances = 0
        self.last_take_over = None
        self._never_started = ConnectorsAndTasks()

    def _compute_previous_assignment(
        self,
        revoked: Mapping[str, ConnectorsAndTasks],
        connectors: Mapping[str, list[str]],
        tasks: Mapping[str, list[ConnectorTaskId]],
        lost: ConnectorsAndTasks,
    ) -> ConnectorsAndTasks:
        """What the leader expects to be running after this round (lost work stays "expected")."""
        revoked_c = {c for r in revoked.values() for c in r.connectors}
        revoked_t = {t for r in revoked.values() for t in r.tasks}
        previous = ConnectorsAndTasks.of(
            (c for cs in connectors.values() for c in cs if c not in revoked_c),
            (t for ts in tasks.values() for t in ts if t not in revoked_t),
        )
        for r in revoked.values():
            self.previous_revocation.add_all(r)
        previous.add_all(lost)
        return previous

    def handle_lost_assignments(
        self, lost: ConnectorsAndTasks, lost_to_reassign: ConnectorsAndTasks, complete: list[WorkerLoad]
    ) -> None:
        """Decide what to do with work whose worker vanished: wait, give it back, or reassign it.

        Adds to ``lost_to_reassign`` what should be spread as new work, or assigns lost work directly
        to returning workers in ``complete``; updates the delay to report to the members.
        """
        if lost.is_empty() and not self.revoked_in_previous:
            self._reset_delay()
            return
        now = self.clock()
        active_members = {w.worker for w in complete}
        if self.scheduled_rebalance <= 0 and active_members >= self.previous_members:
            # Nobody left: the "lost" work is most likely an assignment that never reached a member.
            lost_to_reassign.add_all(lost)
            return
        if self.max_delay == 0:
            lost_to_reassign.add_all(lost)
            return

        if self.scheduled_rebalance > 0 and now >= self.scheduled_rebalance:
            candidates = self._pick_candidate_workers(complete) if self.candidate_workers_for_reassignment else []
            if candidates:
                for i, connector in enumerate(lost.connectors):
                    candidates[i % len(candidates)].connectors.append(connector)
                for i, task in enumerate(lost.tasks):
                    candidates[i % len(candidates)].tasks.append(task)
            else:
                lost_to_reassign.add_all(lost)
            self._reset_delay()
            # The full delay has passed, so successive revoking rebalances are allowed again.
            self.revoked_in_previous = False
        else:
            for w in sorted(complete, key=lambda w: w.worker):
                if w.is_empty() and w.worker not in self.candidate_workers_for_reassignment:
                    self.candidate_workers_for_reassignment.append(w.worker)
            if now < self.scheduled_rebalance:
                self.delay = self._calculate_delay(now)
            else:
                self.delay = self.max_delay
            self.scheduled_rebalance = now + self.delay

    def expire_delay(self) -> None:
        """Treat the lost-work delay as already expired, so the next round reassigns lost work at once.

        For a leader that knows the departed workers stopped their work cleanly (nothing can run
        twice), waiting for them to return only leaves that work idle.
        """
        self.scheduled_rebalance = max(1, self.clock())

    def _reset_delay(self) -> None:
        self.candidate_workers_for_reassignment.clear()
        self.scheduled_rebalance = 0
        self.delay = 0

    def _calculate_delay(self, now: int) -> int:
        remaining = self.scheduled_rebalance - now
        return min(remaining, self.max_delay) if remaining > 0 else 0

    def _pick_candidate_workers(self, complete: list[WorkerLoad]) -> list[WorkerLoad]:
        by_worker = {w.worker: w for w in complete}
        return [by_worker[w] for w in self.candidate_workers_for_reassignment if w in by_worker]

    def _load_balancing_revocations(
        self, configured: ConnectorsAndTasks, workers: list[WorkerLoad]
    ) -> dict[str, ConnectorsAndTasks]:
        """Revoke from each worker whatever it runs beyond a perfectly balanced share."""
        if all(w.is_empty() for w in workers) or configured.is_empty():
            return {}
        connectors = _balancing_revocations(len(configured.connectors), workers, lambda w: w.connectors)
        tasks = _balancing_revocations(len(configured.tasks), workers, lambda w: w.tasks)
        out: dict[str, ConnectorsAndTasks] = {}
        for worker, revoked_c in connectors.items():
            out.setdefault(worker, ConnectorsAndTasks()).add(revoked_c, ())
        for worker, revoked_t in tasks.items():
            out.setdefault(worker, ConnectorsAndTasks()).add((), revoked_t)
        return out

    @staticmethod
    def assign_connectors(workers: list[WorkerLoad], connectors: Sequence[str]) -> None:
        """Deal ``connectors`` to the least-loaded workers first, levelling them up round by round."""
        _deal(workers, connectors, lambda w: w.connectors)

    @staticmethod
    def assign_tasks(workers: list[WorkerLoad], tasks: Sequence[ConnectorTaskId]) -> None:
        """Deal ``tasks`` to the least-loaded workers first, levelling them up round by round."""
        _deal(workers, tasks, lambda w: w.tasks)


def _deal(workers: list[WorkerLoad], items: Sequence[T], allocation: Callable[[WorkerLoad], list[T]]) -> None:
    # Sorts ``workers`` in place (by load, then id), like Kafka, and keeps that order while dealing.
    workers.sort(key=lambda w: (len(allocation(w)), w.worker))
    if not workers or not items:
        return
    first = workers[0]
    it = iter(items)
    remaining = len(items)
    while remaining:
        first_load = len(allocation(first))
        up_to = next((i for i, w in enumerate(workers) if len(allocation(w)) > first_load), len(workers))
        for w in workers[:up_to]:
            allocation(w).append(next(it))
            remaining -= 1
            if not remaining:
                break


def _balancing_revocations(
    total: int, workers: list[WorkerLoad], allocation: Callable[[WorkerLoad], list[T]]
) -> dict[str, list[T]]:
    n_workers = len(workers)
    minimum = total // n_workers
    extras = total % n_workers
    sizes = [len(allocation(w)) for w in workers]
    at_min = sum(1 for s in sizes if s == minimum)
    at_extra = sum(1 for s in sizes if s == minimum + 1)
    if at_extra == extras and at_min + at_extra == n_workers:
        return {}
    result: dict[str, list[T]] = {}
    allocated_extras = 0
    for w, size in zip(workers, sizes, strict=True):
        if size <= minimum:
            continue
        if allocated_extras < extras:
            allocated_extras += 1
            if size == minimum + 1:
                continue
            limit = minimum + 1
        else:
            limit = minimum
        result[w.worker] = list(allocation(w)[: size - limit])
    return result


def _diff(base: ConnectorsAndTasks, *subtract: ConnectorsAndTasks) -> ConnectorsAndTasks:
    """Sorted set difference (Kafka uses TreeSets here, so the order of new work is by name)."""
    connectors = set(base.connectors)
    tasks = set(base.tasks)
    for sub in subtract:
        connectors.difference_update(sub.connectors)
        tasks.difference_update(sub.tasks)
    return ConnectorsAndTasks(sorted(connectors), sorted(tasks))


def _diff_map(base: Mapping[str, list[T]], subtract: Mapping[str, list[T]]) -> dict[str, list[T]]:
    out: dict[str, list[T]] = {}
    for worker, values in base.items():
        drop = set(subtract.get(worker, ()))
        out[worker] = [v for v in values if v not in drop]
    return out


def _duplicated(members: Mapping[str, ConnectorsAndTasks]) -> ConnectorsAndTasks:
    c_counts = Counter(c for a in members.values() for c in a.connectors)
    t_counts = Counter(t for a in members.values() for t in a.tasks)
    return ConnectorsAndTasks(
        sorted(c for c, n in c_counts.items() if n > 1), sorted(t for t, n in t_counts.items() if n > 1)
    )


def _worker_assignment(members: Mapping[str, ConnectorsAndTasks], exclude: ConnectorsAndTasks) -> list[WorkerLoad]:
    drop_c, drop_t = set(exclude.connectors), set(exclude.tasks)
    return [
        WorkerLoad(m, [c for c in a.connectors if c not in drop_c], [t for t in a.tasks if t not in drop_t])
        for m, a in members.items()
    ]


def _intersection(
    subset: ConnectorsAndTasks, members: Mapping[str, ConnectorsAndTasks]
) -> dict[str, ConnectorsAndTasks]:
    keep_c, keep_t = set(subset.connectors), set(subset.tasks)
    return {
        m: ConnectorsAndTasks([c for c in a.connectors if c in keep_c], [t for t in a.tasks if t in keep_t])
        for m, a in members.items()
    }


def _add_all(base: dict[str, ConnectorsAndTasks], add: Mapping[str, ConnectorsAndTasks]) -> None:
    for worker, assignment in add.items():
        base.setdefault(worker, ConnectorsAndTasks()).add_all(assignment)


def _remove_all(loads: list[WorkerLoad], remove: Mapping[str, ConnectorsAndTasks]) -> None:
    for load in loads:
        r = remove.get(load.worker)
        if r is None:
            continue
        drop_c, drop_t = set(r.connectors), set(r.tasks)
        load.connectors[:] = [c for c in load.connectors if c not in drop_c]
        load.tasks[:] = [t for t in load.tasks if t not in drop_t]
