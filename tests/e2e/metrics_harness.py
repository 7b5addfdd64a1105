"""Helpers for the metrics e2e tests: run ``mm2 run`` with ``--metrics-port``, scrape it, and run a
real Prometheus server against it (no pytest imports; failures raise AssertionError with the logs)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "dashboards" / "mm2-dashboard.json"
RULES = ROOT / "dashboards" / "mm2-alerts.yml"

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def http_get(url: str, timeout: float = 5.0) -> str:
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return str(response.read().decode())


def parse_metrics(text: str) -> Samples:
    """Prometheus text exposition -> {(sample name, labels): value}."""
    out: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = float(s.value)
    return out


def scrape(port: int) -> Samples:
    return parse_metrics(http_get(f"http://127.0.0.1:{port}/metrics"))


def total(samples: Samples, name: str, **labels: str) -> float:
    """Sum of every sample called ``name`` whose labels include ``labels``."""
    want = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and want <= ls)


def matching(samples: Samples, name: str, **labels: str) -> dict[frozenset[tuple[str, str]], float]:
    want = set(labels.items())
    return {ls: v for (n, ls), v in samples.items() if n == name and want <= ls}


def wait_until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.5) -> Any:
    """Poll ``check`` until it returns something truthy; AssertionError naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    last: Any = None
    error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            last = check()
            error = None
        except Exception as e:  # the server may not be up yet
            error = e
        if last:
            return last
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}; last result {last!r}, error {error!r}")


def write_mm2_config(
    path: Path,
    source_bootstrap: str,
    target_bootstrap: str,
    topics: str,
    groups: str = ".*",
    extra: Mapping[str, str] | None = None,
) -> Path:
    """A two-cluster A->B config with the product's defaults but the test bed's replication factors;
    ``extra``: what the test is about."""
    props = {
        "clusters": "A, B",
        "A.bootstrap.servers": source_bootstrap,
        "B.bootstrap.servers": target_bootstrap,
        "A->B.enabled": "true",
        "B->A.enabled": "false",
        "A->B.topics": topics,
        "A->B.groups": groups,
        "replication.factor": "1",
        "checkpoints.topic.replication.factor": "1",
        "heartbeats.topic.replication.factor": "1",
        "offset-syncs.topic.replication.factor": "1",
        "offset.storage.replication.factor": "1",
        "status.storage.replication.factor": "1",
        "config.storage.replication.factor": "1",
        **(extra or {}),
    }
    path.write_text("".join(f"{k} = {v}\n" for k, v in props.items()))
    return path


def _log_tail(path: Path, lines: int = 60) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


class _Process:
    """A child process with its output in a log file, stopped with SIGTERM then SIGKILL."""

    name = "process"

    def __init__(self, argv: list[str], log: Path, env: Mapping[str, str] | None = None) -> None:
        self.argv = argv
        self.log = log
        self.env = dict(env) if env is not None else None
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=str(ROOT), start_new_session=True
            )
        return self

    def assert_running(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise AssertionError(
                f"{self.name} exited with {self.proc.returncode}: {' '.join(self.argv)}\n"
                f"--- its log ---\n{self.log_tail()}"
            )

    def log_tail(self, lines: int = 60) -> str:
        return _log_tail(self.log, lines)

    def stop(self, grace: float = 20.0) -> int | None:
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return None if proc is None else proc.returncode
        proc.send_signal(signal.SIGTERM)
        try:
            return proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            return None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()


class _MetricsProcess(_Process):
    """An mm2 command serving ``/metrics`` on ``metrics_port``."""

    def __init__(self, argv: list[str], metrics_port: int, log: Path, env: Mapping[str, str] | None = None) -> None:
        super().__init__(argv, log, env)
        self.metrics_port = metrics_port

    def scrape(self) -> Samples:
        self.assert_running()
        return scrape(self.metrics_port)

    def wait_for_metrics(self, timeout: float = 60.0) -> Samples:
        def up() -> Samples | None:
            self.assert_running()
            return scrape(self.metrics_port)

        try:
            return wait_until(up, timeout, f"/metrics on port {self.metrics_port}")  # type: ignore[no-any-return]
        except AssertionError as e:
            raise AssertionError(f"{e}\n--- mm2 log ---\n{self.log_tail()}") from e

    def wait_for(self, check: Callable[[Samples], Any], timeout: float, what: str, interval: float = 0.5) -> Samples:
        """Scrape until ``check(samples)`` is truthy and return those samples; failures carry the mm2 log."""

        def probe() -> Samples | None:
            samples = self.scrape()
            return samples if check(samples) else None

        try:
            return wait_until(probe, timeout, what, interval)  # type: ignore[no-any-return]
        except AssertionError as e:
            if "exited with" in str(e):
                raise
            raise AssertionError(f"{e}\n--- mm2 log ---\n{self.log_tail()}") from e


class Mm2Run(_MetricsProcess):
    """``mm2 run CONFIG --metrics-port PORT`` as a subprocess."""

    name = "mm2 run"

    def __init__(self, config: Path, metrics_port: int, log: Path, herder: str | None = None) -> None:
        env = dict(os.environ)
        if herder:
            env["MM2_HERDER"] = herder
        super().__init__(
            [
                sys.executable,
                "-m",
                "mirror",
                "--log-level",
                "INFO",
                "run",
                str(config),
                "--metrics-port",
                str(metrics_port),
            ],
            metrics_port,
            log,
            env,
        )


class Mm2Connect(_MetricsProcess):
    """``mm2 connect standalone WORKER CONNECTOR... --metrics-port PORT`` as a subprocess."""

    name = "mm2 connect standalone"

    def __init__(self, worker: Path, connectors: Iterable[Path], metrics_port: int, log: Path) -> None:
        super().__init__(
            [
                sys.executable,
                "-m",
                "mirror",
                "--log-level",
                "INFO",
                "connect",
                "standalone",
                str(worker),
                *map(str, connectors),
                "--metrics-port",
                str(metrics_port),
            ],
            metrics_port,
            log,
        )


def prometheus_binary() -> str:
    """The Prometheus server binary, or an AssertionError saying how to get it."""
    found = shutil.which("prometheus") or ("/usr/bin/prometheus" if os.access("/usr/bin/prometheus", os.X_OK) else None)
    if not found:
        raise AssertionError(
            "the Prometheus server binary 'prometheus' is required for this test and was not found "
            "(install the Debian package 'prometheus'; .ci/run installs it)"
        )
    return found


class PrometheusServer(_Process):
    """A throw-away Prometheus scraping ``targets`` every second, with mm2's alert rules loaded."""

    name = "prometheus"

    def __init__(self, workdir: Path, port: int, targets: Iterable[str], rules: Path = RULES) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        config = workdir / "prometheus.yml"
        config.write_text(
            "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n"
            f"rule_files:\n  - {json.dumps(str(rules))}\n"
            "scrape_configs:\n  - job_name: mm2\n    static_configs:\n"
            f"      - targets: {json.dumps(list(targets))}\n"
        )
        super().__init__(
            [
                prometheus_binary(),
                f"--config.file={config}",
                f"--storage.tsdb.path={workdir / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            workdir / "prometheus.log",
        )
        self.url = f"http://127.0.0.1:{port}"

    def start(self) -> Self:
        super().start()
        try:
            wait_until(lambda: (self.assert_running(), http_get(self.url + "/-/ready"))[1], 30, "Prometheus ready")
        except AssertionError:
            self.stop()
            raise
        return self

    def api(self, path: str, params: Mapping[str, str] | None = None) -> Any:
        self.assert_running()
        url = f"{self.url}/api/v1/{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            body = json.loads(http_get(url, timeout=10))
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{url}: HTTP {e.code}: {e.read().decode(errors='replace')}") from e
        assert body.get("status") == "success", body
        return body["data"]

    def query(self, expr: str) -> list[dict[str, Any]]:
        """Instant query; the result vector (a scalar comes back as one unlabelled sample)."""
        data = self.api("query", {"query": expr})
        if data["resultType"] == "scalar":
            return [{"metric": {}, "value": data["result"]}]
        return list(data["result"])

    def label_values(self, selector: str, label: str) -> list[str]:
        """What Grafana's ``label_values(selector, label)`` variable query lists."""
        return list(self.api(f"label/{label}/values", {"match[]": selector}))

    def targets_up(self) -> bool:
        active = self.api("targets")["activeTargets"]
        return bool(active) and all(t["health"] == "up" for t in active)

    def rules(self) -> list[dict[str, Any]]:
        return [r for g in self.api("rules")["groups"] for r in g["rules"]]

    def alerts(self) -> list[dict[str, Any]]:
        """Active alerts (pending or firing), each with ``labels`` (``alertname`` included) and ``state``."""
        return list(self.api("alerts")["alerts"])


_FOR = re.compile(r"^(\s*for:\s*)\S+\s*$", re.MULTILINE)
_WINDOW = re.compile(r"\[\d+[smhdwy]\]")


def fast_rules(text: str, for_: str, window: str) -> str:
    """The alert rules with every ``for:`` set to ``for_`` and every range-vector window set to ``window``:
    what a test needs to see them fire in seconds. Thresholds and the expressions' logic stay as shipped."""
    return _WINDOW.sub(f"[{window}]", _FOR.sub(lambda m: m.group(1) + for_, text))


def write_fast_rules(path: Path, for_: str = "2s", window: str = "20s") -> Path:
    """A copy of ``dashboards/mm2-alerts.yml`` for a test Prometheus (see :func:`fast_rules`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(fast_rules(RULES.read_text(), for_, window))
    return path


#: The dashboard row of ``mm2 connect``'s sink tasks: ``mm2 run`` has no sink connector to fill it.
CONNECT_SINK_ROW = "Connect sink"


def dashboard_rows() -> dict[str, list[dict[str, Any]]]:
    """The dashboard's panels by row title (panels above the first row under ""), as Grafana lays them out."""
    rows: dict[str, list[dict[str, Any]]] = {"": []}
    current = ""
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        if panel.get("type") == "row":
            current = panel["title"]
            rows.setdefault(current, []).extend(panel.get("panels", []))  # a collapsed row holds its panels
            continue
        rows[current].append(panel)
    return rows


def dashboard_queries(rows: Iterable[str] | None = None, variables: bool = True) -> list[tuple[str, str]]:
    """(where, expression) of every panel target (of the rows titled ``rows``; default: every row but
    the Connect sink row) and, with ``variables``, every query variable of the dashboard."""
    by_row = dashboard_rows()
    wanted = [r for r in by_row if r != CONNECT_SINK_ROW] if rows is None else list(rows)
    missing = [r for r in wanted if r not in by_row]
    assert not missing, f"no dashboard row titled {missing}"
    out = [
        (f"panel {p['title']!r} target {t.get('refId', i)}", t["expr"])
        for r in wanted
        for p in by_row[r]
        for i, t in enumerate(p.get("targets", []))
    ]
    if variables:
        dash = json.loads(DASHBOARD.read_text())
        out += [
            (f"variable ${v['name']}", v["query"]["query"])
            for v in dash["templating"]["list"]
            if isinstance(v.get("query"), dict)
        ]
    return out


def substitute_variables(expr: str, values: Mapping[str, str]) -> str:
    """Replace Grafana's ``$name`` / ``${name}`` (longest names first) with ``values[name]``."""
    for name in sorted(values, key=len, reverse=True):
        expr = expr.replace("${" + name + "}", values[name]).replace("$" + name, values[name])
    return expr


def label_values_query(expr: str) -> tuple[str, str] | None:
    """Grafana's ``label_values(selector, label)`` is not PromQL: (selector, label) to run it via the API."""
    expr = expr.strip()
    if not expr.startswith("label_values(") or not expr.endswith(")"):
        return None
    inner = expr[len("label_values(") : -1]
    selector, _, label = inner.rpartition(",")
    return selector.strip(), label.strip()
