"""The plugins every task runs with, whatever its kind (the common part of Java's ``Worker.TaskBuilder``).

The worker builds source tasks, :mod:`connect_core.runtime.sink_task_builder` sink tasks; both
start from the same pieces, made here in the same order: the task instance of the connector's task
class, the key/value/header converters, the transformation chain and the error-tolerance operator.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, overload

from connect_core.api.errors import ConnectError
from connect_core.api.sink import SinkTask
from connect_core.api.task import SourceTask, Task
from connect_core.model import ConnectorTaskId
from connect_core.plugins import Plugins
from connect_core.runtime.connector_config import (
    CONNECTOR_CLASS_CONFIG,
    HEADER_CONVERTER_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    VALUE_CONVERTER_CLASS_CONFIG,
    ConnectorConfig,
)
from connect_core.runtime.tolerance import RetryWithToleranceOperator

TaskT = TypeVar("TaskT", bound=Task)

#: The worker's converter factory: (connector config, converter key, is_key; None for headers).
ConverterFactory = Callable[[Mapping[str, str], str, "bool | None"], Any]


@dataclass(frozen=True)
class TaskPlugins(Generic[TaskT]):
    task: TaskT
    key_converter: Any
    value_converter: Any
    header_converter: Any
    chain: Any
    tolerance: RetryWithToleranceOperator


#: The task class each kind of connector's task class must extend.
_TASK_BASES: dict[str, type[object]] = {"source": SourceTask, "sink": SinkTask}


@overload
def build_task_plugins(
    task_id: ConnectorTaskId,
    conf: ConnectorConfig,
    conn_props: Mapping[str, str],
    kind: Literal["source"],
    converter: ConverterFactory,
    on_task_created: Callable[[Any], None] | None,
) -> TaskPlugins[SourceTask]: ...


@overload
def build_task_plugins(
    task_id: ConnectorTaskId,
    conf: ConnectorConfig,
    conn_props: Mapping[str, str],
    kind: Literal["sink"],
    converter: ConverterFactory,
    on_task_created: Callable[[Any], None] | None,
) -> TaskPlugins[SinkTask]: ...


def build_task_plugins(
    task_id: ConnectorTaskId,
    conf: ConnectorConfig,
    conn_props: Mapping[str, str],
    kind: Literal["source", "sink"],
    converter: ConverterFactory,
    on_task_created: Callable[[Any], None] | None,
) -> TaskPlugins[Any]:
    """The task of the connector's task class (``kind`` is the plugin kind: the task class must be a
    SourceTask or a SinkTask), its converters, transformations and tolerance."""
    from connect_core.transforms.chain import TransformationChain

    task_base = _TASK_BASES[kind]
    connector_cls = Plugins.load(conn_props.get(CONNECTOR_CLASS_CONFIG, ""), kind, key=CONNECTOR_CLASS_CONFIG)
    task_cls = connector_cls().task_class()
    if not (isinstance(task_cls, type) and issubclass(task_cls, task_base)):
        raise ConnectError(f"Task class {task_cls!r} of connector {task_id.connector} is not a {task_base.__name__}")
    task = task_cls()
    if on_task_created is not None:
        on_task_created(task)

    key_conv = converter(conn_props, KEY_CONVERTER_CLASS_CONFIG, True)
    value_conv = converter(conn_props, VALUE_CONVERTER_CLASS_CONFIG, False)
    header_conv = converter(conn_props, HEADER_CONVERTER_CLASS_CONFIG, None)
    chain = TransformationChain.from_config(conn_props)
    tolerance = RetryWithToleranceOperator(
        conf.errors_retry_timeout_ms,
        conf.errors_retry_max_delay_ms,
        conf.errors_tolerance,
        log_errors=conf.errors_log_enable,
        log_messages=conf.errors_log_include_messages,
    )
    return TaskPlugins[Any](task, key_conv, value_conv, header_conv, chain, tolerance)
