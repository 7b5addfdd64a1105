"""The confluent-kafka names the rest of mm2 uses, imported from the client library here only.

Why: the Kafka client is a dependency of this one package (``connect_core.kafka``); the runtime, the
stores and the product name client types through it, and an import-linter contract keeps it so.

The client's ``TopicPartition`` (a partition with a position, as the client's calls take and
return it) is exported as :data:`ClientPartition`: mm2 itself names a partition with
:class:`connect_core.model.TopicPartition`, its one TopicPartition type.
"""

from __future__ import annotations

from confluent_kafka import (
    OFFSET_BEGINNING,
    OFFSET_END,
    TIMESTAMP_NOT_AVAILABLE,
    Consumer,
    ConsumerGroupTopicPartitions,
    KafkaError,
    KafkaException,
    Message,
    Producer,
)
from confluent_kafka import TopicPartition as ClientPartition
from confluent_kafka.admin import (
    AclBinding,
    AclBindingFilter,
    AclOperation,
    AclPermissionType,
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    ConfigSource,
    NewPartitions,
    NewTopic,
    OffsetSpec,
    ResourcePatternType,
    ResourceType,
)

#: The error a consumer reports at the end of a partition (``enable.partition.eof``); librdkafka names its
#: client-side error codes with a leading underscore.
PARTITION_EOF: int = KafkaError._PARTITION_EOF

__all__ = [
    "OFFSET_BEGINNING",
    "OFFSET_END",
    "PARTITION_EOF",
    "TIMESTAMP_NOT_AVAILABLE",
    "AclBinding",
    "AclBindingFilter",
    "AclOperation",
    "AclPermissionType",
    "AdminClient",
    "AlterConfigOpType",
    "ClientPartition",
    "ConfigEntry",
    "ConfigResource",
    "ConfigSource",
    "Consumer",
    "ConsumerGroupTopicPartitions",
    "KafkaError",
    "KafkaException",
    "Message",
    "NewPartitions",
    "NewTopic",
    "OffsetSpec",
    "Producer",
    "ResourcePatternType",
    "ResourceType",
]
