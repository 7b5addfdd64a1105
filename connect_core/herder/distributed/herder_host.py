"""What the distributed herder's mixins (fencing rounds, the REST-facing API) use of the herder they are mixed
into: its state and the herder-thread helpers, declared once for the type checker (nothing at run time)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from connect_core.api.errors import NotLeaderError
    from connect_core.herder.distributed.collaborators import (
        Assignment,
        DistributedConfigStore,
        DistributedStatusStore,
        FenceForwarder,
        WorkerLike,
        ZombieFencer,
    )
    from connect_core.herder.distributed.session_key import SessionKey
    from connect_core.model import ConnectorTaskId
    from connect_core.runtime.distributed_config import DistributedConfig
    from connect_core.runtime.status import StatusRecorder
    from connect_core.storage.api import ClusterConfigState


class HerderHost:
    """The base of the herder's mixins; :class:`DistributedHerder` provides all of it."""

    if TYPE_CHECKING:
        config: DistributedConfig
        worker: WorkerLike
        config_store: DistributedConfigStore
        status_store: DistributedStatusStore
        status: StatusRecorder
        _worker_id: str
        _cluster_id: str | None
        _generation: int
        _namespace: tuple[str, ...]
        _lock: threading.RLock
        _session_key: SessionKey | None
        _config_state: ClusterConfigState
        _assignment: Assignment | None
        _sync_timeout_s: float
        _forward_fence: FenceForwarder
        _forward_pool: ThreadPoolExecutor
        _fencing_pool: ThreadPoolExecutor
        _zombie_fencer: ZombieFencer
        _active_fencings: dict[str, Future[None]]
        _tasks_awaiting_fencing: dict[ConnectorTaskId, int | None]

        def is_leader(self) -> bool: ...
        def _sessioned(self) -> bool: ...
        def _leader_url(self) -> str | None: ...
        def _not_leader(self, what: str) -> NotLeaderError: ...
        def _add_request(self, action: Callable[[], Any], delay_s: float = 0.0) -> Future[Any]: ...
        def _call(self, action: Callable[[], Any], timeout_s: float = ...) -> Any: ...
        def _check_rebalance_needed(self) -> None: ...
        def _require(self, name: str) -> dict[str, str]: ...
        def _refresh_config_snapshot(self, timeout_s: float) -> bool: ...
        def _read_config_to_end(self, timeout_s: float) -> bool: ...
        def _start_task(self, task: ConnectorTaskId) -> None: ...
        def _start_task_now(self, task: ConnectorTaskId, conn_props: dict[str, str],
                            task_props: dict[str, str]) -> None: ...  # fmt: skip
        def _write_task_configs(self, connector: str, configs: list[dict[str, str]]) -> None: ...
        def _fence_as_leader(self, connector: str) -> Future[None]: ...
