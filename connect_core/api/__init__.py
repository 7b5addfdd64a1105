"""The plugin SPI that connectors, tasks, converters and transformations implement."""

from connect_core.api.connector import (
    Connector,
    ConnectorContext,
    ExactlyOnceSupport,
    SinkConnector,
    SourceConnector,
    TransactionBoundaryDefinition,
)
from connect_core.api.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConfigError,
    ConfigIssue,
    ConflictError,
    ConnectError,
    DataError,
    NotFoundError,
    NotLeaderError,
    RetriableError,
)
from connect_core.api.records import Header, RecordMetadata, SourceRecord
from connect_core.api.sink import ErrantRecordReporter, SinkRecord, SinkTask, SinkTaskContext, TopicPartition
from connect_core.api.task import OffsetStorageReader, SourceTask, SourceTaskContext, Task, TransactionContext

__all__ = [
    "AlreadyExistsError",
    "BadRequestError",
    "ConfigError",
    "ConfigIssue",
    "ConflictError",
    "ConnectError",
    "Connector",
    "ConnectorContext",
    "DataError",
    "ErrantRecordReporter",
    "ExactlyOnceSupport",
    "Header",
    "NotFoundError",
    "NotLeaderError",
    "OffsetStorageReader",
    "RecordMetadata",
    "RetriableError",
    "SinkConnector",
    "SinkRecord",
    "SinkTask",
    "SinkTaskContext",
    "SourceConnector",
    "SourceRecord",
    "SourceTask",
    "SourceTaskContext",
    "Task",
    "TopicPartition",
    "TransactionBoundaryDefinition",
    "TransactionContext",
]
