"""KIP-618 zombie fencing as the distributed herder runs it: a round per task before it starts.

A source task of a connector whose latest task configs are not yet covered by a ``tasks-fencing-`` record
starts only after a round of fencing. The leader runs it (it fences the previous generation's transactional
ids off the herder thread, then writes the record); a follower PUTs a signed request to the leader's
``/connectors/{name}/fence`` first. Before starting, the task is checked again: still assigned here, same
task-config generation. The rules of a round are the pure :mod:`~connect_core.herder.distributed.zombie_fencing`;
this mixin keeps the herder-thread bookkeeping of rounds in flight.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Future, InvalidStateError

from connect_core.api.errors import (
    BadRequestError,
    ConnectError,
    NotFoundError,
    NotLeaderError,
    RestError,
)
from connect_core.herder import common
from connect_core.herder.distributed.herder_host import HerderHost
from connect_core.herder.distributed.leader_forwarding import (
    namespace_path,
    quote_segment,
)
from connect_core.herder.distributed.session_key import (
    signature_headers,
)
from connect_core.herder.distributed.zombie_fencing import (
    plan_fencing,
    transactional_ids_to_fence,
)
from connect_core.model import (
    ConnectorTaskId,
)

log = logging.getLogger(__name__)

FENCING_ATTEMPTS = 6  # a task's round of fencing is retried (leader busy, no session key yet), then it FAILS
FENCING_BACKOFF_INITIAL_S = 0.5


class FencingRounds(HerderHost):
    """Mixed into :class:`~connect_core.herder.distributed.herder.DistributedHerder`; runs on its thread."""

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
        complete(active, error)


def complete(future: Future[None], error: BaseException | None) -> None:
    """Complete ``future`` unless someone (a cancellation) did already."""
    try:
        if error is None:
            future.set_result(None)
        else:
            future.set_exception(error)
    except InvalidStateError:
        pass
