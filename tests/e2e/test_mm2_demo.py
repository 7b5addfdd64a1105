"""``mm2 demo``: the story of mm2, each step checked; ``mm2 demo --live-only --duration 30``: live mirroring with
progress, ending with a drained, checked result.

Not a terminal here, so the demo prints plain progress lines (the live table is for TTYs). Every
log line goes to the work directory's ``mm2.log``: stdout carries no log line, stderr nothing at
all, and the checked result is the very last thing printed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) |^%\d\|\d+\.\d+\|")
RESULT = re.compile(
    r"^(\d+) produced, (\d+) mirrored, identical per partition \(key, value, headers, timestamp, "
    r"order\)\.$"
)


def test_live_only_demo_tells_its_story_and_ends_with_a_checked_result() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "mirror", "demo", "--live-only", "--duration", "30"],
        capture_output=True,
        text=True,
        timeout=240,
    )
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert run.stderr == "", run.stderr[-3000:]
    lines = out.splitlines()
    assert not [line for line in lines if LOG_LINE.search(line)], out
    assert "Traceback" not in out

    # the story: clusters, topics, where to look, progress per topic, the drain, the check
    assert re.search(r"^Started two Kafka clusters .*A \(source\) at 127\.0\.0\.1:\d+, B \(target\)", out, re.M)
    assert "Created topics on A: orders (3 partitions), clicks (2 partitions)" in out
    assert re.search(r"^  REST API  http://127\.0\.0\.1:\d+/A/B/connectors$", out, re.M)
    assert re.search(r"^  metrics   http://127\.0\.0\.1:\d+/metrics$", out, re.M)
    assert re.search(r"^  status    .* status /\S+/mm2\.properties$", out, re.M)
    log_path = re.search(r"^  logs      (\S+)$", out, re.M)
    assert log_path is not None
    log = Path(log_path.group(1)).read_text()
    assert " INFO mirror.driver.driver: MirrorMaker started" in log  # the driver's lines went there
    progress = [line for line in lines if re.match(r"^\s+\d+s  orders \d+/\d+ mirrored \(lag \d+, latency p50", line)]
    assert progress, out
    assert "waiting for the last records to reach B" in out

    # the very last line is the checked result, and it adds up
    assert out.endswith("\n") and not out.endswith("\n\n")
    result = RESULT.match(lines[-1])
    assert result is not None, out[-2000:]
    produced, mirrored = int(result.group(1)), int(result.group(2))
    assert produced == mirrored and produced >= 60  # 4 records/s for 30 s, all of them mirrored


STEP = re.compile(r"^  \[(ok|FAILED)\] ")


@pytest.mark.timeout(600)  # about 80 s on 2 busy cores; room for a slower machine
def test_demo_story_backfill_live_verify_failover_each_checked() -> None:
    """The README's first command: every step of the story checked, nothing but the story on the terminal."""
    run = subprocess.run([sys.executable, "-m", "mirror", "demo"], capture_output=True, text=True, timeout=540)
    out = run.stdout
    assert run.returncode == 0, out[-3000:] + run.stderr[-3000:]
    assert run.stderr == "", run.stderr[-3000:]
    lines = out.splitlines()
    assert not [line for line in lines if LOG_LINE.search(line)], out
    assert "Traceback" not in out and "WARN" not in out and "rdkafka" not in out, out
    steps = [line for line in lines if STEP.match(line)]
    assert len(steps) == 5 and all(line.startswith("  [ok] ") for line in steps), out
    assert re.search(r"^  \[ok\] 20,000 of 20,000 records copied in \d+ s", out, re.M), out
    assert re.search(r"^  \[ok\] B holds all 20,300 records of A once each, in order", out, re.M), out
    assert re.search(r"^  \[ok\] EQUAL: 20,300 records compared, 0 missing, 0 different$", out, re.M), out
    assert re.search(r"^  \[ok\] demo-app placed on B in 5 of 5 partitions .* \(0 re-read, 0 skipped\)$", out, re.M), (
        out
    )
    assert re.search(r"^  \[ok\] all 100 records of payments mirrored to A\.payments, without a restart$", out, re.M), (
        out
    )
    assert re.match(r"^Checked in \d+ s: backfill, live, verify, failover, reload\. ", lines[-1]), out
