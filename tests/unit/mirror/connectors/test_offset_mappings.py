"""Offset mappings: wire format, the tracker and the index, checked against a brute-force model of copying.

The model copies a source partition (offsets with gaps) run by run to a target partition that already
holds records and receives foreign writes, sometimes loses track of some records' downstream offsets,
and sometimes crashes and re-sends from the last flushed position. Whatever the index answers must be
the downstream offset of the newest copy of exactly the first record a group at that upstream offset
has not consumed (or, right after a run whose successor is unknown, a position before it with only
foreign records between: nothing mirrored is re-read or skipped).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from mirror.client.errors import RecordFormatError
from mirror.client.formats import OffsetSync, TopicPartition
from mirror.client.offset_mappings import OffsetMapping, mapping_for_copied_range, offset_mappings_topic
from mirror.client.policy import DefaultReplicationPolicy, IdentityReplicationPolicy
from mirror.connectors.offset_mapping_index import ExactOffsetTranslator, OffsetMappingIndex
from mirror.connectors.offset_mapping_tracker import OffsetMappingTracker
from mirror.connectors.offset_sync_store import OffsetSyncStore

TP = TopicPartition("topic", 3)


# -- wire format ---------------------------------------------------------------------------------


def test_mapping_record_vector_and_round_trip() -> None:
    m = OffsetMapping(TopicPartition("t1", 2), 5, 7, 300, 40)
    assert m.record_key() == bytes.fromhex("0002 7431 00000002 0000000000000005")
    assert m.record_value() == bytes.fromhex("0000 0000000000000007 000000000000012c 0000000000000028")
    assert OffsetMapping.decode(m.record_key(), m.record_value()) == m
    assert (m.upstream_end, m.downstream_end) == (47, 340)
    assert [m.translate(o) for o in (5, 7, 8, 47)] == [300, 300, 301, 340]
    assert not m.covers(4) and m.covers(47) and not m.covers(48)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (None, b"x"),
        (b"\x00\x02t", b""),
        (bytes.fromhex("0001 74 00000000 0000000000000000"), b"\x00\x00"),
        # a run of zero records, and a low above the first record, are not mappings
        (bytes.fromhex("0001 74 00000000 0000000000000000"), bytes.fromhex("0000" + "00" * 16 + "00" * 8)),
        (
            bytes.fromhex("0001 74 00000000 0000000000000009"),
            bytes.fromhex("0000" + "00" * 7 + "01" + "00" * 8 + "00" * 7 + "01"),
        ),
    ],
)
def test_malformed_mappings_are_rejected(key: bytes | None, value: bytes) -> None:
    with pytest.raises(RecordFormatError):
        OffsetMapping.decode(key, value)
    index = OffsetMappingIndex()
    assert index.on_record(key, value) is None and index.ignored_records == 1


def test_topic_sits_next_to_the_offset_syncs_topic() -> None:
    assert offset_mappings_topic(DefaultReplicationPolicy(), "B") == "mm2-offset-mappings.B.internal"
    assert offset_mappings_topic(IdentityReplicationPolicy(), "B") == "mm2-offset-mappings.B.internal"
    policy = DefaultReplicationPolicy()
    assert policy.is_internal_topic(offset_mappings_topic(policy, "B"))  # never replicated by any MM2


def test_mapping_for_copied_range_covers_the_gap_before_it() -> None:
    assert mapping_for_copied_range(TP, 10, 100, 5) == OffsetMapping(TP, 10, 10, 100, 5)
    assert mapping_for_copied_range(TP, 10, 100, 5, previous_upstream=6) == OffsetMapping(TP, 7, 10, 100, 5)
    assert mapping_for_copied_range(TP, 10, 100, 5, previous_upstream=12) == OffsetMapping(TP, 10, 10, 100, 5)


# -- tracker ---------------------------------------------------------------------------------------


def test_tracker_extends_contiguous_runs_and_closes_on_discontinuity() -> None:
    t = OffsetMappingTracker(TP, resume_after=9)
    assert t.add_run(10, 100, 5) is None
    assert t.add_run(15, 105, 5) is None
    assert t.flush() == OffsetMapping(TP, 10, 10, 100, 10)
    assert t.flush() is None  # nothing new
    # an upstream gap (a transaction marker at 20) closes nothing new and starts a mapping covering it
    assert t.add_run(21, 110, 2) is None
    assert t.flush() == OffsetMapping(TP, 20, 21, 110, 2)
    # a downstream jump (foreign writes): the open mapping, not emitted since, closes
    assert t.add_run(23, 112, 1) is None
    assert t.add_run(24, 120, 1) == OffsetMapping(TP, 20, 21, 110, 3)
    assert t.break_continuity() == OffsetMapping(TP, 24, 24, 120, 1)
    assert t.add_run(30, 130, 1) is None
    assert t.flush() == OffsetMapping(TP, 30, 30, 130, 1)  # no claim about 25..29


def test_tracker_pairs_split_on_gaps() -> None:
    t = OffsetMappingTracker(TP)
    closed = t.add_pairs([(0, 50), (1, 51), (3, 52), (4, 53), (5, 60)])
    assert closed == [OffsetMapping(TP, 0, 0, 50, 2), OffsetMapping(TP, 2, 3, 52, 2)]
    assert t.flush() == OffsetMapping(TP, 5, 5, 60, 1)


# -- index -----------------------------------------------------------------------------------------


def test_later_mapping_wins_and_rewind_forgets_what_is_above() -> None:
    index = OffsetMappingIndex()
    index.on_mapping(OffsetMapping(TP, 0, 0, 100, 20))  # 0..19 at 100..119
    index.on_mapping(OffsetMapping(TP, 20, 20, 130, 10))  # 20..29 at 130..139
    assert [index.translate(TP, o) for o in (0, 19, 20, 29, 30, 31)] == [100, 119, 130, 139, 140, None]
    # crash: re-sent from 15 at 150; everything above 15 is forgotten until re-sent
    index.on_mapping(OffsetMapping(TP, 15, 15, 150, 3))
    assert [index.translate(TP, o) for o in (14, 15, 17, 18, 19, 25)] == [114, 150, 152, 153, None, None]
    assert index.translate(TopicPartition("other", 0), 1) is None


def test_translate_back_for_failback() -> None:
    index = OffsetMappingIndex()
    index.on_mapping(OffsetMapping(TP, 0, 0, 10, 5))  # 0..4 at 10..14
    index.on_mapping(OffsetMapping(TP, 5, 7, 20, 3))  # gap 5..6 upstream; foreign 15..19 downstream
    index.on_mapping(OffsetMapping(TP, 12, 12, 30, 2))  # 10..11 never mapped
    back = [index.translate_back(TP, d) for d in (9, 10, 14, 15, 19, 20, 22, 23, 29, 30, 32, 33)]
    assert back == [
        None,
        (0, True),
        (4, True),
        (7, True),
        (7, True),
        (7, True),
        (9, True),
        (10, False),
        (10, False),
        (12, True),
        (14, True),
        (14, False),
    ]


def test_exact_translator_falls_back_to_offset_syncs() -> None:
    store = OffsetSyncStore()
    store.start(False)
    store.on_sync(OffsetSync(TP, 0, 100))
    store.on_sync(OffsetSync(TP, 50, 150))
    index = OffsetMappingIndex()
    index.on_mapping(OffsetMapping(TP, 0, 0, 100, 10))
    translator = ExactOffsetTranslator(index, store)
    assert translator.translate_downstream("g", TP, 5) is None  # store not read to end yet
    store.mark_read_to_end()
    assert translator.translate("g", TP, 5) == (105, True)
    assert translator.translate("g", TP, 30) == (101, False)  # Kafka's answer: sync at 0, then + 1
    assert translator.translate("g", TopicPartition("x", 0), 3) == (None, False)


# -- property: tracker + index against a brute-force model of copying -------------------------------


@dataclass
class Model:
    records: list[int]  # upstream offsets holding records
    copies: list[tuple[int, int]] = field(default_factory=list)  # (upstream, downstream) in copy order
    unknown: set[int] = field(default_factory=set)  # records whose mapping was never claimed

    def newest_copy(self) -> dict[int, int]:
        return {u: d for u, d in self.copies}

    def first_record_at_or_after(self, o: int) -> int | None:
        return next((r for r in self.records if r >= o), None)


def copy_partition(rng: random.Random, unknown_runs: bool, crashes: bool) -> tuple[Model, list[OffsetMapping]]:
    offset = rng.randint(0, 3)
    records = []
    for _ in range(rng.randint(30, 160)):
        records.append(offset)
        offset += 1 if rng.random() < 0.85 else rng.randint(2, 4)  # transaction markers, compaction
    model = Model(records)
    down = rng.randint(0, 30)  # the remote topic held records before mirroring began
    emitted: list[OffsetMapping] = []
    tracker = OffsetMappingTracker(TP)
    flushed_at = -1  # index into records of the last record covered by a flush (the stored source offset)
    i = 0
    while i < len(records):
        n = rng.randint(1, 7)
        run = records[i : i + n]
        if rng.random() < 0.2:
            down += rng.randint(1, 3)  # foreign writes to the remote topic
        if unknown_runs and len(run) > 2 and rng.random() < 0.15:
            # the producer interleaved foreign records inside the run: only first and last known
            pairs = []
            for u in run:
                pairs.append((u, down))
                down += 1 + rng.randint(0, 1)
            model.copies.extend(pairs)
            model.unknown.update(run[1:-1])
            for m in filter(
                None,
                [
                    tracker.add_run(pairs[0][0], pairs[0][1], 1),
                    tracker.break_continuity(),
                    tracker.add_run(pairs[-1][0], pairs[-1][1], 1),
                ],
            ):
                emitted.append(m)
        else:
            pairs = [(u, down + k) for k, u in enumerate(run)]
            down += len(run)
            model.copies.extend(pairs)
            emitted.extend(tracker.add_pairs(pairs))
        i += len(run)
        if rng.random() < 0.3:
            m = tracker.flush()
            if m is not None:
                emitted.append(m)
            flushed_at = i - 1
        if crashes and flushed_at >= 0 and rng.random() < 0.05:
            # crash: the open mapping is lost; a new task resumes after the stored (flushed) offset
            i = flushed_at + 1
            tracker = OffsetMappingTracker(TP, resume_after=records[flushed_at])
    m = tracker.flush()
    if m is not None:
        emitted.append(m)
    return model, emitted


@pytest.mark.parametrize("seed", range(300))
def test_index_answers_exactly_the_first_unconsumed_record(seed: int) -> None:
    rng = random.Random(seed)
    unknown_runs, crashes = seed % 3 == 1, seed % 3 == 2
    model, emitted = copy_partition(rng, unknown_runs, crashes)
    index = OffsetMappingIndex()
    for m in emitted:  # through the wire format, as the checkpoint task reads them
        index.on_record(m.record_key(), m.record_value())
    newest = model.newest_copy()
    copied = {d for _, d in model.copies}
    last = model.records[-1]
    for o in range(0, last + 2):
        got = index.translate(TP, o)
        r = model.first_record_at_or_after(o)
        want = newest[last] + 1 if r is None else newest[r]
        if got is not None:
            # exactly there, or before it with only foreign records between (never a mirrored one)
            assert got == want or (got < want and not any(got <= d < want for d in copied)), (seed, o, got, want)
        elif not unknown_runs and o >= model.records[0]:
            pytest.fail(f"seed {seed}: offset {o} not translated")  # every position is covered
        elif unknown_runs and o >= model.records[0]:
            # only positions whose first unconsumed record's mapping is unknown may be missing
            assert (
                r in model.unknown
                or (r is not None and r - 1 in model.unknown)
                or any(u in model.unknown for u in range(o - 4, o + 1))
            ), (seed, o)


@pytest.mark.parametrize("seed", range(200))
def test_translate_back_never_skips(seed: int) -> None:
    rng = random.Random(seed)
    model, emitted = copy_partition(rng, unknown_runs=seed % 2 == 1, crashes=False)
    index = OffsetMappingIndex()
    for m in emitted:
        index.on_mapping(m)
    by_down = sorted((d, u) for u, d in model.copies)
    end = by_down[-1][0] + 2
    for x in range(0, end):
        got = index.translate_back(TP, x)
        consumed = {u for d, u in by_down if d < x}
        unconsumed = [r for r in model.records if r not in consumed]
        want = unconsumed[0] if unconsumed else model.records[-1] + 1
        if got is None:
            assert x <= by_down[0][0]  # only before the first mirrored record
            continue
        assert got.offset <= want, (seed, x, got, want)  # never skips
        if got.exact:
            assert got.offset == want or not any(r for r in model.records if got.offset <= r < want), (seed, x)


def test_index_keeps_at_most_max_intervals() -> None:
    index = OffsetMappingIndex(max_intervals=3)
    for k in range(6):
        index.on_mapping(OffsetMapping(TP, 10 * k, 10 * k + 5, 100 * k, 1))
    assert [iv[0] for iv in index.intervals(TP)] == [30, 40, 50]
    assert index.translate(TP, 12) is None and index.translate(TP, 50) == 500
