"""The collection order for xdist: each worker's initial slice starts with its share of the long tests."""

from __future__ import annotations

from dataclasses import dataclass, field

from tests.schedule import spread


@dataclass
class FakeItem:
    nodeid: str
    markers: set[str] = field(default_factory=set)

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_long_tests_are_dealt_one_per_slice_before_any_slice_gets_a_second() -> None:
    known = {f"t{i}": float(i) for i in range(12)}
    items = [FakeItem(f"t{i}") for i in range(12)]
    ordered = [i.nodeid for i in spread(items, 3, known)]  # type: ignore[arg-type]
    slices = [ordered[0:4], ordered[4:8], ordered[8:12]]
    assert [s[0] for s in slices] == ["t11", "t10", "t9"]
    assert sorted(sum(known[n] for n in s) for s in slices) == [18.0, 22.0, 26.0]
    assert sorted(ordered) == sorted(known)  # nothing lost or doubled


def test_unknown_tests_are_guessed_from_their_tier() -> None:
    items = [FakeItem("unit"), FakeItem("e2e", {"e2e"}), FakeItem("int", {"integration"}),
             FakeItem("spark", {"spark", "integration"})]
    assert [i.nodeid for i in spread(items, 2, {})] == ["e2e", "int", "spark", "unit"]  # type: ignore[arg-type]
