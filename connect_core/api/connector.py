"""Connector SPI, following Kafka Connect's ``Connector``/``SourceConnector`` contracts."""

from __future__ import annotations

import enum
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from connect_core.api.task import OffsetStorageReader, Task
    from connect_core.config.configdef import ConfigDef, ConfigValue
    from connect_core.model import TopicPartition


class ExactlyOnceSupport(enum.Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class TransactionBoundaryDefinition(enum.Enum):
    SUPPORTED = "SUPPORTED"
    UNSUPPORTED = "UNSUPPORTED"


class ConnectorContext(Protocol):
    """What the runtime offers a running connector."""

    def request_task_reconfiguration(self) -> None:
        """Ask the runtime to call ``task_configs`` again and restart tasks if they changed."""

    def raise_error(self, error: BaseException) -> None:
        """Fail the connector: its status becomes FAILED with this error's trace."""

    def offset_storage_reader(self) -> OffsetStorageReader:
        """Read the committed source offsets of this connector (source connectors only)."""
        ...


class Connector(ABC):
    """Configures the work of a connector and splits it into task configurations.

    Lifecycle: ``initialize(context)``, ``start(props)``, any number of ``task_configs``,
    ``stop()``. ``validate`` may be called on a fresh instance without ``start``.
    """

    context: ConnectorContext

    def initialize(self, context: ConnectorContext) -> None:
        self.context = context

    @abstractmethod
    def start(self, props: dict[str, str]) -> None: ...

    @abstractmethod
    def stop(self) -> None: ...

    @abstractmethod
    def task_class(self) -> type[Task]: ...

    @abstractmethod
    def task_configs(self, max_tasks: int) -> list[dict[str, str]]: ...

    @abstractmethod
    def config(self) -> ConfigDef: ...

    def version(self) -> str:
        from connect_core import __version__

        return __version__

    def validate(self, props: dict[str, str]) -> list[ConfigValue]:
        """Validate ``props`` against :meth:`config`; connectors add cross-key checks here."""
        return self.config().validate(props)


class SourceConnector(Connector):
    """A connector whose tasks read from an external system and produce to Kafka."""

    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        """Whether tasks can run exactly-once (KIP-618); None means unknown."""
        return None

    def can_define_transaction_boundaries(self, props: dict[str, str]) -> TransactionBoundaryDefinition:
        return TransactionBoundaryDefinition.UNSUPPORTED

    def alter_offsets(
        self,
        connector_config: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        """Check (and apply externally) an offset change requested over REST (KIP-875).

        ``offsets`` pairs each source partition with its new offset (None = reset). Raise
        :class:`~connect_core.api.errors.BadRequestError` for an invalid request. Return True
        if the connector handled it, False if it does not care (the runtime still writes them).
        """
        return False


class SinkConnector(Connector):
    """A connector whose tasks read Kafka topics (``topics`` or ``topics.regex``) and write elsewhere.

    The runtime consumes for its tasks in the group ``connect-<name>`` and commits the offsets the
    tasks acknowledge, so a sink connector usually keeps no offsets of its own.
    """

    TOPICS_CONFIG = "topics"

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        """Check (and apply externally) an offset change of the connector's group requested over REST
        (KIP-875); called before the group is changed, maybe before ``start``, maybe again with the same
        arguments (a retried request).

        ``offsets`` maps each Kafka partition to its new offset (None = reset; empty when nothing was
        committed). Raise :class:`~connect_core.api.errors.BadRequestError` for an invalid request,
        ``NotImplementedError`` if the offsets cannot be changed at all. Return True if the connector
        handled it, False (the default) if it does not know (the runtime still changes the group).
        """
        return False
