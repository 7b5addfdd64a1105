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

Pieces in their own modules: the rounds of KIP-618 zombie fencing a task waits for before it starts
(:mod:`~connect_core.herder.distributed.fencing_rounds`), what the REST layer calls
(:mod:`~connect_core.herder.distributed.herder_api`), and the leader's rule that reassigns cleanly released
work at once (:mod:`~connect_core.herder.distributed.release_rule`, the coordinator's ``before_assignment`` hook).
"""

from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import Any, cast

from connect_core.api.errors import (
    BadRequestError,
    ConnectError,
    NotFoundError,
    NotLeaderError,
    RestError,
)
from connect_core.herder import common
from connect_core.herder.distributed.collaborators import (
    Assignment,
    DistributedConfigStore,
    DistributedStatusStore,
    FenceForwarder,
    GroupMember,
    MemberFactory,
    TaskConfigForwarder,
    WorkerLike,
    ZombieFencer,
)
from connect_core.herder.distributed.fencing_rounds import FencingRounds, complete
from connect_core.herder.distributed.herder_api import REQUEST_TIMEOUT_S, HerderApi
from connect_core.herder.distributed.herder_requests import RequestQueue
from connect_core.herder.distributed.leader_configs import DesiredConfigs, LeaderConfigWrites
from connect_core.herder.distributed.leader_forwarding import (
    http_post_task_configs,
    http_put_fence,
    namespace_path,
    quote_segment,
)
from connect_core.herder.distributed.release_rule import ReleaseRule
from connect_core.herder.distributed.session_key import (
    SessionKey,
    signature_headers,
)
from connect_core.herder.distributed.starting_connectors import StartingConnectors
from connect_core.herder.distributed.zombie_fencing import (
    may_start_without_fencing,
)
from connect_core.model import (
    ConnectorTaskId,
    PluginInfo,
    RestartRequest,
    TargetState,
)
from connect_core.runtime.distributed_config import ConnectProtocol, DistributedConfig, ExactlyOnceSourceSupport
from connect_core.runtime.metric_hooks import RebalanceMetrics
from connect_core.runtime.status import StatusRecorder
from connect_core.storage.api import ClusterConfigState

log = logging.getLogger(__name__)

RECONFIGURE_BACKOFF_INITIAL_S = 0.25
RECONFIGURE_BACKOFF_MAX_S = 60.0
BACKOFF_RETRIES = 5
MAX_POLL_WAIT_S = 5.0  # upper bound of one poll (the member is woken up for anything sooner)
ENSURE_ACTIVE_WAIT_S = 5.0  # one attempt to (re)join; the loop retries (stop() wakes it up)


@dataclass
class _Running:
    connectors: set[str] = field(default_factory=set)
    tasks: set[ConnectorTaskId] = field(default_factory=set)


# ---------------------------------------------------------------------------------- herder


class DistributedHerder(HerderApi, FencingRounds):
    def __init__(
        self,
        config: DistributedConfig,
        worker: WorkerLike,
        worker_id: str,
        advertised_url: str,
        config_store: DistributedConfigStore,
        status_store: DistributedStatusStore,
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
        leader_connector_configs: DesiredConfigs | None = None,
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
        # The connector configs the host keeps written (MirrorMaker's dedicated mode); the leader writes them
        # while assigning (see leader_configs), so a fresh start needs no extra rebalance to assign them.
        self._leader_connector_configs = leader_connector_configs
        self._protocol = config.connect_protocol
        self._sync_timeout_s = config.worker_sync_timeout_s

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
        self._assignment: Assignment | None = None
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
        self._starting = StartingConnectors()  # their task-config writes share one rebalance

        # shared with the config store's listener thread (guarded by _lock)
        self._lock = threading.RLock()
        self._needs_reconfig_rebalance = False
        self._reconfig_offset = -1  # config offset after the newest record that asked for that rebalance
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
            complete(fencing, ConnectError("The herder is stopping; zombie fencing not completed"))
        for req in self._requests.drain():
            if not req.future.done():
                req.future.set_exception(ConnectError("The herder is stopping; request not processed"))
        log.info("Herder stopped")

    def _start_services(self) -> None:
        self.worker.start()
        self.status_store.start()
        self.config_store.start()
        self._member = self._member_factory(_RebalanceListener(self), self.config_store.snapshot)
        self._member.set_before_assignment(ReleaseRule(self.status_store, self._sync_timeout_s))
        if self._leader_connector_configs is not None:
            step = LeaderConfigWrites(
                self.config_store,
                self._leader_connector_configs,
                self.validate_connector_config,
                lambda: not self._was_leader,  # read on the group client's thread: set after each rebalance
            )
            self._member.set_leader_config_step(step)

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
        if member is not None:
            try:
                member.wakeup()
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
        hold = self._starting.hold_until()
        if hold is not None:
            deadline = min(deadline, hold)
        if self.is_leader() and self._sessioned() and self._key_expiration < float("inf"):
            deadline = min(deadline, time.monotonic() + max(0.0, self._key_expiration / 1000.0 - time.time()))
        wait = deadline - time.monotonic()
        return max(0.0, min(wait, MAX_POLL_WAIT_S))

    def _handle_rebalance_completed(self) -> bool:
        if self._rebalance_resolved:
            return True
        member = self._member
        assert member is not None and self._assignment is not None
        a = self._assignment
        needs_read = needs_rejoin = False
        if a.error:
            needs_rejoin = True
            if self.is_leader() or self._config_state.offset < a.offset:
                log.warning("Join group completed but the assignment failed (error %s); reading the config topic",
                            a.error)  # fmt: skip
                needs_read = True
        elif self._config_state.offset < a.offset:
            stored = self.config_store.snapshot()  # the store may have read that far already (our own writes)
            if stored.offset >= a.offset:
                self._config_state = stored
            else:
                log.info("Catching up to the assignment's config offset %d (at %d)", a.offset,
                         self._config_state.offset)  # fmt: skip
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
        if a.revoked_connectors or a.revoked_tasks:
            # Revoked work is stopped already; rejoin so the leader can hand it to someone else.
            self._assignment = _without_revocations(a)
            member.request_rejoin()
            return False
        self._rebalance_success()
        return True

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

    @staticmethod
    def _safely(fn: Callable[[], None]) -> None:
        try:
            fn()
        except Exception:
            log.exception("Leadership hook failed")

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
        assert a is not None  # called once a rebalance completed
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
            if error is None and state is TargetState.STARTED:
                self._add_request(lambda: self._reconfigure_with_retry(name, 0))  # before done(): one rebalance
            self._starting.done(name)
            self._wakeup()
            if error is not None:
                log.error("Failed to start connector %s: %s", name, error)

        self._starting.begin(name)
        try:
            self.worker.start_connector(name, dict(props), self, self.status, target, on_state)
        except Exception as e:
            self._starting.done(name)
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
            for name in connectors:
                self._starting.done(name)
        self._running.connectors -= connectors
        self._running.tasks -= tasks

    # ------------------------------------------------------------------- rebalance callbacks (herder thread)

    def _on_assigned(self, assignment: Assignment, generation: int) -> None:
        log.info("Joined group at generation %d and got assignment: leader=%s connectors=%s tasks=%s "
                 "revoked=%s/%s delay=%sms offset=%s", generation, assignment.leader,
                 sorted(assignment.connectors), sorted(str(t) for t in assignment.tasks),
                 sorted(assignment.revoked_connectors), sorted(str(t) for t in assignment.revoked_tasks),
                 assignment.delay, assignment.offset)  # fmt: skip
        with self._lock:
            self._assignment = assignment
            self._generation = generation
            if self._member is not None and self._member.member_id:
                self._member_id = self._member.member_id
            delay = assignment.delay
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
            if self._needs_reconfig_rebalance and self._starting.hold_until() is not None:
                return False  # connectors started here still generate task configs: one rebalance for all
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
                if self._assigned_through(self._reconfig_offset) and not self._task_config_updates:
                    log.info("Config updates up to offset %d are covered by the current assignment (offset %s); "
                             "no rebalance needed", self._reconfig_offset, self._assignment_offset())  # fmt: skip
                else:
                    self._member.request_rejoin()
                    should_return = True
                self._needs_reconfig_rebalance = False
                self._reconfig_offset = -1
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

    def _assignment_offset(self) -> int | None:
        a = self._assignment
        return None if a is None else a.offset

    def _assigned_through(self, offset: int) -> bool:
        """True when the resolved assignment was computed from configs that include ``offset``: the leader
        wrote them while assigning, or a rebalance for another cause came after them. A rebalance for them
        would then assign the same work again."""
        a = self._assignment
        return offset >= 0 and a is not None and not a.error and self._rebalance_resolved and a.offset >= offset

    # listener side (config store consumer thread)

    def _raise_reconfig_rebalance(self) -> None:
        """Needs ``_lock``: called on the store's consumer thread right after it applied the record."""
        self._needs_reconfig_rebalance = True
        self._reconfig_offset = max(self._reconfig_offset, self.config_store.snapshot().offset)

    def _on_connector_config_update(self, connector: str, removed: bool) -> None:
        with self._lock:
            known = connector in self._config_state.connector_configs
            if removed:
                if known:
                    self._raise_reconfig_rebalance()
                else:
                    self._connector_config_updates.add(connector)
            elif not known:
                self._raise_reconfig_rebalance()
            else:
                self._connector_config_updates.add(connector)
        self._wakeup()

    def _on_task_config_update(self, tasks: list[ConnectorTaskId]) -> None:
        with self._lock:
            self._raise_reconfig_rebalance()
            self._task_config_updates.update(tasks)
            connectors = {t.connector for t in tasks}
            cancelled = [self._active_fencings.pop(c) for c in connectors if c in self._active_fencings]
        for fencing in cancelled:
            complete(fencing, RestError(409, "Failed to complete zombie fencing because a new set of task configs was "
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
        return a is not None and bool(self._member_id) and a.leader == self._member_id

    def _sessioned(self) -> bool:
        """Internal requests are signed when the whole group speaks the sessioned protocol (V2)."""
        if self._protocol is not ConnectProtocol.SESSIONED:
            return False
        return self._member is None or self._member.current_protocol_version >= 2

    def _leader_url(self) -> str | None:
        a = self._assignment
        return None if a is None else (a.leader_url or None)

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

    def on_assigned(self, assignment: Assignment, generation: int) -> None:
        self._h._on_assigned(assignment, generation)

    def on_revoked(self, leader: str, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> None:
        self._h._on_revoked(leader, connectors, tasks)


def _impact(r: RestartRequest) -> int:
    return (2 if r.include_tasks else 0) + (0 if r.only_failed else 1)


def _without_revocations(a: Assignment) -> Assignment:
    """The assignment once its revoked work is stopped (assignments are frozen dataclasses)."""
    replaced: Assignment = dataclasses.replace(cast(Any, a), revoked_connectors=(), revoked_tasks=())
    return replaced
