"""The first-pass chunk hash: independent of how a range arrives in batches, sensitive to every field."""

from __future__ import annotations

from dataclasses import dataclass

from mirror.jobs.verify.reads import ContentHash, batch_size

Header = tuple[str, bytes | None]


@dataclass
class Msg:
    """The four accessors of a consumed message the hash reads (a stand-in: pure logic)."""

    k: bytes | None
    v: bytes | None
    ts: int
    h: list[Header] | None = None

    def key(self) -> bytes | None:
        return self.k

    def value(self) -> bytes | None:
        return self.v

    def headers(self) -> list[Header] | None:
        return self.h

    def timestamp(self) -> tuple[int, int]:
        return 1, self.ts


def digest(batches: list[list[Msg]]) -> bytes:
    content = ContentHash()
    for batch in batches:
        content.add(batch)
    return content.digest()


RECORDS = [Msg(b"k1", b"v1", 1), Msg(None, b"", 2, [("h", b"x"), ("h", None)]), Msg(b"", None, 3), Msg(b"k4", b"v4", 4)]


def test_batches_do_not_matter() -> None:
    whole = digest([RECORDS])
    assert whole == digest([RECORDS[:1], RECORDS[1:3], RECORDS[3:]]) == digest([[r] for r in RECORDS])
    content = ContentHash()
    content.add(RECORDS)
    assert (content.count, content.size) == (4, 8)


def test_every_field_counts() -> None:
    whole = digest([RECORDS])
    changed = [
        [Msg(b"k1", b"v1", 1), *RECORDS[1:3], Msg(b"k4", b"v4", 5)],  # a timestamp
        [Msg(b"k", b"1v1", 1), *RECORDS[1:]],  # bytes moved from value to key
        [Msg(b"k1", b"v1", 1), Msg(b"", b"", 2, [("h", b"x"), ("h", None)]), *RECORDS[2:]],  # null key -> empty
        [Msg(b"k1", b"v1", 1), Msg(None, b"", 2, [("h", b"x")]), *RECORDS[2:]],  # a header less
        RECORDS[:3],  # a record less
        [RECORDS[1], RECORDS[0], *RECORDS[2:]],  # order
    ]
    digests = {digest([c]) for c in changed}
    assert whole not in digests and len(digests) == len(changed)


def test_batch_size_never_asks_for_more_than_the_range_holds() -> None:
    assert batch_size(0, None, 0, None) == 5000
    assert batch_size(90, 100, 0, None) == 10
    assert batch_size(0, None, 7, 10) == 3
    assert batch_size(100, 100, 0, None) == 1
    assert batch_size(-1, 100, 0, None) == 5000  # start unknown (log start)
