"""Hand-built record batches with the attributes kafka-python's ``DefaultRecordBatch`` gives the rules."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field


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

    @property
    def base_offset(self) -> int:
        return self.records[0].offset

    @property
    def next_offset(self) -> int:
        return self.records[-1].offset + 1

    def __iter__(self) -> Iterator[Rec]:
        return iter(self.records)


def data(pid: int, *offsets: int, txn: bool = True) -> Batch:
    return Batch([Rec(o, f"v{o}".encode()) for o in offsets], pid, txn)


def marker(pid: int, offset: int, commit: bool) -> Batch:
    return Batch([Rec(offset, commit=commit)], pid, True, True)
