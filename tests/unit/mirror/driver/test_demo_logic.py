"""The demo's pure parts: counting per topic/partition, drain, per-partition comparison, result line."""

from __future__ import annotations

import io

from mirror.cli.demo_view import PlainView, make_view, result_line
from mirror.driver.demo import DemoOutcome, partition_differences
from mirror.driver.demo_traffic import TrafficStats


def test_stats_count_per_topic_and_drain_per_partition() -> None:
    stats = TrafficStats({"orders": "A.orders", "clicks": "A.clicks"})
    for p in (0, 0, 1):
        stats.on_produced("orders", p)
    stats.on_produced("clicks", 0)
    stats.on_mirrored("A.orders", 0, 120.0)
    stats.on_mirrored("A.orders", 1, 80.0)
    stats.on_mirrored("A.clicks", 0, None)
    rows = {r.topic: r for r in stats.rows()}
    assert (rows["orders"].produced, rows["orders"].mirrored, rows["orders"].lag) == (3, 2, 1)
    assert rows["orders"].latency_p50_ms == 100.0 and rows["orders"].latency_max_ms == 120.0
    assert rows["clicks"].latency_p50_ms is None and rows["clicks"].lag == 0
    assert not stats.drained()  # orders[0] has 2 produced, 1 mirrored: the total alone would not tell
    stats.on_mirrored("A.orders", 0, 90.0)
    assert stats.drained()
    assert (stats.produced, stats.mirrored) == (4, 4)


def test_partition_differences_names_each_partition_and_why() -> None:
    a = {0: [("k", 1)], 1: [("k", 2), ("k", 3)], 2: [("x", 0)]}
    b = {0: [("k", 1)], 1: [("k", 2)], 2: [("y", 0)]}
    assert partition_differences("A.t", a, b) == ["A.t[1]: 2 records on A, 1 on B", "A.t[2]: record 0 differs"]
    assert partition_differences("A.t", a, dict(a)) == []


def test_result_line_says_identical_only_when_checked() -> None:
    assert (
        result_line(DemoOutcome(128, 128, True))
        == "128 produced, 128 mirrored, identical per partition (key, value, headers, timestamp, order)."
    )
    assert result_line(DemoOutcome(128, 127, False, ["A.orders[1]: 40 records on A, 39 on B"])) == (
        "128 produced, 127 mirrored: NOT identical: B did not receive every record in time; "
        "A.orders[1]: 40 records on A, 39 on B"
    )
    assert not DemoOutcome(128, 129, True).ok  # a duplicate read on B is not "identical" either


def test_plain_view_prints_progress_every_few_seconds() -> None:
    lines: list[str] = []
    view = PlainView(lines.append, "mm2", "/tmp/x.log")
    stats = TrafficStats({"orders": "A.orders"})
    stats.on_produced("orders", 0)
    for t in (0.5, 4.9, 5.0, 7.0, 10.1):
        view.progress(t, stats.rows())
    assert lines == [
        "     5s  orders 0/1 mirrored (lag 1, latency p50 -)",
        "    10s  orders 0/1 mirrored (lag 1, latency p50 -)",
    ]


def test_non_terminal_output_gets_the_plain_view() -> None:
    assert isinstance(make_view("mm2", "/tmp/x.log", io.StringIO()), PlainView)
