"""``mm2 demo --duration 30``: starts its own clusters, mirrors, prints progress, exits 0."""

from __future__ import annotations

import re
import subprocess
import sys


def test_demo_mirrors_records_and_exits_cleanly() -> None:
    run = subprocess.run([sys.executable, "-m", "mirror", "demo", "--duration", "30"],
                         capture_output=True, text=True, timeout=150)
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert "Started cluster A" in out
    assert re.search(r"mirrored\s+A\.(orders|clicks)\[\d+\]@\d+", out), out[-3000:]
    m = re.search(r"Demo finished: produced (\d+) records on A, (\d+) mirrored to B", out)
    assert m is not None, out[-3000:]
    assert int(m.group(2)) > 0
    assert "== A->B: total lag" in out  # the periodic status table
    assert "Traceback" not in out + run.stderr
