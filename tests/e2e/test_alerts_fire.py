"""Every alert of ``dashboards/mm2-alerts.yml`` fires in a real Prometheus scraping a real ``mm2 run``
when its condition is made to hold by a real fault, and resolves once the fault is gone.

Prometheus loads the shipped rules with only ``for:`` and range windows shortened (``write_fast_rules``;
a unit test in test_dashboards.py proves nothing else differs), so the thresholds and the logic are
the product's. Two tests, each with one ``mm2 run`` and one Prometheus for several alerts:

* the target broker frozen (SIGSTOP) while producers keep writing: lag grows, scheduled verifications
  stop completing, heartbeats stop; all resolve after SIGCONT;
* faults of one connector at a time through the flow's REST API (so the others keep the flow under
  watch): a target address that refuses connections makes the heartbeat task's producer report
  errors, the paused checkpoint connector lets checkpoints go stale, a record written to the target by
  someone else makes the scheduled verification find the mirror different, and a misspelt producer
  setting fails the heartbeat task.

A frozen broker is not what the client-errors alert sees: connections stay open, and a producer with
nothing in flight (the source task stops reading while its copies are unacknowledged) has no request
to time out, so librdkafka reports nothing for minutes; a refused connection is reported at once.
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.metrics_harness import (
    Mm2Run,
    PrometheusServer,
    prometheus_binary,
    total,
    wait_until,
    write_fast_rules,
    write_mm2_config,
)
from tests.e2e.test_prometheus_dashboard import commit_group

#: What these tests are about, in the product's own settings: scheduled verification (every 5 s, so
#: "stale" is 15 s), checkpoints checked every second (stale after 10 s), offsets flushed every second
#: (verification compares flushed records), and the REST API of the flow.
VERIFY_INTERVAL_S = 5


def alert_settings(rest_port: int) -> dict[str, str]:
    return {
        "verify.interval.seconds": str(VERIFY_INTERVAL_S),
        "emit.checkpoints.interval.seconds": "1",
        "B.offset.flush.interval.ms": "1000",  # worker settings of the A->B herder come from its target's props
        "dedicated.mode.enable.internal.rest": "true",
        "listeners": f"http://127.0.0.1:{rest_port}",
    }


class Producer:
    """Keeps writing to a topic at a rate the test can change (records per second)."""

    def __init__(self, cluster: KafkaCluster, topic: str, partitions: int, rate: float) -> None:
        self.cluster, self.topic, self.partitions, self.rate = cluster, topic, partitions, rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"produce-{topic}", daemon=True)

    def _run(self) -> None:
        producer = self.cluster.producer()
        i = 0
        while not self._stop.wait(1.0 / self.rate):
            producer.produce(self.topic, key=b"k%d" % i, value=b"v" * 100, partition=i % self.partitions)
            producer.poll(0)
            i += 1
        producer.flush(10)

    def __enter__(self) -> Producer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(20)


@contextmanager
def frozen(cluster: KafkaCluster) -> Iterator[None]:
    """The broker stalled (SIGSTOP): connections stay open, nothing answers. Always thawed after."""
    cluster.pause()  # type: ignore[attr-defined]
    try:
        yield
    finally:
        cluster.resume()  # type: ignore[attr-defined]


def rest(port: int, path: str, method: str = "GET", body: Any = None, timeout: float = 60.0) -> Any:
    """One call to the flow's REST API, retried while the herder answers "busy" (409 during a rebalance,
    500 when a config write timed out on a loaded machine)."""
    data = None if body is None else json.dumps(body).encode()

    def call() -> tuple[Any]:
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}{path}", data=data, method=method, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(req, timeout=30) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as e:
            if e.code in (409, 500):
                raise AssertionError(f"{method} {path}: HTTP {e.code} {e.read().decode(errors='replace')}") from e
            raise
        return (json.loads(text) if text else None,)

    return wait_until(call, timeout, f"{method} {path}", interval=1.0)[0]


def active(prom: PrometheusServer, name: str, state: str | None = None, **labels: str) -> list[dict[str, Any]]:
    """The alerts called ``name`` whose labels include ``labels`` (in ``state`` if given)."""
    return [
        a
        for a in prom.alerts()
        if a["labels"].get("alertname") == name
        and all(a["labels"].get(k) == v for k, v in labels.items())
        and (state is None or a["state"] == state)
    ]


class AlertWatch:
    """Polls Prometheus' alerts, remembering which expected alerts were seen firing (some conditions,
    such as lag growing, hold only for a while)."""

    def __init__(self, prom: PrometheusServer, mm2: Mm2Run, expected: dict[str, dict[str, str]]) -> None:
        self.prom, self.mm2, self.expected = prom, mm2, expected
        self.fired: dict[str, dict[str, Any]] = {}

    def poll(self) -> set[str]:
        self.mm2.assert_running()
        for name, labels in self.expected.items():
            if name not in self.fired:
                hits = active(self.prom, name, "firing", **labels)
                if hits:
                    self.fired[name] = hits[0]
        return set(self.fired)

    def wait_all_fired(self, timeout: float, cond: Callable[[], bool] = lambda: True) -> None:
        def done() -> bool:
            return self.poll() == set(self.expected) and cond()

        try:
            wait_until(done, timeout, f"alerts firing: {sorted(self.expected)}", interval=1.0)
        except AssertionError as e:
            raise AssertionError(
                f"{e}\nfired: {sorted(self.fired)}; active now: {self.prom.alerts()}\n"
                f"--- mm2 log ---\n{self.mm2.log_tail()}"
            ) from e

    def wait_all_resolved(self, timeout: float) -> None:
        def resolved() -> bool:
            self.mm2.assert_running()
            return not any(active(self.prom, name, **labels) for name, labels in self.expected.items())

        try:
            wait_until(resolved, timeout, f"alerts resolved: {sorted(self.expected)}", interval=1.0)
        except AssertionError as e:
            raise AssertionError(
                f"{e}\nactive now: {self.prom.alerts()}\n--- mm2 log ---\n{self.mm2.log_tail()}"
            ) from e


def start_flow(
    a: KafkaCluster, b: KafkaCluster, tmp_path: Path, topics: str, group: str, rest_port: int
) -> tuple[Path, int, int]:
    config = write_mm2_config(
        tmp_path / "mm2.properties",
        a.bootstrap_servers,
        b.bootstrap_servers,
        topics=topics,
        groups=re.escape(group),
        extra=alert_settings(rest_port),
    )
    return config, free_port(), free_port()


def wait_healthy(prom: PrometheusServer, mm2: Mm2Run) -> None:
    """Records flowing, a checkpoint of the group, a completed verification, heartbeats; Prometheus scraping
    and evaluating every rule, none firing."""
    mm2.wait_for_metrics()
    mm2.wait_for(
        lambda s: (
            total(s, "mm2_source_records_total") > 0
            and total(s, "mm2_checkpoints_total") > 0
            and total(s, "mm2_heartbeats_total") > 0
            and total(s, "mm2_verify_runs_total", result="equal") >= 1
        ),
        120,
        "records, a checkpoint, heartbeats and a verification proving the mirror equal",
    )
    wait_until(prom.targets_up, 30, "Prometheus scraping mm2")
    wait_until(
        lambda: all(r.get("lastEvaluation", "").startswith("20") for r in prom.rules()),
        30,
        "every alert rule evaluated",
    )
    # None firing once every rule has been evaluated on the healthy flow. A condition wait, not a single
    # look: on a starved machine a heartbeat can be acknowledged late for a moment (seen once in a full run
    # beside a second suite); a rule that fires on a healthy flow keeps firing and still fails here.
    last: list[Any] = []

    def quiet() -> bool:
        last[:] = [a["labels"] for a in prom.alerts() if a["state"] == "firing"]
        return not last

    try:
        wait_until(quiet, 90, "no alert firing on the healthy flow", interval=1.0)
    except AssertionError as e:
        raise AssertionError(f"alerts firing on a healthy flow: {last}\n--- mm2 log ---\n{mm2.log_tail()}") from e


def test_a_frozen_target_fires_lag_stale_verification_and_missing_heartbeats_then_resolves(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    prometheus_binary()
    a, b = two_clusters
    topic, group = unique_name("orders"), unique_name("billing")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [{"key": b"k%d" % i, "value": b"v", "partition": i % 2} for i in range(20)])
    commit_group(a, group, topic, 2, 5)
    config, metrics_port, prom_port = start_flow(a, b, tmp_path, re.escape(topic), group, free_port())
    pair = {"source": "A", "target": "B"}
    expected = {
        "MM2ReplicationLagGrowing": {**pair, "topic": f"A.{topic}"},
        "MM2VerificationStale": pair,
        "MM2HeartbeatsMissing": pair,
    }
    rules = write_fast_rules(tmp_path / "prometheus" / "rules.yml")
    with (
        PrometheusServer(tmp_path / "prometheus", prom_port, [f"127.0.0.1:{metrics_port}"], rules) as prom,
        Mm2Run(config, metrics_port, tmp_path / "mm2.log") as mm2,
        Producer(a, topic, 2, rate=10) as producer,
    ):
        wait_healthy(prom, mm2)
        watch = AlertWatch(prom, mm2, expected)
        started = time.monotonic()
        producer.rate = 100  # the producers keep writing while nothing reaches the target
        with frozen(b):
            # Heartbeats are missing after 60 s (the rule's threshold), verification after 3 intervals.
            watch.wait_all_fired(180)
        frozen_s = time.monotonic() - started
        producer.rate = 10
        lag = watch.fired["MM2ReplicationLagGrowing"]
        assert float(lag["value"]) > 1000, lag
        watch.wait_all_resolved(180)
        # Resolved because the flow recovered, not because series vanished: verification completes again
        # and records flow.
        after = mm2.scrape()
        assert total(after, "mm2_verify_runs_total", result="failed") >= 1, "no verification failed while frozen"
        print(
            f"frozen for {frozen_s:.0f}s until all three fired; resolved {time.monotonic() - started - frozen_s:.0f}s"
            " after the thaw"
        )


def test_connector_faults_fire_client_errors_stale_checkpoints_mirror_differs_and_task_failed(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    prometheus_binary()
    a, b = two_clusters
    topic, ledger, group = unique_name("orders"), unique_name("ledger"), unique_name("billing")
    a.create_topic(topic, partitions=2)
    a.create_topic(ledger, partitions=1)
    a.produce(topic, [{"key": b"k%d" % i, "value": b"v", "partition": i % 2} for i in range(20)])
    a.produce(ledger, [{"key": b"l%d" % i, "value": b"entry-%d" % i, "partition": 0} for i in range(10)])
    commit_group(a, group, topic, 2, 5)
    rest_port = free_port()
    config, metrics_port, prom_port = start_flow(
        a, b, tmp_path, f"{re.escape(topic)}|{re.escape(ledger)}", group, rest_port
    )
    pair = {"source": "A", "target": "B"}
    rules = write_fast_rules(tmp_path / "prometheus" / "rules.yml")
    with (
        PrometheusServer(tmp_path / "prometheus", prom_port, [f"127.0.0.1:{metrics_port}"], rules) as prom,
        Mm2Run(config, metrics_port, tmp_path / "mm2.log") as mm2,
        Producer(a, topic, 2, rate=10),
    ):
        wait_healthy(prom, mm2)
        mm2.wait_for(
            lambda s: total(s, "mm2_source_records_total", topic=f"A.{ledger}") >= 10, 60, "the ledger mirrored"
        )
        base = "/A/B/connectors"
        heartbeat_config = rest(rest_port, f"{base}/MirrorHeartbeatConnector/config")
        # 1. someone writes into the mirrored topic on the target, between records mirrored before and
        # after; 2. the checkpoint connector is paused; 3. the heartbeat connector's producer is pointed
        # at a target address where nothing listens.
        b.produce(f"A.{ledger}", [{"key": b"intruder", "value": b"not from the source", "partition": 0}])
        a.produce(ledger, [{"key": b"m%d" % i, "value": b"more-%d" % i, "partition": 0} for i in range(5)])
        rest(rest_port, f"{base}/MirrorCheckpointConnector/pause", "PUT")
        rest(
            rest_port,
            f"{base}/MirrorHeartbeatConnector/config",
            "PUT",
            {**heartbeat_config, "producer.override.bootstrap.servers": f"127.0.0.1:{free_port()}"},
        )
        watch = AlertWatch(
            prom,
            mm2,
            {
                "MM2MirrorDiffers": {**pair, "kind": "extra"},
                "MM2CheckpointsStale": {**pair, "group": group},
                "MM2TargetUnreachable": pair,
            },
        )
        watch.wait_all_fired(120)
        errors = mm2.scrape()
        assert total(errors, "mm2_client_errors_total", client="producer", error="transport") > 0, errors

        # The checkpoint and address faults fixed; then a misspelt compression type in the heartbeat
        # connector's producer settings fails its task (the producer cannot be created).
        rest(rest_port, f"{base}/MirrorCheckpointConnector/resume", "PUT")
        rest(
            rest_port,
            f"{base}/MirrorHeartbeatConnector/config",
            "PUT",
            {**heartbeat_config, "producer.override.compression.type": "snappyy"},
        )
        AlertWatch(
            prom, mm2, {"MM2CheckpointsStale": {**pair, "group": group}, "MM2TargetUnreachable": pair}
        ).wait_all_resolved(90)
        failing = AlertWatch(
            prom, mm2, {"MM2TaskFailed": {**pair, "connector": "MirrorHeartbeatConnector", "task": "0"}}
        )
        failing.wait_all_fired(120)
        failed = rest(rest_port, f"{base}/MirrorHeartbeatConnector/status")["tasks"][0]
        assert failed["state"] == "FAILED" and "snappyy" in failed.get("trace", ""), failed

        # The operator's fix: the old config back, then the restart the alert's description asks for. The
        # extra record cannot be removed from the target (the test broker has no DeleteRecords): the
        # mirror stays different.
        rest(rest_port, f"{base}/MirrorHeartbeatConnector/config", "PUT", heartbeat_config)

        def heartbeat_task_running() -> bool:
            state = rest(rest_port, f"{base}/MirrorHeartbeatConnector/status")["tasks"]
            if state and state[0]["state"] == "FAILED":
                rest(rest_port, f"{base}/MirrorHeartbeatConnector/tasks/0/restart", "POST")
                return False
            return bool(state) and state[0]["state"] == "RUNNING"

        wait_until(heartbeat_task_running, 90, "the heartbeat task running again after its restart", interval=3.0)
        failing.wait_all_resolved(90)
        assert active(prom, "MM2MirrorDiffers", "firing", kind="extra"), prom.alerts()
