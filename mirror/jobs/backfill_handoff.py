"""Taking backfilled topics from a running flow's live tailing, and giving them back.

Kafka's rule for a connector's offsets: they may change only while no task runs them. The job keeps
it per topic, through Connect's own config topic (the same records a REST ``PUT .../config`` leads
to): it writes the MirrorSourceConnector's config with the topics added to ``topics.exclude``; the
leader regenerates the task configs without their partitions, every worker stops the connector's
tasks (each flushing its offsets) and restarts them. Once a task-config commit without the partitions
is in the config topic and every task has reported a status after it, no task runs them: the job
copies and commits their offsets (a stopped task reports UNASSIGNED only after its final offset
commit; record timestamps order the two topics, so the workers' clocks are assumed roughly in step).
Afterwards it writes the original config back and the tasks resume from the offsets the job committed.
A flow that never ran (no connector config yet) needs neither.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import create_producer, producer_config
from connect_core.kafka.types import KafkaError, Message
from connect_core.model import ConnectorTaskId
from connect_core.storage.formats import (
    connector_key,
    decode_config_record,
    decode_status_key,
    encode_connector_config,
)
from connect_core.storage.internal_topics import store_client_props
from mirror.client.filters import TOPICS_EXCLUDE_ALIAS_CONFIG, TOPICS_EXCLUDE_CONFIG, TOPICS_EXCLUDE_DEFAULT
from mirror.connectors.config import TASK_TOPIC_PARTITIONS
from mirror.driver.status import read_topic
from mirror.jobs.backfill_copy import SOURCE_CONNECTOR
from mirror.jobs.backfill_flow import Flow
from mirror.jobs.backfill_plan import assigned_partitions, with_topics_excluded

log = logging.getLogger(__name__)

RELEASE_TIMEOUT_S = 120.0
_POLL_S = 0.5


@dataclass
class ConfigTopicView:
    """What the config topic says of the MirrorSourceConnector, read to its end."""

    connector_config: dict[str, str] | None = None
    #: task configs of the latest commit, and the record timestamp of that commit
    tasks: dict[int, dict[str, str]] = field(default_factory=dict)
    commit_ts: int | None = None
    commit_position: int = -1


def read_config_topic(flow: Flow, client_props: dict[str, Any]) -> ConfigTopicView:
    view = ConfigTopicView()
    pending: dict[int, dict[str, str]] = {}
    position = [0]

    def apply(key: bytes | None, value: bytes | None, ts: int | None) -> None:
        position[0] += 1
        record = decode_config_record(key, value)
        if record.connector != SOURCE_CONNECTOR:
            return
        if record.kind == "connector":
            view.connector_config = None if record.deleted else dict(record.properties or {})
        elif record.kind == "task" and record.task is not None and record.properties is not None:
            pending[record.task.task] = dict(record.properties)
        elif record.kind == "commit" and record.task_count is not None:
            view.tasks = {i: pending.get(i, view.tasks.get(i, {})) for i in range(record.task_count)}
            view.commit_ts = ts
            view.commit_position = position[0]

    read_topic(client_props, flow.configs_topic, apply)
    return view


def _latest_status_ts(flow: Flow, client_props: dict[str, Any]) -> dict[int, int]:
    """Per task of the connector, the timestamp of its latest status record."""
    out: dict[int, int] = {}

    def apply(key: bytes | None, _value: bytes | None, ts: int | None) -> None:
        status_key = decode_status_key(key)
        task = getattr(status_key, "task", None)
        if isinstance(task, ConnectorTaskId) and task.connector == SOURCE_CONNECTOR and ts is not None:
            out[task.task] = max(ts, out.get(task.task, 0))

    read_topic(client_props, flow.status_topic, apply)
    return out


class LiveHandoff:
    """``take(topics)`` before the copy, ``give_back()`` after it (also after a failure)."""

    def __init__(self, flow: Flow, timeout_s: float = RELEASE_TIMEOUT_S) -> None:
        self.flow = flow
        self.timeout_s = timeout_s
        self.client_props = store_client_props(flow.worker_props)
        self.original: dict[str, str] | None = None
        self.excluded: dict[str, str] | None = None

    def _write(self, props: dict[str, str]) -> None:
        producer = create_producer(producer_config(self.client_props, {"enable.idempotence": True}))
        errors: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            if err is not None:
                errors.append(err)

        producer.produce(self.flow.configs_topic, encode_connector_config(props), connector_key(SOURCE_CONNECTOR),
                         partition=0, on_delivery=on_delivery)
        if producer.flush(30) or errors:
            raise ConnectError(f"cannot write the {SOURCE_CONNECTOR} config to {self.flow.configs_topic}: "
                               f"{errors[0].str() if errors else 'timed out'}")

    def take(self, topics: list[str]) -> bool:
        """Exclude ``topics`` from live tailing and wait until no task runs them; False if the flow never ran."""
        view = read_config_topic(self.flow, self.client_props)
        if view.connector_config is None:
            return False
        self.original = dict(view.connector_config)
        current = self.original.get(TOPICS_EXCLUDE_CONFIG, self.original.get(TOPICS_EXCLUDE_ALIAS_CONFIG,
                                                                               TOPICS_EXCLUDE_DEFAULT))
        excluded = dict(self.original)
        excluded.pop(TOPICS_EXCLUDE_ALIAS_CONFIG, None)
        excluded[TOPICS_EXCLUDE_CONFIG] = with_topics_excluded(current, topics)
        self.excluded = excluded
        self._write(excluded)
        log.info("Took %s from live tailing of %s", ", ".join(topics), self.flow.pair)
        self._await_released(set(topics), view.commit_position, set(view.tasks))
        return True

    def _await_released(self, topics: set[str], before: int, old_tasks: set[int]) -> None:
        """Until a task-config commit without ``topics`` is in and every old and new task reported after it:
        a stopped task reports UNASSIGNED after its final offset commit, a restarted one RUNNING."""
        deadline = time.monotonic() + self.timeout_s
        while True:
            view = read_config_topic(self.flow, self.client_props)
            owned = {tp for props in view.tasks.values()
                     for tp in assigned_partitions(props.get(TASK_TOPIC_PARTITIONS))}
            if view.commit_position > before and not any(t in topics for t, _ in owned) and view.commit_ts:
                statuses = _latest_status_ts(self.flow, self.client_props)
                if all(statuses.get(task, 0) >= view.commit_ts for task in old_tasks | set(view.tasks)):
                    return
            if time.monotonic() > deadline:
                raise ConnectError(f"the live tasks of {self.flow.pair} did not release the backfilled topics "
                                   f"within {self.timeout_s:g}s (is 'mm2 run' healthy?)")
            time.sleep(_POLL_S)

    def give_back(self) -> None:
        """Write the original config back, unless someone changed the config meanwhile."""
        if self.original is None or self.excluded is None:
            return
        view = read_config_topic(self.flow, self.client_props)
        if view.connector_config != self.excluded:
            log.warning("The %s config of %s changed during the backfill; leaving it as it is now",
                        SOURCE_CONNECTOR, self.flow.pair)
            return
        self._write(self.original)
        log.info("Gave the backfilled topics back to live tailing of %s", self.flow.pair)


__all__ = ["LiveHandoff", "read_config_topic"]
