"""MirrorHeartbeatTask: every ``emit.heartbeats.interval.seconds`` one Heartbeat record to partition 0
of the target's ``heartbeats`` topic; the record timestamp equals the heartbeat's."""

from __future__ import annotations

import threading
import time
from typing import Protocol

from connect_core.api.records import RecordMetadata, SourceRecord
from connect_core.api.schema import BYTES_SCHEMA
from connect_core.api.task import SourceTask
from mirror.client.formats import Heartbeat
from mirror.connectors.config import MirrorHeartbeatConfig


class HeartbeatMetrics(Protocol):
    """Where the task reports acknowledged heartbeats."""

    def heartbeat_acknowledged(self, timestamp_ms: int) -> None: ...


class NoOpHeartbeatMetrics:
    def heartbeat_acknowledged(self, timestamp_ms: int) -> None:
        return None


class MirrorHeartbeatTask(SourceTask):
    """See the module docstring."""

    def __init__(self, metrics: HeartbeatMetrics | None = None) -> None:
        self.metrics: HeartbeatMetrics = metrics or NoOpHeartbeatMetrics()
        self._stopped = threading.Event()
        self._source_alias = ""
        self._target_alias = ""
        self._topic = "heartbeats"
        self._interval_s = 1.0
        self.emitted = 0

    def start(self, props: dict[str, str]) -> None:
        config = MirrorHeartbeatConfig(props)
        self._stopped = threading.Event()
        self._source_alias = config.source_cluster_alias
        self._target_alias = config.target_cluster_alias
        self._topic = config.heartbeats_topic()
        self._interval_s = config.emit_heartbeats_interval_s()

    def stop(self) -> None:
        self._stopped.set()

    def poll(self) -> list[SourceRecord] | None:
        if self._interval_s < 0 or self._stopped.wait(self._interval_s):
            if self._interval_s < 0:
                self._stopped.wait(1.0)
            return None
        now = int(time.time() * 1000)
        heartbeat = Heartbeat(self._source_alias, self._target_alias, now)
        self.emitted += 1
        return [
            SourceRecord(
                heartbeat.connect_partition(),
                Heartbeat.connect_offset(),
                self._topic,
                0,
                heartbeat.record_key(),
                heartbeat.record_value(),
                None,
                now,
                BYTES_SCHEMA,
                BYTES_SCHEMA,
            )
        ]

    def commit_record(self, record: SourceRecord, metadata: RecordMetadata | None) -> None:
        if metadata is not None and record.timestamp is not None:
            self.metrics.heartbeat_acknowledged(record.timestamp)


__all__ = ["HeartbeatMetrics", "MirrorHeartbeatTask", "NoOpHeartbeatMetrics"]
