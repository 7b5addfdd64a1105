"""The three Kafka-backed stores share one base: one way to name their topic from the worker
config, one timeout (``timeout_s``) for reading the topic to its end and for their writes."""

from __future__ import annotations

import inspect

import pytest

from connect_core.storage.internal_topics import CONFIG_STORAGE, OFFSET_STORAGE, STATUS_STORAGE
from connect_core.storage.kafka_config import KafkaConfigBackingStore
from connect_core.storage.kafka_offsets import KafkaOffsetBackingStore
from connect_core.storage.kafka_status import KafkaStatusBackingStore
from connect_core.storage.kafka_store import READ_WRITE_TIMEOUT_S, KafkaTopicStore

STORES = [
    (KafkaConfigBackingStore, CONFIG_STORAGE),
    (KafkaOffsetBackingStore, OFFSET_STORAGE),
    (KafkaStatusBackingStore, STATUS_STORAGE),
]


@pytest.mark.parametrize(("store", "prefix"), STORES)
def test_every_store_takes_one_timeout_and_names_its_topic_from_the_worker_config(
    store: type[KafkaTopicStore],
    prefix: str,
) -> None:
    assert issubclass(store, KafkaTopicStore) and store.storage == prefix
    params = inspect.signature(store).parameters
    assert params["timeout_s"].default == READ_WRITE_TIMEOUT_S
    assert not [p for p in params if "timeout" in p and p != "timeout_s"]  # no second spelling
    built = store.from_worker_config({"bootstrap.servers": "127.0.0.1:1", f"{prefix}.topic": f"t-{prefix}"})
    assert type(built) is store and built.topic == f"t-{prefix}"
    assert built._timeout_s == READ_WRITE_TIMEOUT_S
