"""Errors raised by the MirrorMaker product.

Every class here also derives from the matching :mod:`connect_core.api.errors` class, so each edge
(REST, CLI, task loop) maps them with its existing table while callers can still catch
``MirrorError`` for anything mirror-specific::

    MirrorError(ConnectError)
    ├── MirrorConfigError(ConfigError)      bad mirror setting, unknown policy/filter class
    │   └── UnknownClusterError             an alias that is not in ``clusters``
    ├── ClusterUnreachableError             a cluster of the flow could not be read
    ├── RecordFormatError(DataError)        malformed OffsetSync/Checkpoint/Heartbeat bytes
    │                                       (Kafka's ``SchemaException``)
    └── InvalidSourceOffsetError(BadRequestError)
                                            a Connect source partition/offset that an MM2
                                            connector cannot accept (KIP-875 alter offsets)
"""

from __future__ import annotations

from connect_core.api.errors import BadRequestError, ConfigError, ConnectError, DataError


class MirrorError(ConnectError):
    """Root of the errors the mirror package raises."""


class MirrorConfigError(MirrorError, ConfigError):
    """A mirror configuration value is invalid; ``issues`` names each bad key."""


class UnknownClusterError(MirrorConfigError):
    """A cluster alias is referenced that the configuration does not define."""


class ClusterUnreachableError(MirrorError):
    """A cluster could not be reached; the message names its alias (the CLI exits 2, as for a usage error)."""

    def __init__(self, message: str, alias: str) -> None:
        super().__init__(message)
        self.alias = alias


class RecordFormatError(MirrorError, DataError):
    """Record bytes do not follow the MM2 wire format (Kafka ``SchemaException``)."""


class InvalidSourceOffsetError(MirrorError, BadRequestError):
    """A source partition or offset map is not one an MM2 connector ever writes."""


__all__ = [
    "ClusterUnreachableError",
    "InvalidSourceOffsetError",
    "MirrorConfigError",
    "MirrorError",
    "RecordFormatError",
    "UnknownClusterError",
]
