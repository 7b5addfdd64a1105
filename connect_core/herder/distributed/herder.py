"""The distributed herder (Kafka's ``DistributedHerder``): workers of one group share connectors and tasks.

One thread owns every piece of herder state. It drives the group membership (join, heartbeat,
rebalance callbacks all happen inside ``member.ensure_active``/``member.poll`` on this thread),
runs queued requests (every REST call is a request on this queue, see
:mod:`~connect_core.herder.distributed.herder_requests`), and reacts to config-topic changes that
the config store's consumer thread reports through the update listener (which only records them
and wakes the loop). The rules are Java's:

* before joining, and whenever an assignment names a config offset this worker has not read, the
  config topic is read to its end; a worker that cannot catch up in ``worker.sync.timeout.ms``
  rejoins (backing off) instead of acting on a stale view, and a worker that is *past* the
  assignment's offset rejoins too, so nobody starts work from configs the leader did not see;
* only the leader writes connector configs, task configs, STOPPED target states, session keys
  and restart requests; a follower answers ``NotLeaderError(leader_url)`` and the REST layer
  forwards the call; task configs generated on a follower are POSTed to the leader's internal
  ``/connectors/{name}/tasks`` endpoint, signed with the session key (``connect.protocol=sessioned``);
* incremental cooperative rebalancing: work this worker keeps is never stopped; revoked work is
  stopped (and its UNASSIGNED status flushed) inside the revocation callback, before this worker
  rejoins, so the group cannot hand it to someone else while it still runs;
* statuses carry the group generation and shutdown/failure use ``put_safe``, so a worker that lost
  a task cannot overwrite the new owner's status;
* ``stop()`` stops this worker's work, flushes statuses and leaves the group at once.

KIP-618 zombie fencing (``exactly.once.source.support=enabled``), as Java's herder does it: a source
task of a connector whose latest task configs are not yet covered by a ``tasks-fencing-`` record
starts only after a round of fencing. The leader runs it (it fences the previous generation's
transactional ids off the herder thread, then writes the record); a follower PUTs a signed request
to the leader's ``/connectors/{name}/fence`` first. Before starting, the task is checked again:
still assigned here, same task-config generation. The rules of a round are the pure
:mod:`~connect_core.herder.distributed.zombie_fencing`.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any

from connect_core.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConnectError,
    NotFoundError,
    NotLeaderError,
    RestError,
)
from connect_core.herder import common
from connect_core.herder.distributed.collaborators import (
    FenceForwarder,
    GroupMember,
    MemberFactory,
    TaskConfigForwarder,
    WorkerLike,
    ZombieFencer,
)
from connect_core.herder.distributed.herder_requests import RequestQueue
from connect_core.herder.distributed.leader_forwarding import (
    http_post_task_configs,
    http_put_fence,
    namespace_path,
    quote_segment,
)
from connect_core.herder.distributed.session_key import (
    InternalRequestSignature,
    SessionKey,
    check_signature,
    signature_headers,
)
from connect_core.herder.distributed.zombie_fencing import (
    may_start_without_fencing,
    plan_fencing,
    transactional_ids_to_fence,
)
from connect_core.model import (
    AbstractStatus,
    ConfigInfos,
    ConnectorInfo,
    ConnectorStateInfo,
    ConnectorTaskId,
    PluginInfo,
    RestartRequest,
    TargetState,
    TaskInfo,
)
from connect_core.runtime.distributed_config import ConnectProtocol, DistributedConfig, ExactlyOnceSourceSupport
from connect_core.runtime.metric_hooks import RebalanceMetrics
from connect_core.runtime.status import StatusRecorder
from connect_core.storage.api import ClusterConfigState, ConfigBackingStore, StatusBackingStore

log = logging.getLogger(__name__)

REQUEST_TIMEOUT_S = 90.0  # Java's default REST request timeout
RECONFIGURE_BACKOFF_INITIAL_S = 0.25
RECONFIGURE_BACKOFF_MAX_S = 60.0
BACKOFF_RETRIES = 5
MAX_POLL_WAIT_S = 1.0  # upper bound of one poll when the member cannot be woken up
ENSURE_ACTIVE_WAIT_S = 5.0  # one attempt to (re)join; the loop retries (stop() wakes it up)
FENCING_ATTEMPTS = 6  # a task's round of fencing is retried (leader busy, no session key yet), then it FAILS
FENCING_BACKOFF_INITIAL_S = 0.5

EXACTLY_ONCE_DISABLED_MESSAGE = (
    "Zombie fencing is only available when exactly-once source support is turned on for the cluster "
    "(exactly.once.source.support=enabled, or preparing during an upgrade); this worker has it disabled"
)


@dataclass
class _Running:
    connectors: set[str] = field(default_factory=set)
    tasks: set[ConnectorTaskId] = field(default_factory=set)


# ---------------------------------------------------------------------------------- herder


class DistributedHerder:
    def __init__(
        self,
        config: DistributedConfig,
        worker: WorkerLike,
        worker_id: str,
        advertised_url: str,
        config_store: ConfigBackingStore,
        status_store: StatusBackingStore,
        member_factory: MemberFactory,
        *,
        kafka_cluster_id: str | None = None,
        rest_namespace: tuple[str, ...] = (),
        on_became_leader: Callable[[], None] | None = None,
        task_config_forwarder: TaskConfigForwarder = http_post_task_configs,
        fence_forwarder: FenceForwarder = http_put_fence,
        zombie_fencer: ZombieFencer | None = None,
        closers: Iterable[Callable[[], None]] = (),
        runtime_metrics: RebalanceMetrics | None = None,
    ) -> None:
        config.check_supported()
        self.config = config
        self.worker = worker
        self._worker_id = worker_id
        self.advertised_url = advertised_url
        self.config_store = config_store
        self.status_store = status_store
        self._cluster_id = kafka_cluster_id
        self._namespace = rest_namespace
        self._on_became_leader = on_became_leader
        self._forward_task_configs = task_config_forwarder
        self._forward_fence = fence_forwarder
        if zombie_fencer is None:
            from connect_core.runtime.zombie_fencer import ProducerZombieFencer

            zombie_fencer = ProducerZombieFencer(config.raw(), config.override_policy())
        self._zombie_fencer = zombie_fencer
        self._exactly_once = config.exactly_once_source_support is ExactlyOnceSourceSupport.ENABLED
        self._closers = list(closers)
        self._protocol = config.connect_protocol
        self._sync_timeout_s = config.worker_sync_timeout_s
        self._leadership_listeners: list[Callable[[bool], None]] = []

        # State gauges and rebalance timings (mirror.driver.metrics_bindings.RuntimeMetrics); None = not measured.
        self._runtime_metrics = runtime_metrics
        self._rebalancing = False
        self.status = StatusRecorder(status_store, worker_id, lambda: self._generation, metrics=runtime_metrics)
        self._requests = RequestQueue()
        self._member_factory = member_factory
        self._member: GroupMember | None = None
        self._thread: threading.Thread | None = None
        self._forward_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="herder-forward")
        self._fencing_pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="herder-fencing")
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._stopped = threading.Event()
        self._start_error: BaseException | None = None

        # herder-thread state
        self._config_state = ClusterConfigState()
        self._assignment: Any = None
        self._generation = -1
        self._member_id = ""
        self._running = _Running()
        self._tasks_to_restart: set[ConnectorTaskId] = set()
        self._rebalance_resolved = True
        self._can_read_configs = True
        self._scheduled_rebalance = float("inf")
        self._backoff_retries = BACKOFF_RETRIES
        self._was_leader = False
        self._pending_restarts: dict[str, RestartRequest] = {}
        self._tasks_awaiting_fencing: dict[ConnectorTaskId, int | None] = {}  # task -> its config generation

        # shared with the config store's listener thread (guarded by _lock)
        self._lock = threading.RLock()
        self._needs_reconfig_rebalance = False
        self._connector_config_updates: set[str] = set()
        self._task_config_updates: set[ConnectorTaskId] = set()
        self._target_state_changes: set[str] = set()
        self._session_key: SessionKey | None = None
        self._key_expiration = float("inf")  # wall-clock ms
        self._active_fencings: dict[str, Future[None]] = {}  # leader: rounds in flight, one per connector

    # ============================================================================ lifecycle

    def start(self, timeout_s: float | None = None) -> None:
        """Start the herder thread; with ``timeout_s``, also wait until it has read the config topic."""
        self.config_store.set_update_listener(_ConfigListener(self))
        self._thread = threading.Thread(target=self._run, name=f"herder-{self._worker_id}", daemon=True)
        self._thread.start()
        if timeout_s is not None:
            self._ready.wait(timeout_s)
            if self._start_error is not None:
                raise self._start_error

    def is_ready(self) -> bool:
        return self._ready.is_set() and self._assignment is not None

    def stop(self, timeout_s: float = 60.0) -> None:
        """Stop this worker's connectors and tasks, flush statuses, leave the group, stop the stores."""
        log.info("Herder stopping")
        self._stopping.set()
        self._wakeup()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
        self._forward_pool.shutdown(wait=False, cancel_futures=True)
        self._fencing_pool.shutdown(wait=False, cancel_futures=True)
        with self._lock:
            fencings, self._active_fencings = list(self._active_fencings.values()), {}
        for fencing in fencings:
            _complete(fencing, ConnectError("The herder is stopping; zombie fencing not completed"))
        for req in self._requests.drain():
            if not req.future.done():
                req.future.set_exception(ConnectError("The herder is stopping; request not processed"))
        log.info("Herder stopped")

    def _start_services(self) -> None:
        self.worker.start()
        self.status_store.start()
        self.config_store.start()
        self._member = self._member_factory(_RebalanceListener(self), self.config_store.snapshot)
        self._install_release_hook()

    def _run(self) -> None:
        try:
            log.info("Herder starting")
            self._start_services()
            self._config_state = self.config_store.snapshot()
            if self._config_state.session_key is not None:
                # read while replaying the config topic, which notifies no listener: a follower that
                # started after the leader wrote the key would otherwise sign nothing until the next one
                self._on_session_key_update(self._config_state.session_key)
            self._ready.set()
            while not self._stopping.is_set():
                self._tick()
            self._halt()
        except BaseException as e:
            log.exception("Uncaught exception in herder work thread, stopping the herder")
            self._start_error = e
            self._ready.set()
            try:
                self._halt()
            except Exception:
                log.exception("Failed to halt the herder after an error")
        finally:
            self._stopped.set()

    def _halt(self) -> None:
        """Stop all work, flush statuses, leave the group (Java ``halt``)."""
        log.info("Herder halting: stopping connectors and tasks")
        try:
            self.worker.stop_and_await_tasks(list(self.worker.task_ids()))
            self.worker.stop_and_await_connectors(list(self.worker.connector_names()))
            try:
                self.status_store.flush()
            except Exception:
                log.exception("Failed to flush the status store")
        finally:
            member, self._member = self._member, None
            if member is not None:
                try:
                    member.close()  # LeaveGroup: the group rebalances without waiting for the session timeout
                except Exception:
                    log.exception("Failed to leave the group")
            for step in (self.worker.stop, self.config_store.stop, self.status_store.stop, *self._closers):
                try:
                    step()
                except Exception:
                    log.exception("Failed to stop a herder resource")

    def _wakeup(self) -> None:
        member = self._member
        wake = getattr(member, "wakeup", None)
        if callable(wake):
            try:
                wake()
            except Exception:
                log.debug("member wakeup failed", exc_info=True)

    # ============================================================================ the loop

    def _tick(self) -> None:
        member = self._member
        assert member is not None
        if not self._can_read_configs:
            if self._read_config_to_end(self._sync_timeout_s):
                self._can_read_configs = True
            else:
                return
        if self._assignment is None:
            self._note_rebalance_started()  # the first join is a rebalance too
        member.ensure_active(ENSURE_ACTIVE_WAIT_S)
        if self._stopping.is_set():
            return
        if self._assignment is None:
            return  # not joined yet (ensure_active timed out); keep trying
        if not self._handle_rebalance_completed():
            return

        self._maybe_rotate_session_key()

        while (req := self._requests.pop_due()) is not None:
            req.run()
            if self._stopping.is_set():
                return
        self._process_restart_requests()
        if self._scheduled_rebalance < float("inf"):
            # A delayed follow-up rebalance is pending: look at it again after this tick's poll (Java).
            self._rebalance_resolved = False

        should_return = self._process_config_updates()
        if should_return:
            return
        member.poll(self._poll_timeout())
        self._handle_rebalance_completed()

    def _poll_timeout(self) -> float:
        deadline = self._scheduled_rebalance
        nxt = self._requests.next_due()
        if nxt is not None:
            deadline = min(deadline, nxt)
        if self.is_leader() and self._sessioned() and self._key_expiration < float("inf"):
            deadline = min(deadline, time.monotonic() + max(0.0, self._key_expiration / 1000.0 - time.time()))
        wait = deadline - time.monotonic()
        cap = MAX_POLL_WAIT_S if not callable(getattr(self._member, "wakeup", None)) else 5.0
        return max(0.0, min(wait, cap))

    def _handle_rebalance_completed(self) -> bool:
        if self._rebalance_resolved:
            return True
        member = self._member
        assert member is not None and self._assignment is not None
        a = self._assignment
        needs_read = needs_rejoin = False
        if getattr(a, "error", 0):
            needs_rejoin = True
            if self.is_leader() or self._config_state.offset < a.offset:
                log.warning("Join group completed but the assignment failed (error %s); reading the config topic",
                            a.error)  # fmt: skip
                needs_read = True
        elif self._config_state.offset < a.offset:
            log.info("Catching up to the assignment's config offset %d (at %d)", a.offset, self._config_state.offset)
            needs_read = True
        if self._scheduled_rebalance <= time.monotonic():
            log.debug("Scheduled rebalance delay expired; rejoining")
            needs_rejoin = True
            self._scheduled_rebalance = float("inf")
        if needs_read:
            if self._read_config_to_end(self._sync_timeout_s):
                self._can_read_configs = True
            else:
                self._can_read_configs = False
                needs_rejoin = True
        if needs_rejoin:
            member.request_rejoin()
            return False
        if self._config_state.offset != a.offset:
            log.info("Config state offset %d does not match the assignment's %d; forcing a rebalance",
                     self._config_state.offset, a.offset)  # fmt: skip
            member.request_rejoin()
            return False
        self._start_work()
        self._rebalance_resolved = True
        if getattr(a, "revoked_connectors", ()) or getattr(a, "revoked_tasks", ()):
            # Revoked work is stopped already; rejoin so the leader can hand it to someone else.
            self._assignment = _without_revocations(a)
            member.request_rejoin()
            return False
        self._rebalance_success()
        return True

    def _install_release_hook(self) -> None:
        """Leader: skip the lost-work delay for work its departed worker released cleanly.

        Kafka's assignor holds the work of any departed worker for ``scheduled.rebalance.max.delay.ms``,
        hoping it returns. A worker stopped on purpose (SIGTERM) first stops its connectors and tasks,
        which writes UNASSIGNED to the status topic, and only then leaves the group; a crashed one
        leaves them RUNNING. So, just before the leader assigns a round in which a member has gone,
        if no work that nobody reports is still RUNNING/PAUSED in the status topic, nothing can run
        twice and the pending delay is expired: that round already reassigns the work.
        """
        assignor = getattr(getattr(self._member, "coordinator", None), "_incremental", None)
        perform = getattr(assignor, "perform_assignment", None)
        if assignor is None or perform is None:
            return

        def perform_assignment(leader_id: str, protocol: str, members: Any, ctx: Any) -> Any:
            try:
                self._expire_delay_if_released(assignor, members, ctx)
            except Exception:
                log.debug("Cannot tell whether departed work was released cleanly", exc_info=True)
            return perform(leader_id, protocol, members, ctx)

        assignor.perform_assignment = perform_assignment

    def _expire_delay_if_released(self, assignor: Any, members: Any, ctx: Any) -> None:
        """Runs on the group client's thread while this worker leads an assignment round."""
        from connect_core.herder.distributed.assignor import reported_leaders
        from connect_core.herder.distributed.protocol import deserialize_metadata

        states = {m: deserialize_metadata(metadata) for m, metadata in members}
        leaders = reported_leaders(states)
        # A worker that has just taken over the lead counts its predecessor among the departed.
        previous = assignor.last_generation_members(states, ctx.last_completed_generation_id, leaders)
        current = set(states)
        if not previous or previous <= current:
            return  # nobody departed
        reported_c: set[str] = set()
        reported_t: set[ConnectorTaskId] = set()
        for state in states.values():
            reported_c.update(state.assignment.connectors)
            reported_t.update(state.assignment.tasks)
        snapshot = ctx.config_snapshot
        unreported_c = [c for c in snapshot.connectors() if c not in reported_c]
        unreported_t = [t for c in snapshot.connectors() for t in snapshot.tasks(c) if t not in reported_t]
        if not unreported_c and not unreported_t:
            return
        read = getattr(self.status_store, "read_to_end", None)
        if callable(read):
            read(min(self._sync_timeout_s, 2.0))
        connector_states = {c: self.status_store.get_connector(c) for c in unreported_c}
        task_states = {t: self.status_store.get_task(t) for t in unreported_t}
        if assignor.took_over(ctx.last_completed_generation_id, leaders):
            # Work with no status at all never started: created just before the old leader died.
            assignor.note_never_started(
                [c for c, st in connector_states.items() if st is None],
                [t for t, st in task_states.items() if st is None],
            )
        held = ("RUNNING", "PAUSED", "RESTARTING")
        statuses = [*connector_states.values(), *task_states.values()]
        if any(st is not None and st.state.value in held for st in statuses):
            return
        log.info(
            "Departed workers released their work cleanly (%d connectors, %d tasks); reassigning it now instead "
            "of after scheduled.rebalance.max.delay.ms",
            len(unreported_c),
            len(unreported_t),
        )
        assignor.scheduled_rebalance = max(1, int(assignor.clock()))

    def _note_rebalance_started(self) -> None:
        if self._runtime_metrics is not None and not self._rebalancing:
            self._rebalancing = True
            self._safely(self._runtime_metrics.rebalance_started)

    def _rebalance_success(self) -> None:
        if self._runtime_metrics is not None:  # every completed rebalance counts; duration if its start was seen
            self._rebalancing = False
            self._safely(self._runtime_metrics.rebalance_completed)
        leader = self.is_leader()
        if leader != self._was_leader:
            self._was_leader = leader
            if leader and self._on_became_leader is not None:
                self._safely(self._on_became_leader)
            for listener in list(self._leadership_listeners):
                self._safely(lambda lst=listener: lst(leader))  # type: ignore[misc]

    @staticmethod
    def _safely(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("Leadership hook failed")

    def add_leadership_listener(self, listener: Callable[[bool], None]) -> None:
        self._leadership_listeners.append(listener)

    def _read_config_to_end(self, timeout_s: float) -> bool:
        log.info("Reading to the end of the config topic (at offset %d)", self._config_state.offset)
        try:
            self.config_store.refresh(timeout_s)
        except (TimeoutError, FutureTimeout, ConnectError) as e:
            log.warning("Didn't reach the end of the config topic quickly enough: %s", e)
            self._backoff()
            return False
        self._config_state = self.config_store.snapshot()
        self._backoff_retries = BACKOFF_RETRIES
        log.info("Finished reading the config topic; config offset %d", self._config_state.offset)
        return True

    def _refresh_config_snapshot(self, timeout_s: float) -> bool:
        """Read the config topic to its end without the rebalance back-off (Java ``refreshConfigSnapshot``)."""
        try:
            self.config_store.refresh(timeout_s)
        except (TimeoutError, FutureTimeout, ConnectError) as e:
            log.warning("Didn't reach the end of the config topic quickly enough: %s", e)
            self._can_read_configs = False
            return False
        self._config_state = self.config_store.snapshot()
        return True

    def _backoff(self) -> None:
        """Cooperative protocols back off in fractions of the max delay, then give up their work (Java)."""
        if self._protocol is ConnectProtocol.EAGER:
            self._stopping.wait(self.config.worker_unsync_backoff_s)
            return
        if self._backoff_retries > 0:
            self._stopping.wait(self.config.scheduled_rebalance_max_delay_ms / 10 / self._backoff_retries / 1000.0)
            self._backoff_retries -= 1
            return
        log.info("Revoking the running assignment: this worker has not caught up with the config topic after %d "
                 "retries", BACKOFF_RETRIES)  # fmt: skip
        self._stop_work(set(self._running.connectors), set(self._running.tasks))
        self._backoff_retries = BACKOFF_RETRIES

    # ------------------------------------------------------------------- start/stop work

    def _start_work(self) -> None:
        a = self._assignment
        connectors = set(a.connectors)
        tasks = set(a.tasks)
        log.info("Starting connectors and tasks using config offset %d", a.offset)
        self._running.tasks -= self._tasks_to_restart
        self._tasks_to_restart.clear()
        if self._protocol is ConnectProtocol.EAGER:
            self._running = _Running()
        for name in sorted(connectors - self._running.connectors):
            self._start_connector(name)
        for task in sorted(tasks - self._running.tasks):
            self._start_task(task)
        self._running = _Running(set(connectors), set(tasks))
        log.info("Finished starting connectors and tasks")

    def _start_connector(self, name: str) -> None:
        props = self._config_state.connector_configs.get(name)
        if props is None:
            return
        target = self._config_state.target_state(name) or TargetState.STARTED
        log.info("Starting connector %s", name)

        def on_state(error: BaseException | None, state: TargetState | None) -> None:
            if error is not None:
                log.error("Failed to start connector %s: %s", name, error)
                return
            if state is TargetState.STARTED:
                self._add_request(lambda: self._reconfigure_with_retry(name, 0))

        try:
            self.worker.start_connector(name, dict(props), self, self.status, target, on_state)
        except Exception as e:
            log.exception("Unexpected error starting connector %s", name)
            self.status.on_failure(name, e)

    def _start_task(self, task: ConnectorTaskId) -> None:
        conn_props = self._config_state.connector_configs.get(task.connector)
        task_props = self._config_state.task_config(task)
        if conn_props is None or task_props is None:
            log.warning("Not starting task %s: its configuration is gone", task)
            return
        if (
            self._exactly_once
            and common.connector_type(conn_props) == "source"
            and not may_start_without_fencing(self._config_state, task.connector)
        ):
            self._start_after_fencing(task)
            return
        self._start_task_now(task, conn_props, task_props)

    def _start_task_now(self, task: ConnectorTaskId, conn_props: dict[str, str], task_props: dict[str, str]) -> None:
        target = self._config_state.target_state(task.connector) or TargetState.STARTED
        log.info("Starting task %s", task)
        try:
            self.worker.start_source_task(task, conn_props, task_props, self.status, target,
                                          len(self._config_state.tasks(task.connector)))  # fmt: skip
        except Exception as e:
            log.exception("Couldn't start task %s; it will not run until reconfigured", task)
            self.status.on_task_failure(task, e)

    def _stop_work(self, connectors: set[str], tasks: set[ConnectorTaskId]) -> None:
        if tasks:
            self.worker.stop_and_await_tasks(sorted(tasks))
        if connectors:
            self.worker.stop_and_await_connectors(sorted(connectors))
        self._running.connectors -= connectors
        self._running.tasks -= tasks

    # ------------------------------------------------------------------- zombie fencing (KIP-618)

    def _start_after_fencing(self, task: ConnectorTaskId, attempt: int = 0) -> None:
        """Start ``task`` once a round of fencing covers its connector's task configs (Java's preflight).

        One round in flight per task and task-config generation; a round for an older generation
        that completes later finds the generation changed and starts nothing.
        """
        generation = self._config_state.task_config_generation(task.connector)
        if attempt == 0:
            if task in self._tasks_awaiting_fencing and self._tasks_awaiting_fencing[task] == generation:
                return
            log.info("Task %s waits for a round of zombie fencing before it starts", task)
        self._tasks_awaiting_fencing[task] = generation

        def done(error: BaseException | None) -> None:  # herder thread
            if self._tasks_awaiting_fencing.get(task, -2) != generation:
                return  # superseded by a round for a newer generation
            if error is None and not self._refresh_config_snapshot(self._sync_timeout_s):
                error = ConnectError("Failed to read to end of config topic")
            if not self._still_ours(task, generation):
                # Revoked, or new task configs: the rebalance they cause starts the task again if it is ours.
                del self._tasks_awaiting_fencing[task]
                log.info("Not starting task %s: revoked or reconfigured during its round of zombie fencing", task)
                return
            if error is not None and attempt + 1 < FENCING_ATTEMPTS:
                delay = FENCING_BACKOFF_INITIAL_S * (2**attempt)
                log.warning("Zombie fencing for task %s failed (%s); retrying in %.1fs", task, error, delay)
                self._add_request(lambda: self._start_after_fencing(task, attempt + 1), delay)
                return
            del self._tasks_awaiting_fencing[task]
            self._start_fenced_task(task, generation, error)

        def report(error: BaseException | None) -> None:  # any thread
            self._add_request(lambda: done(error))

        if self.is_leader():
            try:
                fencing = self._fence_as_leader(task.connector)
            except Exception as e:
                done(e)
                return
            fencing.add_done_callback(lambda f: report(f.exception()))
            return
        try:
            url, headers = self._fence_request_to_leader(task.connector)
        except Exception as e:
            done(e)
            return

        def forward() -> None:
            try:
                log.debug("Forwarding zombie fencing request for connector %s to the leader at %s", task.connector, url)
                self._forward_fence(url, headers)
            except Exception as e:
                report(e)
                return
            report(None)

        # Never block the herder thread on the leader (it may be waiting for this worker in a rebalance).
        self._forwarding(forward)

    def _forwarding(self, action: Callable[[], None]) -> None:
        try:
            self._forward_pool.submit(action)
        except RuntimeError:  # the herder is stopping
            log.debug("Not forwarding: the herder is stopping")

    def _fence_request_to_leader(self, connector: str) -> tuple[str, dict[str, str]]:
        url = self._leader_url()
        if not url:
            raise ConnectError("Request to leader to perform zombie fencing failed: no known leader URL")
        headers: dict[str, str] = {}
        if self._sessioned():
            with self._lock:
                key = self._session_key
            if key is None:
                raise ConnectError("No session key yet to sign the zombie fencing request sent to the leader")
            headers = signature_headers(key, self.config.signature_algorithm, b"")
        target = f"{url.rstrip('/')}{namespace_path(self._namespace)}/connectors/{quote_segment(connector)}/fence"
        return target, headers

    def _still_ours(self, task: ConnectorTaskId, generation: int | None) -> bool:
        assigned = self._assignment is not None and task in set(self._assignment.tasks)
        return assigned and self._config_state.task_config_generation(task.connector) == generation

    def _start_fenced_task(self, task: ConnectorTaskId, generation: int | None, error: BaseException | None) -> None:
        """After the round of fencing (and a read of the config topic): start the task, or report the error."""
        assigned = self._assignment is not None and task in set(self._assignment.tasks)
        if not assigned or task in self.worker.task_ids():
            log.info("Not starting task %s after zombie fencing: it is no longer assigned here or already running",
                     task)  # fmt: skip
            return
        if error is not None:
            log.error("Failed to perform zombie fencing for task %s: %s", task, error)
            message = f"Failed to perform zombie fencing: {error}"
            wrapped = error if isinstance(error, ConnectError) else ConnectError(message)
            self.status.on_task_failure(task, wrapped)
            return
        conn_props = self._config_state.connector_configs.get(task.connector)
        task_props = self._config_state.task_config(task)
        if conn_props is None or task_props is None:
            log.warning("Not starting task %s: its configuration is gone", task)
            return
        self._start_task_now(task, conn_props, task_props)

    def _fence_as_leader(self, connector: str) -> Future[None]:
        """One round of fencing for ``connector`` (herder thread); the future completes after the record is written."""
        if not self.is_leader():
            raise NotLeaderError("Only the leader may perform zombie fencing.", self._leader_url())
        props = self._config_state.connector_configs.get(connector)
        if props is None:
            raise NotFoundError(f"Connector {connector} not found")
        if common.connector_type(props) != "source":
            raise BadRequestError(f"Connector {connector} is not a source connector")
        if not self._refresh_config_snapshot(self._sync_timeout_s):
            raise ConnectError("Failed to read to end of config topic before performing zombie fencing")
        plan = plan_fencing(self._config_state, connector)
        if plan.fence > 0:
            with self._lock:
                active = self._active_fencings.get(connector)
                if active is not None:
                    return active
                active = self._active_fencings[connector] = Future()
            ids = transactional_ids_to_fence(self.config.group_id, connector, plan.fence)
            self._fencing_pool.submit(self._run_fencing, connector, ids, dict(props), plan.record, plan.generation,
                                      active)  # fmt: skip
            return active
        done: Future[None] = Future()
        if plan.record is not None:
            log.info("No zombies to fence for connector %s (first exactly-once generation, or one task before and "
                     "after); writing its task count record", connector)  # fmt: skip
            self.config_store.put_task_count_record(connector, plan.record)
        done.set_result(None)
        return done

    def _run_fencing(self, connector: str, ids: list[str], props: dict[str, str], record: int | None,
                     generation: int | None, active: Future[None]) -> None:  # fmt: skip
        """Fencing pool: fence the ids, then write the record on the herder thread."""
        try:
            self._zombie_fencer(connector, ids, props)
        except BaseException as e:
            error: BaseException = e
            self._add_request(lambda: self._finish_fencing(connector, active, error))
            return
        self._add_request(lambda: self._write_fencing_record(connector, record, generation, active))

    def _write_fencing_record(self, connector: str, record: int | None, generation: int | None,
                              active: Future[None]) -> None:  # fmt: skip
        if active.done():
            return  # cancelled by newer task configs
        error: BaseException | None = None
        try:
            if not self._refresh_config_snapshot(self._sync_timeout_s):
                raise ConnectError("Failed to read to end of config topic")
            current = self._config_state.task_config_generation(connector)
            if current is not None and (generation is None or current > generation):
                raise RestError(409, "Fencing failed because new task configurations were generated for the connector")
            if not active.done() and record is not None:
                self.config_store.put_task_count_record(connector, record)
        except BaseException as e:
            error = e
        self._finish_fencing(connector, active, error)

    def _finish_fencing(self, connector: str, active: Future[None], error: BaseException | None) -> None:
        with self._lock:
            if self._active_fencings.get(connector) is active:
                del self._active_fencings[connector]
        _complete(active, error)

    # ------------------------------------------------------------------- rebalance callbacks (herder thread)

    def _on_assigned(self, assignment: Any, generation: int) -> None:
        log.info("Joined group at generation %d and got assignment: leader=%s connectors=%s tasks=%s "
                 "revoked=%s/%s delay=%sms offset=%s", generation, getattr(assignment, "leader", None),
                 sorted(assignment.connectors), sorted(str(t) for t in assignment.tasks),
                 sorted(getattr(assignment, "revoked_connectors", ()) or ()),
                 sorted(str(t) for t in getattr(assignment, "revoked_tasks", ()) or ()),
                 getattr(assignment, "delay", 0), assignment.offset)  # fmt: skip
        with self._lock:
            self._assignment = assignment
            self._generation = generation
            self._member_id = str(getattr(self._member, "member_id", "") or self._member_id)
            delay = int(getattr(assignment, "delay", 0) or 0)
            self._scheduled_rebalance = time.monotonic() + delay / 1000.0 if delay > 0 else float("inf")
            self._rebalance_resolved = False
        if self.is_leader():
            self._clean_deleted_statuses()

    def _on_revoked(self, leader: str, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> None:
        self._note_rebalance_started()
        conns, tids = set(connectors), set(tasks)
        if not conns and not tids:
            return
        log.info("Revoking connectors %s and tasks %s", sorted(conns), sorted(str(t) for t in tids))
        self._stop_work(conns, tids)
        try:
            self.status_store.flush()  # statuses reach the topic before this worker rejoins
        except Exception:
            log.exception("Failed to flush the status store after revocation")
        log.info("Finished stopping revoked connectors and tasks")

    def _clean_deleted_statuses(self) -> None:
        """The leader deletes statuses of removed connectors/tasks after the rebalance (Java)."""
        snapshot = self.config_store.snapshot()
        try:
            for connector in self.status_store.connectors():
                if connector not in snapshot.connector_configs:
                    self.status.on_deletion(connector)
                    continue
                remaining = set(snapshot.tasks(connector))
                for ts in self.status_store.get_all_tasks(connector):
                    if ts.id not in remaining and ts.state.value != "DESTROYED":
                        self.status.on_task_deletion(ts.id)
        except Exception:
            log.exception("Failed to clean statuses of deleted connectors")

    # ------------------------------------------------------------------- config updates

    def _process_config_updates(self) -> bool:
        with self._lock:
            if not (
                self._needs_reconfig_rebalance
                or self._connector_config_updates
                or self._target_state_changes
                or self._task_config_updates
            ):
                return False
            self._config_state = self.config_store.snapshot()
            should_return = False
            if self._needs_reconfig_rebalance:
                assert self._member is not None
                self._member.request_rejoin()
                self._needs_reconfig_rebalance = False
                should_return = True
            conn_updates, self._connector_config_updates = self._connector_config_updates, set()
            state_changes, self._target_state_changes = self._target_state_changes, set()
            task_updates, self._task_config_updates = self._task_config_updates, set()
        local_connectors = set(self._assignment.connectors) if self._assignment is not None else set()
        for name in sorted(conn_updates & local_connectors):
            remains = name in self._config_state.connector_configs
            log.info("Handling connector-only config update by %s connector %s",
                     "restarting" if remains else "stopping", name)  # fmt: skip
            self.worker.stop_and_await_connectors([name])
            if remains:
                self._start_connector(name)
        for name in sorted(state_changes):
            if name not in self._config_state.connector_configs:
                continue
            target = self._config_state.target_state(name) or TargetState.STARTED

            def on_state(error: BaseException | None, state: TargetState | None, _name: str = name) -> None:
                if error is None and state is TargetState.STARTED:
                    self.request_task_reconfiguration(_name)

            self.worker.set_target_state(name, target, on_state)
        if task_updates:
            connectors = {t.connector for t in task_updates}
            local_tasks = set(self._assignment.tasks) if self._assignment is not None else set()
            to_stop = {t for t in local_tasks if t.connector in connectors}
            if to_stop:
                log.info("Stopping tasks %s after a task config update; they restart after the rebalance if still "
                         "assigned here", sorted(str(t) for t in to_stop))  # fmt: skip
                self.worker.stop_and_await_tasks(sorted(to_stop))
                self._tasks_to_restart |= to_stop
        return should_return

    # listener side (config store consumer thread)

    def _on_connector_config_update(self, connector: str, removed: bool) -> None:
        with self._lock:
            known = connector in self._config_state.connector_configs
            if removed:
                if known:
                    self._needs_reconfig_rebalance = True
                else:
                    self._connector_config_updates.add(connector)
            elif not known:
                self._needs_reconfig_rebalance = True
            else:
                self._connector_config_updates.add(connector)
        self._wakeup()

    def _on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        with self._lock:
            self._needs_reconfig_rebalance = True
            self._task_config_updates.update(tasks)
            connectors = {t.connector for t in tasks}
            cancelled = [self._active_fencings.pop(c) for c in connectors if c in self._active_fencings]
        for fencing in cancelled:
            _complete(fencing, RestError(409, "Failed to complete zombie fencing because a new set of task configs was "
                                              "generated"))  # fmt: skip
        self._wakeup()

    def _on_target_state_change(self, connector: str) -> None:
        with self._lock:
            self._target_state_changes.add(connector)
        self._wakeup()

    def _on_session_key_update(self, key: dict[str, Any]) -> None:
        sk = SessionKey.from_map(key)
        with self._lock:
            self._session_key = sk
            ttl = self.config.key_ttl_ms
            self._key_expiration = sk.creation_timestamp + ttl if ttl > 0 else float("inf")
        log.info("Session key updated")

    def _on_restart_request(self, request: RestartRequest) -> None:
        with self._lock:
            existing = self._pending_restarts.get(request.connector)
            if existing is None or _impact(request) > _impact(existing):
                self._pending_restarts[request.connector] = request
        self._wakeup()

    # ------------------------------------------------------------------- session keys

    def _maybe_rotate_session_key(self) -> None:
        if not self._sessioned() or not self.is_leader():
            return
        with self._lock:
            if self._session_key is None and self._config_state.session_key is not None:
                self._on_session_key_update(self._config_state.session_key)
            key, expiration = self._session_key, self._key_expiration
        now_ms = int(time.time() * 1000)
        algorithm = self.config.key_generation_algorithm
        if (
            key is not None
            and expiration > now_ms
            and key.algorithm == algorithm
            and len(key.key) * 8 == self.config.key_size_bits
        ):
            return
        log.info("Distributing a new session key")
        new_key = SessionKey.generate(algorithm, self.config.key_size_bits, now_ms)
        try:
            self.config_store.put_session_key(new_key.to_map())
        except Exception:
            log.exception("Failed to write a new session key; reading the config topic before retrying")
            self._can_read_configs = False
            return
        self._on_session_key_update(new_key.to_map())

    # ------------------------------------------------------------------- task reconfiguration

    def request_task_reconfiguration(self, connector: str) -> None:
        """Called by a connector (any thread) when its tasks must be regenerated."""
        self._add_request(lambda: self._reconfigure_with_retry(connector, 0))

    def _reconfigure_with_retry(self, connector: str, attempt: int) -> None:
        def on_error(error: BaseException) -> None:
            if isinstance(error, NotFoundError):
                return
            from connect_core.runtime.worker import TooManyTasksError

            if isinstance(error, TooManyTasksError):
                log.debug("Connector %s generated too many tasks; not retrying", connector)
                return
            delay = min(RECONFIGURE_BACKOFF_INITIAL_S * (2**attempt), RECONFIGURE_BACKOFF_MAX_S)
            log.error("Failed to reconfigure connector's tasks (%s), retrying in %.1fs: %s", connector, delay, error)
            self._add_request(lambda: self._reconfigure_with_retry(connector, attempt + 1), delay)

        try:
            self._reconfigure_connector(connector, on_error)
        except Exception as e:
            on_error(e)

    def _reconfigure_connector(self, connector: str, on_error: Callable[[BaseException], None]) -> None:
        if not self.worker.is_running(connector):
            log.info("Skipping reconfiguration of connector %s since it is not running", connector)
            return
        if self._config_state.target_state(connector) is not TargetState.STARTED:
            log.info("Skipping reconfiguration of connector %s since its target state is %s", connector,
                     self._config_state.target_state(connector))  # fmt: skip
            return
        props = self._config_state.connector_configs.get(connector)
        if props is None:
            return
        task_props = self.worker.connector_task_configs(connector, props)
        if not common.task_configs_changed(self._config_state, connector, task_props, None):
            return
        if self.is_leader():
            self._write_task_configs(connector, task_props)
            return
        url = self._leader_url()
        if not url:
            raise ConnectError("Request to leader to reconfigure connector tasks failed: no known leader URL")
        body = json.dumps(task_props).encode("utf-8")
        headers: dict[str, str] = {}
        if self._sessioned():
            with self._lock:
                key = self._session_key
            if key is None:
                raise ConnectError("No session key yet to sign the task configs sent to the leader")
            headers = signature_headers(key, self.config.signature_algorithm, body)
        target = f"{url.rstrip('/')}{namespace_path(self._namespace)}/connectors/{quote_segment(connector)}/tasks"

        def forward() -> None:
            try:
                log.debug("Forwarding task configurations of connector %s to the leader at %s", connector, url)
                self._forward_task_configs(target, body, headers)
            except Exception as e:
                # Retry on the herder thread (the callback must not touch herder state here).
                error: BaseException = e
                self._add_request(lambda: on_error(error))

        # Never block the herder thread on the leader: it could be the one we wait for in a rebalance.
        self._forward_pool.submit(forward)

    def _write_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None:
        if configs and self._config_state.target_state(connector) is TargetState.STOPPED:
            raise BadRequestError(f"Cannot submit non-empty set of task configs for stopped connector {connector}")
        log.info("Writing %d task configs for connector %s", len(configs), connector)
        self.config_store.put_task_configs(connector, configs)

    # ------------------------------------------------------------------- restarts

    def _process_restart_requests(self) -> None:
        with self._lock:
            pending, self._pending_restarts = self._pending_restarts, {}
        for request in pending.values():
            try:
                self._do_restart(request)
            except Exception:
                log.exception("Failed to process %s", request)

    def _do_restart(self, request: RestartRequest) -> None:
        name = request.connector
        if name not in self._config_state.connector_configs:
            return
        plan = common.build_restart_plan(request, self.status_store, self._config_state.connector_configs.get(name))
        if plan is None:
            return
        assigned_c = set(self._assignment.connectors) if self._assignment is not None else set()
        assigned_t = set(self._assignment.tasks) if self._assignment is not None else set()
        if plan.restart_connector and name in assigned_c:
            self.status.on_restart(name)
            self.worker.stop_and_await_connectors([name])
            self._start_connector(name)
        tasks = [t for t in plan.task_ids if t in assigned_t]
        if tasks:
            for t in tasks:
                self.status.on_task_restart(t)
            self.worker.stop_and_await_tasks(tasks)
            for t in tasks:
                self._start_task(t)

    # ============================================================================ helpers

    def is_leader(self) -> bool:
        # The member id as of the last assignment: leadership holds during a rebalance (Java).
        a = self._assignment
        return a is not None and bool(self._member_id) and getattr(a, "leader", None) == self._member_id

    def _sessioned(self) -> bool:
        """Internal requests are signed when the whole group speaks the sessioned protocol (V2)."""
        if self._protocol is not ConnectProtocol.SESSIONED:
            return False
        version = getattr(self._member, "current_protocol_version", 2)
        return isinstance(version, int) and version >= 2

    def _leader_url(self) -> str | None:
        a = self._assignment
        return None if a is None else (getattr(a, "leader_url", None) or None)

    def _not_leader(self, what: str) -> NotLeaderError:
        return NotLeaderError(f"Only the leader can {what}.", self._leader_url())

    def _add_request(self, action: Callable[[], Any], delay_s: float = 0.0) -> Future[Any]:
        req, first = self._requests.add(action, delay_s)
        if first:
            self._wakeup()
        return req.future

    def _call(self, action: Callable[[], Any], timeout_s: float = REQUEST_TIMEOUT_S) -> Any:
        """Run ``action`` on the herder thread and return its result (re-raising its error)."""
        if threading.current_thread() is self._thread:
            return action()
        if self._stopping.is_set():
            raise ConnectError("The herder is stopping")
        future = self._add_request(action)
        try:
            return future.result(timeout=timeout_s)
        except FutureTimeout:
            raise RestError(500, "Request timed out") from None

    def _check_rebalance_needed(self) -> None:
        with self._lock:
            needed = self._needs_reconfig_rebalance
        if needed:
            raise RestError(409, "Request cannot be completed because a rebalance is expected")

    def _require(self, name: str) -> dict[str, str]:
        props = self._config_state.connector_configs.get(name)
        if props is None:
            raise NotFoundError(f"Connector {name} not found")
        return props

    # ============================================================================ Herder API

    def worker_id(self) -> str:
        return self._worker_id

    def kafka_cluster_id(self) -> str | None:
        return self._cluster_id

    def generation(self) -> int:
        return self._generation

    def connectors(self) -> list[str]:
        def run() -> list[str]:
            self._check_rebalance_needed()
            return self._config_state.connectors()

        return list(self._call(run))

    def _info(self, name: str) -> ConnectorInfo:
        props = self._require(name)
        return ConnectorInfo(name, dict(props), self._config_state.tasks(name), common.connector_type(props))

    def connector_info(self, name: str) -> ConnectorInfo:
        def run() -> ConnectorInfo:
            self._check_rebalance_needed()
            return self._info(name)

        result: ConnectorInfo = self._call(run)
        return result

    def connector_config(self, name: str) -> dict[str, str]:
        return dict(self._call(lambda: dict(self._require(name))))

    def validate_connector_config(self, config: dict[str, str]) -> ConfigInfos:
        return common.validate_connector_config(config, self.config.override_policy(),
                                                self.config.topic_creation_enable,
                                                self.worker.resolve_config,
                                                self.config.exactly_once_source_enabled)  # fmt: skip

    def put_connector_config(
        self, name: str, config: dict[str, str], allow_replace: bool, initial_state: TargetState | None = None
    ) -> tuple[bool, ConnectorInfo]:
        # Validation runs on the caller's thread (it can be slow); the write happens on the herder thread.
        infos = self.validate_connector_config(config)
        message = common.config_errors_message(infos)
        if message is not None:
            raise BadRequestError(message)

        def run() -> tuple[bool, ConnectorInfo]:
            if not self.is_leader():
                raise self._not_leader("set connector configs")
            exists = name in self._config_state.connector_configs
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            self.config_store.put_connector_config(name, dict(config), initial_state)
            info = ConnectorInfo(name, dict(config), self._config_state.tasks(name), common.connector_type(config))
            return (not exists, info)

        result: tuple[bool, ConnectorInfo] = self._call(run)
        return result

    def patch_connector_config(self, name: str, patch: dict[str, str | None]) -> ConnectorInfo:
        def current() -> dict[str, str]:
            if not self.is_leader():
                raise self._not_leader("set connector configs")
            return dict(self._require(name))

        base = self._call(current)
        patched = dict(base)
        for k, v in patch.items():
            if v is None:
                patched.pop(k, None)
            else:
                patched[k] = v
        return self.put_connector_config(name, patched, True)[1]

    def delete_connector_config(self, name: str) -> None:
        def run() -> None:
            if not self.is_leader():
                raise self._not_leader("delete connector configs")
            self._require(name)
            self.config_store.remove_connector_config(name)

        self._call(run)

    def connector_status(self, name: str) -> ConnectorStateInfo:
        return common.connector_state_info(name, self.status_store, self._config_state.connector_configs.get(name))

    def task_status(self, task: ConnectorTaskId) -> AbstractStatus:
        return common.task_state(task, self.status_store)

    def task_configs(self, name: str) -> list[TaskInfo]:
        def run() -> list[TaskInfo]:
            self._check_rebalance_needed()
            self._require(name)
            return [
                TaskInfo(t, dict(self._config_state.task_config(t) or {})) for t in self._config_state.tasks(name)
            ]

        return list(self._call(run))

    def put_task_configs(
        self, name: str, configs: list[dict[str, str]], signature: InternalRequestSignature | None
    ) -> None:
        """The internal endpoint a follower calls with its connector's task configs."""
        if self._sessioned():
            with self._lock:
                key = self._session_key
            check_signature(signature, self.config.verification_algorithms, key)

        def run() -> None:
            if not self.is_leader():
                raise self._not_leader("write task configurations")
            self._require(name)
            self._write_task_configs(name, configs)

        self._call(run)

    def fence_zombies(self, name: str, signature: InternalRequestSignature | None) -> None:
        """``PUT /connectors/{name}/fence``: one round of fencing on the leader (a follower names the leader)."""
        if self.config.exactly_once_source_support is ExactlyOnceSourceSupport.DISABLED:
            raise BadRequestError(EXACTLY_ONCE_DISABLED_MESSAGE)
        if self._sessioned():
            with self._lock:
                key = self._session_key
            check_signature(signature, self.config.verification_algorithms, key)
        fencing: Future[None] = self._call(lambda: self._fence_as_leader(name))
        try:
            fencing.result(timeout=REQUEST_TIMEOUT_S)
        except FutureTimeout:
            raise RestError(500, "Request timed out") from None
        except ConnectError:
            raise
        except Exception as e:
            raise ConnectError(f"Failed to perform zombie fencing: {e}") from e

    def restart_connector_and_tasks(self, request: RestartRequest) -> ConnectorStateInfo | None:
        def run() -> ConnectorStateInfo | None:
            if not self.is_leader():
                raise self._not_leader("process restart requests")
            props = self._require(request.connector)
            plan = common.build_restart_plan(request, self.status_store, props)
            if plan is None:
                raise NotFoundError(f"Status for connector {request.connector} not found")
            put = getattr(self.config_store, "put_restart_request", None)
            if put is None:
                raise ConnectError("The config store cannot record restart requests")
            put(request)
            return plan.state

        result: ConnectorStateInfo | None = self._call(run)
        return result

    def restart_task(self, task: ConnectorTaskId) -> None:
        def run() -> None:
            self._require(task.connector)
            if task not in self._config_state.tasks(task.connector):
                raise NotFoundError(f"Unknown task: {task}")
            if self._assignment is not None and task in set(self._assignment.tasks):
                self.status.on_task_restart(task)
                self.worker.stop_and_await_tasks([task])
                self._start_task(task)
                return
            owner = self.status_store.get_task(task)
            if owner is None or owner.worker_id == self._worker_id:
                raise RestError(409, f"Cannot restart task {task}: it is not assigned to any worker yet")
            raise NotLeaderError(f"Task {task} is assigned to worker {owner.worker_id}", f"http://{owner.worker_id}/")

        self._call(run)

    def _put_target_state(self, name: str, state: TargetState) -> None:
        def run() -> None:
            self._require(name)
            self.config_store.put_target_state(name, state)

        self._call(run)

    def pause_connector(self, name: str) -> None:
        # As Java: any worker may write PAUSED/STARTED target states (no task configs are involved).
        self._put_target_state(name, TargetState.PAUSED)

    def resume_connector(self, name: str) -> None:
        self._put_target_state(name, TargetState.STARTED)

    def stop_connector(self, name: str) -> None:
        def run() -> None:
            self._require(name)
            if not self.is_leader():
                raise self._not_leader("transition connectors to the STOPPED state")
            self._write_task_configs(name, [])
            self.config_store.put_target_state(name, TargetState.STOPPED)
            if not self._read_config_to_end(self._sync_timeout_s):
                log.warning("Failed to read to the end of the config topic after stopping connector %s", name)

        self._call(run)

    def connector_active_topics(self, name: str) -> list[str]:
        self._require(name)
        return sorted(t.topic for t in self.status_store.get_topics(name))

    def reset_connector_active_topics(self, name: str) -> None:
        self._require(name)
        self.status_store.delete_topics(name)

    def connector_offsets(self, name: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        props = dict(self._call(lambda: self._require(name)))
        return [(p, o) for p, o in self.worker.connector_offsets(name, props) if o is not None]

    def _modify_offsets(self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]] | None) -> str:
        def check() -> dict[str, str]:
            props = self._require(name)
            if not self.is_leader():
                raise self._not_leader("modify connector offsets")
            if self._config_state.target_state(name) is not TargetState.STOPPED:
                raise BadRequestError(
                    f"Connectors must be in the STOPPED state before their offsets can be modified. This can be done "
                    f"for the specified connector by issuing a 'PUT' request to the '/connectors/{name}/stop' endpoint"
                )
            return dict(props)

        props = self._call(check)
        if self._exactly_once and common.connector_type(props) == "source":
            # As Java: no task of an older generation may commit offsets after they were modified.
            log.info("Performing a round of zombie fencing before modifying offsets for source connector %s", name)
            try:
                fencing: Future[None] = self._call(lambda: self._fence_as_leader(name))
                fencing.result(timeout=REQUEST_TIMEOUT_S)
            except (RestError, NotLeaderError, NotFoundError, BadRequestError):
                raise
            except Exception as e:
                raise ConnectError("Failed to perform zombie fencing for source connector prior to modifying offsets: "
                                   f"{e}") from e  # fmt: skip
            props = self._call(check)  # the fencing ran apart from the checks: conditions may have changed
        return self.worker.modify_connector_offsets(name, props, offsets)

    def alter_connector_offsets(self, name: str, offsets: list[tuple[dict[str, Any], dict[str, Any] | None]]) -> str:
        return self._modify_offsets(name, offsets)

    def reset_connector_offsets(self, name: str) -> str:
        return self._modify_offsets(name, None)

    def connector_plugins(self, connectors_only: bool = True) -> list[PluginInfo]:
        return common.plugin_infos(connectors_only)

    # ------------------------------------------------------------------- test/ops introspection

    def running_work(self) -> tuple[set[str], set[ConnectorTaskId]]:
        return set(self.worker.connector_names()), set(self.worker.task_ids())


# ---------------------------------------------------------------------------------- adapters


class _ConfigListener:
    """ConfigUpdateListener: runs on the config store's consumer thread; only records and wakes."""

    def __init__(self, herder: DistributedHerder) -> None:
        self._h = herder

    def on_connector_config_update(self, connector: str) -> None:
        log.info("Connector %s config updated", connector)
        self._h._on_connector_config_update(connector, removed=False)

    def on_connector_config_remove(self, connector: str) -> None:
        log.info("Connector %s config removed", connector)
        self._h._on_connector_config_update(connector, removed=True)

    def on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        log.info("Tasks %s configs updated", [str(t) for t in tasks])
        self._h._on_task_config_update(tasks)

    def on_connector_target_state_change(self, connector: str) -> None:
        log.info("Connector %s target state change", connector)
        self._h._on_target_state_change(connector)

    def on_session_key_update(self, key: dict[str, Any]) -> None:
        self._h._on_session_key_update(key)

    def on_restart_request(self, request: RestartRequest) -> None:
        log.info("Received and enqueuing %s", request)
        self._h._on_restart_request(request)


class _RebalanceListener:
    def __init__(self, herder: DistributedHerder) -> None:
        self._h = herder

    def on_assigned(self, assignment: Any, generation: int) -> None:
        self._h._on_assigned(assignment, generation)

    def on_revoked(self, leader: str, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> None:
        self._h._on_revoked(leader, connectors, tasks)


def _impact(r: RestartRequest) -> int:
    return (2 if r.include_tasks else 0) + (0 if r.only_failed else 1)


def _without_revocations(a: Any) -> Any:
    try:
        return dataclasses.replace(a, revoked_connectors=(), revoked_tasks=())
    except TypeError:
        return a


def _complete(future: Future[None], error: BaseException | None) -> None:
    """Complete ``future`` unless someone (a cancellation) did already."""
    try:
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
    except InvalidStateError:
        pass
