"""The leader skips the lost-work delay for work a departed worker released cleanly.

Kafka's assignor holds the work of any departed worker for ``scheduled.rebalance.max.delay.ms``, hoping it
returns. A worker stopped on purpose (SIGTERM) first stops its connectors and tasks, which writes UNASSIGNED
to the status topic, and only then leaves the group; a crashed one leaves them RUNNING. So, just before the
leader assigns a round in which a member has gone, if no work that nobody reports is still
RUNNING/PAUSED/RESTARTING in the status topic, nothing can run twice and the pending delay is expired: that
round already reassigns the work. Installed as the coordinator's ``before_assignment`` hook.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from connect_core.herder.distributed.assignor import (
    AssignmentContext,
    IncrementalCooperativeAssignor,
    reported_leaders,
)
from connect_core.herder.distributed.collaborators import DistributedStatusStore
from connect_core.herder.distributed.protocol import deserialize_metadata
from connect_core.model import ConnectorTaskId

log = logging.getLogger(__name__)

_HELD = ("RUNNING", "PAUSED", "RESTARTING")
#: The status topic is read to its end before deciding, for at most this long (the leader waits on it).
_STATUS_READ_S = 2.0


class ReleaseRule:
    """The hook: runs on the group client's thread while this worker leads an incremental round."""

    def __init__(self, status_store: DistributedStatusStore, sync_timeout_s: float) -> None:
        self._status = status_store
        self._read_timeout_s = min(sync_timeout_s, _STATUS_READ_S)

    def __call__(self, assignor: IncrementalCooperativeAssignor, members: Sequence[tuple[str, bytes]],
                 ctx: AssignmentContext) -> None:  # fmt: skip
        try:
            self.expire_delay_if_released(assignor, members, ctx)
        except Exception:  # the round goes on with Kafka's delay: only slower, never wrong
            log.debug("Cannot tell whether departed work was released cleanly", exc_info=True)

    def expire_delay_if_released(self, assignor: IncrementalCooperativeAssignor,
                                 members: Sequence[tuple[str, bytes]], ctx: AssignmentContext) -> None:  # fmt: skip
        """The rule itself (raises what it meets; the hook turns that into Kafka's delay)."""
        states = {m: deserialize_metadata(metadata) for m, metadata in members}
        leaders = reported_leaders(states)
        # A worker that has just taken over the lead counts its predecessor among the departed.
        previous = assignor.last_generation_members(states, ctx.last_completed_generation_id, leaders)
        if not previous or previous <= set(states):
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
        self._status.read_to_end(self._read_timeout_s)
        connector_states = {c: self._status.get_connector(c) for c in unreported_c}
        task_states = {t: self._status.get_task(t) for t in unreported_t}
        if assignor.took_over(ctx.last_completed_generation_id, leaders):
            # Work with no status at all never started: created just before the old leader died.
            assignor.note_never_started(
                [c for c, st in connector_states.items() if st is None],
                [t for t, st in task_states.items() if st is None],
            )
        statuses = [*connector_states.values(), *task_states.values()]
        if any(st is not None and st.state.value in _HELD for st in statuses):
            return
        log.info("Departed workers released their work cleanly (%d connectors, %d tasks); reassigning it now "
                 "instead of after scheduled.rebalance.max.delay.ms", len(unreported_c), len(unreported_t))  # fmt: skip
        assignor.scheduled_rebalance = max(1, int(assignor.clock()))
