"""The MirrorSource metrics sink's declared hooks (mirror.connectors.source_metrics): what the task may call."""

from __future__ import annotations

from mirror.connectors.source_metrics import NoOpSourceMetrics, SourceMetricsBase, reports_lag
from mirror.driver.metrics import Mm2Metrics
from mirror.driver.metrics_bindings import SourceTaskMetrics


class Changes(SourceMetricsBase):
    def __init__(self) -> None:
        self.events: list[tuple[str, int, str, int]] = []

    def source_changed(self, topic: str, partition: int, reason: str, count: int = 1) -> None:
        self.events.append((topic, partition, reason, count))


class Lags(SourceMetricsBase):
    def lag(self, topic: str, partition: int, records: int, last_timestamp_ms: int | None) -> None:
        return None


def test_every_hook_of_the_base_can_be_called_and_does_nothing() -> None:
    sink = Changes()
    sink.assigned([("A.t", 0)])
    sink.polled("A.t", 0, 3, 30, 1.0)
    sink.acknowledged("A.t", 0, 3, 2.0)
    sink.throughput(None, 0.0)
    sink.lag("A.t", 0, 5, None)
    sink.offset_syncs_sent("A.t", 0)
    sink.records_lost("A.t", 0, 7)
    sink.source_changed("A.t", 0, "recreated")
    assert sink.events == [("A.t", 0, "recreated", 1)]  # only the hook it overrides records


def test_the_lag_bookkeeping_runs_only_for_a_sink_that_records_lag() -> None:
    assert not reports_lag(NoOpSourceMetrics())
    assert not reports_lag(Changes())  # other hooks overridden, lag not
    assert reports_lag(Lags())
    assert reports_lag(SourceTaskMetrics(Mm2Metrics(), "A", "B"))  # mm2 run's sink
