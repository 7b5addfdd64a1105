"""mm2: MirrorMaker 2 replication in Python, on top of :mod:`connect_core`.

The names re-exported here are the pure building blocks - replication policies, filters, the MM2
record formats, the offset-sync index and checkpoint logic - usable without a running worker or a
Kafka client (the Spark jobs and applications use them directly). Connectors, the dedicated
driver and the CLI live in their own subpackages and are imported explicitly.
"""

from mirror.checkpoint_logic import (
    CheckpointEmitter,
    CheckpointStore,
    checkpoint_is_more_recent,
    group_offsets_to_sync,
    plan_group_offset_sync,
    rename_topic_partition,
)
from mirror.client import decode_topic_partition, encode_topic_partition
from mirror.errors import (
    InvalidSourceOffsetError,
    MirrorConfigError,
    MirrorError,
    RecordFormatError,
    UnknownClusterError,
)
from mirror.filters import (
    ConfigPropertyFilter,
    DefaultConfigPropertyFilter,
    DefaultGroupFilter,
    DefaultTopicFilter,
    GroupFilter,
    TopicFilter,
    config_property_filter_from_config,
    group_filter_from_config,
    topic_filter_from_config,
)
from mirror.formats import Checkpoint, Heartbeat, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.offset_sync_store import OffsetSyncStore
from mirror.offset_sync_writer import OffsetSyncQueue, PartitionState
from mirror.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    policy_from_config,
)

__all__ = [
    "Checkpoint",
    "CheckpointEmitter",
    "CheckpointStore",
    "ConfigPropertyFilter",
    "DefaultConfigPropertyFilter",
    "DefaultGroupFilter",
    "DefaultReplicationPolicy",
    "DefaultTopicFilter",
    "GroupFilter",
    "Heartbeat",
    "IdentityReplicationPolicy",
    "InvalidSourceOffsetError",
    "MirrorConfigError",
    "MirrorError",
    "OffsetAndMetadata",
    "OffsetSync",
    "OffsetSyncQueue",
    "OffsetSyncStore",
    "PartitionState",
    "RecordFormatError",
    "ReplicationPolicy",
    "TopicFilter",
    "TopicPartition",
    "UnknownClusterError",
    "checkpoint_is_more_recent",
    "config_property_filter_from_config",
    "decode_topic_partition",
    "encode_topic_partition",
    "group_filter_from_config",
    "group_offsets_to_sync",
    "plan_group_offset_sync",
    "policy_from_config",
    "rename_topic_partition",
    "topic_filter_from_config",
]
