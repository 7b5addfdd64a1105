"""Distributed mode: workers of one Kafka group share connectors and tasks.

``protocol`` (group metadata/assignment bytes), ``assignor`` (who runs what), ``coordinator``
(group membership over kafka-python's coordinator), ``herder`` (the DistributedHerder loop),
``builder`` (wiring from worker properties). Names are imported lazily so the pure modules stay
importable without the Kafka clients.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DistributedHerder", "build_distributed_herder"]


def __getattr__(name: str) -> Any:
    if name == "DistributedHerder":
        from connect_core.herder.distributed.herder import DistributedHerder

        return DistributedHerder
    if name == "build_distributed_herder":
        from connect_core.herder.distributed.builder import build_distributed_herder

        return build_distributed_herder
    raise AttributeError(name)
