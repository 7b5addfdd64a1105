"""Connect group membership over Kafka's generic group protocol (Kafka's ``WorkerCoordinator`` and
``WorkerGroupMember``), on kafka-python's ``BaseCoordinator`` (librdkafka does not expose
non-consumer group protocols).

The herder uses one :class:`WorkerGroupMember` from one thread (the *herder thread*)::

    member = WorkerGroupMember(bootstrap_servers=..., group_id="mm2-B", rest_url="http://w1:8083/",
                               config_snapshot=config_store.snapshot, listener=herder_listener,
                               connect_protocol="sessioned", scheduled_rebalance_max_delay_ms=300000)
    member.ensure_active(timeout_s)   # join (or rejoin) if needed; True when a member in good standing
    member.poll(timeout_s)            # wait up to timeout_s, rejoining whenever the group asks
    member.request_rejoin()           # e.g. after a config change the leader must reassign
    member.wakeup()                   # from any thread: make a blocked poll() return now
    member.close()                    # LeaveGroup (others rebalance at once), then close the client

* **Callbacks** (``listener.on_revoked``, ``listener.on_assigned`` and, if the listener has it,
  ``listener.on_poll_timeout_expiry``) run on the herder thread *inside* ``ensure_active``/``poll``,
  never on the network thread, so the herder may stop tasks in them without blocking heartbeats.
  Order within a rebalance: eager protocol - ``on_revoked(everything)`` *before* rejoining;
  cooperative protocols - ``on_revoked(revoked work)`` then ``on_assigned`` after the join.
* ``on_assigned(assignment, generation)`` receives the worker's **complete** assignment
  (:class:`~connect_core.herder.distributed.protocol.ExtendedAssignment`: what it keeps plus what is
  new; ``revoked_*`` as sent by the leader; ``delay`` > 0 asks for a rejoin after that many ms;
  ``failed`` (error ``CONFIG_MISMATCH``) means the leader was behind the config log: read it to the
  end and rejoin). ``poll`` returns early after a completed rebalance so the herder reacts at once.
* Heartbeats run on kafka-python's network thread. The herder thread must call ``poll`` or
  ``ensure_active`` at least every ``rebalance.timeout.ms`` or the member leaves the group (then
  ``on_poll_timeout_expiry`` and a rejoin).
* If the group coordinator cannot be found within a heartbeat interval, the whole assignment is
  revoked (``on_revoked``), so a partitioned worker stops its work before others take it over.
* ``config_snapshot()`` (the config store's snapshot supplier) is called on the network thread when
  joining and, on the leader, when assigning: it must be thread-safe and quick.

* State: ``member_id`` ("" unless in a stable generation), ``generation``, ``last_completed_generation``,
  ``assignment`` (complete, or None), ``is_leader``, ``leader_url``, ``current_protocol_version``,
  ``owner_url(connector | task_id)`` (leader only). Leader hook: ``member.set_before_assignment(
  fn(assignor, members, ctx))`` runs before each incremental round (``assignor.expire_delay()``...).
* Construction does no I/O; the first ``ensure_active``/``poll`` bootstraps (False while unreachable).
* A rejoin that completes no rebalance for three session timeouts (at least 30 s, at most the rebalance
  timeout) is logged and, on a thread of its own, the group is *released*
  (:mod:`connect_core.kafka.departed_leader`): a coordinator that keeps a leader that left while the group re-formed
  as the group's leader and never forms the group again by itself; on Apache Kafka the release is
  refused at once and changes nothing.

Generations: Kafka starts at 1, other brokers at 0; nothing here depends on either. Errors the group
protocol cannot recover from (unknown protocol type, group authorization) raise
:class:`~connect_core.api.errors.ConnectError` from ``ensure_active``/``poll``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from kafka import errors as kafka_errors
from kafka.coordinator.base import BaseCoordinator
from kafka.net.compat import KafkaNetClient
from kafka.structs import MemberState

from connect_core.api.errors import ConnectError
from connect_core.herder.distributed.assignor import (
    AssignmentContext,
    ConfigSnapshot,
    EagerAssignor,
    IncrementalCooperativeAssignor,
    LeaderState,
    monotonic_ms,
)
from connect_core.herder.distributed.protocol import (
    EMPTY_ASSIGNMENT,
    ConnectProtocolCompatibility,
    ExtendedAssignment,
    ExtendedWorkerState,
    SchemaError,
    deserialize_assignment,
    metadata_request,
)
from connect_core.kafka.departed_leader import DepartedLeaderRelease, release_due, stall_timeout_s
from connect_core.model import ConnectorTaskId

log = logging.getLogger(__name__)

PROTOCOL_TYPE = "connect"
UNKNOWN_MEMBER_ID = ""
POLL_SLICE_S = 0.1  # how often a waiting poll() looks at "the group wants us to rejoin"
# Only a hint for BaseCoordinator's version-dependent defaults (all of which we set explicitly); the
# request versions themselves are negotiated per connection with ApiVersions.
_API_VERSION_HINT = (2, 8, 0)


BeforeAssignment = Callable[[IncrementalCooperativeAssignor, Sequence[tuple[str, bytes]], AssignmentContext], None]
#: Leader: may write to the config topic before assigning; returns the snapshot read to the end after its
#: writes (the assignment is then computed from it and names its offset), or None when it wrote nothing.
LeaderConfigStep = Callable[[ConfigSnapshot], ConfigSnapshot | None]
#: Releases the group from a departed leader (blocking), joining with these protocols; answers what it did.
GroupRelease = Callable[[list[tuple[str, bytes]]], str]


class WorkerRebalanceListener(Protocol):
    """What the herder hears from the group (``on_poll_timeout_expiry(self) -> None`` is optional)."""

    def on_assigned(self, assignment: ExtendedAssignment, generation: int) -> None: ...

    def on_revoked(self, leader: str, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]) -> None: ...


class WorkerCoordinator(BaseCoordinator):  # type: ignore[misc]
    """A Connect worker's membership in the group: metadata, assignment (when leader), callbacks.

    Network-thread hooks (``group_protocols``, ``_perform_assignment``, ``_on_join_*``) only compute
    and queue listener events; :meth:`poll` (herder thread) delivers them.
    """

    def __init__(
        self,
        client: KafkaNetClient,
        *,
        rest_url: str,
        config_snapshot: Callable[[], ConfigSnapshot],
        listener: WorkerRebalanceListener,
        compatibility: ConnectProtocolCompatibility = ConnectProtocolCompatibility.SESSIONED,
        max_delay_ms: int = 300000,
        clock: Callable[[], int] = monotonic_ms,
        **configs: Any,
    ) -> None:
        configs.setdefault("api_version", _API_VERSION_HINT)
        super().__init__(client, **configs)
        self.rest_url = rest_url
        self._config_snapshot_fn = config_snapshot
        self._listener = listener
        self.compatibility = compatibility
        self._incremental = IncrementalCooperativeAssignor(max_delay_ms, clock)
        self._eager = EagerAssignor()
        # Shared between the network thread and the herder thread: guarded by self._lock (an RLock).
        self._assignment_snapshot: ExtendedAssignment | None = None
        self._current_protocol = compatibility
        self._last_completed_generation = -1
        self._config_snapshot: ConfigSnapshot | None = None
        self._leader_state: LeaderState | None = None
        self._events: deque[Callable[[], None]] = deque()
        # Optional leader-side hook, called on the network thread just before each incremental
        # assignment with (assignor, [(member id, metadata)], context); e.g. to expire_delay().
        self.before_assignment: BeforeAssignment | None = None
        # Optional leader-side step, called on the network thread before each assignment with the join
        # snapshot: configs the leader keeps written (MirrorMaker's connectors) land in this very generation.
        self.leader_config_step: LeaderConfigStep | None = None
        # Herder-thread state.
        self._join_prepared = False
        self._coordinator_missing_since: float | None = None
        self._closing = False
        self._wakeup_event = threading.Event()
        # A rejoin that completes no rebalance for join_stall_s runs group_release (set by the member) on a
        # thread of its own: see connect_core.kafka.departed_leader.
        self.group_release: GroupRelease | None = None
        self.join_stall_s = stall_timeout_s(self.config["session_timeout_ms"], self.config["max_poll_interval_ms"])
        self._join_pending_since: float | None = None
        self._last_release: float | None = None
        self._release_thread: threading.Thread | None = None

    # ------------------------------------------------------------------ BaseCoordinator hooks

    def protocol_type(self) -> str:
        return PROTOCOL_TYPE

    def group_protocols(self) -> list[tuple[str, bytes]]:
        snapshot = self._config_snapshot_fn()
        with self._lock:
            self._config_snapshot = snapshot
            current = self._assignment_snapshot
        state = ExtendedWorkerState(
            self.rest_url, snapshot.offset, current if current is not None else EMPTY_ASSIGNMENT
        )
        return metadata_request(state, self.compatibility)

    async def _on_join_prepare_async(self, generation: int, member_id: str, timeout_ms: float | None = None) -> None:
        log.info("Rebalance started (group %s, previous generation %s)", self.group_id, generation)
        with self._lock:
            self._leader_state = None

    def _perform_assignment(self, leader_id: str, protocol: str, members: Sequence[Any]) -> dict[str, bytes]:
        with self._lock:
            snapshot = self._config_snapshot if self._config_snapshot is not None else self._config_snapshot_fn()
            last_completed = self._last_completed_generation
        snapshot = self._run_leader_config_step(snapshot)
        ctx = AssignmentContext(snapshot, self._config_snapshot_fn, last_completed, self._generation.generation_id)
        mode = ConnectProtocolCompatibility.from_protocol(protocol)
        raw_members = [(m.member_id, bytes(m.metadata)) for m in members]
        if mode is ConnectProtocolCompatibility.EAGER:
            result = self._eager.perform_assignment(leader_id, protocol, raw_members, ctx)
        else:
            hook = self.before_assignment
            if hook is not None:
                try:
                    hook(self._incremental, raw_members, ctx)
                except Exception:
                    log.exception("before_assignment hook failed; assigning without it")
            result = self._incremental.perform_assignment(leader_id, protocol, raw_members, ctx)
        with self._lock:
            self._config_snapshot = result.config_snapshot
            self._leader_state = result.leader_state
        take_over = self._incremental.last_take_over if mode is not ConnectProtocolCompatibility.EAGER else None
        if take_over is not None:
            log.info("Leader %s took over from %s: %d connector(s) and %d task(s) no member reports are lost work "
                     "of departed workers", leader_id, ", ".join(take_over.previous_leaders) or "an unknown leader",
                     len(take_over.unreported.connectors), len(take_over.unreported.tasks))  # fmt: skip
        delay = max((a.delay for a in result.assignments.values()), default=0)
        log.info("Leader %s assigned generation %s (%s, delay %s ms) to %d member(s)", leader_id,
                 ctx.generation_id, protocol, delay, len(members))  # fmt: skip
        return result.serialized

    def _run_leader_config_step(self, snapshot: ConfigSnapshot) -> ConfigSnapshot:
        """The snapshot to assign from: the join snapshot, or the one after the leader's own config writes."""
        step = self.leader_config_step
        if step is None:
            return snapshot
        try:
            fresh = step(snapshot)
        except Exception:
            log.exception("The leader's config step failed; assigning from the configs read when joining")
            return snapshot
        return snapshot if fresh is None or fresh.offset < snapshot.offset else fresh

    async def _on_join_complete_async(
        self, generation: int, member_id: str, protocol: str, member_assignment_bytes: bytes | None
    ) -> None:
        try:
            new = deserialize_assignment(bytes(member_assignment_bytes) if member_assignment_bytes else None)
        except SchemaError as e:
            log.error("Unreadable assignment from the leader of group %s (%s); rejoining", self.group_id, e)
            self.request_rejoin()
            return
        if new is None:
            log.error("Empty assignment from the leader of group %s; rejoining", self.group_id)
            self.request_rejoin()
            return
        mode = ConnectProtocolCompatibility.from_protocol(protocol)
        with self._lock:
            self._current_protocol = mode
            if mode is not ConnectProtocolCompatibility.EAGER:
                if new.revoked_connectors or new.revoked_tasks:
                    revoked = (new.leader or "", new.revoked_connectors, new.revoked_tasks)
                    self._events.append(lambda: self._listener.on_revoked(*revoked))
                previous = self._assignment_snapshot
                if previous is not None:
                    # The leader sends increments: add back what we keep.
                    drop_c = set(new.revoked_connectors) | set(new.connectors)
                    drop_t = set(new.revoked_tasks) | set(new.tasks)
                    new = replace(
                        new,
                        connectors=new.connectors + tuple(c for c in previous.connectors if c not in drop_c),
                        tasks=new.tasks + tuple(t for t in previous.tasks if t not in drop_t),
                    )
            self._assignment_snapshot = new
            self._last_completed_generation = generation
            if new.leader != member_id:
                # Following now: a later lead starts by rebuilding the group's last generation.
                self._incremental.forget()
            self._join_prepared = False
            assigned = new
            self._events.append(lambda: self._listener.on_assigned(assigned, generation))
        log.info("Joined group %s at generation %s as %s (%s; leader %s): %d connector(s), %d task(s)",
                 self.group_id, generation, member_id, protocol, new.leader, len(new.connectors),
                 len(new.tasks))  # fmt: skip

    async def join_group_async(self, timeout_ms: float | None = None) -> bool:
        # kafka-python 3.0.x leaves the JoinGroup/SyncGroup task running when a bounded wait times out,
        # but if that task then *succeeds* before the next wait starts, the next call sees a finished
        # task and starts a brand-new JoinGroup, throwing the assignment away and forcing the whole
        # group through one more rebalance. poll() waits in slices, so consume such a result here.
        task: Any = getattr(self, "_join_task", None)
        if task is not None and task.is_done and task.succeeded():
            self._join_task = None
            with self._lock:
                self.rejoining = False
                self.rejoin_needed = False
                self.state = MemberState.STABLE
                self._enable_heartbeat()
            generation = self._generation
            await self._on_join_complete_async(
                generation.generation_id, generation.member_id, generation.protocol, task.value
            )
            return True
        return bool(await super().join_group_async(timeout_ms))

    def need_rejoin(self) -> bool:
        with self._lock:
            snapshot = self._assignment_snapshot
            return bool(self.rejoin_needed) or snapshot is None or snapshot.failed

    async def maybe_leave_group_async(self, reason: str | None = None, timeout_ms: float | None = None) -> None:
        # The heartbeat thread leaves by itself when poll() was not called for rebalance.timeout.ms.
        if not self._closing and reason is None and self.heartbeat.poll_timeout_expired():
            log.warning("Worker poll timeout expired (herder thread stalled): leaving group %s", self.group_id)
            listener = self._listener
            callback = getattr(listener, "on_poll_timeout_expiry", None)
            if callback is not None:
                with self._lock:
                    self._events.append(callback)
        await super().maybe_leave_group_async(reason, timeout_ms)

    # ------------------------------------------------------------------ herder-thread API

    def poll(self, timeout_s: float, *, until_active: bool = False) -> bool:
        """Keep membership alive for up to ``timeout_s``, rejoining whenever needed.

        Returns True as soon as a rebalance completes (or, with ``until_active``, as soon as this worker
        is a member in good standing); False when the time ran out or :meth:`wakeup` was called.
        """
        deadline = time.monotonic() + max(0.0, timeout_s)
        try:
            while True:
                self._deliver_events()
                if self._closing:
                    return False
                if self.coordinator_unknown():
                    self._find_coordinator(deadline)
                if self.need_rejoin():
                    if not self.coordinator_unknown():
                        self._watch_join(time.monotonic())
                        self._prepare_join()
                        remaining_ms = max(0.0, deadline - time.monotonic()) * 1000
                        if self.ensure_active_group(timeout_ms=remaining_ms):
                            self._deliver_events()
                            return True
                else:
                    self._join_pending_since = None
                    if until_active and self.stable():
                        return True
                self._heartbeat_check()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                if self._wakeup_event.wait(min(remaining, POLL_SLICE_S)):
                    self._wakeup_event.clear()
                    self._deliver_events()
                    return False
        except kafka_errors.KafkaError as e:
            if getattr(e, "retriable", False):
                log.debug("Retriable group error in group %s: %s", self.group_id, e)
                return False
            raise ConnectError(f"Connect group {self.group_id}: {type(e).__name__}: {e}") from e

    def _watch_join(self, now: float) -> None:
        """A rejoin that has completed no rebalance for :attr:`join_stall_s`: warn, and release the group."""
        if self._join_pending_since is None:
            self._join_pending_since = now
        running = self._release_thread is not None and self._release_thread.is_alive()
        if running or not release_due(now, self._join_pending_since, self._last_release, self.join_stall_s):
            return
        self._last_release = now
        release = self.group_release
        action = "releasing a departed leader" if release else "still waiting"
        log.warning("Worker has completed no rebalance of group %s for %.0f s; %s", self.group_id,
                    now - self._join_pending_since, action)  # fmt: skip
        if release is None:
            return
        protocols = self.group_protocols()

        def run() -> None:
            try:
                log.info("Group %s: %s", self.group_id, release(protocols))
            except Exception as e:
                log.warning("Releasing group %s failed: %s", self.group_id, e)

        self._release_thread = threading.Thread(target=run, name=f"{self.group_id}-group-release", daemon=True)
        self._release_thread.start()

    def _find_coordinator(self, deadline: float) -> None:
        """Look the coordinator up; after a heartbeat interval without one, revoke everything (Kafka)."""
        interval_s = self.config["heartbeat_interval_ms"] / 1000
        wait_s = max(0.01, min(interval_s, deadline - time.monotonic()))
        if self.ensure_coordinator_ready(timeout_ms=wait_s * 1000):
            self._coordinator_missing_since = None
            return
        now = time.monotonic()
        if self._coordinator_missing_since is None:
            self._coordinator_missing_since = now - wait_s
        if now - self._coordinator_missing_since < interval_s:
            return
        with self._lock:
            snapshot = self._assignment_snapshot
            if snapshot is None or snapshot.failed:
                return
            self._assignment_snapshot = None
        missing_s = now - self._coordinator_missing_since
        log.info(
            "Group coordinator of %s unreachable for %.1f s: revoking this worker's assignment so it does not run "
            "work while outside the group",
            self.group_id,
            missing_s,
        )
        self._listener.on_revoked(snapshot.leader or "", snapshot.connectors, snapshot.tasks)

    def _prepare_join(self) -> None:
        """Kafka's onJoinPrepare, on the herder thread: the eager protocol stops everything first."""
        if self._join_prepared:
            return
        self._join_prepared = True
        with self._lock:
            snapshot = self._assignment_snapshot
            eager = self._current_protocol is ConnectProtocolCompatibility.EAGER
        if eager and snapshot is not None and not snapshot.failed:
            self._listener.on_revoked(snapshot.leader or "", snapshot.connectors, snapshot.tasks)

    def _heartbeat_check(self) -> None:
        try:
            self.poll_heartbeat()
        except kafka_errors.KafkaError as e:
            log.warning("Heartbeat loop of group %s failed (%s); restarting it", self.group_id, e)
            self._maybe_start_heartbeat_loop()

    def _deliver_events(self) -> None:
        """Run queued listener callbacks on the calling (herder) thread, in order."""
        while True:
            with self._lock:
                if not self._events:
                    return
                event = self._events.popleft()
            event()

    def wakeup(self) -> None:
        self._wakeup_event.set()

    def close(self, timeout_ms: float | None = None) -> None:
        self._closing = True
        self._wakeup_event.set()
        super().close(timeout_ms=timeout_ms)

    # ------------------------------------------------------------------ state

    @property
    def assignment(self) -> ExtendedAssignment | None:
        with self._lock:
            return self._assignment_snapshot

    @property
    def incremental_assignor(self) -> IncrementalCooperativeAssignor:
        """The leader-side assignor (its state only matters while this worker leads)."""
        return self._incremental

    @property
    def member_id(self) -> str:
        generation = self.generation_if_stable()
        return str(generation.member_id) if generation is not None else UNKNOWN_MEMBER_ID

    @property
    def generation_id(self) -> int:
        return int(self._generation.generation_id)

    @property
    def last_completed_generation_id(self) -> int:
        with self._lock:
            return self._last_completed_generation

    @property
    def current_protocol(self) -> ConnectProtocolCompatibility:
        with self._lock:
            return self._current_protocol

    def is_leader(self) -> bool:
        snapshot = self.assignment
        member_id = self.member_id
        return snapshot is not None and bool(member_id) and snapshot.leader == member_id

    def owner_url(self, target: str | ConnectorTaskId) -> str | None:
        """The REST URL of the worker running a connector/task; only the leader knows, else None."""
        if self.need_rejoin() or not self.is_leader():
            return None
        with self._lock:
            state = self._leader_state
        return state.owner_url(target) if state is not None else None


class WorkerGroupMember:
    """Owns the kafka-python network client and the :class:`WorkerCoordinator` of one worker.

    Construction does no I/O: the first ``ensure_active``/``poll`` bootstraps (reads cluster metadata)
    and joins. ``client_configs`` are extra kafka-python client keyword arguments (``security_protocol``,
    ``ssl_cafile``, ``sasl_mechanism``, ``sasl_plain_username``...).
    """

    def __init__(
        self,
        *,
        bootstrap_servers: str,
        group_id: str,
        rest_url: str,
        config_snapshot: Callable[[], ConfigSnapshot],
        listener: WorkerRebalanceListener,
        connect_protocol: str | ConnectProtocolCompatibility = ConnectProtocolCompatibility.SESSIONED,
        session_timeout_ms: int = 10000,
        heartbeat_interval_ms: int = 3000,
        rebalance_timeout_ms: int = 60000,
        scheduled_rebalance_max_delay_ms: int = 300000,
        request_timeout_ms: int = 40000,
        retry_backoff_ms: int = 100,
        client_id: str = "connect-1",
        client_configs: Mapping[str, Any] | None = None,
        clock: Callable[[], int] = monotonic_ms,
    ) -> None:
        compatibility = (
            connect_protocol
            if isinstance(connect_protocol, ConnectProtocolCompatibility)
            else ConnectProtocolCompatibility.compatibility(str(getattr(connect_protocol, "value", connect_protocol)))
        )
        self.group_id = group_id
        self._request_timeout_ms = request_timeout_ms
        self._client = KafkaNetClient(
            bootstrap_servers=bootstrap_servers,
            client_id=client_id,
            request_timeout_ms=request_timeout_ms,
            **dict(client_configs or {}),
        )
        self._stopped = False
        try:
            self._client._net.start()
            self.coordinator = WorkerCoordinator(
                self._client,
                rest_url=rest_url,
                config_snapshot=config_snapshot,
                listener=listener,
                compatibility=compatibility,
                max_delay_ms=scheduled_rebalance_max_delay_ms,
                clock=clock,
                group_id=group_id,
                session_timeout_ms=session_timeout_ms,
                heartbeat_interval_ms=heartbeat_interval_ms,
                max_poll_interval_ms=rebalance_timeout_ms,
                request_timeout_ms=request_timeout_ms,
                retry_backoff_ms=retry_backoff_ms,
            )
        except Exception:
            self._client.close()
            raise

        def release(protocols: list[tuple[str, bytes]]) -> str:
            return (
                DepartedLeaderRelease(
                    bootstrap_servers, dict(client_configs or {}), group_id, protocols,
                    protocol_type=PROTOCOL_TYPE, session_timeout_ms=session_timeout_ms,
                    rebalance_timeout_ms=rebalance_timeout_ms, client_id=f"{client_id}-release",
                ).run().describe()
            )  # fmt: skip

        self.coordinator.group_release = release

    def _bootstrapped(self, timeout_s: float) -> bool:
        manager = self._client._manager
        if manager.bootstrapped:
            return True
        try:
            manager.bootstrap(timeout_ms=max(1.0, timeout_s * 1000))
        except kafka_errors.KafkaTimeoutError:
            log.warning("Cannot reach the Kafka cluster of Connect group %s yet", self.group_id)
            return False
        return bool(manager.bootstrapped)

    def ensure_active(self, timeout_s: float = 60.0) -> bool:
        """Join or rejoin if needed, waiting up to ``timeout_s``; True once a member in good standing."""
        deadline = time.monotonic() + timeout_s
        if not self._bootstrapped(timeout_s):
            return False
        return self.coordinator.poll(max(0.0, deadline - time.monotonic()), until_active=True)

    def poll(self, timeout_s: float) -> bool:
        """Stay in the group for up to ``timeout_s`` (rejoining as asked); True if a rebalance completed."""
        if timeout_s < 0:
            raise ValueError("Timeout must not be negative")
        deadline = time.monotonic() + timeout_s
        if not self._bootstrapped(timeout_s):
            return False
        return self.coordinator.poll(max(0.0, deadline - time.monotonic()))

    def wakeup(self) -> None:
        """Make a ``poll`` blocked on another thread return now (thread-safe)."""
        self.coordinator.wakeup()

    def request_rejoin(self) -> None:
        """Rejoin at the next ``poll``/``ensure_active`` (the leader then reassigns from fresh configs)."""
        self.coordinator.request_rejoin()

    def set_before_assignment(self, hook: BeforeAssignment) -> None:
        """Leader: ``hook`` runs on the network thread just before each incremental assignment round."""
        self.coordinator.before_assignment = hook

    def set_leader_config_step(self, step: LeaderConfigStep) -> None:
        """Leader: ``step`` runs on the network thread before each assignment and may write configs that
        the same generation then assigns (see :data:`LeaderConfigStep`)."""
        self.coordinator.leader_config_step = step

    def maybe_leave_group(self, reason: str) -> None:
        """Leave now without closing (the next poll rejoins as a new member)."""
        self.coordinator.maybe_leave_group(reason=reason, timeout_ms=self._request_timeout_ms)

    def close(self, timeout_s: float = 5.0) -> None:
        """Send LeaveGroup (the others rebalance at once instead of waiting for the session timeout),
        then stop the network thread. Idempotent."""
        if self._stopped:
            return
        self._stopped = True
        try:
            self.coordinator.close(timeout_ms=timeout_s * 1000)
        except Exception as e:  # closing must not fail the caller's shutdown
            log.warning("Leaving Connect group %s failed: %s", self.group_id, e)
        finally:
            self._client.close()

    stop = close

    # ------------------------------------------------------------------ state

    @property
    def member_id(self) -> str:
        """This worker's member id while in a stable generation, else ``""``."""
        return self.coordinator.member_id

    @property
    def generation(self) -> int:
        """The group generation this worker knows (-1 when not in one; Kafka starts at 1, some brokers at 0)."""
        return self.coordinator.generation_id

    @property
    def last_completed_generation(self) -> int:
        return self.coordinator.last_completed_generation_id

    @property
    def assignment(self) -> ExtendedAssignment | None:
        """The complete current assignment (None before the first join / after losing the coordinator)."""
        return self.coordinator.assignment

    @property
    def is_leader(self) -> bool:
        return self.coordinator.is_leader()

    @property
    def leader_url(self) -> str | None:
        a = self.coordinator.assignment
        return a.leader_url if a is not None else None

    @property
    def current_protocol_version(self) -> int:
        """0 eager, 1 compatible, 2 sessioned: what the group agreed on at the last join."""
        return self.coordinator.current_protocol.version

    def owner_url(self, target: str | ConnectorTaskId) -> str | None:
        return self.coordinator.owner_url(target)
