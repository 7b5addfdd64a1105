"""Kafka's read_committed rule, applied from markers (pure: batches are stand-ins for kafka-python's)."""

from __future__ import annotations

from dataclasses import dataclass, field

from connect_core.kafka.transaction_markers import ReadCommittedFilter, apply_read_committed


@dataclass
class Rec:
    offset: int
    value: bytes | None = None
    key: bytes | None = None
    headers: list[tuple[str, bytes | None]] = field(default_factory=list)
    timestamp: int = 0
    commit: bool = False  # control records only


@dataclass
class Batch:
    records: list[Rec]
    producer_id: int = -1
    is_transactional: bool = False
    is_control_batch: bool = False

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.records)


def data(pid: int, *offsets: int, txn: bool = True) -> Batch:
    return Batch([Rec(o, f"v{o}".encode()) for o in offsets], pid, txn)


def marker(pid: int, offset: int, commit: bool) -> Batch:
    return Batch([Rec(offset, commit=commit)], pid, True, True)


def values(batches: list[Batch]) -> list[bytes | None]:
    return [r.value for r in apply_read_committed(batches).committed]


def test_plain_records_are_visible_and_in_offset_order() -> None:
    assert values([data(-1, 0, 1, txn=False), data(-1, 2, txn=False)]) == [b"v0", b"v1", b"v2"]


def test_aborted_records_are_dropped_and_committed_ones_kept_at_their_offsets() -> None:
    batches = [data(7, 0, 1), data(8, 2), marker(7, 3, commit=False), data(-1, 4, txn=False), marker(8, 5, commit=True)]
    log = apply_read_committed(batches)
    assert [r.value for r in log.committed] == [b"v2", b"v4"]
    assert log.aborted == 2 and log.open == 0
    assert log.markers == [(3, 7, False), (5, 8, True)]


def test_nothing_at_or_after_an_open_transaction_is_readable() -> None:
    batches = [
        data(1, 0),
        marker(1, 1, commit=True),
        data(2, 2),
        data(-1, 3, txn=False),
        data(3, 4),
        marker(3, 5, commit=True),
    ]
    log = apply_read_committed(batches)
    assert [r.value for r in log.committed] == [b"v0"]  # producer 2's transaction holds the stable offset at 2
    assert log.open == 3  # v2, v3 and v4 wait behind it, even those whose own fate is known
    assert [r.value for r in log.undecided] == [b"v2"]  # only producer 2's own record is still undecided


def test_a_marker_decides_only_the_batches_before_it() -> None:
    batches = [data(4, 0), marker(4, 1, commit=False), data(4, 2), marker(4, 3, commit=True)]
    assert values(batches) == [b"v2"]


def fed(rule: ReadCommittedFilter, batch: Batch) -> list[bytes | None]:
    return [r.value for r in rule.add(batch)]


def test_fed_batch_by_batch_records_come_out_when_their_marker_arrives_in_offset_order() -> None:
    rule = ReadCommittedFilter()
    assert fed(rule, data(1, 0, 1)) == []  # producer 1's transaction is open: the stable offset is 0
    assert fed(rule, data(-1, 2, txn=False)) == []  # visible by itself, but behind the open transaction
    assert fed(rule, data(2, 3)) == []
    assert rule.open == 4
    assert fed(rule, marker(2, 4, commit=True)) == []  # producer 2 is decided; producer 1 still holds the rest
    assert fed(rule, marker(1, 5, commit=True)) == [b"v0", b"v1", b"v2", b"v3"]
    assert rule.open == 0 and rule.aborted == 0


def test_an_abort_releases_what_waited_behind_it_and_counts_the_dropped_records() -> None:
    rule = ReadCommittedFilter()
    fed(rule, data(1, 0))
    fed(rule, data(2, 1))
    fed(rule, marker(2, 2, commit=True))
    assert fed(rule, marker(1, 3, commit=False)) == [b"v1"]
    assert rule.aborted == 1 and rule.open == 0


def test_a_zombies_aborted_offset_never_surfaces_and_the_newer_commit_wins() -> None:
    """The exactly-once offset store's case: the zombie's open transaction is aborted by the task's new
    instance (its init writes the ABORT), then the new instance commits its own offset."""
    rule = ReadCommittedFilter()
    seen: list[bytes | None] = []
    for batch in (data(5, 0), marker(5, 1, commit=True), data(5, 2), marker(5, 3, commit=False), data(5, 4)):
        seen += fed(rule, batch)
    assert seen == [b"v0"]  # the aborted v2 is gone, v4 not readable yet
    seen += fed(rule, marker(5, 5, commit=True))
    assert seen == [b"v0", b"v4"]


def test_the_incremental_rule_and_the_whole_partition_rule_agree() -> None:
    batches = [
        data(7, 0, 1),
        data(8, 2),
        marker(7, 3, commit=False),
        data(-1, 4, txn=False),
        marker(8, 5, commit=True),
        data(9, 6),
        data(-1, 7, txn=False),
    ]
    rule = ReadCommittedFilter()
    incremental = [r for b in batches for r in rule.add(b)]
    whole = apply_read_committed(batches)
    assert incremental == whole.committed
    assert (rule.aborted, rule.open) == (whole.aborted, whole.open) == (2, 2)


def test_a_long_lived_filter_can_leave_the_markers_unlisted() -> None:
    rule = ReadCommittedFilter(keep_markers=False)
    assert [r.value for b in [data(7, 0), marker(7, 1, commit=True)] for r in rule.add(b)] == [b"v0"]
    assert rule.markers == []
