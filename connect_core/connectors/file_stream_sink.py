"""Kafka's quickstart sink: each record's value becomes a line of a file (``FileStreamSinkConnector``).

As Java's, every task appends to the same ``file`` (standard output when empty), one line per record
value (``null`` for a null value), written at each ``put`` as Java's unbuffered stream does (so the
file is never behind the committed offsets). Each batch is a single ``write`` of whole lines to a
file opened for appending, so tasks of several workers sharing one file never interleave inside a line.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from connect_core.api.connector import SinkConnector
from connect_core.api.errors import ConnectError
from connect_core.api.sink import SinkRecord, SinkTask, TopicPartition
from connect_core.api.task import Task
from connect_core.config.configdef import ConfigDef, Importance, Type

FILE_CONFIG = "file"
#: Bytes of one ``write`` at most (bounds memory for big batches).
_WRITE_AT_BYTES = 1 << 20

CONFIG_DEF = ConfigDef().define(
    FILE_CONFIG, Type.STRING, None, None, Importance.HIGH,
    "Destination filename. If not specified, the standard output will be used",
)  # fmt: skip


class FileStreamSinkConnector(SinkConnector):
    def start(self, props: dict[str, str]) -> None:
        CONFIG_DEF.parse(props)
        self.props = dict(props)

    def task_class(self) -> type[Task]:
        return FileStreamSinkTask

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        return [dict(self.props) for _ in range(max_tasks)]

    def stop(self) -> None:
        """No background work."""

    def config(self) -> ConfigDef:
        return CONFIG_DEF

    def alter_offsets(self, connector_config: dict[str, str], offsets: dict[TopicPartition, int | None]) -> bool:
        """The file keeps no offsets and any position is valid: the group's offsets are all there is."""
        return True


def java_text(value: Any) -> str:
    """A value as Java's ``String.valueOf`` prints it (maps ``{k=v, ...}``, lists ``[a, b]``, ``null``, structs
    ``Struct{a=1,b=x}``),
    so files match those Java's connector writes; bytes are decoded as UTF-8."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", errors="replace")
    if isinstance(value, dict):
        return "{" + ", ".join(f"{java_text(k)}={java_text(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(java_text(v) for v in value) + "]"
    return str(value)  # a Struct prints as Java's Struct.toString


def _line(value: Any) -> bytes:
    return java_text(value).encode("utf-8") + b"\n"


class FileStreamSinkTask(SinkTask):
    def __init__(self) -> None:
        self.filename: str | None = None
        self._fd: int | None = None
        self._pending: list[bytes] = []
        self._pending_bytes = 0

    def start(self, props: dict[str, str]) -> None:
        self.filename = CONFIG_DEF.parse(props).get(FILE_CONFIG) or None
        if self.filename is None:
            self._fd = sys.stdout.fileno()
            return
        try:
            self._fd = os.open(self.filename, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as e:
            raise ConnectError(f"Couldn't find or create file '{self.filename}' for FileStreamSinkTask: {e}") from e

    def put(self, records: list[SinkRecord]) -> None:
        for record in records:
            line = _line(record.value)
            self._pending.append(line)
            self._pending_bytes += len(line)
            if self._pending_bytes >= _WRITE_AT_BYTES:
                self._write_out()
        self._write_out()

    def flush(self, current_offsets: dict[TopicPartition, int]) -> None:
        self._write_out()

    def _write_out(self) -> None:
        if not self._pending or self._fd is None:
            return
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def stop(self) -> None:
        if self._fd is not None and self.filename is not None:
            os.close(self._fd)
        self._fd = None
