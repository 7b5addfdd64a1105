"""The dashboard and the alert rules may only use metric names the exporter really exports."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

from mirror.driver.metrics import Mm2Metrics

ROOT = Path(__file__).resolve().parents[4]
DASHBOARD = ROOT / "dashboards" / "mm2-dashboard.json"
RULES = ROOT / "dashboards" / "mm2-alerts.yml"
METRIC = re.compile(r"\bmm2_[a-z0-9_]+")


def dashboard_exprs() -> list[str]:
    dash = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
    exprs += [v["query"]["query"] for v in dash["templating"]["list"] if isinstance(v.get("query"), dict)]
    return exprs


def rule_exprs() -> list[str]:
    # The rules file is plain YAML we write ourselves; the expressions are the `expr:` blocks.
    text = RULES.read_text()
    return re.findall(r"expr:\s*\|?\s*\n?((?:.|\n)*?)(?=\n\s+for:)", text)


def test_every_dashboard_metric_is_exported() -> None:
    exported = Mm2Metrics().exported_names()
    used = {m for e in dashboard_exprs() for m in METRIC.findall(e)}
    assert used, "dashboard has no queries"
    assert used <= exported, f"unknown metrics in dashboard: {sorted(used - exported)}"


def test_every_rule_metric_is_exported() -> None:
    exported = Mm2Metrics().exported_names()
    exprs = rule_exprs()
    assert len(exprs) >= 4
    used = {m for e in exprs for m in METRIC.findall(e)}
    assert used <= exported, f"unknown metrics in alert rules: {sorted(used - exported)}"


def test_a_misspelt_metric_would_be_caught() -> None:
    exported = Mm2Metrics().exported_names()
    assert not ({m for m in METRIC.findall("rate(mm2_source_record_total[1m])")} <= exported)


def test_dashboard_has_pair_and_topic_variables() -> None:
    names = {v["name"] for v in json.loads(DASHBOARD.read_text())["templating"]["list"]}
    assert {"source", "target", "topic"} <= names


def test_promtool_accepts_the_rules() -> None:
    promtool = shutil.which("promtool")
    assert promtool, "promtool is required (Debian package 'prometheus'; .ci/run installs it)"
    result = subprocess.run([promtool, "check", "rules", str(RULES)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_the_fast_rules_of_the_alert_tests_differ_only_in_durations_and_windows() -> None:
    """tests/e2e/test_alerts_fire.py makes the shipped rules fire in seconds: only ``for:`` and range
    windows may change, never a threshold or the logic."""
    from tests.e2e.metrics_harness import fast_rules

    shipped = RULES.read_text()
    fast = fast_rules(shipped, "2s", "20s")
    assert fast != shipped
    assert re.findall(r"^\s*for:\s*(\S+)", fast, re.MULTILINE) == ["2s"] * 7
    assert re.findall(r"\[(\w+)\]", fast) == ["20s"] * len(re.findall(r"\[\d+[smhdwy]\]", shipped))
    normalise = re.compile(r"(^\s*for:\s*\S+$)|(\[\d+[smhdwy]\])", re.MULTILINE)
    assert normalise.sub("", fast) == normalise.sub("", shipped)


def test_the_connect_sink_row_shows_javas_sink_task_metrics() -> None:
    """The "Connect sink" row reads every sink-task family (Java's sink-task-metrics group) but the commit
    sequence number, and only sink series (the task-level commit metrics joined to sink tasks)."""
    from tests.e2e.metrics_harness import CONNECT_SINK_ROW, dashboard_queries

    exprs = [expr for _where, expr in dashboard_queries([CONNECT_SINK_ROW], variables=False)]
    used = {m for e in exprs for m in METRIC.findall(e)}
    sink_families = {
        n for n in Mm2Metrics().exported_names() if n.startswith("mm2_sink_") and not n.endswith("_created")
    }
    assert sink_families - used == {"mm2_sink_offset_commit_seq_no"}
    shared = [e for e in exprs if any(not m.startswith("mm2_sink_") for m in METRIC.findall(e))]
    assert shared and all("and on (source, target, connector, task) mm2_sink_partition_count" in e for e in shared)
