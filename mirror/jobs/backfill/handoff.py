"""Taking backfilled topics from a flow's live tailing, and giving them back, whatever either process does.

Kafka's rule for a connector's offsets: they may change only while no task runs them. The job takes a
lease on its topics in the flow's leases topic (:mod:`mirror.jobs.backfill.lease`); every ``mm2 run``
node derives the MirrorSourceConnector config with the leased topics in ``topics.exclude``, so the leader
(whichever node, before or after any restart) regenerates the task configs without their partitions and
every worker stops the connector's tasks (each flushing its offsets) and restarts them. Once the config
topic holds an excluding connector config, a task-config commit without the partitions, and every task
that ran them reported its stop after that commit, no task runs them: the job copies and commits their
offsets (a stopped task reports UNASSIGNED only after its final offset commit; record timestamps order
the two topics, so the workers' clocks are assumed roughly in step). A task its worker abandoned instead
(:mod:`mirror.jobs.backfill.release_rule`) never reports: the job waits out the graceful timeout, then
goes on from the offsets it did commit and says so.

With no ``mm2 run`` up (the flow's Connect group has no member), nobody would answer: the job writes the
excluding connector config and the task configs without the partitions itself, as the leader would, so a
``mm2 run`` started during the copy starts its tasks without them. Releasing the lease hands the topics
back: the leader derives the config without them and the tasks resume from the offsets the job committed.
A flow that never ran has no tasks to stop; its first leader already derives the exclusion.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from connect_core.api.errors import ConnectError
from connect_core.kafka.clients import create_producer, producer_config
from connect_core.kafka.types import KafkaError, Message
from connect_core.model import ConnectorTaskId
from connect_core.storage.formats import (
    commit_key,
    connector_key,
    decode_config_record,
    decode_status_key,
    decode_task_status,
    encode_connector_config,
    encode_task_commit,
    encode_task_config,
    task_key,
)
from connect_core.storage.internal_topics import store_client_props
from mirror.client.filters import TOPICS_EXCLUDE_ALIAS_CONFIG, TOPICS_EXCLUDE_CONFIG
from mirror.connectors.config import TASK_TOPIC_PARTITIONS
from mirror.connectors.mirror_admin import MirrorAdmin
from mirror.driver.backfill_leases import DEFAULT_LEASE_TTL_S, Lease, with_lease, with_topics_excluded
from mirror.driver.status import read_topic
from mirror.jobs.backfill.copy import SOURCE_CONNECTOR
from mirror.jobs.backfill.flow import Flow
from mirror.jobs.backfill.lease import LeaseHolder
from mirror.jobs.backfill.plan import assigned_partitions
from mirror.jobs.backfill.release_rule import TaskStatusRecord, graceful_timeout_ms, release_of

log = logging.getLogger(__name__)

RELEASE_TIMEOUT_S = 120.0
_POLL_S = 0.5


@dataclass
class ConfigTopicView:
    """What the config topic says of the MirrorSourceConnector, folded record by record in log order."""

    connector_config: dict[str, str] | None = None
    #: task configs of the latest commit, and the record timestamp of that commit
    tasks: dict[int, dict[str, str]] = field(default_factory=dict)
    commit_ts: int | None = None
    #: the topics whose owners are followed (``owners`` and ``released_ts``)
    topics: frozenset[str] = frozenset()
    #: the task ids of the latest commit that assigned any partition of ``topics`` (none: no commit did)
    owners: frozenset[int] = frozenset()
    #: the timestamp of the first commit after that one that assigns none of them (None: not released yet)
    released_ts: int | None = None
    _pending: dict[int, dict[str, str]] = field(default_factory=dict)

    def apply(self, key: bytes | None, value: bytes | None, ts: int | None) -> None:
        record = decode_config_record(key, value)
        if record.connector != SOURCE_CONNECTOR:
            return
        if record.kind == "connector":
            self.connector_config = None if record.deleted else dict(record.properties or {})
        elif record.kind == "task" and record.task is not None and record.properties is not None:
            self._pending[record.task.task] = dict(record.properties)
        elif record.kind == "commit" and record.task_count is not None:
            self.tasks = {i: self._pending.get(i, self.tasks.get(i, {})) for i in range(record.task_count)}
            self.commit_ts = ts
            self._follow_owners(ts)

    def _follow_owners(self, ts: int | None) -> None:
        owning = frozenset(
            task
            for task, props in self.tasks.items()
            if any(t in self.topics for t, _ in assigned_partitions(props.get(TASK_TOPIC_PARTITIONS)))
        )
        if owning:
            self.owners, self.released_ts = owning, None
        elif self.owners and self.released_ts is None:
            self.released_ts = ts


def read_config_topic(flow: Flow, client_props: dict[str, Any], topics: Iterable[str] = ()) -> ConfigTopicView:
    """The view read to the end; ``topics``: whose owning tasks to follow through the task-config commits (the
    tasks that ran them are known from history, also when the first read comes after the exclusion)."""
    view = ConfigTopicView(topics=frozenset(topics))
    read_topic(client_props, flow.configs_topic, view.apply)
    return view


def _task_statuses(flow: Flow, client_props: dict[str, Any]) -> list[TaskStatusRecord]:
    """Every status record of the connector's tasks, in log order (a tombstone's state is None)."""
    out: list[TaskStatusRecord] = []

    def apply(key: bytes | None, value: bytes | None, ts: int | None) -> None:
        status_key = decode_status_key(key)
        task = getattr(status_key, "task", None)
        if isinstance(task, ConnectorTaskId) and task.connector == SOURCE_CONNECTOR and ts is not None:
            state = None if value is None else decode_task_status(task, value).state.value
            out.append(TaskStatusRecord(task.task, state, ts))

    read_topic(client_props, flow.status_topic, apply)
    return out


def excludes(connector_config: dict[str, str] | None, topics: set[str]) -> bool:
    """True if the connector config's ``topics.exclude`` names each of ``topics`` exactly (as a lease adds them)."""
    if connector_config is None:
        return False
    current = connector_config.get(TOPICS_EXCLUDE_CONFIG, connector_config.get(TOPICS_EXCLUDE_ALIAS_CONFIG))
    return current is not None and with_topics_excluded(current, topics) == with_topics_excluded(current, ())


def without_partitions(tasks: dict[int, dict[str, str]], topics: set[str]) -> dict[int, dict[str, str]]:
    """The tasks' configs with the partitions of ``topics`` taken out of their assignments."""
    out: dict[int, dict[str, str]] = {}
    for task, props in tasks.items():
        kept = [
            item.strip()
            for item in (props.get(TASK_TOPIC_PARTITIONS) or "").split(",")
            if item.strip() and not any(t in topics for t, _ in assigned_partitions(item))
        ]
        out[task] = {**props, TASK_TOPIC_PARTITIONS: ",".join(kept)}
    return out


def live_workers(flow: Flow) -> bool:
    """Whether any ``mm2 run`` worker is a member of the flow's Connect group (an unknown answer counts as yes)."""
    group = str(flow.worker_props.get("group.id") or f"{flow.pair.source}-mm2")
    admin = MirrorAdmin(store_client_props(flow.worker_props), flow.pair.target, 30.0)
    try:
        state = admin.consumer_group_states([group]).get(group)
    finally:
        admin.close()
    return state not in ("EMPTY", "DEAD")


class LiveHandoff:
    """``take(topics, ids)`` before the copy, ``give_back()`` after it (also after a failure)."""

    def __init__(
        self,
        flow: Flow,
        timeout_s: float = RELEASE_TIMEOUT_S,
        lease_ttl_s: float = DEFAULT_LEASE_TTL_S,
        on_lost: Callable[[], None] | None = None,
    ) -> None:
        self.flow = flow
        self.timeout_s = timeout_s
        self.client_props = store_client_props(flow.worker_props)
        self.holder = LeaseHolder(flow, lease_ttl_s, on_lost=on_lost)
        self.graceful_timeout_ms = graceful_timeout_ms(flow.worker_props)
        #: live tasks the workers abandoned instead of stopping (their last positions were never committed)
        self.abandoned: list[int] = []

    @property
    def lost(self) -> str | None:
        """Why the lease stopped being this job's while it ran (None: it held throughout)."""
        return self.holder.lost

    def _write(self, records: list[tuple[str, bytes]]) -> None:
        producer = create_producer(producer_config(self.client_props, {"enable.idempotence": True}))
        errors: list[KafkaError] = []

        def on_delivery(err: KafkaError | None, _msg: Message) -> None:
            if err is not None:
                errors.append(err)

        for key, value in records:
            producer.produce(self.flow.configs_topic, value, key, partition=0, on_delivery=on_delivery)
        if producer.flush(30) or errors:
            raise ConnectError(
                f"cannot write the {SOURCE_CONNECTOR} config to {self.flow.configs_topic}: "
                f"{errors[0].str() if errors else 'timed out'}"
            )

    def take(self, topics: list[str], transactional_ids: list[str]) -> bool:
        """Lease ``topics`` and wait until no live task runs them; True if running tasks released them."""
        lease = self.holder.take(topics, transactional_ids)
        deadline = time.monotonic() + self.timeout_s
        view = self._read(deadline, topics)
        if view.connector_config is None:
            return False
        return self._await_released(set(topics), lease, deadline)

    def _read(self, deadline: float, topics: Iterable[str]) -> ConfigTopicView:
        """The config topic's view; a read that fails (a slow broker, this process paused) is tried again."""
        while True:
            try:
                return read_config_topic(self.flow, self.client_props, topics)
            except ConnectError as e:
                if time.monotonic() > deadline:
                    raise
                log.warning("Reading the config topic of %s failed, trying again: %s", self.flow.pair, e)

    def _await_released(self, topics: set[str], lease: Lease, deadline: float) -> bool:
        """Until the config topic excludes ``topics``, a task-config commit without them is in and every task of
        the last commit that had them reported its stop after it (True); or until no worker is up, when the job
        writes the exclusion (False)."""
        while True:
            view = self._read(deadline, topics)
            owned = {
                tp for props in view.tasks.values() for tp in assigned_partitions(props.get(TASK_TOPIC_PARTITIONS))
            }
            unowned = not any(t in topics for t, _ in owned)
            if excludes(view.connector_config, topics) and unowned and view.commit_ts:
                verdict = release_of(
                    _task_statuses(self.flow, self.client_props),
                    view.owners,
                    view.released_ts or view.commit_ts,
                    int(time.time() * 1000),
                    self.graceful_timeout_ms,
                )
                if verdict.released:
                    self._note_abandoned(verdict.abandoned)
                    log.info("Took %s from live tailing of %s", ", ".join(sorted(topics)), self.flow.pair)
                    return True
            if not live_workers(self.flow):
                self._exclude_offline(view, topics, lease)
                if not live_workers(self.flow):
                    log.info(
                        "No 'mm2 run' runs %s: excluded %s in its config for the job",
                        self.flow.pair,
                        ", ".join(sorted(topics)),
                    )
                    return False
            if time.monotonic() > deadline:
                raise ConnectError(
                    f"the live tasks of {self.flow.pair} did not release the backfilled topics "
                    f"within {self.timeout_s:g}s (is 'mm2 run' healthy?)"
                )
            time.sleep(_POLL_S)

    def _note_abandoned(self, tasks: list[int]) -> None:
        self.abandoned = tasks
        if tasks:
            log.warning(
                "Live task(s) %s of %s did not stop within %d ms (task.shutdown.graceful.timeout.ms) and were "
                "abandoned: records they copied after their last committed offsets are copied again (at least once)",
                ", ".join(f"{SOURCE_CONNECTOR}-{t}" for t in tasks),
                self.flow.pair,
                self.graceful_timeout_ms,
            )

    def _exclude_offline(self, view: ConfigTopicView, topics: set[str], lease: Lease) -> None:
        """As the leader would on the lease: the excluding connector config and task configs without the topics."""
        if view.connector_config is None:
            return
        records: list[tuple[str, bytes]] = []
        if not excludes(view.connector_config, topics):
            records.append(
                (connector_key(SOURCE_CONNECTOR), encode_connector_config(with_lease(view.connector_config, lease)))
            )
        if any(
            t in topics
            for props in view.tasks.values()
            for t, _ in assigned_partitions(props.get(TASK_TOPIC_PARTITIONS))
        ):
            for task, props in without_partitions(view.tasks, topics).items():
                records.append((task_key(SOURCE_CONNECTOR, task), encode_task_config(props)))
            records.append((commit_key(SOURCE_CONNECTOR), encode_task_commit(len(view.tasks))))
        if records:
            self._write(records)

    def give_back(self) -> None:
        """Release the lease: live tailing takes the topics back from the offsets the job committed."""
        self.holder.release()


__all__ = ["LiveHandoff", "excludes", "live_workers", "read_config_topic", "without_partitions"]
