"""Live exact translation: the mirror's source task writes offset mappings, the checkpoint task uses them.

The remote topic already holds records before mirroring begins (target offsets are shifted), and half
of the source partition was written in transactions (each commit marker is an upstream offset gap).
Groups far behind the head (hundreds of records, beyond what Kafka's sparse offset syncs translate
exactly), on a commit marker, and after many gaps get checkpoints, and synced target group offsets,
pointing at exactly the first record they had not consumed. Every record of the
offset-syncs and checkpoints topics still decodes with Kafka's formats.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer, Producer

from connect_core.kafka.types import ClientPartition
from embedded_kafka import KafkaCluster, wait_for
from mirror.client.formats import Checkpoint, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.client.offset_mappings import decode_mappings
from mirror.connectors.mirror_admin import MirrorAdmin
from tests.integration.mirror.test_mirror_standalone import mirror

NameFn = Callable[[str], str]
PRE_EXISTING = 37  # records already in the remote topic before mirroring
RECORDS = 1000


def produce_in_transactions(cluster: KafkaCluster, topic: str, values: list[bytes], per_txn: int) -> None:
    """Committed transactions: each commit marker takes an offset, so the source offsets have gaps."""
    producer = Producer(
        {
            "bootstrap.servers": cluster.bootstrap_servers,
            "transactional.id": f"{topic}-txn",
            "linger.ms": 0,
            "allow.auto.create.topics": False,
        }
    )
    producer.init_transactions(15)
    for i in range(0, len(values), per_txn):
        producer.begin_transaction()
        for v in values[i : i + per_txn]:
            producer.produce(topic, v, partition=0)
        producer.commit_transaction(15)
    producer.flush(15)


def test_checkpoint_and_group_sync_exact_far_behind_head(
    two_clusters: tuple[KafkaCluster, KafkaCluster], unique_name: NameFn, tmp_path: Path
) -> None:
    a, b = two_clusters
    topic, prefix = unique_name("orders"), unique_name("g")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=1)
    b.create_topic(remote, partitions=1)
    b.produce(remote, [{"value": f"old-{i}".encode(), "partition": 0} for i in range(PRE_EXISTING)])
    a.produce(
        topic, [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": 0} for i in range(RECORDS // 2)]
    )
    source_admin = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 15)
    target_admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 15)
    tp = TopicPartition(topic, 0)
    far = f"{prefix}-far-behind"
    # consumed v0..v399 on the source: next is v400, 600 records behind the head once all is written
    source_admin.alter_consumer_group_offsets(far, {tp: OffsetAndMetadata(400)})

    with mirror(a, b, "A", "B", tmp_path / "offsets", **{"tasks.max": "1", "offset.lag.max": "100"}):
        wait_for(
            lambda: sum(len(v) for v in b.read_all(remote).values()) >= PRE_EXISTING + RECORDS // 2,
            60,
            0.5,
            "first half not mirrored",
        )
        # The second half in transactions of 10: a commit marker after each, an upstream offset gap.
        produce_in_transactions(a, topic, [f"v{i}".encode() for i in range(RECORDS // 2, RECORDS)], 10)
        wait_for(
            lambda: sum(len(v) for v in b.read_all(remote).values()) >= PRE_EXISTING + RECORDS,
            60,
            0.5,
            "second half not mirrored",
        )
        source = [(m.offset(), m.value()) for m in a.read_all(topic)[0]]
        offsets = [o for o, _ in source]
        markers = sorted(set(range(offsets[-1])) - set(offsets))
        assert len(markers) >= RECORDS // 20 - 1  # the gaps are there
        positions = {far: 400, f"{prefix}-at-marker": markers[3], f"{prefix}-after-gaps": offsets[-150]}
        for group, position in positions.items():
            source_admin.alter_consumer_group_offsets(group, {tp: OffsetAndMetadata(position)})
        # where the first record at or after each position sits on the target (mirrored in order, after
        # the pre-existing records), and which record that is
        first = {g: next(i for i, o in enumerate(offsets) if o >= pos) for g, pos in positions.items()}
        expected = {g: PRE_EXISTING + i for g, i in first.items()}

        def checkpoints() -> dict[str, Checkpoint]:
            if "A.checkpoints.internal" not in b.topic_names():
                return {}
            cps = [Checkpoint.decode(m.key(), m.value()) for m in b.read_all("A.checkpoints.internal")[0]]
            return {c.consumer_group_id: c for c in cps}

        wait_for(
            lambda: {g: c.downstream_offset for g, c in checkpoints().items() if g in positions} == expected,
            60,
            0.5,
            f"no exact checkpoints {expected}; last: {checkpoints()}",
        )
        assert all(checkpoints()[g].upstream_offset == pos for g, pos in positions.items())
        assert {c.topic_partition for c in checkpoints().values()} == {TopicPartition(remote, 0)}

        def synced() -> dict[str, int]:
            found = target_admin.list_consumer_group_offsets(list(positions))
            return {
                g: oam.offset for g, offs in found.items() if (oam := offs.get(TopicPartition(remote, 0))) is not None
            }

        wait_for(lambda: synced() == expected, 30, 0.5, f"group offsets not synced exactly: {synced()}")

        # Byte-exact: re-encoding each decoded record (the encoders match Kafka's reference vectors,
        # tests/unit/mirror/client/test_formats.py) gives back exactly the bytes on the topic.
        raw_syncs = a.read_all("mm2-offset-syncs.B.internal")[0]
        syncs = [OffsetSync.decode(m.key(), m.value()) for m in raw_syncs]
        assert syncs and all(s.topic_partition == tp for s in syncs)
        where = {o: PRE_EXISTING + i for i, o in enumerate(offsets)}  # source offset -> target offset
        assert all(s.downstream_offset == where[s.upstream_offset] for s in syncs)
        assert [(s.record_key(), s.record_value()) for s in syncs] == [(m.key(), m.value()) for m in raw_syncs]
        raw_checkpoints = b.read_all("A.checkpoints.internal")[0]
        every = [Checkpoint.decode(m.key(), m.value()) for m in raw_checkpoints]
        assert every
        assert [(c.record_key(), c.record_value()) for c in every] == [(m.key(), m.value()) for m in raw_checkpoints]
        assert set(a.read_all("mm2-offset-syncs.B.internal")) == {0}  # nothing but syncs, on partition 0
        mappings = [
            run for m in a.read_all("mm2-offset-mappings.B.internal")[0] for run in decode_mappings(m.key(), m.value())
        ]
        runs = [m for m in mappings if m.count]
        assert runs and all(m.downstream_offset == where[m.upstream_offset] for m in runs)
        # a run of no records claims trailing markers: a group there resumes after the last record before them
        assert all(
            m.downstream_offset == where[max(o for o in where if o < m.upstream_low)] + 1
            for m in mappings
            if not m.count
        )
        assert any(m.upstream_low < m.upstream_offset for m in mappings)  # mappings covering marker gaps

    # Failover: a consumer of each group on the target reads exactly the record its source position pointed at.
    for group in positions:
        consumer = Consumer(
            {
                "bootstrap.servers": b.bootstrap_servers,
                "group.id": group,
                "enable.auto.commit": False,
                "auto.offset.reset": "earliest",
                "session.timeout.ms": 6000,
            }
        )
        try:
            committed = consumer.committed([ClientPartition(remote, 0)], timeout=10)[0].offset
            consumer.assign([ClientPartition(remote, 0, committed)])
            msg = wait_for(lambda c=consumer: c.poll(0.5), 20, 0.0, "nothing to read after failover")
            assert msg.error() is None and msg.value() == source[first[group]][1], group
        finally:
            consumer.close()
