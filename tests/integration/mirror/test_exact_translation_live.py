"""Live exact translation: the mirror's source task writes offset mappings, the checkpoint task uses them.

The remote topic already holds records before mirroring begins (target offsets are shifted), and the
source partition has an upstream gap. A group committed far behind the head (hundreds of records,
beyond what Kafka's sparse offset syncs can translate exactly) gets a checkpoint, and a synced target
group offset, pointing at exactly the first record it had not consumed. Every record of the
offset-syncs and checkpoints topics still decodes with Kafka's formats.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KTopicPartition

from connect_core.embedded import KafkaCluster, wait_for
from mirror.client.formats import Checkpoint, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.client.offset_mappings import OffsetMapping
from mirror.connectors.mirror_admin import MirrorAdmin
from tests.integration.mirror.test_mirror_standalone import mirror

NameFn = Callable[[str], str]
PRE_EXISTING = 37  # records already in the remote topic before mirroring
RECORDS = 1000


def test_checkpoint_and_group_sync_exact_far_behind_head(two_clusters: tuple[KafkaCluster, KafkaCluster],
                                                         unique_name: NameFn, tmp_path: Path) -> None:
    a, b = two_clusters
    topic, group = unique_name("orders"), unique_name("far-behind")
    remote = f"A.{topic}"
    a.create_topic(topic, partitions=1)
    b.create_topic(remote, partitions=1)
    b.produce(remote, [{"value": f"old-{i}".encode(), "partition": 0} for i in range(PRE_EXISTING)])
    # one-record batches so end offsets are right on Tansu; an upstream offset gap is not possible to
    # make there (no transactions abort or compaction), the unit model covers gaps
    a.produce(topic, [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": 0}
                      for i in range(RECORDS // 2)])
    source_admin = MirrorAdmin({"bootstrap.servers": a.bootstrap_servers}, "A", 15)
    target_admin = MirrorAdmin({"bootstrap.servers": b.bootstrap_servers}, "B", 15)
    tp = TopicPartition(topic, 0)
    position = 400  # the group consumed v0..v399 on the source: next is v400, 600 records behind the head
    source_admin.alter_consumer_group_offsets(group, {tp: OffsetAndMetadata(position)})

    with mirror(a, b, "A", "B", tmp_path / "offsets", **{"tasks.max": "1", "offset.lag.max": "100"}):
        wait_for(lambda: sum(len(v) for v in b.read_all(remote).values()) >= PRE_EXISTING + RECORDS // 2, 60, 0.5,
                 "first half not mirrored")
        a.produce(topic, [{"key": f"k{i}".encode(), "value": f"v{i}".encode(), "partition": 0}
                          for i in range(RECORDS // 2, RECORDS)])
        wait_for(lambda: sum(len(v) for v in b.read_all(remote).values()) >= PRE_EXISTING + RECORDS, 60, 0.5,
                 "second half not mirrored")
        expected = PRE_EXISTING + position  # exactly where v400 sits on the target

        def checkpoint() -> Checkpoint | None:
            if "A.checkpoints.internal" not in b.topic_names():
                return None
            mine = [Checkpoint.decode(m.key(), m.value()) for m in b.read_all("A.checkpoints.internal")[0]]
            mine = [c for c in mine if c.consumer_group_id == group]
            return mine[-1] if mine else None

        cp = wait_for(lambda: (c := checkpoint()) is not None and c.downstream_offset == expected and c, 60, 0.5,
                      f"no exact checkpoint at {expected}; last: {checkpoint()}")
        assert cp.upstream_offset == position and cp.topic_partition == TopicPartition(remote, 0)

        def synced() -> int:
            oam = target_admin.list_consumer_group_offsets([group])[group].get(TopicPartition(remote, 0))
            return -1 if oam is None else oam.offset

        wait_for(lambda: synced() == expected, 30, 0.5, f"group offset not synced exactly: {synced()}")

        # Kafka's formats kept: every offset sync and checkpoint decodes; the mappings are in their own topic.
        # Byte-exact: re-encoding each decoded record (the encoders match Kafka's reference vectors,
        # tests/unit/mirror/client/test_formats.py) gives back exactly the bytes on the topic.
        raw_syncs = a.read_all("mm2-offset-syncs.B.internal")[0]
        syncs = [OffsetSync.decode(m.key(), m.value()) for m in raw_syncs]
        assert syncs and all(s.topic_partition == tp for s in syncs)
        assert all(s.downstream_offset - s.upstream_offset == PRE_EXISTING for s in syncs)
        assert [(s.record_key(), s.record_value()) for s in syncs] == [(m.key(), m.value()) for m in raw_syncs]
        raw_checkpoints = b.read_all("A.checkpoints.internal")[0]
        every = [Checkpoint.decode(m.key(), m.value()) for m in raw_checkpoints]
        assert every
        assert [(c.record_key(), c.record_value()) for c in every] == [(m.key(), m.value()) for m in raw_checkpoints]
        assert set(a.read_all("mm2-offset-syncs.B.internal")) == {0}  # nothing but syncs, on partition 0
        mappings = [OffsetMapping.decode(m.key(), m.value()) for m in a.read_all("mm2-offset-mappings.B.internal")[0]]
        assert mappings and all(m.downstream_offset - m.upstream_offset == PRE_EXISTING for m in mappings)

    # Failover: a consumer of the group on the target reads exactly v400 first.
    consumer = Consumer({"bootstrap.servers": b.bootstrap_servers, "group.id": group, "enable.auto.commit": False,
                         "auto.offset.reset": "earliest", "session.timeout.ms": 6000})
    try:
        committed = consumer.committed([KTopicPartition(remote, 0)], timeout=10)[0].offset
        consumer.assign([KTopicPartition(remote, 0, committed)])
        msg = wait_for(lambda: consumer.poll(0.5), 20, 0.0, "nothing to read after failover")
        assert msg.error() is None and msg.value() == f"v{position}".encode()
    finally:
        consumer.close()
