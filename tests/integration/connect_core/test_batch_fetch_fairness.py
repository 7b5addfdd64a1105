"""The batch fetcher reads every partition to its end, before and after a broker restart, even when the
broker cannot serve the partitions within the wait asked for.

Tansu's S3 engine serves a Fetch's partitions in request order within the wait and lists every batch
object of a partition to find the asked offset: with a wait shorter than that listing it answers nothing
for a partition below its high watermark, every time (on the durable test broker, 1 ms is always too
short). Before the fetcher rotated its partitions and raised its wait on such answers, the batch path's
short waits left partitions unread for good after the source broker's restart (issue 37's durable-broker
crash test stalled there).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from connect_core.api.errors import RetriableError
from connect_core.kafka.batch_fetcher import READ_COMMITTED, BatchFetcher
from embedded_kafka import KafkaCluster

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]
PARTITIONS = 3
#: A wait no broker on S3 storage lists a partition's batch objects in.
TOO_SHORT_MS = 1
#: Generous: only a fetcher that keeps starving partitions takes this long.
DEADLINE_S = 120.0


def _write(cluster: KafkaCluster, topic: str, batches: int, first: int) -> None:
    """``batches`` one-record batches per partition (each record is its own batch)."""
    cluster.produce(
        topic, [{"value": b"%d:%d" % (p, first + i), "partition": p} for i in range(batches) for p in range(PARTITIONS)]
    )


def _read_to_end(fetcher: BatchFetcher, topic: str, positions: dict[int, int], ends: dict[int, int]) -> None:
    """Fetch with the too-short wait until every partition's position reached its end (or the deadline)."""
    deadline = time.monotonic() + DEADLINE_S
    while any(positions[p] < ends[p] for p in positions):
        assert time.monotonic() < deadline, f"partitions stuck at {positions} of {ends}"
        try:
            answers = fetcher.fetch({(topic, p): o for p, o in positions.items()}, TOO_SHORT_MS)
        except RetriableError:
            continue  # the connection the restart broke: the next fetch connects anew (as the task retries)
        for (_, partition), answer in answers.items():
            if answer.batches:
                positions[partition] = answer.batches[-1].next_offset


def test_every_partition_is_read_to_its_end_across_a_restart(
    durable_cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    (source,) = durable_cluster_factory(["A"])
    topic = source.create_topic(unique_name("fair"), partitions=PARTITIONS)
    _write(source, topic, 6, 0)
    fetcher = BatchFetcher(source.bootstrap_servers, {}, "fairness-test", isolation_level=READ_COMMITTED)
    try:
        positions = dict.fromkeys(range(PARTITIONS), 0)
        _read_to_end(fetcher, topic, positions, source.end_offsets(topic))
        source.restart()  # type: ignore[attr-defined]
        _write(source, topic, 6, 6)
        _read_to_end(fetcher, topic, positions, source.end_offsets(topic))
        assert fetcher.wait.raised > 0  # the broker did need more than the asked wait
    finally:
        fetcher.close()
