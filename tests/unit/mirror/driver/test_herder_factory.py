"""The herder factory seam: which runtime is chosen, and which hooks reach a builder."""

from __future__ import annotations

from typing import Any

import pytest

from mirror.driver import herder_factory
from mirror.driver.herder_factory import (
    HerderSpec,
    default_factory,
    distributed_factory,
    standalone_factory,
)
from mirror.driver.maker_config import SourceAndTarget
from mirror.driver.metrics import Mm2Metrics


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


def test_builder_gets_only_the_hooks_it_accepts(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    class Herder:
        def start(self) -> None:
            seen["started"] = True

        def stop(self) -> None:
            seen["stopped"] = True

    def build(worker_props: dict[str, str], *, worker_id: str, runtime_metrics: Any = None,
              on_task_created: Any = None) -> Herder:
        seen.update(props=worker_props, worker_id=worker_id, runtime=runtime_metrics, hook=on_task_created)
        return Herder()

    monkeypatch.setattr(herder_factory, "_builder", lambda module, name: build)
    leaderships: list[int] = []
    spec = HerderSpec(SourceAndTarget("A", "B"), {"bootstrap.servers": "b:9092"}, "A->B",
                      on_became_leader=lambda: leaderships.append(1), metrics=Mm2Metrics())
    flow = standalone_factory(spec)
    assert seen["worker_id"] == "A->B" and seen["props"] == {"bootstrap.servers": "b:9092"}
    assert seen["runtime"] is not None and callable(seen["hook"])
    flow.start()
    assert seen["started"] and leaderships == [1]  # a standalone herder leads as soon as it runs
    flow.stop()
    assert seen["stopped"]


def test_distributed_builder_without_leadership_hook_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from connect_core.api.errors import ConnectError

    def build(worker_props: dict[str, str], *, worker_id: str, advertised_url: str) -> object:
        assert advertised_url == "NOTUSED"  # REST off: Java's placeholder
        return object()

    monkeypatch.setattr(herder_factory, "_builder", lambda module, name: build)
    spec = HerderSpec(SourceAndTarget("A", "B"), {}, "A->B", on_became_leader=lambda: None)
    with pytest.raises(ConnectError, match="leadership"):
        distributed_factory(spec)
