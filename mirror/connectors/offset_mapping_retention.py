"""Which mapping records may be removed: those wholly below the source partition's log start (pure; no I/O).

Why: the mappings topic is compacted, and compaction only removes a key's older versions; without
tombstones every record ever written stays. A record whose runs all end below the source partition's
log-start offset can never translate a group again (a group there resumes from the log start, which a
newer record covers), so the source task tombstones it and compaction then drops it: the topic is bounded
by the source's retention, not by its history.

:class:`MappingKeys` remembers, per partition, the key (``upstreamLow`` of its first run) and the
upstream end of every record the task wrote, in two ``array('q')`` columns: 16 bytes per record, and
records are written at most once per partition per publication, so what it holds is bounded by the
source's retention too. Records written before the task's (re)start are not known to it and stay
(a restart leaves at most what its predecessor wrote above the log start at that time).
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping

from mirror.client.formats import TopicPartition


class _Keys:
    __slots__ = ("ends", "lows")

    def __init__(self) -> None:
        self.lows: array[int] = array("q")
        self.ends: array[int] = array("q")


class MappingKeys:
    """The keys of the records this task wrote, per partition, in write order."""

    def __init__(self) -> None:
        self._partitions: dict[TopicPartition, _Keys] = {}

    def written(self, tp: TopicPartition, low: int, end: int) -> None:
        """A record keyed ``low`` whose last run ends (exclusive upstream offset) at ``end`` was written."""
        keys = self._partitions.get(tp)
        if keys is None:
            keys = self._partitions[tp] = _Keys()
        if keys.lows and keys.lows[-1] == low:  # the same record again, grown (an open run re-published)
            keys.ends[-1] = max(keys.ends[-1], end)
            return
        keys.lows.append(low)
        keys.ends.append(end)

    def partitions(self) -> list[TopicPartition]:
        return [tp for tp, keys in self._partitions.items() if keys.lows]

    def expired(self, log_starts: Mapping[TopicPartition, int]) -> dict[TopicPartition, list[int]]:
        """Per partition, the keys to tombstone: records whose runs all end below its log start; forgotten here.

        A record ending exactly at the log start still translates a group there (``end`` is inclusive
        for translation), so only ``end < log_start`` goes. Records are taken from the oldest while they
        qualify: a newer record below an older one (a rewind after a restart) waits for the older.
        """
        out: dict[TopicPartition, list[int]] = {}
        for tp, start in log_starts.items():
            keys = self._partitions.get(tp)
            if keys is None or start <= 0:
                continue
            n = 0
            while n < len(keys.ends) and keys.ends[n] < start:
                n += 1
            if n:
                lows = list(keys.lows[:n])
                del keys.lows[:n], keys.ends[:n]
                # a later record re-using one of these keys is still live: never tombstone it
                live = set(keys.lows)
                out[tp] = [low for low in dict.fromkeys(lows) if low not in live]
        return out

    def forget(self, tps: list[TopicPartition] | None = None) -> None:
        if tps is None:
            self._partitions.clear()
            return
        for tp in tps:
            self._partitions.pop(tp, None)

    def __len__(self) -> int:
        return sum(len(k.lows) for k in self._partitions.values())


__all__ = ["MappingKeys"]
