"""Longest tests first, balanced over the xdist workers, so the run does not end on one worker's tail.

pytest-xdist's ``worksteal`` hands each worker a contiguous slice of the collection and later moves
the *tail* of the longest queue (by count) to idle workers. Collected in file order, the e2e tests -
most of the run's time - sit in the first workers' slices and stay there. This plugin reorders the
collection (the same way in every worker, as xdist requires) into one pile per worker, each pile the
size of the slice xdist will hand that worker: tests are taken longest first and each goes to the pile
with the least expected time so far (longest-processing-time scheduling). Each slice then starts with
long tests and ends with short ones, which are what stealing moves, and the slices' expected times are
within one short test of each other (dealt round-robin, the first slice carried 468 s of a 391 s average).

Expected durations come from ``tests/durations.json`` (seconds per test id, written by
``--store-durations``); a test not in it gets its tier's typical time, so a stale file only makes the
order a little worse, never wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pytest

DURATIONS = Path(__file__).with_name("durations.json")
#: Typical seconds per test of each tier, for tests the durations file does not know yet.
TIER_GUESS = {"e2e": 30.0, "spark": 15.0, "integration": 3.0, "unit": 0.05}
#: A test expected to take this long (or an e2e or Spark test) is heavy: an ``alone`` test runs beside no
#: heavy test, but light ones (unit tests, short integration tests) keep the other workers busy meanwhile.
HEAVY_S = 30.0
#: The marker of tests that run with no heavy test beside them (tests/run_lock.py holds the lock).
ALONE = "alone"
#: Module-scoped fixtures whose one set-up serves every test of the module that asks for it: a local Spark
#: session (a JVM start, ~5.6 CPU-s with the suite's class archive). Those tests of a module go to one
#: worker, one after another, so the session starts once per module; spread singly over the workers, three
#: such modules started nine sessions in one run.
SHARED_MODULE_FIXTURES = frozenset({"spark"})


@cache
def known_durations() -> dict[str, float]:
    """The durations file, read once per process (the schedule and the run lock both consult it)."""
    return json.loads(DURATIONS.read_text()) if DURATIONS.exists() else {}


def expected_seconds(item: pytest.Item, known: dict[str, float]) -> float:
    if item.nodeid in known:
        return known[item.nodeid]
    for marker in ("e2e", "spark", "integration"):
        if item.get_closest_marker(marker) is not None:
            return TIER_GUESS[marker]
    return TIER_GUESS["unit"]


def is_heavy(item: pytest.Item, known: dict[str, float]) -> bool:
    if item.get_closest_marker("e2e") is not None or item.get_closest_marker("spark") is not None:
        return True
    return expected_seconds(item, known) >= HEAVY_S


def slice_sizes(count: int, workers: int) -> list[int]:
    """How many tests xdist's worksteal hands each worker at the start: the rest split evenly, in order."""
    sizes = []
    for index in range(workers):
        size = count // (workers - index)
        sizes.append(size)
        count -= size
    return sizes


def spread(items: list[pytest.Item], workers: int, known: dict[str, float]) -> list[pytest.Item]:
    """Longest first, each test (or :func:`units` unit) to the open pile with the least expected time; piles
    in slice order.

    The ``alone`` tests all go to the first pile, at its start; every other pile starts with light tests
    worth about as long, which may run beside them, then its heavy tests (which wait for the lock while an
    ``alone`` test holds it), then the rest of its light ones."""

    def seconds(item: pytest.Item) -> float:
        return expected_seconds(item, known)

    ranked = sorted(items, key=lambda item: (-seconds(item), item.nodeid))
    sizes = slice_sizes(len(ranked), workers)
    piles: list[list[pytest.Item]] = [[] for _ in range(workers)]
    totals = [0.0] * workers
    alone = [item for item in ranked if item.get_closest_marker(ALONE) is not None]
    for item in alone[: sizes[0]]:
        piles[0].append(item)
        totals[0] += seconds(item)
    placed = {id(item) for item in piles[0]}
    for unit in units(ranked, seconds):
        unit = [item for item in unit if id(item) not in placed]
        open_piles = [i for i in range(workers) if len(piles[i]) + len(unit) <= sizes[i]]
        # a unit no pile has room for goes singly
        for part in [unit] if open_piles else [[item] for item in unit]:
            pile = min(
                (i for i in range(workers) if len(piles[i]) + len(part) <= sizes[i]), key=lambda i: (totals[i], i)
            )
            piles[pile].extend(part)
            totals[pile] += sum(seconds(item) for item in part)
    alone_s = sum(seconds(item) for item in piles[0] if item.get_closest_marker(ALONE) is not None)
    if alone_s:
        piles = [piles[0]] + [_light_first(pile, alone_s, known) for pile in piles[1:]]
    return [item for pile in piles for item in pile]


def units(ranked: list[pytest.Item], seconds: Callable[[pytest.Item], float]) -> list[list[pytest.Item]]:
    """The tests as units placed whole, longest unit first: one per test, but one per module for the tests
    that share a :data:`SHARED_MODULE_FIXTURES` fixture (in ``ranked``'s order within it)."""
    shared: dict[str, list[pytest.Item]] = {}
    out: list[list[pytest.Item]] = []
    for item in ranked:
        if SHARED_MODULE_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())):
            out.append([item])
            continue
        module = item.nodeid.split("::")[0]
        if module not in shared:
            shared[module] = []
            out.append(shared[module])
        shared[module].append(item)
    return sorted(out, key=lambda unit: -sum(seconds(item) for item in unit))  # stable: ties keep ranked order


def _light_first(pile: list[pytest.Item], window_s: float, known: dict[str, float]) -> list[pytest.Item]:
    """The pile's light tests, longest first, until they fill ``window_s``; then the pile in its order."""
    head: list[pytest.Item] = []
    filled = 0.0
    for item in pile:
        if filled >= window_s:
            break
        if not is_heavy(item, known):
            head.append(item)
            filled += expected_seconds(item, known)
    chosen = {id(item) for item in head}
    return head + [item for item in pile if id(item) not in chosen]


def _worker_count(config: pytest.Config) -> int:
    worker_input = getattr(config, "workerinput", None)
    return int(worker_input["workercount"]) if worker_input else 0


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--store-durations",
        action="store_true",
        default=False,
        help="write each test's setup+call+teardown seconds to tests/durations.json",
    )


@pytest.hookimpl(trylast=True)  # after conftest's own hook has added the tier markers
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    workers = _worker_count(config)
    if workers < 2:
        return
    items[:] = spread(items, workers, known_durations())


class DurationRecorder:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_sessionfinish(self) -> None:
        DURATIONS.write_text(json.dumps({k: round(v, 2) for k, v in sorted(self.seconds.items())}, indent=0) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("--store-durations") and not hasattr(config, "workerinput"):
        config.pluginmanager.register(DurationRecorder(), "mm2-duration-recorder")
