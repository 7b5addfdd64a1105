"""What ``mm2 verify`` decides (pure; no I/O, no Spark): chunk plans, record digests, alignment, reports.

A mirrored source partition is verified over ``[start, replicated)``: from its log start to the offset after
the last record the flow knows the target acknowledged. Records after that are ``pending`` (produced, not
yet replicated as far as the flow's state says), never differences; a run that compared no record at all
is ``nothing_compared``, never equal.

Source and target offsets differ (the remote topic may have held records before mirroring, a crash
re-sends records, someone writes straight into the target), so the two sides are aligned through the
flow's own evidence of where each record went: mm2's offset mappings (exact for every copied record)
and Kafka's offset syncs (exact at each sync point). :func:`plan_chunks` cuts the source range into
chunks at offsets whose target position is known, so each chunk is ``source [lo, hi)`` against
``target [T(lo), T(hi))`` and chunks are compared independently (in parallel). Where no position is
known, the chunk's target side is open: its start is found by content (the first target record equal to
a source record of the chunk) and its end is where the chunk's source records run out.

Inside a chunk, :func:`compare_chunk` first compares the chunk hashes of both sides (equal: every
record matched, done); only when they differ does it align the two digest sequences record by record:

* a target record equal to the next source record: matched;
* a target record equal to a later source record: the source records skipped are ``missing``;
* a target record equal to no later source record, while the next source record follows within a few
  target records (or the record repeats an earlier source record): ``extra`` (duplicates included);
* otherwise it took the next source record's place with different content: ``mismatched``.

A record's digest covers key, value, headers (order and duplicates kept) and timestamp, with lengths,
so ``None`` and ``b""`` differ. SHA-256 (hardware-accelerated on current CPUs, about twice BLAKE2's speed
here) keeps "the hashes are equal" a proof, not a likelihood.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from hashlib import sha256
from itertools import pairwise
from typing import Any, NamedTuple

#: The outcomes of a verification (see :attr:`Verification.outcome`).
EQUAL = "equal"
DIFFERENT = "different"
NOTHING_COMPARED = "nothing_compared"

#: Source records per chunk (a Spark task compares one chunk: both sides' digests fit in memory).
DEFAULT_CHUNK_RECORDS = 100_000
#: How many target records after an unexpected one are searched for the next source record.
LOOKAHEAD = 32

#: Before each record's key and value: key length, value length, timestamp, header count (-1 length: null).
RECORD_HEAD = struct.Struct(">qqqi")
_HEADER = struct.Struct(">ii")

Header = tuple[str, bytes | None]


def headers_bytes(headers: Sequence[Header]) -> bytes:
    """Headers as hashed: per header, name and value lengths, then name and value (order and repeats kept)."""
    parts: list[bytes] = []
    for name, hv in headers:
        raw = name.encode("utf-8")
        parts.append(_HEADER.pack(len(raw), -1 if hv is None else len(hv)))
        parts.append(raw)
        if hv:
            parts.append(hv)
    return b"".join(parts)


def record_digest(key: bytes | None, value: bytes | None, headers: Sequence[Header] | None, timestamp: int) -> bytes:
    """16-byte digest of what a mirror must copy unchanged: key, value, headers and timestamp."""
    head = RECORD_HEAD.pack(
        -1 if key is None else len(key), -1 if value is None else len(value), timestamp, len(headers) if headers else 0
    )
    if not headers:  # the common case in one call (the lengths in ``head`` keep it unambiguous)
        return sha256(head + (key or b"") + (value or b"")).digest()[:16]
    return sha256(head + (key or b"") + (value or b"") + headers_bytes(headers)).digest()[:16]


class Digest(NamedTuple):
    """One record: its offset and its content digest."""

    offset: int
    content: bytes


def chunk_hash(digests: Iterable[Digest]) -> bytes:
    """Hash of a sequence of records' contents, in order (offsets excluded: they differ by design)."""
    h = sha256()
    for d in digests:
        h.update(d.content)
    return h.digest()


@dataclass(frozen=True)
class ChunkSpec:
    """One unit of work: source ``[source_lo, source_hi)`` against target ``[target_lo, target_hi)``.

    ``target_lo`` None: start unknown (find it by content, from the log start); ``target_hi`` None: end
    unknown (stop where the chunk's source records are all accounted for).
    """

    topic: str
    partition: int
    target_topic: str
    index: int
    source_lo: int
    source_hi: int
    target_lo: int | None
    target_hi: int | None


@dataclass
class ChunkResult:
    """The comparison of one chunk; ``first_difference``: lowest source offset where the sides differ."""

    topic: str
    partition: int
    index: int
    compared: int = 0
    missing: int = 0
    extra: int = 0
    mismatched: int = 0
    first_difference: int | None = None
    hashed_equal: bool = False
    source_bytes: int = 0
    target_bytes: int = 0
    target_records: int = 0

    def differ_at(self, offset: int) -> None:
        if self.first_difference is None or offset < self.first_difference:
            self.first_difference = offset


Translate = Callable[[int], int | None]


def plan_chunks(
    topic: str,
    partition: int,
    target_topic: str,
    source_lo: int,
    source_hi: int,
    translate: Translate,
    exact_points: Iterable[int] = (),
    chunk_records: int = DEFAULT_CHUNK_RECORDS,
) -> list[ChunkSpec]:
    """Cut ``[source_lo, source_hi)`` into chunks of about ``chunk_records`` offsets at translatable offsets.

    ``translate(o)``: the target offset of the first record at or after source offset ``o`` when the flow's
    evidence says so exactly, else None. ``exact_points``: further source offsets known to translate (sync
    points), used as cuts where the regular grid does not translate.
    """
    if source_hi <= source_lo:
        return []
    step = max(1, chunk_records)
    candidates = set(range(source_lo + step, source_hi, step))
    candidates.update(p for p in exact_points if source_lo < p < source_hi)
    cuts = [source_lo]
    positions: dict[int, int | None] = {source_lo: translate(source_lo)}
    for offset in sorted(candidates):
        if offset - cuts[-1] < step:
            continue
        down = translate(offset)
        if down is None:
            continue
        previous = positions[cuts[-1]]
        if previous is not None and down < previous:
            continue  # a boundary must not go backwards on the target
        cuts.append(offset)
        positions[offset] = down
    end, previous = translate(source_hi), positions[cuts[-1]]
    cuts.append(source_hi)
    positions[source_hi] = end if end is not None and (previous is None or end >= previous) else None
    return [
        ChunkSpec(topic, partition, target_topic, i, lo, hi, positions[lo], positions[hi])
        for i, (lo, hi) in enumerate(pairwise(cuts))
    ]


def compare_chunk(spec: ChunkSpec, source: Sequence[Digest], target: Sequence[Digest]) -> ChunkResult:
    """Compare one chunk's source records with the target records of its range (see the module doc)."""
    result = ChunkResult(spec.topic, spec.partition, spec.index, compared=len(source), target_records=len(target))
    open_end = spec.target_hi is None
    if spec.target_lo is not None:
        candidate = target[: len(source)] if open_end else target
        if len(candidate) == len(source) and chunk_hash(candidate) == chunk_hash(source):
            result.hashed_equal = True
            return result
    _align(spec, source, target, result)
    return result


def _align(spec: ChunkSpec, source: Sequence[Digest], target: Sequence[Digest], result: ChunkResult) -> None:
    later: dict[bytes, list[int]] = {}
    for i, d in enumerate(source):
        later.setdefault(d.content, []).append(i)
    in_target: dict[bytes, list[int]] = {}
    for j, d in enumerate(target):
        in_target.setdefault(d.content, []).append(j)
    seen: set[bytes] = set()
    i = j = 0
    if spec.target_lo is None:  # start unknown: the first target record that is one of the chunk's records
        while j < len(target) and target[j].content not in later:
            j += 1
    n, m = len(source), len(target)
    while i < n and j < m:
        t = target[j]
        s = source[i]
        if t.content == s.content:
            seen.add(s.content)
            i += 1
            j += 1
            continue
        k = _next_index(later.get(t.content), i)
        if k is not None:  # the target holds a later source record: the ones before it are missing
            result.missing += k - i
            result.differ_at(s.offset)
            for skipped in source[i:k]:
                seen.add(skipped.content)
            i = k
            continue
        if t.content in seen or _next_index(in_target.get(s.content), j + 1, j + 1 + LOOKAHEAD) is not None:
            result.extra += 1
            result.differ_at(s.offset)
            j += 1
            continue
        result.mismatched += 1
        result.differ_at(s.offset)
        seen.add(s.content)
        i += 1
        j += 1
    if i < n:  # the target range ended before these source records
        result.missing += n - i
        result.differ_at(source[i].offset)
    if j < m and spec.target_hi is not None:  # records after the chunk's last copied record, in its range
        result.extra += m - j
        result.differ_at(spec.source_hi)


def _next_index(indices: list[int] | None, lo: int, hi: int | None = None) -> int | None:
    """The smallest index in sorted ``indices`` that is >= ``lo`` (and < ``hi``), or None."""
    if not indices:
        return None
    pos = bisect_right(indices, lo - 1)
    if pos == len(indices):
        return None
    found = indices[pos]
    return None if hi is not None and found >= hi else found


@dataclass
class PartitionReport:
    """The verification of one source partition against its remote partition."""

    topic: str
    partition: int
    target_topic: str
    source_lo: int = 0
    replicated: int = 0  # the source offset after the last replicated record
    compared: int = 0
    missing: int = 0
    extra: int = 0
    mismatched: int = 0
    pending: int = 0
    first_difference: int | None = None
    chunks: int = 0
    chunks_hashed_equal: int = 0
    # Known gaps the flow recorded (issue 38): never differences, never silent.
    lost_on_source: int = 0  # source offsets deleted (retention, deleted records) before they were mirrored
    source_recreated: str | None = None  # the source topic was recreated: what the flow recorded

    @property
    def equal(self) -> bool:
        return self.missing == 0 and self.extra == 0 and self.mismatched == 0

    def add(self, chunk: ChunkResult) -> None:
        self.compared += chunk.compared
        self.missing += chunk.missing
        self.extra += chunk.extra
        self.mismatched += chunk.mismatched
        self.chunks += 1
        self.chunks_hashed_equal += int(chunk.hashed_equal)
        if chunk.first_difference is not None and (
            self.first_difference is None or chunk.first_difference < self.first_difference
        ):
            self.first_difference = chunk.first_difference

    @property
    def known_gap(self) -> str:
        """The partition's known gaps in one phrase ("" when none)."""
        parts = []
        if self.lost_on_source:
            parts.append(f"{self.lost_on_source} lost on source")
        if self.source_recreated:
            parts.append("source recreated")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "partition": self.partition,
            "target_topic": self.target_topic,
            "compared": self.compared,
            "missing": self.missing,
            "extra": self.extra,
            "mismatched": self.mismatched,
            "pending": self.pending,
            "first_difference": self.first_difference,
            "lost_on_source": self.lost_on_source,
            "source_recreated": self.source_recreated,
        }


@dataclass
class Verification:
    """The whole run: every partition's report, sorted by topic and partition."""

    partitions: list[PartitionReport] = field(default_factory=list)
    source_bytes: int = 0
    target_bytes: int = 0
    target_records: int = 0

    @property
    def outcome(self) -> str:
        """``different`` (some partition differs), ``nothing_compared`` (no record was compared: all pending,
        or nothing mirrored yet; never a proof of equality) or ``equal``."""
        if not all(p.equal for p in self.partitions):
            return DIFFERENT
        if not any(p.compared for p in self.partitions):
            return NOTHING_COMPARED
        return EQUAL

    @property
    def equal(self) -> bool:
        return self.outcome == EQUAL

    def totals(self) -> dict[str, int]:
        keys = ("compared", "missing", "extra", "mismatched", "pending", "lost_on_source")
        return {k: sum(getattr(p, k) for p in self.partitions) for k in keys}

    def to_json(self) -> dict[str, Any]:
        return {"equal": self.equal, "result": self.outcome, "partitions": [p.to_json() for p in self.partitions]}


def merge(reports: Iterable[PartitionReport], chunks: Iterable[ChunkResult]) -> Verification:
    """Fold chunk results into their partitions' reports (which carry ``pending`` already)."""
    by_tp = {(r.topic, r.partition): replace(r) for r in reports}  # copies: a plan may be run again
    out = Verification(sorted(by_tp.values(), key=lambda r: (r.topic, r.partition)))
    for c in chunks:
        by_tp[(c.topic, c.partition)].add(c)
        out.source_bytes += c.source_bytes
        out.target_bytes += c.target_bytes
        out.target_records += c.target_records
    return out


__all__ = [
    "DEFAULT_CHUNK_RECORDS",
    "DIFFERENT",
    "EQUAL",
    "NOTHING_COMPARED",
    "ChunkResult",
    "ChunkSpec",
    "Digest",
    "PartitionReport",
    "Verification",
    "chunk_hash",
    "compare_chunk",
    "merge",
    "plan_chunks",
    "record_digest",
]
