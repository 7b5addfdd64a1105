"""What a consumer application needs to follow a mirror: replication policies, topic and group
filters, the MM2 record formats (OffsetSync, Checkpoint, Heartbeat) and remote-topic analysis.

Imports nothing from the connectors, driver, jobs or CLI, and needs no Kafka client library.
"""

from mirror.client.errors import (
    InvalidSourceOffsetError,
    MirrorConfigError,
    MirrorError,
    RecordFormatError,
    UnknownClusterError,
)
from mirror.client.filters import (
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
from mirror.client.formats import Checkpoint, Heartbeat, OffsetAndMetadata, OffsetSync, TopicPartition
from mirror.client.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    policy_from_config,
)
from mirror.client.remote_topics import decode_topic_partition, encode_topic_partition

__all__ = [
    "Checkpoint",
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
    "RecordFormatError",
    "ReplicationPolicy",
    "TopicFilter",
    "TopicPartition",
    "UnknownClusterError",
    "config_property_filter_from_config",
    "decode_topic_partition",
    "encode_topic_partition",
    "group_filter_from_config",
    "policy_from_config",
    "topic_filter_from_config",
]
