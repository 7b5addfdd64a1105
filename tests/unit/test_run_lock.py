"""An ``alone`` test really runs with no heavy test beside it when the suite runs under pytest-xdist, and
light tests do run beside it.

An inner pytest session with 3 workers runs six tests that each record when they start and end; the
``alone`` ones must not overlap any other, and the others must overlap each other (so the check can fail).
Others run an ``alone`` test that finishes only once a light test has seen it running, and one that allows
one heavy test beside it, which must never have two.
"""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INNER = """
import time, pytest
from pathlib import Path

LOG = Path({log!r})

def _span(name):
    start = time.monotonic()
    time.sleep(0.6)
    with LOG.open("a") as f:
        f.write(f"{{name}} {{start}} {{time.monotonic()}}\\n")

@pytest.mark.e2e
@pytest.mark.parametrize("n", range(4))
def test_shared(n):
    _span(f"shared{{n}}")

@pytest.mark.alone
@pytest.mark.parametrize("n", range(2))
def test_alone(n):
    _span(f"alone{{n}}")
"""


def _spans(log: Path) -> dict[str, tuple[float, float]]:
    spans = {}
    for line in log.read_text().splitlines():
        name, start, end = line.split()
        spans[name] = (float(start), float(end))
    return spans


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def run_inner(
    pytester: pytest.Pytester,
    monkeypatch: pytest.MonkeyPatch,
    source: str,
    workers: int,
    passed: int,
    slots: str = "2:4:0",
) -> None:
    """Run ``source`` as a test module in an inner xdist session with only the lock plugin, all passing;
    ``slots`` as MM2_TEST_HEAVY_SLOTS (by default no heavy test beside an ``alone`` one)."""
    monkeypatch.setenv("MM2_TEST_HEAVY_SLOTS", slots)
    monkeypatch.setenv("PYTHONPATH", str(ROOT))  # the inner session loads the plugin from this repository
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")  # only the plugins it needs: workers start fast
    pytester.makepyfile(test_inner=source)
    result = pytester.runpytest_subprocess(
        "-p", "xdist", "-p", "tests.run_lock", "-p", "no:cacheprovider", "-n", str(workers), "--dist", "worksteal", "-q"
    )
    result.assert_outcomes(passed=passed)


def test_alone_tests_overlap_no_other_test_under_xdist(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "spans.log"
    run_inner(pytester, monkeypatch, INNER.format(log=str(log)), workers=3, passed=6)
    spans = _spans(log)
    assert len(spans) == 6
    for name, span in spans.items():
        if name.startswith("alone"):
            others = [o for o, s in spans.items() if o != name and _overlap(span, s)]
            assert not others, f"{name} ran beside {others}: {spans}"
    shared = [s for n, s in spans.items() if n.startswith("shared")]
    assert any(_overlap(a, b) for i, a in enumerate(shared) for b in shared[i + 1 :]), spans


#: The start of an inner test module whose tests wait on files in DIR.
WAITING = """
import time, pytest
from pathlib import Path

DIR = Path({dir!r})

def _wait_for(name):
    deadline = time.monotonic() + 60
    while not (DIR / name).exists():
        assert time.monotonic() < deadline, f"{{name}} never appeared"
        time.sleep(0.05)
"""

BESIDE = (
    WAITING
    + """
@pytest.mark.alone
def test_alone():
    (DIR / "alone-running").touch()
    _wait_for("light-saw-alone")  # a light test held back by the lock would never write it

def test_light():
    _wait_for("alone-running")
    (DIR / "light-saw-alone").touch()
"""
)


def test_a_light_test_runs_beside_an_alone_test(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_inner(pytester, monkeypatch, BESIDE.format(dir=str(tmp_path)), workers=2, passed=2)


FIRST_IN_LINE = (
    WAITING
    + """
def _span(name, body):
    start = time.monotonic()
    body()
    with (DIR / "spans").open("a") as f:
        f.write(f"{{name}} {{start}} {{time.monotonic()}}\\n")

@pytest.mark.e2e
def test_h1():  # heavy, holds the lock shared for a while
    _span("h1", lambda: ((DIR / "h1-running").touch(), time.sleep(4)))

def test_pad():
    pass

def test_l1():  # light: lets the alone test queue up before h2 asks for the lock
    _wait_for("h1-running")
    time.sleep(2)

@pytest.mark.e2e
def test_h2():
    _span("h2", lambda: None)

def test_l0():
    _wait_for("h1-running")

@pytest.mark.alone
def test_alone():
    _span("alone", lambda: time.sleep(0.5))
"""
)


def test_a_waiting_alone_test_goes_before_heavy_tests_that_ask_after_it(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """h1 holds the lock shared; the alone test then waits for it; h2 asks later and must wait behind the
    alone test (without the gate, h2 shares h1's hold and the alone test waits until no heavy test runs)."""
    run_inner(pytester, monkeypatch, FIRST_IN_LINE.format(dir=str(tmp_path)), workers=3, passed=6)
    spans = _spans(tmp_path / "spans")
    assert spans["alone"][0] >= spans["h1"][1], spans  # it waited for the heavy test that held the lock
    assert spans["h2"][0] >= spans["alone"][1], spans  # and the heavy test that asked later waited for it


ONE_BESIDE = """
import time, pytest
from pathlib import Path

DIR = Path({dir!r})

def _span(name, seconds):
    start = time.monotonic()
    time.sleep(seconds)
    with (DIR / "spans").open("a") as f:
        f.write(f"{{name}} {{start}} {{time.monotonic()}}\\n")

@pytest.mark.alone
def test_alone():
    _span("alone", 3)

@pytest.mark.e2e
@pytest.mark.parametrize("n", range(3))
def test_heavy(n):
    _span(f"heavy{{n}}", 1.5)
"""


def test_an_alone_test_has_no_more_heavy_tests_beside_it_than_allowed(
    pytester: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slots 2:4:1: whichever starts first, at no moment of the alone test do two heavy tests run beside it
    (with no slots taken by the alone test, the two that start with it would)."""
    run_inner(pytester, monkeypatch, ONE_BESIDE.format(dir=str(tmp_path)), workers=4, passed=4, slots="2:4:1")
    spans = _spans(tmp_path / "spans")
    alone = spans.pop("alone")
    moments = [alone[0] + (alone[1] - alone[0]) * i / 100 for i in range(101)]
    most = max(sum(start <= t < end for start, end in spans.values()) for t in moments)
    assert most <= 1, spans
