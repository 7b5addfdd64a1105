"""The herder factory seam: which runtime is chosen, and what reaches each builder (its declared arguments)."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

from mirror.driver.herder_factory import (
    HerderSpec,
    default_factory,
    distributed_factory,
    standalone_factory,
)
from mirror.driver.maker_config import SourceAndTarget
from mirror.driver.metrics import Mm2Metrics
from mirror.driver.metrics_bindings import FlowMetrics


def test_environment_chooses_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MM2_HERDER", "standalone")
    assert default_factory() is standalone_factory
    monkeypatch.setenv("MM2_HERDER", "Distributed")
    assert default_factory() is distributed_factory
    assert default_factory("standalone") is standalone_factory  # the argument wins
    monkeypatch.setenv("MM2_HERDER", "cluster")
    with pytest.raises(ValueError, match="MM2_HERDER"):
        default_factory()


def test_distributed_is_the_default_when_available(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MM2_HERDER", raising=False)
    assert default_factory() is distributed_factory


def recording(real: Callable[..., Any], seen: dict[str, Any], herder: Any) -> Callable[..., Any]:
    """A stand-in for ``real`` that refuses any call the real builder's signature would refuse."""

    def build(*args: Any, **kwargs: Any) -> Any:
        seen.update(inspect.signature(real).bind(*args, **kwargs).arguments)
        return herder

    return build


class StartStop:
    def __init__(self, seen: dict[str, Any]) -> None:
        self.seen = seen

    def start(self) -> None:
        self.seen["started"] = True

    def stop(self) -> None:
        self.seen["stopped"] = True


def test_standalone_builder_gets_the_flow_metrics_and_kafka_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect_core.herder import standalone

    seen: dict[str, Any] = {}
    monkeypatch.setattr(
        standalone, "build_standalone_herder", recording(standalone.build_standalone_herder, seen, StartStop(seen))
    )
    leaderships: list[int] = []
    spec = HerderSpec(
        SourceAndTarget("A", "B"),
        {"bootstrap.servers": "b:9092"},
        "A->B",
        on_became_leader=lambda: leaderships.append(1),
        metrics=Mm2Metrics(),
        rest_url="http://w:8083/",
    )
    flow = standalone_factory(spec)
    assert seen["worker_id"] == "A->B" and seen["worker_props"] == {"bootstrap.servers": "b:9092"}
    assert seen["kafka_offsets"] is True and seen["kafka_status"] is True  # the target's mm2-*.A.internal topics
    flow_metrics = seen["runtime_metrics"]
    assert isinstance(flow_metrics, FlowMetrics) and (flow_metrics.source, flow_metrics.target) == ("A", "B")
    assert seen["on_task_created"] == flow_metrics.attach  # mirror tasks get their sinks from the same flow
    flow.start()
    assert seen["started"] and leaderships == [1]  # a standalone herder leads as soon as it runs
    flow.stop()
    assert seen["stopped"]


def test_distributed_builder_gets_url_namespace_leadership_and_metrics(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect_core.herder.distributed import builder

    seen: dict[str, Any] = {}
    monkeypatch.setattr(
        builder, "build_distributed_herder", recording(builder.build_distributed_herder, seen, StartStop(seen))
    )

    def led() -> None:
        return None

    spec = HerderSpec(SourceAndTarget("A", "B"), {}, "A->B", on_became_leader=led)
    distributed_factory(spec)
    assert seen["advertised_url"] == "NOTUSED"  # REST off: Java's placeholder
    assert seen["on_became_leader"] is led
    assert "runtime_metrics" not in seen or seen["runtime_metrics"] is None  # no metrics asked for
    assert "task_config_forwarder" not in seen or seen["task_config_forwarder"] is None
    assert seen["internal_rest"] is False  # a follower's exactly-once task then fails with Java's message

    seen.clear()
    spec = HerderSpec(
        SourceAndTarget("A", "B"),
        {},
        "A->B",
        on_became_leader=led,
        metrics=Mm2Metrics(),
        rest_url="http://w:8083/",
        rest_namespace=("A", "B"),
    )
    distributed_factory(spec)
    assert seen["advertised_url"] == "http://w:8083/" and seen["rest_namespace"] == ("A", "B")
    flow_metrics = seen["runtime_metrics"]
    assert isinstance(flow_metrics, FlowMetrics) and (flow_metrics.source, flow_metrics.target) == ("A", "B")
    assert seen["on_task_created"] == flow_metrics.attach
