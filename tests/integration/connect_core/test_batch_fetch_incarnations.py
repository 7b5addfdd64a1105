"""The batch fetcher and a topic deleted and recreated under its name, on a real broker: fetched by topic id,
the new topic is never read at the old topic's positions; it is held until the caller says where to read."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from kafka.record.default_records import DefaultRecordBatch

from connect_core.kafka.batch_fetcher import BatchFetcher
from connect_core.kafka.record_batch import RawBatch
from embedded_kafka import KafkaCluster
from embedded_kafka.cluster import wait_for

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]


def record_values(batch: RawBatch) -> list[bytes | None]:
    return [record.value for record in DefaultRecordBatch(bytes(batch.data))]


def test_a_recreated_topic_is_held_then_read_from_where_the_caller_says(
    cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    (cluster,) = cluster_factory(["A"])
    topic = unique_name("recreated")
    cluster.create_topic(topic, 1)
    cluster.produce(topic, [{"value": b"old-%d" % i, "partition": 0} for i in range(20)])
    fetcher = BatchFetcher(cluster.bootstrap_servers, {}, "incarnations")
    try:
        position = 0

        def read_old() -> bool:
            nonlocal position
            answer = fetcher.fetch({(topic, 0): position}, 200).get((topic, 0))
            if answer is not None and answer.batches:
                position = answer.batches[-1].next_offset
            return position >= 20

        wait_for(read_old, 30, 0.0, "the old topic read")
        # recreated at once, with more records than the old position: a Fetch by name would read 20..29 now
        cluster.delete_topic(topic)
        cluster.create_topic(topic, 1)
        cluster.produce(topic, [{"value": b"new-%d" % i, "partition": 0} for i in range(30)])

        read_at_old_position: list[int] = []

        def held() -> bool:
            answer = fetcher.fetch({(topic, 0): position}, 200).get((topic, 0))
            if answer is not None and answer.batches:
                read_at_old_position.append(answer.batches[0].base_offset)
            return topic in fetcher.recreated_topics()

        wait_for(held, 30, 0.0, "the new topic id seen")
        assert read_at_old_position == []
        assert fetcher.fetch({(topic, 0): position}, 100) == {}  # held: not fetched at all

        fetcher.accept_incarnation(topic)
        values: list[bytes] = []

        def read_new() -> bool:
            answer = fetcher.fetch({(topic, 0): len(values)}, 200).get((topic, 0))
            for batch in answer.batches if answer is not None else []:
                values.extend(v or b"" for v in record_values(batch))
            return len(values) >= 30

        wait_for(read_new, 30, 0.0, "the new topic read from 0")
        assert values == [b"new-%d" % i for i in range(30)]
    finally:
        fetcher.close()
