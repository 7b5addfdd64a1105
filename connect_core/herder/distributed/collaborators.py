"""What the distributed herder talks to, as protocols: the group membership (Kafka's WorkerCoordinator
behind ``GroupMember``), the assignment it hands out, the worker that runs connectors and tasks, and
the forwarder of task configs to the leader. The real ones are built in
:mod:`~connect_core.herder.distributed.builder`; tests substitute their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from connect_core.model import ConnectorTaskId, RestartRequest, TargetState
from connect_core.storage.api import ClusterConfigState, ConfigBackingStore, StatusBackingStore

if TYPE_CHECKING:
    from connect_core.herder.distributed.coordinator import BeforeAssignment, LeaderConfigStep


class Assignment(Protocol):
    """What a rebalance hands this worker (Java ``ExtendedAssignment``)."""

    @property
    def error(self) -> int: ...  # 0 = no error

    @property
    def leader(self) -> str | None: ...

    @property
    def leader_url(self) -> str | None: ...

    @property
    def offset(self) -> int: ...

    @property
    def connectors(self) -> Iterable[str]: ...

    @property
    def tasks(self) -> Iterable[ConnectorTaskId]: ...

    @property
    def revoked_connectors(self) -> Iterable[str]: ...

    @property
    def revoked_tasks(self) -> Iterable[ConnectorTaskId]: ...

    @property
    def delay(self) -> int: ...  # ms until the leader wants a follow-up rebalance (0: none)


class GroupMember(Protocol):
    """The group membership the herder drives (WorkerGroupMember); callbacks run inside these calls."""

    @property
    def member_id(self) -> str: ...

    @property
    def generation(self) -> int: ...

    def ensure_active(self, timeout_s: float) -> Any: ...

    def poll(self, timeout_s: float) -> Any: ...

    def request_rejoin(self) -> None: ...

    def wakeup(self) -> None:
        """Make a ``poll`` blocked on the herder thread return now (thread-safe)."""
        ...

    @property
    def current_protocol_version(self) -> int:
        """0 eager, 1 compatible, 2 sessioned: what the group agreed on at the last join."""
        ...

    def set_before_assignment(self, hook: BeforeAssignment) -> None:
        """Leader: ``hook`` runs just before each incremental assignment round (the release rule)."""
        ...

    def set_leader_config_step(self, step: LeaderConfigStep) -> None:
        """Leader: ``step`` may write configs before each assignment, which that assignment then covers."""
        ...

    def close(self) -> None: ...


class DistributedStatusStore(StatusBackingStore, Protocol):
    """The status topic as a distributed herder reads it: also on demand, to its end."""

    def read_to_end(self, timeout_s: float | None = None) -> None: ...


class DistributedConfigStore(ConfigBackingStore, Protocol):
    """The config topic as a distributed herder writes it: restart requests too (only the leader writes)."""

    def put_restart_request(self, request: RestartRequest) -> None: ...


class RebalanceListener(Protocol):
    def on_assigned(self, assignment: Assignment, generation: int) -> None: ...

    def on_revoked(self, leader: str, connectors: Iterable[str], tasks: Iterable[ConnectorTaskId]) -> None: ...


# (listener, config snapshot supplier) -> member; the coordinator's leader needs the snapshot to assign.
MemberFactory = Callable[[RebalanceListener, Callable[[], ClusterConfigState]], GroupMember]


class WorkerLike(Protocol):
    """The parts of :class:`connect_core.runtime.worker.Worker` the herder uses."""

    worker_id: str

    def start(self) -> None: ...

    def stop(self) -> None: ...

    def start_connector(self, name: str, props: dict[str, str], herder: Any, listener: Any,
                        target_state: TargetState, callback: Callable[..., None]) -> None: ...  # fmt: skip

    def connector_task_configs(self, name: str, props: Mapping[str, str]) -> list[dict[str, str]]: ...

    def resolve_config(self, props: Mapping[str, str]) -> dict[str, str]: ...

    def stop_and_await_connectors(self, names: Iterable[str]) -> None: ...

    def stop_and_await_tasks(self, ids: Iterable[ConnectorTaskId]) -> None: ...

    def is_running(self, name: str) -> bool: ...

    def set_target_state(self, name: str, state: TargetState, callback: Callable[..., None] | None = None) -> None: ...

    def start_source_task(self, task_id: ConnectorTaskId, conn_props: Mapping[str, str],
                          task_props: Mapping[str, str], listener: Any, target_state: TargetState,
                          num_tasks: int | None = None) -> bool: ...  # fmt: skip

    def connector_names(self) -> set[str]: ...

    def task_ids(self) -> set[ConnectorTaskId]: ...

    def connector_offsets(self, name: str, conn_props: Mapping[str, str],
                          ) -> list[tuple[dict[str, Any], dict[str, Any] | None]]: ...  # fmt: skip

    def modify_connector_offsets(self, name: str, conn_props: Mapping[str, str],
                                 offsets: list[tuple[dict[str, Any], dict[str, Any] | None]] | None,
                                 ) -> str: ...  # fmt: skip


TaskConfigForwarder = Callable[[str, bytes, Mapping[str, str]], None]
FenceForwarder = Callable[[str, Mapping[str, str]], None]
"""PUTs a signed zombie-fencing request (URL, signature headers) to the leader."""

ZombieFencer = Callable[[str, list[str], Mapping[str, str]], None]
"""Fences these transactional ids of a connector (connector, ids, connector config); blocks; raises on failure."""
