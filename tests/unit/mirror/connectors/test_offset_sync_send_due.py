"""The sync points of one acknowledged batch (:meth:`OffsetSyncProducer.send_due`): each is sent in order
within the in-flight limit, the newest due wins over an unsent older one, and the producer's delivery
reports are served once per acknowledgement (a 1,000-record batch of 100 B records decides ten points;
a poll per point cost as much as the sends)."""

from __future__ import annotations

from mirror.client.formats import TopicPartition
from mirror.connectors.offset_sync_producer import OffsetSyncProducer
from tests.unit.mirror.connectors.test_source_task_runs import SyncSink

TP = TopicPartition("orders", 0)


class CountingSink(SyncSink):
    def __init__(self) -> None:
        super().__init__()
        self.polls = 0

    def poll(self, timeout: float = 0) -> int:
        self.polls += 1
        return super().poll(timeout)


def _producer(sink: CountingSink, max_in_flight: int) -> OffsetSyncProducer:
    return OffsetSyncProducer({}, "mm2-offset-syncs.B.internal", 100, producer=sink, max_in_flight=max_in_flight)  # type: ignore[arg-type]


def test_every_point_of_an_acknowledgement_is_sent_in_order_with_one_poll() -> None:
    sink = CountingSink()
    producer = _producer(sink, max_in_flight=10)
    state = producer.syncs.state_for(TP)
    points = [(1000 + 101 * i, 5 + 101 * i) for i in range(10)]
    producer.send_due(TP, state, points, last_upstream=points[-1][0])
    assert [(s.upstream_offset, s.downstream_offset) for s in sink.sent] == points
    assert sink.polls == 1
    assert producer.syncs.in_flight == 0  # the one poll served every delivery report


def test_beyond_the_in_flight_limit_the_newest_point_waits_for_the_next_send() -> None:
    sink = CountingSink()
    producer = _producer(sink, max_in_flight=2)
    state = producer.syncs.state_for(TP)
    points = [(10 * i, 10 * i) for i in range(5)]
    producer.send_due(TP, state, points, last_upstream=points[-1][0])
    assert [s.upstream_offset for s in sink.sent] == [0, 10]  # two in flight; 20 and 30 were overtaken by 40
    producer.fire_pending()  # the poll freed the slots: the newest pending sync goes out
    assert [s.upstream_offset for s in sink.sent] == [0, 10, 40]


def test_an_acknowledgement_without_points_polls_nothing() -> None:
    sink = CountingSink()
    producer = _producer(sink, max_in_flight=10)
    producer.send_due(TP, producer.syncs.state_for(TP), [], last_upstream=7)
    assert sink.polls == 0 and not sink.sent


def test_with_no_slot_left_the_newest_point_is_pending_in_its_partitions_place() -> None:
    """Points beyond the limit are not each made pending in turn: the newest is, where the partition's
    pending sync stands among the others (send order), as if each had replaced the one before."""
    sink = CountingSink()
    producer = _producer(sink, max_in_flight=1)
    other = TopicPartition("orders", 1)
    producer.syncs.make_pending(other, 3, 3)
    producer.fire_pending()  # other's sync sent; the poll freed its slot
    producer.syncs.make_pending(other, 7, 7)  # waits behind the in-flight limit below
    state = producer.syncs.state_for(TP)
    points = [(100 * i, 100 * i) for i in range(1, 6)]
    producer.send_due(TP, state, points, last_upstream=points[-1][0])
    assert [(s.topic_partition, s.upstream_offset) for s in sink.sent] == [(other, 3), (other, 7)]
    pending = producer.syncs.pending()
    assert list(pending) == [TP] and pending[TP].upstream_offset == 500
