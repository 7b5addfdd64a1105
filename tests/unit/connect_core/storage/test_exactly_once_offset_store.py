"""An exactly-once worker's offset store reads committed offsets only (Java's KafkaOffsetBackingStore rule):
its consumer uses ``isolation.level=read_committed`` and lookups answer from the marker-aware view; any
other worker's store is unchanged. No broker: the clients are only configured here."""

from __future__ import annotations

import logging

import pytest

from connect_core.storage.committed_offsets import CommittedOffsetView
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore

WORKER = {"bootstrap.servers": "127.0.0.1:1", "offset.storage.topic": "connect-offsets"}


def test_an_exactly_once_workers_store_reads_committed_only() -> None:
    store = KafkaOffsetBackingStore.from_worker_config(WORKER, exactly_once=True)
    assert store.exactly_once
    assert store._log._consumer_conf["isolation.level"] == "read_committed"
    assert "isolation.level" not in store._log._producer_conf
    assert isinstance(store._committed, CommittedOffsetView) and store._committed.topic == "connect-offsets"


def test_other_workers_stores_read_as_before() -> None:
    store = KafkaOffsetBackingStore.from_worker_config(WORKER)
    assert not store.exactly_once and store._committed is None
    assert store._log._consumer_conf.get("isolation.level", "read_uncommitted") == "read_uncommitted"


def test_a_read_uncommitted_setting_is_overridden_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    from connect_core.kafka.admin import NewTopicSpec

    with caplog.at_level(logging.WARNING):
        store = KafkaOffsetBackingStore(
            NewTopicSpec("connect-offsets"), {**WORKER, "isolation.level": "read_uncommitted"}, exactly_once=True
        )
    assert store._log._consumer_conf["isolation.level"] == "read_committed"
    assert "Overriding isolation.level=read_uncommitted" in caplog.text
