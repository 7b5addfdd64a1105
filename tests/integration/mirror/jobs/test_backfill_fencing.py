"""Fence, then read: a retried attempt racing a still-running old one cannot commit a chunk twice.

The per-task copy function runs twice with the same transactional.id on real brokers (no Spark: the
attempts are threads here, so the race is placed exactly). The old attempt is paused as it seals its
second chunk (records sent, progress not yet) and resumed at the worst moment for each order of the
new attempt's two steps: just before the new attempt fences (its commit lands: the new attempt must
read it, not a position it read before) and after (its commit is fenced). Either way B holds every
record once, read with the read_committed test reader.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from confluent_kafka import KafkaException

from connect_core.api.errors import ConnectError
from embedded_kafka import KafkaCluster
from mirror.jobs.backfill import copy as backfill_copy
from mirror.jobs.backfill.copy import copy_units
from mirror.jobs.backfill.flow import committed_offsets, create_internal_topics, create_target_topics, prepare
from tests.integration.mirror.jobs.test_backfill_job import (
    committed_partition,
    mm2_config,
    produce_backlog,
    read_partition,
)

pytestmark = pytest.mark.integration

OLD = "old-attempt"
RECORDS, CHUNK = 6_000, 1_000


class PausingProducer:
    """The old attempt's transactional producer: from its second chunk on, it stops before each chunk's
    progress record until the test lets it go on (one permit per chunk)."""

    def __init__(self, inner: Any, offsets_topic: str) -> None:
        self.inner, self.offsets_topic = inner, offsets_topic
        self.progress_records = 0
        self.commits = 0
        self.permits = threading.Semaphore(0)
        self.paused = threading.Condition()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def __len__(self) -> int:
        return len(self.inner)

    def produce(self, topic: str, *args: Any, **kwargs: Any) -> Any:
        if topic == self.offsets_topic:
            with self.paused:
                self.progress_records += 1
                self.paused.notify_all()
            if self.progress_records >= 2:
                assert self.permits.acquire(timeout=120), "the test never resumed the old attempt"
        return self.inner.produce(topic, *args, **kwargs)

    def commit_transaction(self, *args: Any) -> Any:
        result = self.inner.commit_transaction(*args)
        self.commits += 1
        return result

    def wait_paused_at(self, progress_records: int) -> None:
        with self.paused:
            assert self.paused.wait_for(lambda: self.progress_records >= progress_records, 120), (
                f"the old attempt never reached chunk {progress_records}"
            )


def race(
    a: KafkaCluster,
    b: KafkaCluster,
    topic: str,
    monkeypatch: pytest.MonkeyPatch,
    before_fence: Callable[[PausingProducer], None],
) -> tuple[BaseException | None, int]:
    """Old attempt paused at chunk 2's seal; the new one runs, ``before_fence`` acting just before it fences.
    Returns the old attempt's error and where the new one resumed."""
    a.create_topic(topic, partitions=1)
    produce_backlog(a, topic, 1, RECORDS)
    prepared = prepare(
        mm2_config(a, b), "A", "B", topic, chunk_records=CHUNK, timeout_s=10
    )  # the fenced attempt's abort waits this long
    create_target_topics(prepared.flow, prepared.missing_topics, prepared.source_counts)
    create_internal_topics(prepared.flow)
    clients, units = prepared.clients, list(prepared.plan.units)

    old: list[PausingProducer] = []
    real_create, real_init = backfill_copy.create_producer, backfill_copy.init_transactions

    def create_producer(conf: Any) -> Any:
        producer = real_create(conf)
        if threading.current_thread().name == OLD and "transactional.id" in conf:
            old.append(PausingProducer(producer, clients.offsets_topic))
            return old[-1]
        return producer

    def init_transactions(producer: Any, *args: Any) -> None:
        if threading.current_thread().name != OLD:
            before_fence(old[0])
        real_init(producer, *args)

    monkeypatch.setattr(backfill_copy, "create_producer", create_producer)
    monkeypatch.setattr(backfill_copy, "init_transactions", init_transactions)
    failure: list[BaseException] = []

    def run_old() -> None:
        try:
            copy_units(clients, units, attempt=0)
        except BaseException as e:  # the fenced attempt's error is the test's to check
            failure.append(e)

    thread = threading.Thread(target=run_old, name=OLD, daemon=True)
    thread.start()
    try:
        while not old:
            thread.join(0.05)
        old[0].wait_paused_at(2)
        assert old[0].commits == 1, "the old attempt committed its first chunk only"
        [result] = copy_units(clients, units, attempt=1)
    finally:
        if old:
            old[0].permits.release(RECORDS)  # resume the old attempt for good: whatever it does is fenced
        thread.join(120)
    assert not thread.is_alive()
    assert result.end == RECORDS
    committed = committed_offsets(prepared.flow, b.topic_names())
    assert committed == {(topic, 0): RECORDS - 1}
    # no duplicate and no gap: what a read_committed consumer sees (from the markers) is the source, once
    assert committed_partition(b, f"A.{topic}", 0) == read_partition(a, topic, 0, RECORDS)
    return (failure[0] if failure else None), result.resumed_from


def test_old_attempt_resumed_just_before_the_retry_fences_is_read_not_copied_again(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its second chunk commits between the new attempt's start and its fence: read after the fence, it
    is the new attempt's starting point (read before it, as before, chunk 2 was committed twice)."""

    def resume_one_chunk(old: PausingProducer) -> None:
        old.permits.release()
        old.wait_paused_at(3)  # chunk 2 committed, paused again at chunk 3's seal
        assert old.commits == 2

    error, resumed = race(*two_clusters, unique_name("race-before"), monkeypatch, resume_one_chunk)
    assert resumed == 2 * CHUNK, "the new attempt starts after the chunk the old one committed"
    assert isinstance(error, (KafkaException, ConnectError)), "the old attempt's third chunk was fenced"


def test_old_attempt_resumed_after_the_retry_fenced_it_cannot_commit(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: Callable[[str], str], monkeypatch: pytest.MonkeyPatch
) -> None:
    error, resumed = race(*two_clusters, unique_name("race-after"), monkeypatch, lambda old: None)
    assert resumed == CHUNK, "the new attempt starts after the old one's only committed chunk"
    assert isinstance(error, (KafkaException, ConnectError)), "the old attempt was fenced: it failed"
