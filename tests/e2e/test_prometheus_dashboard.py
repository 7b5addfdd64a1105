"""A real Prometheus scraping a live ``mm2 run``: every dashboard query returns data, every alert rule loads.

What a user imports is only useful if each panel shows something on a healthy, running flow, so
each panel target and variable query of ``dashboards/mm2-dashboard.json`` is evaluated through
Prometheus' HTTP API (Grafana's ``$source``/``$target``/``$topic`` set to ``.*`` as "All" does), and
``dashboards/mm2-alerts.yml`` is loaded into that Prometheus and must evaluate healthily. The
"Connect sink" row is checked the same way against ``mm2 connect standalone`` running a sink connector
(``mm2 run`` runs no sink).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.metrics_harness import (
    CONNECT_SINK_ROW,
    RULES,
    Mm2Connect,
    Mm2Run,
    PrometheusServer,
    dashboard_queries,
    dashboard_rows,
    label_values_query,
    prometheus_binary,
    substitute_variables,
    total,
    wait_until,
    write_mm2_config,
)

ALL = {"source": ".*", "target": ".*", "topic": ".*", "datasource": "prometheus"}


@contextmanager
def trickle(cluster: KafkaCluster, topic: str, partitions: int, every_s: float = 0.2) -> Iterator[None]:
    """Keep producing a record every ``every_s`` so rates stay above zero while Prometheus looks."""
    stop = threading.Event()

    def run() -> None:
        producer = cluster.producer()
        i = 0
        while not stop.wait(every_s):
            producer.produce(topic, key=b"k%d" % i, value=b"live-%d" % i, partition=i % partitions)
            producer.poll(0)
            i += 1
        producer.flush(10)

    thread = threading.Thread(target=run, name="trickle", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(15)


#: What this test is about: every panel has data within a minute or two (checkpoints, group offset syncs,
#: offset syncs and offset flushes happen within seconds; the scheduled verification is set per test).
EVERY_PANEL_SOON = {
    "emit.checkpoints.interval.seconds": "1",
    "sync.group.offsets.enabled": "true",
    "sync.group.offsets.interval.seconds": "1",
    "B.offset.flush.interval.ms": "1000",  # worker settings of the A->B herder come from its target's props
    "offset.lag.max": "10",
}


def commit_group(cluster: KafkaCluster, group: str, topic: str, partitions: int, offset: int) -> None:
    """Give the source a consumer group with committed offsets, so checkpoints have something to translate."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "group.id": group,
            "enable.auto.commit": False,
            "allow.auto.create.topics": False,
        }
    )
    try:
        consumer.commit(offsets=[TopicPartition(topic, p, offset) for p in range(partitions)], asynchronous=False)
    finally:
        consumer.close()


def evaluate(prom: PrometheusServer, expr: str) -> list[Any]:
    """A panel target or a variable query, as Grafana would run it with every variable on "All"."""
    expr = substitute_variables(expr, ALL)
    lv = label_values_query(expr)
    if lv is not None:
        return prom.label_values(*lv)
    return prom.query(expr)


def rule_names() -> set[str]:
    names = set(re.findall(r"^\s*- alert:\s*(\S+)\s*$", RULES.read_text(), re.MULTILINE))
    assert len(names) >= 4, names
    return names


def test_every_dashboard_query_returns_data_and_alert_rules_are_healthy(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    prometheus_binary()  # fail first, with the install hint, if the server is missing
    a, b = two_clusters
    topic, group = unique_name("orders"), unique_name("billing")
    a.create_topic(topic, partitions=2)
    a.produce(topic, [{"key": b"k%d" % i, "value": b"v" * 100, "partition": i % 2} for i in range(40)])
    commit_group(a, group, topic, 2, 15)
    config = write_mm2_config(
        tmp_path / "mm2.properties",
        a.bootstrap_servers,
        b.bootstrap_servers,
        topics=re.escape(topic),
        groups=re.escape(group),
        extra={**EVERY_PANEL_SOON, "verify.interval.seconds": "2"},
    )
    metrics_port, prom_port = free_port(), free_port()
    queries = dashboard_queries()
    assert len(queries) >= 15, queries

    with (
        PrometheusServer(tmp_path / "prometheus", prom_port, [f"127.0.0.1:{metrics_port}"]) as prom,
        Mm2Run(config, metrics_port, tmp_path / "mm2.log") as mm2,
        trickle(a, topic, 2),
    ):
        mm2.wait_for_metrics()
        # Everything a panel reads has happened at least once: records, a checkpoint, a group sync, heartbeats.
        mm2.wait_for(
            lambda s: (
                total(s, "mm2_source_records_total") >= 40
                and total(s, "mm2_checkpoints_total") > 0
                and total(s, "mm2_group_offset_syncs_total") > 0
                and total(s, "mm2_heartbeats_total") > 0
            ),
            120,
            "records, checkpoints, group offset syncs and heartbeats in /metrics",
        )
        # The scheduled verification runs on the live flow (records keep arriving): it moves its metrics,
        # compares more records run after run, and finds no difference (unreplicated records are pending).
        first = mm2.wait_for(
            lambda s: total(s, "mm2_verify_runs_total", result="equal") >= 1,
            60,
            "a scheduled verification proving the mirror equal",
        )
        compared = total(first, "mm2_verify_records_compared_total")
        later = mm2.wait_for(
            lambda s: (
                total(s, "mm2_verify_records_compared_total") > compared
                and total(s, "mm2_verify_runs_total", result="equal") >= 2
            ),
            60,
            "a second scheduled verification",
        )
        assert total(later, "mm2_verify_runs_total", result="different") == 0, mm2.log_tail()
        assert total(later, "mm2_verify_runs_total", result="failed") == 0, mm2.log_tail()
        assert total(later, "mm2_verify_differences") == 0
        assert total(later, "mm2_verify_last_success_timestamp_seconds") > 0
        wait_until(prom.targets_up, 30, "Prometheus scraping mm2")

        def empty_queries() -> list[str]:
            return [f"{where}: {expr}" for where, expr in queries if not evaluate(prom, expr)]

        missing: list[str] = []

        def all_have_data() -> bool:
            missing[:] = empty_queries()
            return not missing

        try:
            wait_until(all_have_data, 90, "every dashboard query to return data", interval=2.0)
        except AssertionError as e:
            raise AssertionError(
                "dashboard queries without data:\n  " + "\n  ".join(missing) + f"\n--- mm2 log ---\n{mm2.log_tail()}"
            ) from e

        # The headline panels carry real values, not just zero series.
        records_rate = evaluate(prom, queries_by_title("Records replicated / s")[0])
        assert any(float(r["value"][1]) > 0 for r in records_rate), records_rate
        sources = evaluate(prom, "label_values(mm2_source_records_total, source)")
        assert sources == ["A"], sources

        # Alert rules: all loaded, evaluated and healthy.
        def rules_evaluated() -> list[dict[str, Any]] | None:
            rules = prom.rules()
            done = [r for r in rules if r.get("lastEvaluation", "").startswith("20")]
            return rules if rules and len(done) == len(rules) else None

        rules = wait_until(rules_evaluated, 30, "every alert rule evaluated")
        assert {r["name"] for r in rules} == rule_names()
        unhealthy = {r["name"]: r.get("lastError") for r in rules if r["health"] != "ok"}
        assert not unhealthy, unhealthy
        # Every rule has a `for:` longer than this test, so "firing" could never be seen here: the state says
        # whether a condition is true at all ("pending" as soon as it is), and on a healthy flow none is.
        states = {r["name"]: r["state"] for r in rules}
        assert states == dict.fromkeys(rule_names(), "inactive"), f"alert conditions true on a healthy flow: {states}"


def test_connect_sink_row_queries_return_data(
    kafka_cluster: KafkaCluster, tmp_path: Path, unique_name: Callable[[str], str]
) -> None:
    from tests.e2e.test_connect_metrics import TASK, sink, write_file_sink, write_worker

    prometheus_binary()
    topic = unique_name("sink-row")
    kafka_cluster.create_topic(topic, partitions=2)
    worker = write_worker(tmp_path / "worker.properties", kafka_cluster, free_port())
    connector = write_file_sink(tmp_path / "sink.properties", topic, tmp_path / "out.txt")
    metrics_port, prom_port = free_port(), free_port()
    queries = dashboard_queries([CONNECT_SINK_ROW], variables=False)
    assert len(queries) >= 8, queries

    with (
        PrometheusServer(tmp_path / "prometheus", prom_port, [f"127.0.0.1:{metrics_port}"]) as prom,
        Mm2Connect(worker, [connector], metrics_port, tmp_path / "mm2.log") as mm2,
        trickle(kafka_cluster, topic, 2),
    ):
        mm2.wait_for(
            lambda s: (
                sink(s, "mm2_sink_record_send_total") > 0 and sink(s, "mm2_sink_offset_commit_completion_total") > 0
            ),
            120,
            "records put to the sink task and an offset commit",
        )
        assert TASK["connector"] == "file-sink"
        wait_until(prom.targets_up, 30, "Prometheus scraping mm2 connect")
        missing: list[str] = []

        def all_have_data() -> bool:
            missing[:] = [f"{where}: {expr}" for where, expr in queries if not evaluate(prom, expr)]
            return not missing

        try:
            wait_until(all_have_data, 90, "every Connect sink query to return data", interval=2.0)
        except AssertionError as e:
            raise AssertionError(
                "Connect sink queries without data:\n  " + "\n  ".join(missing) + f"\n--- mm2 log ---\n{mm2.log_tail()}"
            ) from e
        reads = evaluate(prom, queries_by_title("Sink records read and put / s")[0])
        assert [r["metric"].get("connector") for r in reads] == ["file-sink"], reads
        wait_until(
            lambda: any(
                float(r["value"][1]) > 0 for r in evaluate(prom, queries_by_title("Sink records read and put / s")[0])
            ),
            60,
            "a non-zero sink read rate",
        )
        partitions = evaluate(prom, queries_by_title("Sink partitions assigned")[0])
        assert [float(r["value"][1]) for r in partitions] == [2.0], partitions


def queries_by_title(title: str) -> list[str]:
    exprs = [
        expr
        for where, expr in dashboard_queries(dashboard_rows(), variables=False)
        if where.startswith(f"panel {title!r}")
    ]
    assert exprs, f"no panel titled {title!r}"
    return exprs
