"""The collection order for xdist: each worker's initial slice starts with its share of the long tests."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tests.schedule import slice_sizes, spread


@dataclass
class FakeItem:
    nodeid: str
    markers: set[str] = field(default_factory=set)
    fixturenames: tuple[str, ...] = ()

    def get_closest_marker(self, name: str) -> object | None:
        return name if name in self.markers else None


def test_long_tests_start_every_slice_and_the_slices_expected_times_are_balanced() -> None:
    known = {f"t{i}": float(i) for i in range(12)}
    items = [FakeItem(f"t{i}") for i in range(12)]
    ordered = [i.nodeid for i in spread(items, 3, known)]  # type: ignore[arg-type]
    slices = [ordered[0:4], ordered[4:8], ordered[8:12]]
    assert [s[0] for s in slices] == ["t11", "t10", "t9"]
    assert [sum(known[n] for n in s) for s in slices] == [22.0, 22.0, 22.0]  # round-robin made 18, 22 and 26
    assert all(s == sorted(s, key=lambda n: -known[n]) for s in slices)  # long first: stealing takes short ones
    assert sorted(ordered) == sorted(known)  # nothing lost or doubled


def test_piles_have_the_sizes_of_the_slices_xdist_hands_out() -> None:
    assert slice_sizes(7, 3) == [2, 2, 3]  # worksteal: len(pending) // nodes_remaining, node by node
    assert slice_sizes(2070, 10) == [207] * 10
    known = {f"t{i}": float(i) for i in range(7)}
    items: list[Any] = [FakeItem(n) for n in known]
    ordered = [i.nodeid for i in spread(items, 3, known)]
    assert [ordered[0], ordered[2], ordered[4]] == ["t6", "t5", "t4"]  # each slice starts with a long test


def test_unknown_tests_are_guessed_from_their_tier() -> None:
    items = [
        FakeItem("unit"),
        FakeItem("e2e", {"e2e"}),
        FakeItem("int", {"integration"}),
        FakeItem("spark", {"spark", "integration"}),
    ]
    assert [i.nodeid for i in spread(items, 2, {})] == ["e2e", "unit", "spark", "int"]  # type: ignore[arg-type]


def test_alone_tests_start_the_first_slice_and_the_other_slices_start_with_light_tests() -> None:
    known = {"alone1": 80.0, "alone2": 70.0, "heavy1": 60.0, "heavy2": 50.0, "heavy3": 40.0}
    known |= {f"light{i}": 9.0 for i in range(30)}
    items = [FakeItem(n, {"alone", "e2e"} if n.startswith("alone") else set()) for n in known]
    ordered = [i.nodeid for i in spread(items, 3, known)]  # type: ignore[arg-type]
    sizes = slice_sizes(len(ordered), 3)
    slices = [ordered[0 : sizes[0]], ordered[sizes[0] : sizes[0] + sizes[1]], ordered[sizes[0] + sizes[1] :]]
    assert slices[0][:2] == ["alone1", "alone2"]
    for other in slices[1:]:
        head = []
        for name in other:
            if not name.startswith("light"):
                break
            head.append(name)
        # light tests worth the alone tests' 150 s (or all the slice has) before its first heavy test
        assert sum(known[n] for n in head) >= min(150.0, sum(known[n] for n in other if n.startswith("light")))
    assert sorted(ordered) == sorted(known)


def test_without_alone_tests_the_order_is_longest_first() -> None:
    known = {"heavy": 60.0, "light": 9.0, "light2": 8.0}
    items: list[Any] = [FakeItem(n) for n in known]
    ordered = [i.nodeid for i in spread(items, 1 + 1, known)]
    assert ordered[0] == "heavy"


def test_tests_sharing_a_module_spark_session_go_to_one_slice_one_after_another() -> None:
    known = {f"tests/jobs.py::t{i}": 20.0 - i for i in range(4)} | {f"tests/other.py::o{i}": 30.0 for i in range(16)}
    items: list[Any] = [
        FakeItem(n, {"spark"} if "jobs" in n else set(), ("spark",) if "jobs" in n else ()) for n in known
    ]
    ordered = [i.nodeid for i in spread(items, 4, known)]  # 5 tests a slice: room for the module's 4
    sizes = slice_sizes(len(ordered), 4)
    bounds = [sum(sizes[:k]) for k in range(5)]
    slices = [ordered[bounds[k] : bounds[k + 1]] for k in range(4)]
    holding = [s for s in slices if any("jobs" in n for n in s)]
    assert len(holding) == 1  # one worker starts the module's session, once
    spark_tests = [n for n in holding[0] if "jobs" in n]
    start = holding[0].index(spark_tests[0])
    assert holding[0][start : start + 4] == [f"tests/jobs.py::t{i}" for i in range(4)]  # together, longest first
    assert sorted(ordered) == sorted(known)
