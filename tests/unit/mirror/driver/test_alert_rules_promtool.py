"""``promtool test rules`` on the shipped alert rules: the edge cases of the stale-checkpoint and stale-
verification rules in synthetic time (the firing in a real Prometheus is tests/e2e/test_alerts_fire.py).

The copy promtool reads has the annotations dropped (promtool compares them verbatim; they are text,
not logic); the expressions, thresholds and ``for:`` are the shipped ones.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[4]
RULES = ROOT / "dashboards" / "mm2-alerts.yml"
SERIES = 'source="A",target="B",instance="mm2:9464",job="mm2"'


def series(name: str, values: str, **labels: str) -> dict[str, str]:
    extra = "".join(f',{k}="{v}"' for k, v in labels.items())
    return {"series": f"{name}{{{SERIES}{extra}}}", "values": values}


def expect(alert: str, at: str, firing: bool, **labels: str) -> dict[str, Any]:
    alerts = [{"exp_labels": {"severity": "warning", "source": "A", "target": "B", **labels}}] if firing else []
    return {"eval_time": at, "alertname": alert, "exp_alerts": alerts}


def without_annotations(text: str) -> str:
    """The rules file minus each rule's ``annotations:`` block (the lines indented below it)."""
    out: list[str] = []
    block_indent: int | None = None
    for line in text.splitlines():
        indent = len(line) - len(line.lstrip())
        if block_indent is not None and line.strip() and indent > block_indent:
            continue
        block_indent = indent if line.strip() == "annotations:" else None
        if block_indent is None:
            out.append(line)
    assert "annotations:" not in "\n".join(out) and len(out) < len(text.splitlines())
    return "\n".join(out) + "\n"


def run_promtool(tmp_path: Path, tests: list[dict[str, Any]]) -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is required (Debian package 'prometheus'; .ci/run installs it)"
    (tmp_path / "rules.yml").write_text(without_annotations(RULES.read_text()))
    # JSON is YAML: promtool reads it as its test file.
    (tmp_path / "tests.yml").write_text(
        json.dumps({"rule_files": ["rules.yml"], "evaluation_interval": "1m", "tests": tests})
    )
    result = subprocess.run(
        [promtool, "test", "rules", "tests.yml"], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_verification_stale_counts_from_the_schedule_start_and_scales_with_the_interval(tmp_path: Path) -> None:
    hour = {
        "interval": "1m",
        "input_series": [
            series("mm2_verify_interval_seconds", "3600+0x300"),
            series("mm2_verify_schedule_start_timestamp_seconds", "0+0x300"),
        ],
    }
    succeeding = {
        "interval": "1m",
        "input_series": [
            series("mm2_verify_interval_seconds", "3600+0x300"),
            series("mm2_verify_schedule_start_timestamp_seconds", "0+0x300"),
            # a verification completes every 50 minutes: the gauge holds the time of the last one
            series("mm2_verify_last_success_timestamp_seconds", " ".join(str(m // 50 * 3000) for m in range(300))),
        ],
    }
    run_promtool(
        tmp_path,
        [
            # never completed a verification: stale 3 intervals after the schedule started (+ for: 10m)
            {
                **hour,
                "alert_rule_test": [
                    expect("MM2VerificationStale", "3h5m", False),
                    expect("MM2VerificationStale", "3h15m", True),
                ],
            },
            {**succeeding, "alert_rule_test": [expect("MM2VerificationStale", "4h50m", False)]},
        ],
    )


def test_checkpoints_stale_means_not_checked_for_ten_intervals_not_idle(tmp_path: Path) -> None:
    def case(interval_s: int, last: str) -> dict[str, Any]:
        return {
            "interval": "1m",
            "input_series": [
                series("mm2_checkpoint_interval_seconds", f"{interval_s}+0x100"),
                series("mm2_checkpoint_last_timestamp_seconds", last, group="billing"),
            ],
        }

    run_promtool(
        tmp_path,
        [
            # the gauge stopped at 0: after 10 intervals of 60 s (+ for: 5m) it fires
            {
                **case(60, "0+0x100"),
                "alert_rule_test": [
                    expect("MM2CheckpointsStale", "12m", False),
                    expect("MM2CheckpointsStale", "17m", True, group="billing"),
                ],
            },
            # the same silence with checks every 5 minutes is not stale yet
            {**case(300, "0+0x100"), "alert_rule_test": [expect("MM2CheckpointsStale", "17m", False)]},
            # an idle group checked every minute keeps its gauge current: never stale
            {**case(60, "0+60x100"), "alert_rule_test": [expect("MM2CheckpointsStale", "90m", False)]},
        ],
    )


def test_one_source_change_fires_at_once_even_when_the_series_appears_at_one(tmp_path: Path) -> None:
    """The event is mostly found at a task's start: the counter's first sample is already 1."""

    def case(values: str) -> dict[str, Any]:
        return {
            "interval": "1m",
            "input_series": [
                series("mm2_source_changes_total", values, topic="A.orders", partition="0", reason="topic-recreated")
            ],
        }

    firing = [
        {
            "exp_labels": {
                "severity": "critical",
                "source": "A",
                "target": "B",
                "topic": "A.orders",
                "reason": "topic-recreated",
            }
        }
    ]
    run_promtool(
        tmp_path,
        [
            {
                **case("1+0x10"),
                "alert_rule_test": [{"eval_time": "0m", "alertname": "MM2SourceChanged", "exp_alerts": firing}],
            },
            {
                **case("0+0x10"),
                "alert_rule_test": [{"eval_time": "5m", "alertname": "MM2SourceChanged", "exp_alerts": []}],
            },
        ],
    )
