"""Logic every herder shares (Kafka's ``AbstractHerder``): config validation into ConfigInfos,
status assembly from the status store, restart plans (KIP-745), plugin listing, task-config diffing.

Nothing here runs connectors: the standalone and distributed herders call these with their own
config snapshot and locking.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from connect_core.api.connector import Connector, SinkConnector, SourceConnector
from connect_core.api.errors import BadRequestError, NotFoundError
from connect_core.config.config_info import config_key_info
from connect_core.config.configdef import ConfigDef, ConfigKey, ConfigValue, Type, convert_to_string
from connect_core.model import (
    AbstractStatus,
    ConfigInfoKey,
    ConfigInfos,
    ConfigInfoValue,
    ConnectorStateInfo,
    ConnectorTaskId,
    PluginInfo,
    RestartRequest,
    State,
)
from connect_core.plugins import Plugins
from connect_core.runtime.connector_config import (
    ADMIN_OVERRIDES_PREFIX,
    CONNECTOR_CLASS_CONFIG,
    CONSUMER_OVERRIDES_PREFIX,
    DLQ_TOPIC_NAME_CONFIG,
    HEADER_CONVERTER_CLASS_CONFIG,
    KEY_CONVERTER_CLASS_CONFIG,
    PREDICATES_CONFIG,
    PRODUCER_OVERRIDES_PREFIX,
    TRANSFORMS_CONFIG,
    VALUE_CONVERTER_CLASS_CONFIG,
    enrich_topic_creation,
    sink_connector_config_def,
    sink_topic_errors,
    source_connector_config_def,
    uses_topic_creation,
)
from connect_core.runtime.exactly_once_config import exactly_once_errors
from connect_core.runtime.worker_config import ConnectorClientConfigOverridePolicy
from connect_core.storage.api import ClusterConfigState, StatusBackingStore

_CONFIG_ERRORS_TRAILER = (
    "\nYou can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
)


# --------------------------------------------------------------------------- connector types


def connector_class(config: Mapping[str, str] | None) -> type | None:
    if not config or not config.get(CONNECTOR_CLASS_CONFIG):
        return None
    try:
        return Plugins.load(config[CONNECTOR_CLASS_CONFIG])
    except Exception:
        return None


def connector_type(config: Mapping[str, str] | None) -> str:
    """ "source", "sink" or "unknown" (Java's ConnectorType, lower-case as REST renders it)."""
    cls = connector_class(config)
    if cls is None or not issubclass(cls, Connector):
        return "unknown"
    return "source" if issubclass(cls, SourceConnector) else "sink"


# --------------------------------------------------------------------------- validation


def _undefined_key_info(name: str) -> ConfigInfoKey:
    """Java renders ``definition: null`` for values without a key; our entity needs one, so a bare one."""
    return ConfigInfoKey(name, "STRING", False, None, "LOW", "", None, -1, "NONE", name)


def _value_text(value: Any, type_: Type | None) -> str | None:
    if value is None:
        return None
    try:
        return convert_to_string(value, type_) if type_ is not None else str(value)
    except Exception:
        return str(value)


def _value_info(cv: ConfigValue, type_: Type | None, name: str | None = None) -> ConfigInfoValue:
    recommended = [str(_value_text(v, Type.STRING if type_ is Type.LIST else type_)) for v in cv.recommended_values]
    return ConfigInfoValue(name or cv.name, _value_text(cv.value, type_), recommended, list(cv.errors), cv.visible)


def generate_result(
    conn_type: str, keys: Mapping[str, ConfigKey], values: list[ConfigValue], groups: list[str]
) -> ConfigInfos:
    """Java's ``AbstractHerder.generateResult``: values without keys first, then every key in order."""
    errors = 0
    configs: list[tuple[ConfigInfoKey, ConfigInfoValue]] = []
    by_name: dict[str, ConfigValue] = {}
    for cv in values:
        by_name[cv.name] = cv
        if cv.name not in keys:
            configs.append((_undefined_key_info(cv.name), _value_info(cv, None)))
            errors += len(cv.errors)
    for name, key in keys.items():
        cv_ = by_name.get(name)
        if cv_ is not None:
            errors += len(cv_.errors)
            configs.append((config_key_info(key), _value_info(cv_, key.type)))
        else:
            configs.append((config_key_info(key), ConfigInfoValue(name, None)))
    return ConfigInfos(conn_type, errors, groups, configs)


def merge_config_infos(conn_type: str, *infos: ConfigInfos | None) -> ConfigInfos:
    errors = 0
    groups: list[str] = []
    configs: list[tuple[ConfigInfoKey, ConfigInfoValue]] = []
    for info in infos:
        if info is None:
            continue
        errors += info.error_count
        configs.extend(info.configs)
        groups.extend(g for g in info.groups if g not in groups)
    return ConfigInfos(conn_type, errors, groups, configs)


def _enrich_transforms(definition: ConfigDef, props: Mapping[str, str]) -> ConfigDef:
    """Add ``transforms.<alias>.type``/``predicates.<alias>.type`` keys (loadability-checked) like Java's enrich."""
    out = ConfigDef(definition)
    for list_key, kind in ((TRANSFORMS_CONFIG, "transformation"), (PREDICATES_CONFIG, "predicate")):
        raw = props.get(list_key) or ""
        seen: list[str] = []
        for alias in (a.strip() for a in raw.split(",")):
            if not alias or alias in seen:
                continue
            seen.append(alias)
            name = f"{list_key}.{alias}.type"
            group = f"{'Transforms' if kind == 'transformation' else 'Predicates'}: {alias}"

            def check(key: str, value: Any, _kind: str = kind) -> None:
                Plugins.load(str(value), _kind, key=key)

            out.define(name, Type.CLASS, validator=check, documentation=f"Class for the '{alias}' {kind}.",
                       group=group, order_in_group=0, display_name=f"{kind.capitalize()} type for {alias}")  # fmt: skip
    return out


def _validate_plugin_configs(props: Mapping[str, str]) -> list[ConfigValue]:
    """Errors from configuring the transformation chain (its own keys, e.g. a bad regex)."""
    from connect_core.api.errors import ConfigError
    from connect_core.transforms.chain import TransformationChain

    try:
        TransformationChain.from_config(props).close()
    except ConfigError as e:
        out: list[ConfigValue] = []
        for issue in e.issues:
            cv = ConfigValue(issue.key or TRANSFORMS_CONFIG, props.get(issue.key or TRANSFORMS_CONFIG))
            cv.add_error(issue.message)
            out.append(cv)
        return out
    return []


def _converter_infos(props: Mapping[str, str], key: str, kind: str, is_key: bool | None) -> ConfigInfos | None:
    """Validate a connector-level converter's own settings (``<key>.*``) against its ConfigDef."""
    name = props.get(key)
    if not name:
        return None
    try:
        converter = Plugins.load(name, kind, key=key)()
    except Exception:
        return None  # the class key itself carries the error
    config_fn = getattr(converter, "config", None)
    if not callable(config_fn):
        return None
    definition = config_fn()
    prefix = key + "."
    own = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix)}
    if is_key is not None:
        own.setdefault("converter.type", "key" if is_key else "value")
    values = definition.validate(own)
    infos = [
        (
            config_key_info(definition.keys[cv.name], prefix),
            _value_info(cv, definition.keys[cv.name].type, prefix + cv.name),
        )
        for cv in values
        if cv.name in definition.keys
    ]
    errors = sum(len(v.errors) for _, v in infos)
    groups = [g for g in definition.groups()] if hasattr(definition, "groups") else []
    return ConfigInfos("", errors, groups, infos)


def _override_infos(props: Mapping[str, str], prefix: str, policy: ConnectorClientConfigOverridePolicy) -> ConfigInfos:
    overrides = {k[len(prefix) :]: v for k, v in props.items() if k.startswith(prefix) and len(k) > len(prefix)}
    configs: list[tuple[ConfigInfoKey, ConfigInfoValue]] = []
    errors = 0
    for cv in policy.validate(overrides):
        if cv.errors:
            errors += 1
        name = prefix + cv.name
        configs.append((_undefined_key_info(name), ConfigInfoValue(name, _value_text(cv.value, None), [], cv.errors)))
    return ConfigInfos("", errors, [], configs)


def validate_connector_config(
    props: Mapping[str, str | None],
    policy: ConnectorClientConfigOverridePolicy,
    topic_creation_enabled: bool = True,
    transform: Callable[[Mapping[str, str]], Mapping[str, str]] | None = None,
    exactly_once_enabled: bool | None = None,
) -> ConfigInfos:
    """Validate a connector config as Java's ``AbstractHerder.validateConnectorConfig`` does.

    ``transform`` resolves ``${provider:...}`` references first (the worker's providers), so a
    reference is checked by the value it stands for; the answer still shows the reference.
    ``exactly_once_enabled`` (distributed herders only, as in Java): the worker's
    ``exactly.once.source.support=enabled``; source connectors then get the KIP-618 preflight checks.
    """
    if transform is None:
        return _validate_connector_config(props, policy, topic_creation_enabled, exactly_once_enabled)
    raw = {k: v for k, v in props.items() if v is not None}
    resolved = transform(raw)
    infos = _validate_connector_config({**props, **resolved}, policy, topic_creation_enabled, exactly_once_enabled)
    references = {k: v for k, v in raw.items() if resolved.get(k) != v}
    for _, value in infos.configs:
        if value.name in references:
            value.value = references[value.name]
    return infos


def _validate_connector_config(
    props: Mapping[str, str | None],
    policy: ConnectorClientConfigOverridePolicy,
    topic_creation_enabled: bool,
    exactly_once_enabled: bool | None = None,
) -> ConfigInfos:
    conn_type = props.get(CONNECTOR_CLASS_CONFIG)
    if conn_type is None:
        raise BadRequestError(f"Connector config {dict(props)} contains no connector type")
    cls = Plugins.load(conn_type, key=CONNECTOR_CLASS_CONFIG)
    is_sink = issubclass(cls, SinkConnector)
    if not is_sink and not issubclass(cls, SourceConnector):
        raise BadRequestError(f"Connector {conn_type} is neither a source nor a sink connector")
    connector = cls()
    string_props = {k: v for k, v in props.items() if v is not None}
    if is_sink:
        definition = sink_connector_config_def()
    else:
        definition = source_connector_config_def()
        if topic_creation_enabled and uses_topic_creation(string_props):
            definition = enrich_topic_creation(definition, string_props)
    definition = _enrich_transforms(definition, string_props)
    validated = definition.validate_all(string_props)
    if not is_sink and exactly_once_enabled is not None:
        for key, messages in exactly_once_errors(string_props, connector, exactly_once_enabled).items():
            cv = validated.setdefault(key, ConfigValue(key, string_props.get(key)))
            if not cv.errors:  # as Java: only a value that passed its own validator is checked further
                for message in messages:
                    cv.add_error(message)
    if is_sink:
        for key, messages in sink_topic_errors(string_props).items():
            cv = validated.setdefault(key, ConfigValue(key, string_props.get(key)))
            for message in messages:
                cv.add_error(message)
    for key, value in props.items():
        if value is None:
            cv = validated.setdefault(key, ConfigValue(key))
            cv.add_error("Null value can not be supplied as the configuration value.")
    values = list(validated.values())
    keys: dict[str, ConfigKey] = dict(definition.keys)
    groups = list(definition.groups())
    own_def = connector.config()
    if own_def is None:
        raise BadRequestError(f"{cls.__qualname__}.config() must return a ConfigDef that is not null.")
    own_values = connector.validate(string_props)
    if own_values is None:
        raise BadRequestError(f"{cls.__qualname__}.validate() must return a Config that is not null.")
    keys.update(own_def.keys)
    groups.extend(g for g in own_def.groups() if g not in groups)
    values.extend(own_values)
    values.extend(_validate_plugin_configs(string_props))
    result = generate_result(conn_type, keys, values, groups)
    if is_sink:
        dlq = bool(str(string_props.get(DLQ_TOPIC_NAME_CONFIG) or "").strip())
        producer = _override_infos(string_props, PRODUCER_OVERRIDES_PREFIX, policy) if dlq else None
        admin = _override_infos(string_props, ADMIN_OVERRIDES_PREFIX, policy) if dlq else None
        consumer = _override_infos(string_props, CONSUMER_OVERRIDES_PREFIX, policy)
    else:
        producer = _override_infos(string_props, PRODUCER_OVERRIDES_PREFIX, policy)
        admin = (_override_infos(string_props, ADMIN_OVERRIDES_PREFIX, policy)
                 if uses_topic_creation(string_props) else None)  # fmt: skip
        consumer = None
    return merge_config_infos(
        conn_type,
        result,
        producer,
        consumer,
        admin,
        _converter_infos(string_props, HEADER_CONVERTER_CLASS_CONFIG, "header_converter", None),
        _converter_infos(string_props, KEY_CONVERTER_CLASS_CONFIG, "converter", True),
        _converter_infos(string_props, VALUE_CONVERTER_CLASS_CONFIG, "converter", False),
    )


def config_errors_message(infos: ConfigInfos) -> str | None:
    """Java's "Connector configuration is invalid..." text, or None when there is no error."""
    if infos.error_count <= 0:
        return None
    lines = [f"Connector configuration is invalid and contains the following {infos.error_count} error(s):"]
    for _, value in infos.configs:
        lines.extend(value.errors)
    return "\n".join(lines) + _CONFIG_ERRORS_TRAILER


# --------------------------------------------------------------------------- status and restarts


def connector_state_info(name: str, store: StatusBackingStore, config: Mapping[str, str] | None) -> ConnectorStateInfo:
    status = store.get_connector(name)
    if status is None:
        raise NotFoundError(f"No status found for connector {name}")
    tasks = {
        t.id.task: AbstractStatus(t.state, t.worker_id, t.trace, t.generation)
        for t in sorted(store.get_all_tasks(name), key=lambda t: t.id.task)
    }
    return ConnectorStateInfo(
        name,
        AbstractStatus(status.state, status.worker_id, status.trace, status.generation),
        tasks,
        connector_type(config),
    )


def task_state(task: ConnectorTaskId, store: StatusBackingStore) -> AbstractStatus:
    status = store.get_task(task)
    if status is None:
        raise NotFoundError(f"No status found for task {task}")
    return AbstractStatus(status.state, status.worker_id, status.trace, status.generation)


class RestartPlan:
    """What a KIP-745 restart request restarts, and the state to answer with (RESTARTING marks)."""

    def __init__(self, request: RestartRequest, state: ConnectorStateInfo, restart_connector: bool,
                 task_ids: list[ConnectorTaskId]) -> None:  # fmt: skip
        self.request = request
        self.state = state
        self.restart_connector = restart_connector
        self.task_ids = task_ids

    def __repr__(self) -> str:
        return (f"RestartPlan(connector={self.request.connector}, restart_connector={self.restart_connector}, "
                f"tasks={[t.task for t in self.task_ids]})")  # fmt: skip


def build_restart_plan(
    request: RestartRequest, store: StatusBackingStore, config: Mapping[str, str] | None
) -> RestartPlan | None:
    """None when there is no status for the connector (the herder answers 404)."""
    status = store.get_connector(request.connector)
    if status is None:
        return None
    restart_connector = not request.only_failed or status.state is State.FAILED
    conn_state = AbstractStatus(
        State.RESTARTING if restart_connector else status.state, status.worker_id, status.trace, status.generation
    )
    tasks: dict[int, AbstractStatus] = {}
    task_ids: list[ConnectorTaskId] = []
    for t in sorted(store.get_all_tasks(request.connector), key=lambda t: t.id.task):
        restart = request.include_tasks and (not request.only_failed or t.state is State.FAILED)
        if restart:
            task_ids.append(t.id)
        tasks[t.id.task] = AbstractStatus(State.RESTARTING if restart else t.state, t.worker_id, t.trace,
                                          t.generation)  # fmt: skip
    info = ConnectorStateInfo(request.connector, conn_state, tasks, connector_type(config))
    return RestartPlan(request, info, restart_connector, task_ids)


def task_configs_changed(
    state: ClusterConfigState,
    connector: str,
    new_configs: list[dict[str, str]],
    applied_config: Mapping[str, str] | None,
) -> bool:
    """Java's ``taskConfigsChanged``: count, any task config, or the connector config they came from."""
    current = state.tasks(connector)
    if len(new_configs) != len(current):
        return True
    for i, tid in enumerate(current):
        if new_configs[i] != state.task_config(tid):
            return True
    return applied_config is not None and dict(applied_config) != state.connector_configs.get(connector)


def plugin_infos(connectors_only: bool = True) -> list[PluginInfo]:
    kinds = ("source", "sink") if connectors_only else None
    out = [d.to_info() for d in Plugins.list() if kinds is None or d.type in kinds]
    return out
