"""Value types shared by every layer of the runtime: task ids, states, restart requests, topic
partitions and the shapes of Java Connect's REST entities (ConnectorInfo, ConnectorStateInfo, ConfigInfos...).

They live below the worker, the stores, the herders and the REST layer so that none of those has to
import a layer above it to name a task or a state.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, NamedTuple


class TopicPartition(NamedTuple):
    """A topic partition; ``str()`` is Kafka's ``topic-partition`` form.

    mm2's one name for a partition (hashable, a plain tuple). Calls into the Kafka client build the
    client's own object with :data:`connect_core.kafka.types.ClientPartition`, at the call.
    """

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


class State(enum.Enum):
    UNASSIGNED = "UNASSIGNED"
    RUNNING = "RUNNING"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"
    FAILED = "FAILED"
    RESTARTING = "RESTARTING"
    DESTROYED = "DESTROYED"


class TargetState(enum.Enum):
    STARTED = "STARTED"
    PAUSED = "PAUSED"
    STOPPED = "STOPPED"


@dataclass(frozen=True, order=True)
class ConnectorTaskId:
    connector: str
    task: int

    def to_json(self) -> dict[str, Any]:
        return {"connector": self.connector, "task": self.task}

    def __str__(self) -> str:
        return f"{self.connector}-{self.task}"


@dataclass
class ConnectorInfo:
    name: str
    config: dict[str, str]
    tasks: list[ConnectorTaskId]
    type: str  # "source" | "sink" | "unknown"


@dataclass
class AbstractStatus:
    state: State
    worker_id: str
    trace: str | None = None
    generation: int = 0


@dataclass
class ConnectorStateInfo:
    name: str
    connector: AbstractStatus
    tasks: dict[int, AbstractStatus]
    type: str


@dataclass
class TaskInfo:
    id: ConnectorTaskId
    config: dict[str, str]


@dataclass
class PluginInfo:
    class_name: str  # the Java-style class name users configure
    type: str  # "source" | "sink" | "converter" | "header_converter" | "transformation" | "predicate"
    version: str


@dataclass
class ConfigInfoValue:
    """One key's validation result (Java ConfigInfos.configs[].value)."""

    name: str
    value: str | None
    recommended_values: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    visible: bool = True


@dataclass
class ConfigInfoKey:
    """One key's definition (Java ConfigInfos.configs[].definition)."""

    name: str
    type: str
    required: bool
    default_value: str | None
    importance: str
    documentation: str
    group: str | None
    order_in_group: int
    width: str
    display_name: str
    dependents: list[str] = field(default_factory=list)


@dataclass
class ConfigInfos:
    """Result of config validation (Java ConfigInfos)."""

    name: str
    error_count: int
    groups: list[str]
    configs: list[tuple[ConfigInfoKey, ConfigInfoValue]]


@dataclass
class RestartRequest:
    connector: str
    only_failed: bool = False
    include_tasks: bool = False
