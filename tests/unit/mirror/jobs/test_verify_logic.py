"""mm2 verify's pure part: record digests, chunk plans along the flow's offset evidence, alignment, reports."""

from __future__ import annotations

from mirror.jobs.verify.logic import (
    ChunkResult,
    ChunkSpec,
    Digest,
    PartitionReport,
    compare_chunk,
    merge,
    plan_chunks,
    record_digest,
)
from mirror.jobs.verify.report import render_table


def recs(values: list[str], start: int = 0) -> list[Digest]:
    return [Digest(start + i, record_digest(b"k", v.encode(), None, 1000)) for i, v in enumerate(values)]


def spec(lo: int | None = 0, hi: int | None = 100, source_lo: int = 0, source_hi: int = 100) -> ChunkSpec:
    return ChunkSpec("t", 0, "A.t", 0, source_lo, source_hi, lo, hi)


def test_digest_covers_key_value_headers_timestamp_and_nulls() -> None:
    base = record_digest(b"k", b"v", [("h", b"1")], 5)
    assert base == record_digest(b"k", b"v", [("h", b"1")], 5)
    others = [
        record_digest(b"K", b"v", [("h", b"1")], 5),
        record_digest(b"k", b"V", [("h", b"1")], 5),
        record_digest(b"k", b"v", [("h", b"2")], 5),
        record_digest(b"k", b"v", [("h", b"1")], 6),
        record_digest(b"k", b"v", [("h", b"1"), ("h", b"1")], 5),
        record_digest(b"k", b"v", [("h", None)], 5),
        record_digest(b"k", b"v", None, 5),
        record_digest(None, b"v", [("h", b"1")], 5),
        record_digest(b"", b"v", [("h", b"1")], 5),
        record_digest(b"kv", b"", [("h", b"1")], 5),
    ]
    assert len({base, *others}) == len(others) + 1


def test_equal_chunk_is_decided_by_hash() -> None:
    source = recs(["a", "b", "c"])
    result = compare_chunk(spec(), source, recs(["a", "b", "c"], start=50))
    assert result.hashed_equal and result.compared == 3
    assert (result.missing, result.extra, result.mismatched, result.first_difference) == (0, 0, 0, None)


def test_extra_record_in_the_middle_and_at_the_end() -> None:
    source = recs(["a", "b", "c"], start=10)
    middle = compare_chunk(spec(), source, recs(["a", "x", "b", "c"]))
    assert (middle.extra, middle.missing, middle.mismatched, middle.first_difference) == (1, 0, 0, 11)
    end = compare_chunk(spec(source_lo=10, source_hi=13), source, recs(["a", "b", "c", "x"]))
    assert (end.extra, end.missing, end.mismatched, end.first_difference) == (1, 0, 0, 13)


def test_duplicates_are_extra() -> None:
    source = recs(["a", "b", "c", "d"])
    result = compare_chunk(spec(), source, recs(["a", "b", "c", "b", "c", "d"]))
    assert (result.extra, result.missing, result.mismatched) == (2, 0, 0)


def test_missing_and_mismatched() -> None:
    source = recs(["a", "b", "c", "d", "e"], start=100)
    missing = compare_chunk(spec(), source, recs(["a", "c", "d", "e"]))
    assert (missing.missing, missing.extra, missing.mismatched, missing.first_difference) == (1, 0, 0, 101)
    changed = compare_chunk(spec(), source, recs(["a", "b", "X", "d", "e"]))
    assert (changed.mismatched, changed.missing, changed.extra, changed.first_difference) == (1, 0, 0, 102)
    short = compare_chunk(spec(), source, recs(["a", "b", "c"]))
    assert (short.missing, short.first_difference) == (2, 103)


def test_open_end_ignores_records_copied_after_the_range() -> None:
    source = recs(["a", "b"])
    result = compare_chunk(spec(hi=None), source, recs(["a", "b", "c", "zz"]))
    assert result.hashed_equal and (result.extra, result.missing) == (0, 0)
    extra = compare_chunk(spec(hi=None), source, recs(["a", "x", "b", "c"]))
    assert (extra.extra, extra.missing, extra.mismatched) == (1, 0, 0)


def test_open_start_finds_the_first_copied_record_by_content() -> None:
    source = recs(["a", "b"])
    result = compare_chunk(spec(lo=None), source, recs(["old1", "old2", "a", "b"]))
    assert not result.hashed_equal and (result.extra, result.missing, result.mismatched) == (0, 0, 0)


def test_plan_cuts_at_translatable_offsets_and_keeps_open_ends() -> None:
    shifted = plan_chunks("t", 0, "A.t", 0, 25, lambda o: o + 7, chunk_records=10)
    assert [(c.source_lo, c.source_hi, c.target_lo, c.target_hi) for c in shifted] == [
        (0, 10, 7, 17),
        (10, 20, 17, 27),
        (20, 25, 27, 32),
    ]
    syncs = {0: 100, 13: 113, 31: 140}  # only sync points translate
    sparse = plan_chunks("t", 0, "A.t", 0, 40, syncs.get, exact_points=syncs, chunk_records=10)
    assert [(c.source_lo, c.source_hi, c.target_lo, c.target_hi) for c in sparse] == [
        (0, 13, 100, 113),
        (13, 31, 113, 140),
        (31, 40, 140, None),
    ]
    unknown = plan_chunks("t", 0, "A.t", 5, 8, lambda o: None, chunk_records=10)
    assert [(c.source_lo, c.source_hi, c.target_lo, c.target_hi) for c in unknown] == [(5, 8, None, None)]
    assert plan_chunks("t", 0, "A.t", 5, 5, lambda o: o) == []


def test_merge_reports_per_partition_and_json() -> None:
    reports = [PartitionReport("t", 1, "A.t", pending=3), PartitionReport("t", 0, "A.t")]
    chunks = [
        ChunkResult("t", 0, 0, compared=10, hashed_equal=True),
        ChunkResult("t", 0, 1, compared=10, extra=1, first_difference=15),
        ChunkResult("t", 0, 2, compared=5, mismatched=1, first_difference=22),
        ChunkResult("t", 1, 0, compared=4),
    ]
    result = merge(reports, chunks)
    assert not result.equal
    assert result.to_json() == {
        "equal": False,
        "result": "different",
        "partitions": [
            {
                "topic": "t",
                "partition": 0,
                "target_topic": "A.t",
                "compared": 25,
                "missing": 0,
                "extra": 1,
                "mismatched": 1,
                "pending": 0,
                "first_difference": 15,
                "lost_on_source": 0,
                "source_recreated": None,
            },
            {
                "topic": "t",
                "partition": 1,
                "target_topic": "A.t",
                "compared": 4,
                "missing": 0,
                "extra": 0,
                "mismatched": 0,
                "pending": 3,
                "first_difference": None,
                "lost_on_source": 0,
                "source_recreated": None,
            },
        ],
    }
    assert result.totals() == {
        "compared": 29,
        "missing": 0,
        "extra": 1,
        "mismatched": 1,
        "pending": 3,
        "lost_on_source": 0,
    }
    assert merge(
        [PartitionReport("t", 0, "A.t", pending=9), PartitionReport("t", 1, "A.t")],
        [ChunkResult("t", 1, 0, compared=1)],
    ).equal  # pending records are no difference


def test_a_run_that_compared_nothing_is_not_equal() -> None:
    all_pending = merge([PartitionReport("t", 0, "A.t", pending=9)], [])
    assert all_pending.outcome == "nothing_compared" and not all_pending.equal
    assert all_pending.to_json()["result"] == "nothing_compared"
    assert "NOTHING COMPARED" in render_table(all_pending) and "9 pending" in render_table(all_pending)
    assert merge([], []).outcome == "nothing_compared"  # no partition at all
    assert (
        merge([PartitionReport("t", 0, "A.t")], [ChunkResult("t", 0, 0, compared=0, missing=2)]).outcome == "different"
    )


def test_a_known_gap_is_said_but_is_no_difference() -> None:
    """Records deleted on the source before they were mirrored are a known gap (issue 38), not a difference."""
    from mirror.jobs.verify.report import render_table

    report = PartitionReport("t", 0, "A.t", lost_on_source=5, source_recreated="topic id x -> y")
    result = merge([report], [ChunkResult("t", 0, 0, compared=10, hashed_equal=True)])
    assert result.equal and result.partitions[0].known_gap == "5 lost on source, source recreated"
    table = render_table(result)
    assert "5 lost on source, source recreated" in table
    assert table.splitlines()[-1].startswith("Known gaps (not differences): 5 records deleted on the source")
