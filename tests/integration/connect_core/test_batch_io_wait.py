"""The batch copy's one wait over both of its clients, against a real broker: the fetcher's and the producer's
wait handles are their network loops' selectors, and the fetcher's becomes readable when a Fetch answer arrives,
so a wait over both wakes for the answer instead of running out its timeout."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from connect_core.kafka.batch_fetcher import READ_COMMITTED, BatchFetcher
from connect_core.kafka.batch_producer import BatchProducer
from connect_core.kafka.io_wait import wait_readable
from embedded_kafka import KafkaCluster

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]


def test_a_fetch_answer_wakes_a_wait_over_both_clients(
    cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    (cluster,) = cluster_factory(["A"])
    topic = cluster.create_topic(unique_name("io-wait"), partitions=1)
    target_topic = cluster.create_topic(unique_name("io-wait-copy"), partitions=1)
    producer = cluster.producer()
    for i in range(50):
        producer.produce(topic, value=b"v%d" % i, partition=0)
    assert producer.flush(30) == 0

    fetcher = BatchFetcher(cluster.bootstrap_servers, {}, "io-wait-fetch", isolation_level=READ_COMMITTED)
    batches = BatchProducer(cluster.bootstrap_servers, {}, "io-wait-produce")
    try:
        assert fetcher.wait_handle is None  # no Fetch out
        assert batches.wait_handle is None  # not connected yet
        first = fetcher.fetch({(topic, 0): 0}, 500)[(topic, 0)].batches[0]
        acks: list[BaseException | None] = []
        batches.send(target_topic, 0, first, lambda base, error: acks.append(error))
        assert batches.flush(30) and acks == [None]
        target = batches.wait_handle
        assert target is not None

        # The broker holds a Fetch at the end for up to its wait (6 s here): nothing arrives, the wait times out.
        fetcher.send({(topic, 0): 50}, 6_000)
        read = fetcher.wait_handle
        assert read is not None and read != target
        quiet = False
        for _ in range(20):  # turns of its loop put the request on the wire (the task's read makes them too)
            assert fetcher.receive(0) is None
            if not wait_readable([read, target], 0.2):
                quiet = True
                break
        assert quiet, "the wait kept waking with no answer to read"

        # Records written meanwhile end the broker's wait (the test broker looks again after half of it, Apache
        # Kafka at once): the answer wakes the wait long before its own timeout and before the broker's wait is out.
        producer.produce(topic, value=b"late", partition=0)
        assert producer.flush(30) == 0
        started = time.monotonic()
        assert wait_readable([read, target], 30.0) is True
        woke = time.monotonic() - started
        answers = None
        deadline = time.monotonic() + 30
        while answers is None and time.monotonic() < deadline:
            wait_readable([read], 1.0)
            answers = fetcher.receive(0)
        assert answers is not None and [b.base_offset for b in answers[(topic, 0)].batches] == [50]
        assert woke < 5.5, f"the wait ran {woke:.1f}s: it did not wake for the answer"
        assert fetcher.wait_handle is None  # the answer is taken: no Fetch out
    finally:
        fetcher.close()
        batches.close()
