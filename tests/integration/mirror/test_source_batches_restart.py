"""MirrorSourceTask on the batch path reads every partition to its end across a source broker restart, on a
durable (S3) Tansu broker that needs longer than the task's own poll wait to serve a partition.

Issue 37: with the batch path on, ``mm2 run`` stopped copying after the source broker's SIGKILL and
restart. The task asked the broker to wait only as long as it meant to wait itself (its poll wait, 100 ms
while copies were in flight); Tansu's S3 engine spends a Fetch's wait listing each partition's batch
objects, in request order, and answers nothing for a partition it did not get to - so some partitions
were never served again. The task here polls with a 1 ms wait (``consumer.poll.timeout.ms``), far below
what the broker needs: every partition must still be read to its end, before and after the restart.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from connect_core.api.batch_copy import CopyBatch
from connect_core.api.errors import RetriableError
from embedded_kafka import KafkaCluster
from mirror.connectors.source_task import MirrorSourceTask
from tests.integration.mirror.test_source_task import DictOffsetReader, FakeContext, task_props

ClusterFactory = Callable[[Sequence[str]], list[KafkaCluster]]
PARTITIONS = 3
#: Generous: only a task that keeps leaving partitions unread takes this long.
DEADLINE_S = 120.0


def _write(cluster: KafkaCluster, topic: str, batches: int, first: int) -> None:
    """``batches`` one-record batches per partition."""
    cluster.produce(
        topic, [{"value": b"%d:%d" % (p, first + i), "partition": p} for i in range(batches) for p in range(PARTITIONS)]
    )


def _copy_to_end(task: MirrorSourceTask, copied: dict[int, int], ends: dict[int, int]) -> None:
    """Poll batches as the worker does until each partition's copies reach its end (or the deadline);
    ``copied`` holds the next offset each partition's batches were handed out up to."""
    deadline = time.monotonic() + DEADLINE_S
    while any(copied[p] < ends[p] for p in copied):
        assert time.monotonic() < deadline, f"copies stuck at {copied} of {ends}"
        try:
            items = task.poll_batches(False) or []
        except RetriableError:
            continue  # the connection the restart broke: the worker logs it and polls again
        for item in items:
            assert isinstance(item, CopyBatch), item
            partition = item.route.partition
            assert item.batch.base_offset == copied[partition], "a batch skipped or repeated"
            copied[partition] = item.batch.next_offset


def test_every_partition_is_copied_to_its_end_across_a_source_restart(
    durable_cluster_factory: ClusterFactory, cluster_factory: ClusterFactory, unique_name: Callable[[str], str]
) -> None:
    (a,) = durable_cluster_factory(["A"])
    (b,) = cluster_factory(["B"])
    topic = a.create_topic(unique_name("restart"), partitions=PARTITIONS)
    b.create_topic(f"A.{topic}", partitions=PARTITIONS)
    _write(a, topic, 6, 0)
    task = MirrorSourceTask()
    task.initialize(FakeContext(DictOffsetReader()))  # type: ignore[arg-type]
    task.offer_batch_copy()
    props = {
        "batch.copy.enabled": "true",
        "emit.offset-syncs.enabled": "false",
        "target.cluster.bootstrap.servers": b.bootstrap_servers,
        "consumer.poll.timeout.ms": "1",  # the task's own wait: shorter than the broker needs to serve
    }
    task.start(task_props(a, topic, PARTITIONS, **props))
    try:
        assert task.copy_path == "batch"
        copied = dict.fromkeys(range(PARTITIONS), 0)
        _copy_to_end(task, copied, a.end_offsets(topic))
        a.restart()  # type: ignore[attr-defined]
        _write(a, topic, 6, 6)
        _copy_to_end(task, copied, a.end_offsets(topic))
    finally:
        task.stop()
