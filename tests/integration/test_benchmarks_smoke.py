"""The benchmarks run end to end (``python -m bench.<name>``) and print the lines their readers parse.

Tiny volumes: this proves the harness works (own brokers started and killed, raw yardsticks, worker
run to completion, end offsets checked), not how fast anything is.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

# Smoke runs, not measurements: they check the harness and the lines it prints, never a figure's size, so
# they run beside the other tests (their timeouts allow for a loaded machine). Real measurements are taken
# with the benchmarks themselves on a quiet machine (bench/README).
pytestmark = [pytest.mark.integration]

ROOT = Path(__file__).resolve().parents[2]
RATE = r"\s+[\d,]+ rec/s\s+[\d.]+ MB/s \(\d+ in [\d.]+ s\)"


def run_bench(module: str, *args: str, timeout: float = 180.0) -> str:
    result = subprocess.run(
        [sys.executable, "-m", module, *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout
    )
    assert result.returncode == 0, f"{module} failed:\n{result.stdout}\n{result.stderr[-4000:]}"
    # no Kafka client warnings or errors, raw (librdkafka's "%3|...|FAIL|...") or logged, once the brokers
    # are gone. Info lines (%6, %7) are left out: a client freed while its background thread still holds
    # events says "%6|...|BGQUEUE| Purging N unserved events" on raw stderr, because confluent-kafka drops
    # its Python logger before destroying the handle; it is harmless and no setting of ours routes it.
    assert not re.search(r"^%[0-5]\||librdkafka|Connection refused", result.stderr, re.M), result.stderr[-4000:]
    return result.stdout


def figure(output: str, label: str, pattern: str) -> re.Match[str]:
    match = re.search(rf"^{re.escape(label)}\s*: {pattern}$", output, re.MULTILINE)
    assert match is not None, f"no line {label!r} matching {pattern!r} in:\n{output}"
    return match


def _no_broker_left(output: str) -> None:
    # every "bench-*" broker the run started is gone (they are SIGKILLed on exit)
    names = re.findall(r"(bench-[A-Za-z-]+-[0-9a-f]{10})=", output)
    assert names, output
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert not [n for n in names if n in ps], f"brokers still running: {names}"


def test_source_task_loop_prints_rates_and_ratio() -> None:
    out = run_bench("bench.source_task_loop", "--records", "3000", "--size", "100", "--partitions", "2")
    figure(out, "raw produce", RATE)
    worker = figure(out, "worker source task", RATE)
    assert "(3000 in" in worker.group(0)
    ratio = figure(out, "ratio worker/raw", r"([\d.]+)")
    assert float(ratio.group(1)) > 0
    _no_broker_left(out)


def test_mirror_throughput_prints_rates_ratio_and_rss() -> None:
    out = run_bench(
        "bench.mirror_throughput", "--records", "3000", "--size", "1024", "--partitions", "2", "--exactly-once"
    )
    for label in ("(a) raw consume A", "(b) raw produce B", "(c) mirror A->B", "(e) mirror exactly-once"):
        figure(out, label, RATE)
    assert float(figure(out, "ratio exactly-once/at-least-once", r"([\d.]+)").group(1)) > 0
    assert re.search(
        r"^target exactly-once/at-least-once >= 0\.8 \(3000 x 1024 B, 2 p\): [\d.]+ (met|MISSED)$", out, re.MULTILINE
    ), out
    ratio = figure(out, "ratio mirror/min(a,b)", r"([\d.]+)")
    assert float(ratio.group(1)) > 0
    rss = figure(out, "peak RSS mirroring", r"(\d+) MB \(\+(-?\d+) MB over (\d+) MB before\)")
    assert int(rss.group(1)) > 0
    assert re.search(r"^target ratio >= 0\.7 \(3000 x 1024 B, 2 p\): [\d.]+ (met|MISSED)$", out, re.MULTILINE), out
    _no_broker_left(out)


@pytest.mark.spark
def test_translate_offsets_prints_both_times() -> None:
    out = run_bench("bench.translate_offsets", "--groups", "40", "--records", "50", "--loop-sample", "2", timeout=240)
    job = figure(out, "(a) spark job", r"40 groups in ([\d.]+) s .*")
    assert float(job.group(1)) > 0
    figure(out, "(b) per-group loop", r"2 groups in [\d.]+ s \(\d+ ms/group\); projected 40 groups: \d+ s")
    assert re.search(
        r"^target < 60 s for 40 groups \(job with session start\): [\d.]+ s (met|MISSED)$", out, re.MULTILINE
    ), out
    _no_broker_left(out)


@pytest.mark.spark
def test_backfill_prints_rates_cpu_startup_and_the_ratio() -> None:
    out = run_bench(
        "bench.backfill_throughput",
        "--records",
        "6000",
        "--size",
        "200",
        "--partitions",
        "4",
        "--rounds",
        "1",
        timeout=300,
    )
    for label in ("(a) raw consume A", "(b) raw produce B"):
        figure(out, label, RATE)
    for label in ("(live) mirror task", "(bf1) backfill local[1]", "(bf2) backfill local[2]"):
        figure(out, label, RATE + r"\s+cpu [\d.]+ s = [\d.]+ cpu-s/GB.*")
    figure(
        out, "(bf2) backfill local[2]", r".*Spark start-up [\d.]+ s \(not counted\), whole job [\d.]+ s = [\d,]+ rec/s"
    )
    figure(
        out,
        "Spark start-up",
        r"first session [\d.]+ s \(JVM launched\), later sessions [\d.]+-[\d.]+ s "
        r"\(JVM up\), not counted",
    )
    figure(out, "ratio backfill[2]/live", r"[\d.]+")
    figure(out, "ratio backfill[2]/live per round", r"median [\d.]+ \([\d.]+\)")
    assert re.search(r"^verdict: backfill on local\[2\] (meets|misses) the target", out, re.MULTILINE), out


@pytest.mark.spark
def test_verify_throughput_prints_rates_and_ratio() -> None:
    out = run_bench(
        "bench.verify_throughput",
        "--records",
        "4000",
        "--size",
        "100",
        "--partitions",
        "2",
        "--rounds",
        "1",
        "--chunk-records",
        "500",
        timeout=240,
    )
    figure(out, "(a) raw consume A+B", RATE)
    job = figure(out, "(b) verify local[2]", RATE)
    assert "(4000 in" in job.group(0)
    ratio = figure(out, "ratio verify/raw", r"([\d.]+)")
    assert float(ratio.group(1)) > 0
    assert re.search(r"^target ratio >= 0\.5 \(4000 x 100 B, 2 p\): [\d.]+ (met|MISSED)$", out, re.MULTILINE), out
    _no_broker_left(out)


def test_rest_request_rate_smoke() -> None:
    """The worker's REST server and the bare one answer every round trip (any non-200 fails) and ratios print."""
    out = run_bench("bench.rest_request_rate", "--clients", "2", "--seconds", "0.3")
    for case in ("get_status_keepalive", "put_config_keepalive", "get_status_fresh", "put_config_fresh"):
        for server in ("bare_uvicorn", "worker_rest"):
            assert int(figure(out, f"{server}_{case}_req_per_s", r"(\d+)").group(1)) > 0
        figure(out, f"ratio_{case}_worker_over_bare", r"[\d.]+")


def test_mm2_run_catchup_times_the_stock_command_on_both_paths_and_exactly_once() -> None:
    """The stock ``mm2 run`` copies the whole backlog in every contender; the table and JSON carry each run."""
    out = run_bench(
        "bench.mm2_run_catchup",
        *("--records", "3000", "--size", "1024", "--partitions", "2", "--exactly-once", "--json"),
        timeout=400,
    )
    document = json.loads(out[out.index("\n{") + 1 :])
    (case,) = document["results"]
    assert (case["case"], case["records"], case["partitions"]) == ("3000 x 1024 B", 3000, 2)
    assert case["raw_consume_records_per_s"] > 0 and case["raw_produce_records_per_s"] > 0
    runs = {run["contender"]: run for run in case["runs"]}
    assert list(runs) == ["batch path", "record path", "exactly-once"]
    # the copy completed (the bench checks B's ends, committed records for exactly-once) on the path asked for
    # (exactly-once copies batches too: its transactions go through the transactional batch producer)
    assert [runs[c]["copy_path"] for c in runs] == ["batch", "record (message loop)", "batch"]
    for run in runs.values():
        assert run["records_per_s"] > 0 and run["ratio"] > 0 and run["seconds"] > 0, run
        assert run["cpu_s_per_gb"] >= 0 and run["peak_rss_mb"] > 0, run
        assert run["coarse"] is (run["seconds"] < 0.5), run
        # one table row per contender, and the mm2 process it measured is gone
        assert re.search(rf"^3000 x 1024 B\s+2\s+mm2 run, {run['contender']}\s+[\d,]+\s", out, re.MULTILINE), out
        assert not Path(f"/proc/{run['mm2_pid']}").exists() or _zombie_or_other(run["mm2_pid"])
    _no_broker_left(out)


def _zombie_or_other(pid: int) -> bool:
    """A reused pid is another program; an unreaped one a zombie: neither is our mm2 still running."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z" or b"mirror" not in cmdline
