"""Collect what ``mm2 status`` shows from the clusters themselves, never from a running process.

Everything a flow ``S->T`` knows is on ``T``: connector/task states in ``mm2-status.S.internal``,
committed source offsets in ``mm2-offsets.S.internal`` (key ``["MirrorSourceConnector",
{"cluster":S,"partition":p,"topic":t}]``, value ``{"offset":o}`` = last replicated upstream
offset) and checkpoints in ``S.checkpoints.internal``; only the source end offsets come from
``S``. So status works from any machine, while mm2 runs or not, and shows what Java MM2 wrote too.

The MIRRORED figure uses the freshest evidence (:mod:`mirror.driver.status_lag`): the flushed offsets
above, or, when newer, the flow's latest offset sync (``mm2-offset-syncs.T.internal``, on S by
default) plus the remote partition's end offset read now from a fetch's high watermark, so a
backlog that is fully on the target reads lag 0 before the next offset flush.

The folding of topic records into report rows is pure (:class:`StatusFold`, :class:`OffsetFold`,
:class:`CheckpointFold`, :func:`~mirror.driver.status_lag.partition_lags`); the thin I/O around it
reads each topic once to its end with a read-only :class:`~connect_core.kafka.log.KafkaBasedLog`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from connect_core.api.errors import ConnectError, DataError
from connect_core.kafka.admin import TopicAdmin
from connect_core.kafka.clients import admin_config, create_admin
from connect_core.kafka.log import KafkaBasedLog
from connect_core.kafka.types import TIMESTAMP_NOT_AVAILABLE, ClientPartition, KafkaException, Message, OffsetSpec
from connect_core.kafka.watermarks import high_watermarks
from connect_core.model import ConnectorTaskId
from connect_core.storage import formats as connect_formats
from connect_core.storage.api import ConnectorStatus, TaskStatus
from connect_core.storage.internal_topics import store_client_props
from connect_core.storage.offset_storage import deserialize_offset_key, deserialize_offset_value
from mirror.client.errors import ClusterUnreachableError, RecordFormatError
from mirror.client.formats import Checkpoint
from mirror.connectors.source_gaps import LOST_KEY, REASON_RECORDS_LOST, LostTotal
from mirror.connectors.source_incarnation import REASON_RECREATED, RECREATED_KEY, RecreatedEvent
from mirror.driver.maker_config import CHECKPOINT_CONNECTOR, SOURCE_CONNECTOR, MirrorMakerConfig, SourceAndTarget
from mirror.driver.status_lag import OffsetSyncFold, partition_lags
from mirror.driver.status_report import ConnectorState, FlowStatus, GroupCheckpoint, SourceChange, TaskState

if TYPE_CHECKING:
    from mirror.connectors.config import MirrorSourceConfig

log = logging.getLogger(__name__)

#: Per request; ``MM2_STATUS_TIMEOUT_S`` overrides (an unreachable cluster costs about this long).
DEFAULT_TIMEOUT_S = float(os.environ.get("MM2_STATUS_TIMEOUT_S", "10"))

# ------------------------------------------------------------------------------------- pure folds


@dataclass
class StatusFold:
    """Last-value-wins view of a Connect status topic (tombstones delete), as every worker sees it."""

    connectors: dict[str, ConnectorStatus] = field(default_factory=dict)
    tasks: dict[str, dict[int, TaskStatus]] = field(default_factory=dict)

    def apply(self, key: bytes | str | None, value: bytes | None, timestamp_ms: int | None = None) -> None:
        parsed = connect_formats.decode_status_key(key)
        if parsed is None:
            return
        try:
            if parsed.kind == "connector":
                if value is None:
                    self.connectors.pop(parsed.connector, None)
                else:
                    self.connectors[parsed.connector] = connect_formats.decode_connector_status(parsed.connector, value)
            elif parsed.kind == "task" and parsed.task is not None:
                tasks = self.tasks.setdefault(parsed.connector, {})
                if value is None:
                    tasks.pop(parsed.task.task, None)
                else:
                    tasks[parsed.task.task] = connect_formats.decode_task_status(parsed.task, value)
        except DataError as e:  # a record Java would also skip; never fail the report for it
            log.debug("Skipping undecodable status record %r: %s", key, e)

    def connector_states(self, names: Iterable[str] | None = None) -> list[ConnectorState]:
        """Connectors (and their tasks) in ``names`` order, or every known connector sorted."""
        wanted = list(names) if names is not None else sorted(set(self.connectors) | set(self.tasks))
        out: list[ConnectorState] = []
        for name in wanted:
            status = self.connectors.get(name)
            tasks = self.tasks.get(name, {})
            if status is None and not tasks:
                continue
            out.append(
                ConnectorState(
                    name=name,
                    state=status.state.value if status else "UNASSIGNED",
                    worker_id=status.worker_id if status else "",
                    tasks=[
                        TaskState(t.id.task, t.state.value, t.worker_id, t.trace)
                        for t in sorted(tasks.values(), key=lambda t: t.id.task)
                    ],
                )
            )
        return out

    def task_ids(self, connector: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(connector, n) for n in sorted(self.tasks.get(connector, {}))]


@dataclass
class OffsetFold:
    """Committed MirrorSourceConnector offsets of one source cluster: (topic, partition) -> offset."""

    source_alias: str
    connector: str = SOURCE_CONNECTOR
    offsets: dict[tuple[str, int], int] = field(default_factory=dict)
    written_at_ms: dict[tuple[str, int], int] = field(default_factory=dict)  # record timestamps (flush times)
    recreated: dict[tuple[str, int], RecreatedEvent] = field(default_factory=dict)  # source topic recreations
    lost: dict[tuple[str, int], LostTotal] = field(default_factory=dict)  # records deleted before mirrored

    def apply(self, key: bytes | None, value: bytes | None, timestamp_ms: int | None = None) -> None:
        parsed = deserialize_offset_key(key)
        if parsed is None:
            return
        connector, partition = parsed
        if connector != self.connector or not isinstance(partition, dict):
            return
        if partition.get("cluster") != self.source_alias:
            return
        topic, number = partition.get("topic"), partition.get("partition")
        if not isinstance(topic, str) or not isinstance(number, int) or isinstance(number, bool):
            return
        try:
            offset_map = deserialize_offset_value(value)
        except DataError:
            return
        if offset_map is None:
            self.offsets.pop((topic, number), None)
            self.written_at_ms.pop((topic, number), None)
            self.recreated.pop((topic, number), None)
            self.lost.pop((topic, number), None)
            return
        event = RecreatedEvent.decode(topic, number, offset_map.get(RECREATED_KEY))
        if event is not None:
            self.recreated[(topic, number)] = event
        else:
            self.recreated.pop((topic, number), None)
        lost = LostTotal.decode(offset_map.get(LOST_KEY))
        if lost is not None:
            self.lost[(topic, number)] = lost
        else:
            self.lost.pop((topic, number), None)
        offset = offset_map.get("offset")
        if isinstance(offset, int) and not isinstance(offset, bool):
            self.offsets[(topic, number)] = offset
            if timestamp_ms is not None:
                self.written_at_ms[(topic, number)] = timestamp_ms


def source_changes(
    recreated: Mapping[tuple[str, int], RecreatedEvent],
    remote_topic: Callable[[str], str],
    lost: Mapping[tuple[str, int], LostTotal] | None = None,
) -> list[SourceChange]:
    """Report rows of the source changes recorded with the committed offsets, per partition."""
    rows = []
    for (topic, partition), event in recreated.items():
        rows.append(
            SourceChange(
                topic,
                partition,
                remote_topic(topic),
                REASON_RECREATED,
                _utc(event.detected_at_ms),
                f"topic id {event.previous_topic_id} -> {event.topic_id}; old incarnation mirrored through offset "
                f"{event.previous_offset}, new one mirrored from its start",
            )
        )
    for (topic, partition), total in (lost or {}).items():
        rows.append(
            SourceChange(
                topic,
                partition,
                remote_topic(topic),
                REASON_RECORDS_LOST,
                _utc(total.detected_at_ms),
                f"{total.count} records deleted on the source before they were mirrored (last: offsets "
                f"{total.last_first} to {total.last_end - 1})",
            )
        )
    return sorted(rows, key=lambda r: (r.topic, r.partition, r.reason))


def _utc(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class CheckpointFold:
    """The latest checkpoint per (group, downstream topic, partition)."""

    latest: dict[tuple[str, str, int], Checkpoint] = field(default_factory=dict)
    written_at_ms: dict[tuple[str, str, int], int] = field(default_factory=dict)

    def apply(self, key: bytes | None, value: bytes | None, timestamp_ms: int | None = None) -> None:
        if key is None or value is None:
            return
        try:
            cp = Checkpoint.decode(key, value)
        except RecordFormatError:
            return
        k = (cp.consumer_group_id, cp.topic_partition.topic, cp.topic_partition.partition)
        self.latest[k] = cp
        if timestamp_ms is not None:
            self.written_at_ms[k] = timestamp_ms

    def rows(self, now_ms: int | None = None) -> list[GroupCheckpoint]:
        def age(k: tuple[str, str, int]) -> float | None:
            at = self.written_at_ms.get(k)
            return None if now_ms is None or at is None or at <= 0 else max(0.0, (now_ms - at) / 1000.0)

        return [
            GroupCheckpoint(g, t, p, cp.upstream_offset, cp.downstream_offset, age((g, t, p)))
            for (g, t, p), cp in sorted(self.latest.items())
        ]


# ------------------------------------------------------------------------------------- I/O


def read_topic(
    client_props: Mapping[str, Any],
    topic: str,
    apply: Callable[[bytes | None, bytes | None, int | None], None],
    timeout_s: float = DEFAULT_TIMEOUT_S,
) -> None:
    """Feed every record of ``topic`` (all partitions, log order per partition) to ``apply``, once:
    key, value and the record's timestamp (ms, None if the broker gave none)."""

    def consume(msg: Message) -> None:
        kind, ts = msg.timestamp()
        apply(msg.key(), msg.value(), ts if kind != TIMESTAMP_NOT_AVAILABLE and ts > 0 else None)

    reader = KafkaBasedLog(topic, client_props, client_props, consume, read_only=True, start_timeout_s=timeout_s)
    try:
        reader.start()  # reads to the end before returning
    finally:
        reader.stop()


def list_end_offsets(
    admin_props: Mapping[str, Any], partitions: Mapping[str, int], timeout_s: float = DEFAULT_TIMEOUT_S
) -> dict[tuple[str, int], int]:
    """Latest offsets of every partition of ``partitions`` (topic -> count) in one ListOffsets call."""
    if not partitions:
        return {}
    admin = create_admin(admin_config(admin_props))
    request = {ClientPartition(t, p): OffsetSpec.latest() for t, n in partitions.items() for p in range(n)}
    futures = admin.list_offsets(request, request_timeout=timeout_s)
    out: dict[tuple[str, int], int] = {}
    for tp, future in futures.items():
        try:
            out[(tp.topic, tp.partition)] = int(future.result(timeout=timeout_s).offset)
        except KafkaException as e:
            raise ConnectError(f"Cannot list end offsets of {tp.topic}-{tp.partition}: {e}") from e
    return out


class FlowReader:
    """Reads one flow's state; each step's failure becomes the flow's ``error`` text, not an exception."""

    def __init__(self, config: MirrorMakerConfig, pair: SourceAndTarget, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.config = config
        self.pair = pair
        self.timeout_s = timeout_s
        self.worker = config.worker_config(pair)
        self.source_connector = config.connector_base_config(pair, SOURCE_CONNECTOR)
        self.target_props = store_client_props(self.worker)

    def read(self) -> FlowStatus:
        pair = self.pair
        read_at = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        flow = FlowStatus(
            pair.source,
            pair.target,
            enabled=self.config.flow_enabled(pair),
            read_at=read_at,
            delivery=self.config.delivery_mode(pair),
            copy_path=self.config.copy_path(pair),
        )
        try:
            self._read(flow)
        except Exception as e:  # one broken flow must not hide the others
            flow.error = _one_line(e)
            if isinstance(e, ClusterUnreachableError):
                flow.unreachable = e.alias
        return flow

    def _read(self, flow: FlowStatus) -> None:
        from mirror.connectors.config import MirrorSourceConfig

        pair = self.pair
        source_config = MirrorSourceConfig(self.source_connector)
        policy = source_config.replication_policy()
        target_admin = TopicAdmin(self.target_props, timeout_s=self.timeout_s)
        try:
            target_topics = target_admin.list_topics(self.timeout_s)
        except ConnectError as e:
            raise ClusterUnreachableError(
                f"target cluster '{pair.target}' is unreachable: {_one_line(e)}", pair.target
            ) from e

        statuses, offsets, checkpoints = StatusFold(), OffsetFold(pair.source), CheckpointFold()
        self._read_topics(
            target_topics,
            [
                (str(self.worker["status.storage.topic"]), statuses.apply),
                (str(self.worker["offset.storage.topic"]), offsets.apply),
                (policy.checkpoints_topic(pair.source), checkpoints.apply),
            ],
        )
        names = [SOURCE_CONNECTOR, CHECKPOINT_CONNECTOR, "MirrorHeartbeatConnector"]
        extra = sorted((set(statuses.connectors) | set(statuses.tasks)) - set(names))
        flow.connectors = statuses.connector_states(names + extra)
        flow.checkpoints = checkpoints.rows(_now_ms())

        if not flow.enabled and not offsets.offsets:
            return  # heartbeats-only flow: no replicated partitions to report
        source_admin_props = source_config.source_admin_config("status-source-admin")
        source_admin = TopicAdmin(source_admin_props, timeout_s=self.timeout_s)
        try:
            source_topics = source_admin.list_topics(self.timeout_s)
        except ConnectError as e:
            raise ClusterUnreachableError(
                f"source cluster '{pair.source}' is unreachable: {_one_line(e)}", pair.source
            ) from e
        wanted: set[str] = {t for t, _ in offsets.offsets} & source_topics
        if flow.enabled:
            from mirror.client.filters import should_replicate_topic

            topic_filter = source_config.topic_filter()
            heartbeats = source_config.heartbeats_replication_enabled
            wanted |= {
                t for t in source_topics if should_replicate_topic(t, topic_filter, policy, pair.target, heartbeats)
            }
        counts = source_admin.partition_counts(wanted, self.timeout_s)
        ends = list_end_offsets(source_admin_props, counts, self.timeout_s)
        syncs = self._read_offset_syncs(source_config, source_topics, target_topics)
        reported = {tp: sync for tp, sync in syncs.latest.items() if tp in ends or tp in offsets.offsets}
        target_ends = self._target_ends(
            target_admin, reported, target_topics, lambda t: policy.format_remote_topic(pair.source, t)
        )
        flow.partitions = partition_lags(
            ends,
            offsets.offsets,
            lambda t: policy.format_remote_topic(pair.source, t),
            committed_at_ms=offsets.written_at_ms,
            syncs=reported,
            target_ends=target_ends,
            now_ms=_now_ms(),
        )
        flow.source_changes = source_changes(
            offsets.recreated, lambda t: policy.format_remote_topic(pair.source, t), offsets.lost
        )

    def _read_topics(
        self, present: set[str], reads: list[tuple[str, Callable[[bytes | None, bytes | None, int | None], None]]]
    ) -> None:
        """Each of the target's topics that exists, read to its end into its fold, all at once: each read is
        mostly waiting on the broker (about a second apiece on an idle machine), and they share nothing."""
        wanted = [(topic, apply) for topic, apply in reads if topic in present]
        with ThreadPoolExecutor(max(1, len(wanted)), thread_name_prefix="mm2-status-read") as pool:
            for read in [pool.submit(read_topic, self.target_props, t, apply, self.timeout_s) for t, apply in wanted]:
                read.result()  # the first failure, as when they were read one after another

    def _target_ends(
        self,
        target_admin: TopicAdmin,
        syncs: Mapping[tuple[str, int], tuple[int, int]],
        target_topics: set[str],
        remote_topic: Callable[[str], str],
    ) -> dict[tuple[str, int], int]:
        """Source (topic, partition) -> its remote partition's end offset now, where a sync says where to look.

        Fetched from each sync's downstream offset (a record known to exist). Only evidence: when it
        cannot be read, the report falls back to the flushed offsets rather than failing.
        """
        remote = {t: remote_topic(t) for t, _ in syncs}
        present = {r for r in remote.values() if r in target_topics}
        if not present:
            return {}
        try:
            counts = target_admin.partition_counts(present, self.timeout_s)
            positions = {tp: d for tp, (_u, d) in syncs.items() if tp[1] < counts.get(remote[tp[0]], 0)}
            ends = high_watermarks(
                self.target_props, {(remote[t], p): d for (t, p), d in positions.items()}, self.timeout_s
            )
        except (ConnectError, KafkaException) as e:
            log.debug("No end offsets of the remote partitions (%s); reporting flushed offsets only", e)
            return {}
        return {(t, p): ends[(remote[t], p)] for t, p in positions if (remote[t], p) in ends}

    def _read_offset_syncs(
        self, source_config: MirrorSourceConfig, source_topics: set[str], target_topics: set[str]
    ) -> OffsetSyncFold:
        """The latest offset sync per source partition, from wherever the flow keeps them."""
        syncs = OffsetSyncFold()
        if not source_config.emit_offset_syncs_enabled:
            return syncs
        topic = source_config.offset_syncs_topic()
        if source_config.offset_syncs_on_source:
            props: Mapping[str, Any] = source_config.source_consumer_config("status-offset-syncs")
            present = topic in source_topics
        else:
            props, present = self.target_props, topic in target_topics
        if present:
            read_topic(props, topic, syncs.apply, self.timeout_s)
        return syncs


def _now_ms() -> int:
    return int(time.time() * 1000)


def _one_line(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return " ".join(text.split())


def collect_status(
    config: MirrorMakerConfig, pairs: Iterable[SourceAndTarget] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S
) -> list[FlowStatus]:
    """FlowStatus for each pair (default: every herder pair of the config), in config order."""
    chosen = list(pairs) if pairs is not None else config.cluster_pairs()
    return [FlowReader(config, p, timeout_s).read() for p in chosen]
