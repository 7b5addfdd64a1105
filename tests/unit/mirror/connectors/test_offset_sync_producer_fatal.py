"""A fatal error of the offset-sync producer (seen after a broker restart that lost the idempotent
producer's sequence state) replaces the producer: syncs are best effort and must never stop the copy."""

from __future__ import annotations

from typing import Any

import pytest

import mirror.connectors.offset_sync_producer as offset_sync_producer
from connect_core.kafka.types import KafkaError, KafkaException
from mirror.client.formats import TopicPartition
from mirror.connectors.offset_sync_producer import OffsetSyncProducer
from tests.unit.mirror.connectors.test_source_task_runs import TopicSink

TP = TopicPartition("orders", 0)


class FailedSink(TopicSink):
    """Takes sends, never reports them, and raises the client's fatal error from poll."""

    def __init__(self, fatal: bool = True) -> None:
        super().__init__(set())
        self.fatal = fatal
        self.purged = False

    def poll(self, timeout: float = 0) -> int:
        raise KafkaException(KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER, "sequence desync", fatal=self.fatal))

    def purge(self) -> None:
        self.purged = True


def test_a_fatal_producer_is_replaced_and_its_sends_stop_counting(monkeypatch: pytest.MonkeyPatch) -> None:
    fresh = TopicSink(set())
    made: list[dict[str, Any]] = []
    monkeypatch.setattr(offset_sync_producer, "create_producer", lambda conf: made.append(conf) or fresh)
    failed = FailedSink()
    producer = OffsetSyncProducer(
        {"bootstrap.servers": "b:9092"}, "mm2-offset-syncs.B.internal", 0, producer=failed, max_in_flight=1
    )  # type: ignore[arg-type]
    producer.queue(TP, 0, 0)  # sent on the failed producer: in flight for good, then its poll raises
    assert producer.producers_replaced == 1 and failed.purged
    assert made and made[0]["enable.idempotence"] is True and made[0]["bootstrap.servers"] == "b:9092"
    assert producer.syncs.in_flight == 0
    producer.queue(TP, 5, 5)  # the next sync goes out on the new producer
    assert [s.upstream_offset for s in fresh.sent] == [5]


def test_a_non_fatal_error_from_poll_is_not_hidden(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(offset_sync_producer, "create_producer", lambda conf: pytest.fail("no new producer"))
    producer = OffsetSyncProducer({}, "s", 0, producer=FailedSink(fatal=False))  # type: ignore[arg-type]
    with pytest.raises(KafkaException):
        producer.queue(TP, 0, 0)
