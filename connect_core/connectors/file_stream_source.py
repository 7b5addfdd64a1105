"""Kafka's quickstart connector: each line of a file becomes a record (``FileStreamSourceConnector``).

Source partition ``{"filename": <path>}``, offset ``{"position": <byte offset after the line>}``,
value the line as a STRING, so offsets written by Java's connector resume here and vice versa
(Java counts characters, which equals bytes for ASCII files). An empty ``file`` reads standard
input without offsets.
"""

from __future__ import annotations

import os
import select
import sys
import threading
import time
from typing import Any, BinaryIO

from connect_core.api.connector import ExactlyOnceSupport, SourceConnector
from connect_core.api.errors import BadRequestError, ConnectError
from connect_core.api.records import SourceRecord
from connect_core.api.schema import STRING_SCHEMA
from connect_core.api.task import SourceTask, Task
from connect_core.config.configdef import ConfigDef, Importance, NonEmptyString, Type

FILE_CONFIG = "file"
TOPIC_CONFIG = "topic"
TASK_BATCH_SIZE_CONFIG = "batch.size"
DEFAULT_TASK_BATCH_SIZE = 2000
FILENAME_FIELD = "filename"
POSITION_FIELD = "position"

CONFIG_DEF = (
    ConfigDef()
    .define(FILE_CONFIG, Type.STRING, None, None, Importance.HIGH,
            "Source filename. If not specified, the standard input will be used")
    .define(TOPIC_CONFIG, Type.STRING, documentation="The topic to publish data to", validator=NonEmptyString(),
            importance=Importance.HIGH)
    .define(TASK_BATCH_SIZE_CONFIG, Type.INT, DEFAULT_TASK_BATCH_SIZE, None, Importance.LOW,
            "The maximum number of records the source task can read from the file each time it is polled")
)  # fmt: skip


class FileStreamSourceConnector(SourceConnector):
    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSourceTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props)]  # one input stream: one task

    def stop(self) -> None:
        """No background work."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def exactly_once_support(self, props: dict[str, str]) -> ExactlyOnceSupport | None:
        return ExactlyOnceSupport.SUPPORTED if props.get(FILE_CONFIG) else ExactlyOnceSupport.UNSUPPORTED

    def alter_offsets(
        self,
        connector_config: dict[str, str],
        offsets: list[tuple[dict[str, Any], dict[str, Any] | None]],
    ) -> bool:
        """Offsets a client sends that this connector cannot use are its bad request (400; Java: 500),
        as the MirrorMaker connectors answer."""
        if not connector_config.get(FILE_CONFIG):
            raise ConnectError(
                f"Offsets cannot be modified if the '{FILE_CONFIG}' configuration is unspecified. "
                "This is because stdin is used for input and offsets are not tracked."
            )
        for partition, offset in offsets:
            if offset is None:
                continue
            if POSITION_FIELD not in offset:
                raise BadRequestError(f"Offset objects should either be null or contain the key '{POSITION_FIELD}'")
            pos = offset[POSITION_FIELD]
            if not isinstance(pos, int) or isinstance(pos, bool):
                raise BadRequestError(
                    f"The value for the '{POSITION_FIELD}' key in the offset is expected to be a Long value"
                )
            if pos < 0:
                raise BadRequestError(
                    f"The value for the '{POSITION_FIELD}' key in the offset should be a non-negative value"
                )
            if partition is None:
                raise BadRequestError("Partition objects cannot be null")
            if FILENAME_FIELD not in partition:
                raise BadRequestError(f"Partition objects should contain the key '{FILENAME_FIELD}'")
        return True


class FileStreamSourceTask(SourceTask):
    """Tails one file; ``poll`` returns complete lines and waits ``idle_wait_s`` when none are new."""

    idle_wait_s = 1.0
    read_size = 64 * 1024

    def __init__(self) -> None:
        self._stop = threading.Event()
        self._stream: BinaryIO | None = None
        self._buffer = b""
        self._position: int | None = None
        self.filename: str | None = None
        self._partition: dict[str, Any] | None = None

    def start(self, props: dict[str, str]) -> None:
        parsed = CONFIG_DEF.parse(props)
        self.filename = parsed[FILE_CONFIG] or None
        self.topic: str = parsed[TOPIC_CONFIG]
        self.batch_size: int = parsed[TASK_BATCH_SIZE_CONFIG]
        self._partition = {FILENAME_FIELD: self.filename} if self.filename else None
        self._stop.clear()

    def _open(self) -> bool:
        if self.filename is None:
            self._stream = sys.stdin.buffer
            self._position = None
            return True
        try:
            stream = open(self.filename, "rb")  # noqa: SIM115 - lives until stop()
        except FileNotFoundError:
            return False
        except OSError as e:
            raise ConnectError(f"Error while trying to open file {self.filename}: {e}") from e
        position = 0
        assert self._partition is not None
        stored = self.context.offset_storage_reader().offset(self._partition)
        if stored is not None:
            last = stored.get(POSITION_FIELD)
            if last is not None and (not isinstance(last, int) or isinstance(last, bool)):
                stream.close()
                raise ConnectError("Offset position is the incorrect type")
            if last is not None:
                position = last
                stream.seek(position)
        self._stream = stream
        self._position = position
        return True

    def _read_available(self) -> bytes:
        stream = self._stream
        assert stream is not None
        if self.filename is None:
            ready, _, _ = select.select([stream], [], [], 0)
            if not ready:
                return b""
            return os.read(stream.fileno(), self.read_size)
        return stream.read(self.read_size) or b""

    def _extract_lines(self, limit: int) -> list[tuple[str, int]]:
        """Complete lines in the buffer (``\\n``, ``\\r\\n`` or ``\\r``), with the byte offset after each."""
        lines: list[tuple[str, int]] = []
        buf = self._buffer
        start = 0
        n = len(buf)
        while len(lines) < limit:
            nl = buf.find(b"\n", start)
            cr = buf.find(b"\r", start, nl if nl >= 0 else n)
            if cr >= 0:
                if cr + 1 >= n:
                    break  # cannot tell "\r" from "\r\n" yet
                end, next_start = cr, (cr + 2 if buf[cr + 1 : cr + 2] == b"\n" else cr + 1)
            elif nl >= 0:
                end, next_start = nl, nl + 1
            else:
                break
            if self._position is not None:
                self._position += next_start - start
            lines.append((buf[start:end].decode("utf-8", errors="replace"), self._position or 0))
            start = next_start
        self._buffer = buf[start:]
        return lines

    def poll(self) -> list[SourceRecord] | None:
        if self._stop.is_set():
            return None
        if self._stream is None and not self._open():
            self._stop.wait(self.idle_wait_s)  # wait for the file to be created
            return None
        records: list[SourceRecord] = []
        while len(records) < self.batch_size and not self._stop.is_set():
            lines = self._extract_lines(self.batch_size - len(records))
            now = int(time.time() * 1000)
            for line, position in lines:
                offset = {POSITION_FIELD: position} if self._position is not None else None
                records.append(
                    SourceRecord(self._partition, offset, self.topic, None, None, line, None, now, None, STRING_SCHEMA)
                )
            if len(records) >= self.batch_size:
                break
            try:
                chunk = self._read_available()
            except (OSError, ValueError):
                return records or None  # stream closed by stop()
            if not chunk:
                break
            self._buffer += chunk
        if not records:
            self._stop.wait(self.idle_wait_s)
            return None
        return records

    def stop(self) -> None:
        self._stop.set()
        stream = self._stream
        if stream is not None and self.filename is not None:
            try:
                stream.close()
            except OSError:
                pass
