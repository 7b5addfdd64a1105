"""``mm2 run --metrics-port`` on two clusters: /metrics shows the flow as it happens.

A backlog is replicated while /metrics is scraped in a tight loop: lag in records and seconds is
seen above zero while the backlog drains and returns to zero once caught up, and the record and
byte counters end at exactly the backlog (value bytes, as Kafka's byte-count, on the record path; the
source's record batches as stored, read raw here, on the batch path); each round of
live records then moves them by exactly what was produced. The runtime's own series
(connector/task states, heartbeats, offset flushes) are checked on the same process.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from embedded_kafka import KafkaCluster, free_port
from tests.e2e.metrics_harness import Mm2Run, Samples, matching, total, write_mm2_config
from tests.raw_batch_bytes import HEADER, data_batches

PARTITIONS = 2
BACKLOG = 50000
LIVE = 20
VALUE = b"x" * 100
DRAIN_CAP = 1024 * 1024  # bytes per second: the backlog drains over seconds, under any load
CONNECTORS = ("MirrorSourceConnector", "MirrorCheckpointConnector", "MirrorHeartbeatConnector")


def produce_backlog(cluster: KafkaCluster, topic: str, count: int, start: int = 0) -> None:
    """Big batches: the backlog exists only to be drained, exact end offsets come from the fetch."""
    producer = cluster.producer(
        **{"linger.ms": 20, "batch.num.messages": 10000, "max.in.flight.requests.per.connection": 5}
    )
    for i in range(start, start + count):
        producer.produce(topic, key=b"k%d" % i, value=VALUE, partition=i % PARTITIONS)
        if i % 1000 == 0:
            producer.poll(0)
    assert producer.flush(30) == 0, "backlog not fully produced"


def batch_bytes(cluster: KafkaCluster, topic: str) -> int:
    """What the batch path counts: the bytes of the topic's record batches as stored (header included)."""
    return sum(
        HEADER + len(b.records) for p in range(PARTITIONS) for b in data_batches(cluster.bootstrap_servers, topic, p)
    )


@pytest.mark.parametrize("copy_path", ["record", "batch"])  # bytes: values (record path), stored batches (batch)
def test_counters_and_lag_follow_the_flow(
    two_clusters: tuple[KafkaCluster, KafkaCluster], tmp_path: Path, unique_name: Callable[[str], str], copy_path: str
) -> None:
    a, b = two_clusters
    topic = unique_name("payments")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=PARTITIONS)
    produce_backlog(a, topic, BACKLOG)
    # Small polls make the drain take many batches, and a cap of 1 MiB/s makes it last about five seconds
    # (the backlog is 5 MB): uncapped, it drained within one scrape on a loaded machine, and /metrics never
    # showed the lag of a backlog at all. The cap only delays fetches; what is counted stays exact.
    config = write_mm2_config(
        tmp_path / "mm2.properties",
        a.bootstrap_servers,
        b.bootstrap_servers,
        topics=re.escape(topic),
        extra={
            "A.consumer.max.poll.records": "100",
            "batch.copy.enabled": str(copy_path == "batch").lower(),
            "A->B.throughput.limit.bytes.per.second": str(DRAIN_CAP),
            # offset flushes are among the series checked
            "B.offset.flush.interval.ms": "1000",
        },
    )
    port = free_port()

    with Mm2Run(config, port, tmp_path / "mm2.log") as mm2:
        mm2.wait_for_metrics()
        seen_lag: list[tuple[float, float]] = []  # (records, max seconds) over the partitions, while > 0

        def drained(s: Samples) -> bool:
            lags = matching(s, "mm2_replication_lag_records", topic=remote)
            if any(lags.values()):
                seen_lag.append(
                    (sum(lags.values()), max(matching(s, "mm2_replication_lag_seconds", topic=remote).values()))
                )
            records = total(s, "mm2_source_records_total", topic=remote)
            return records >= BACKLOG and len(lags) == PARTITIONS and not any(lags.values())

        samples = mm2.wait_for(drained, 180, f"{BACKLOG} records replicated and lag back to zero", interval=0.02)

        # Lag was seen above zero while the backlog drained, in records and in seconds (the backlog
        # was produced seconds before), never beyond the backlog.
        assert seen_lag, "replication lag never showed above zero while a backlog drained"
        assert all(0 < records <= BACKLOG for records, _ in seen_lag), seen_lag
        assert all(seconds > 0 for _, seconds in seen_lag), seen_lag
        # Caught up: exact counts (value bytes only), zero lag in both units on every partition.
        assert total(samples, "mm2_source_records_total", topic=remote) == BACKLOG
        for p in range(PARTITIONS):
            assert total(samples, "mm2_source_records_total", topic=remote, partition=str(p)) == BACKLOG / PARTITIONS
        expected_bytes = batch_bytes(a, topic) if copy_path == "batch" else BACKLOG * len(VALUE)
        assert total(samples, "mm2_source_bytes_total", topic=remote) == expected_bytes
        assert set(matching(samples, "mm2_replication_lag_seconds", topic=remote).values()) == {0.0}
        assert total(samples, "mm2_source_replication_latency_seconds_count", topic=remote) > 0
        assert total(samples, "mm2_source_record_age_seconds_count", topic=remote) > 0

        # Live records: each round moves the counters by exactly what was produced; lag returns to zero.
        expected = BACKLOG
        for round_ in range(3):
            a.produce(
                topic,
                [{"key": b"live%d-%d" % (round_, i), "value": VALUE, "partition": i % PARTITIONS} for i in range(LIVE)],
            )
            expected += LIVE

            def caught_up(s: Samples, want: int = expected) -> bool:
                return total(s, "mm2_source_records_total", topic=remote) >= want and not any(
                    matching(s, "mm2_replication_lag_records", topic=remote).values()
                )

            samples = mm2.wait_for(caught_up, 60, f"{expected} records replicated")
            assert total(samples, "mm2_source_records_total", topic=remote) == expected
            expected_bytes = batch_bytes(a, topic) if copy_path == "batch" else expected * len(VALUE)
            assert total(samples, "mm2_source_bytes_total", topic=remote) == expected_bytes

        # The runtime's series, on the same process: connectors and their tasks RUNNING, heartbeats, flushes.
        def runtime_visible(s: Samples) -> bool:
            running = {
                dict(ls)["connector"] for ls, v in matching(s, "mm2_connector_state", state="RUNNING").items() if v == 1
            }
            tasks = {
                dict(ls)["connector"] for ls, v in matching(s, "mm2_task_state", state="RUNNING").items() if v == 1
            }
            return (
                running >= set(CONNECTORS)
                and tasks >= {"MirrorSourceConnector", "MirrorHeartbeatConnector"}
                and total(s, "mm2_heartbeats_total") > 0
                and total(s, "mm2_offset_commits_total", result="success") > 0
            )

        samples = mm2.wait_for(runtime_visible, 60, "connector/task states, heartbeats and offset flushes")
        for ls, v in matching(samples, "mm2_connector_state").items():
            assert v == (1.0 if dict(ls)["state"] == "RUNNING" else 0.0), (dict(ls), v)
        assert total(samples, "mm2_task_failures_total") == 0
        assert total(samples, "mm2_offset_commits_total", result="failure") == 0
