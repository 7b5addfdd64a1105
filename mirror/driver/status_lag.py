"""How far each source partition is mirrored, from the freshest evidence, and how old that evidence is.

Two kinds of evidence, both on the clusters (``mm2 status`` needs no running process):

* **flushed**: the committed source offset in ``mm2-offsets.<source>.internal``. Exact but late:
  written every ``offset.flush.interval.ms`` (60 s by default), so a fully mirrored backlog reads
  as lagging until the next flush. Its age is now minus the offset record's timestamp.
* **target**: the latest offset sync ``(upstream u, downstream d)`` of the partition plus the remote
  partition's end offset ``E`` read now. Records ``d+1 .. E-1`` on the target are the upstream
  records after ``u`` in order, so the next upstream offset to mirror is ``u + (E - d)``: the
  source task emits a new sync whenever upstream offsets are not contiguous or the target drifts by
  ``offset.lag.max``, so between syncs the two logs step together. Transaction markers on the target
  (only written by an exactly-once MirrorMaker) could overstate it by less than ``offset.lag.max``;
  it is never taken beyond the source end. Age: 0 (read now).

The larger of the two positions wins (both only ever move forward).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from mirror.client.errors import RecordFormatError
from mirror.client.formats import OffsetSync
from mirror.driver.status_report import EVIDENCE_FLUSHED, EVIDENCE_NONE, EVIDENCE_TARGET, PartitionLag

TopicPartitionKey = tuple[str, int]


@dataclass
class OffsetSyncFold:
    """The latest offset sync per upstream (topic, partition): (upstream offset, downstream offset)."""

    latest: dict[TopicPartitionKey, tuple[int, int]] = field(default_factory=dict)

    def apply(self, key: bytes | None, value: bytes | None, timestamp_ms: int | None = None) -> None:
        if key is None or value is None:
            return
        try:
            sync = OffsetSync.decode(key, value)
        except RecordFormatError:
            return
        self.latest[(sync.topic, sync.partition)] = (sync.upstream_offset, sync.downstream_offset)


def target_position(sync: tuple[int, int] | None, target_end: int | None) -> int | None:
    """Next upstream offset to mirror, from a sync and the remote partition's end; None if unknown."""
    if sync is None or target_end is None:
        return None
    upstream, downstream = sync
    if target_end <= downstream:  # the synced record is not (or no longer) on the target
        return None
    return upstream + (target_end - downstream)


def partition_lags(
    source_end_offsets: Mapping[TopicPartitionKey, int],
    committed: Mapping[TopicPartitionKey, int],
    remote_topic: Callable[[str], str],
    *,
    committed_at_ms: Mapping[TopicPartitionKey, int] | None = None,
    syncs: Mapping[TopicPartitionKey, tuple[int, int]] | None = None,
    target_ends: Mapping[TopicPartitionKey, int] | None = None,
    now_ms: int | None = None,
) -> list[PartitionLag]:
    """One row per source partition: lag = end offset - next offset to mirror.

    ``committed`` holds last replicated offsets (the Connect offset, so +1 is the next one);
    ``target_ends`` is keyed by the *source* (topic, partition) like ``syncs``. Partitions with
    a position but no known end offset (the topic vanished from the source) are listed with
    end = mirrored, i.e. no lag, so the operator still sees what was replicated.
    """
    committed_at_ms = committed_at_ms or {}
    syncs = syncs or {}
    target_ends = target_ends or {}
    rows: list[PartitionLag] = []
    for tp in sorted(set(source_end_offsets) | set(committed)):
        flushed = committed[tp] + 1 if tp in committed else None
        live = target_position(syncs.get(tp), target_ends.get(tp))
        if tp in source_end_offsets and live is not None:
            live = min(live, source_end_offsets[tp])
        flushed_age = _age_s(now_ms, committed_at_ms.get(tp))
        age: float | None
        if live is not None and (flushed is None or live >= flushed):
            mirrored, evidence, age = live, EVIDENCE_TARGET, 0.0
        elif flushed is not None:
            mirrored, evidence, age = flushed, EVIDENCE_FLUSHED, flushed_age
        else:
            mirrored, evidence, age = 0, EVIDENCE_NONE, None
        end = source_end_offsets.get(tp, mirrored)
        rows.append(
            PartitionLag(
                tp[0],
                tp[1],
                remote_topic(tp[0]),
                end,
                mirrored,
                evidence=evidence,
                age_s=age,
                flushed_offset=flushed,
                flushed_age_s=flushed_age,
            )
        )
    return rows


def _age_s(now_ms: int | None, at_ms: int | None) -> float | None:
    if now_ms is None or at_ms is None or at_ms <= 0:
        return None
    return max(0.0, (now_ms - at_ms) / 1000.0)
