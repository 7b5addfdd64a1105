"""The leader's config step: what it writes while assigning, and the snapshot it hands the assignor."""

from __future__ import annotations

from typing import Any, cast

from connect_core.herder.distributed.collaborators import DistributedConfigStore
from connect_core.herder.distributed.leader_configs import LeaderConfigWrites
from connect_core.model import ConfigInfos
from connect_core.storage.memory import MemoryConfigBackingStore

SOURCE = {"connector.class": "Source", "topics": "orders"}
HEARTBEAT = {"connector.class": "Heartbeat"}
BROKEN = {"connector.class": "Broken"}


def validate(config: dict[str, str]) -> ConfigInfos:
    errors = 1 if config["connector.class"] == "Broken" else 0
    return ConfigInfos(config["connector.class"], errors, [], [])


def step(
    store: MemoryConfigBackingStore, desired: dict[str, dict[str, str]], becoming: bool = True
) -> LeaderConfigWrites:
    return LeaderConfigWrites(cast(DistributedConfigStore, store), lambda: desired, validate, lambda: becoming)


def written(store: MemoryConfigBackingStore) -> dict[str, Any]:
    return dict(store.snapshot().connector_configs)


def test_a_new_leader_writes_what_differs_and_assigns_from_the_snapshot_after_its_writes() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("heartbeat", HEARTBEAT, None)
    joined = store.snapshot()
    fresh = step(store, {"source": SOURCE, "heartbeat": HEARTBEAT})(joined)
    assert fresh is not None  # (this store keeps no offsets: the integration test checks the offset announced)
    assert set(fresh.connectors()) == {"source", "heartbeat"}
    assert written(store) == {"source": SOURCE, "heartbeat": HEARTBEAT}


def test_nothing_differs_nothing_written() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("source", SOURCE, None)
    assert step(store, {"source": dict(SOURCE)})(store.snapshot()) is None


def test_a_leader_that_led_the_last_generation_writes_nothing() -> None:
    store = MemoryConfigBackingStore()
    store.put_connector_config("source", {"connector.class": "Source", "topics": "old"}, None)
    before = store.snapshot()
    assert step(store, {"source": SOURCE}, becoming=False)(before) is None
    assert written(store)["source"]["topics"] == "old"


def test_an_invalid_config_is_left_to_the_host() -> None:
    store = MemoryConfigBackingStore()
    fresh = step(store, {"broken": BROKEN, "source": SOURCE})(store.snapshot())
    assert fresh is not None
    assert set(fresh.connectors()) == {"source"}
    assert step(store, {"broken": BROKEN})(store.snapshot()) is None
