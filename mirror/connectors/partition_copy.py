"""The acknowledgement rule of one source partition's copies: which offset syncs fall due, which offset
mappings close (pure; no I/O).

Whatever path copied them - a record (``commit_record``), a record whose partition map the task did not
hand out, a run of copied messages, a copied batch - a partition's acknowledged copies report to its
:class:`PartitionCopy`, in acknowledgement order. It keeps what one acknowledgement leaves for the next:
the partition's offset-sync state (last acknowledged upstream and downstream offsets, downstream offset of
the last sync: Kafka's per-record rule, :class:`~mirror.connectors.offset_sync_writer.PartitionState`) and
its open mapping run (:class:`~mirror.connectors.offset_mapping_tracker.OffsetMappingTracker`).

The task sends what it decided: a due sync made pending in the task's
:class:`~mirror.connectors.offset_sync_writer.OffsetSyncQueue` (a single record), or the sync points a run
returns (each made pending and sent in turn, the run's newest position delayed when it is not one of
them), then the mapping runs collected in :attr:`PartitionCopy.closed`. Nothing is allocated per record
unless a sync falls due or a mapping closes.
"""

from __future__ import annotations

from connect_core.api.message_copy import CopyRun
from mirror.client.formats import TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.connectors.offset_mapping_tracker import OffsetMappingTracker
from mirror.connectors.offset_sync_writer import OffsetSyncQueue, PartitionState, contiguous_sync_points

#: Sync points of one acknowledgement: (upstream, downstream) offsets to sync, in order.
SyncPoints = list[tuple[int, int]]


class PartitionCopy:
    """One source partition's acknowledged copies: its sync state and open mapping run (see the module)."""

    __slots__ = ("closed", "mapping", "sync_state", "tp")

    def __init__(self, tp: TopicPartition, resume_after: int = -1) -> None:
        """``resume_after``: the last upstream offset already copied (the stored source offset), -1 if unknown."""
        self.tp = tp
        self.sync_state: PartitionState | None = None  # the queue's state of this partition, once asked for
        self.mapping = OffsetMappingTracker(tp, resume_after)
        self.closed: list[OffsetMapping] = []  # mapping runs closed and not yet taken by the task

    def resume_after(self, offset: int) -> None:
        """The copy resumes after ``offset`` (the stored source offset): offsets up to it need no mapping."""
        self.mapping = OffsetMappingTracker(self.tp, offset)

    def state(self, syncs: OffsetSyncQueue) -> PartitionState:
        """The partition's offset-sync state in ``syncs`` (looked up once)."""
        state = self.sync_state
        if state is None:
            state = self.sync_state = syncs.state_for(self.tp)
        return state

    # -- the acknowledgements ----------------------------------------------------------------------

    def record(self, syncs: OffsetSyncQueue, upstream: int, downstream: int) -> bool:
        """One record acknowledged at ``downstream``; True when a sync is now pending in ``syncs``."""
        state = self.sync_state
        if state is None:
            state = self.state(syncs)
        due = syncs.on_record_owned(self.tp, state, upstream, downstream)
        closed = self.mapping.add_run(upstream, downstream, 1)
        if closed is not None:
            self.closed.append(closed)
        return due

    def foreign_record(self, syncs: OffsetSyncQueue, upstream: int, downstream: int) -> bool:
        """A record of this partition copied outside its own route (another partition map, another thread):
        its sync is decided as any record's, and no mapping continuity is claimed across it."""
        due = syncs.on_record(self.tp, upstream, downstream)
        self.unknown()
        return due

    def unknown(self) -> None:
        """Copies whose downstream offsets are unknown (a tolerated failure): no mapping claim past them."""
        closed = self.mapping.break_continuity()
        if closed is not None:
            self.closed.append(closed)

    def run(self, syncs: OffsetSyncQueue, run: CopyRun) -> SyncPoints | None:
        """A run of copied messages or a copied batch, acknowledged whole: the sync points due (the run's
        newest position is delayed when it is not the last of them), None when the run decides no sync.

        Kafka's per-record rule, applied once per run: a contiguous run yields the syncs each of its records
        would, without a step per record.
        """
        if run.skipped or run.first_downstream < 0 or run.last_downstream < 0:
            # A skipped record leaves its neighbours' offsets unknown: no sync from this run; the
            # next run's first record is an upstream skip, which syncs.
            self.unknown()
            return None
        state = self.sync_state
        if state is None:
            state = self.state(syncs)
        count = run.count
        first_up = run.first_upstream
        first_down = run.first_downstream
        tracker = self.mapping
        if run.last_downstream - first_down == count - 1:
            upstream = run.upstream_offsets
            if upstream is None:
                points = contiguous_sync_points(state, first_up, first_down, count)
                self._add(tracker.add_run(first_up, first_down, count))
                return points
            pairs = [(u, first_down + i) for i, u in enumerate(upstream)]
            if not pairs:
                return None
            points = [pair for pair in pairs if state.should_emit(pair[0], pair[1])]
            self.closed.extend(tracker.add_pairs(pairs))
            return points
        # Something else wrote between these records downstream (or a retry duplicated some): only
        # the first and last records' downstream offsets are known. Syncs of exact pairs are always
        # safe; a group position inside the run translates with an older sync (re-reads more).
        pairs = [(first_up, first_down)]
        if count > 1:
            pairs.append((run.last_upstream, run.last_downstream))
        points = [pair for pair in pairs if state.should_emit(pair[0], pair[1])]
        # Mappings: the first record is known exactly, the ones up to the last are not.
        self._add(tracker.add_run(first_up, first_down, 1))
        self._add(tracker.break_continuity())
        if count > 1:
            self._add(tracker.add_run(run.last_upstream, run.last_downstream, 1))
        return points

    def take_closed(self) -> list[OffsetMapping]:
        """The mapping runs closed since the last call, in order (for the task to send)."""
        closed, self.closed = self.closed, []
        return closed

    def _add(self, closed: OffsetMapping | None) -> None:
        if closed is not None:
            self.closed.append(closed)


__all__ = ["PartitionCopy", "SyncPoints"]
