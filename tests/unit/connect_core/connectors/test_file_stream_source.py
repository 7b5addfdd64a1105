"""FileStreamSourceTask reads lines with Connect's partition/offset format and resumes from offsets."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from connect_core.api.connector import ExactlyOnceSupport
from connect_core.api.errors import ConfigError, ConnectError
from connect_core.api.schema import STRING_SCHEMA
from connect_core.connectors.file_stream_source import FileStreamSourceConnector, FileStreamSourceTask


class Reader:
    def __init__(self, offsets: dict[str, dict[str, Any]] | None = None) -> None:
        self.stored = offsets or {}

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.stored.get(partition["filename"])

    def offsets(self, partitions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        return [(p, self.offset(p)) for p in partitions]


class Ctx:
    def __init__(self, reader: Reader) -> None:
        self.reader = reader

    def offset_storage_reader(self) -> Reader:
        return self.reader

    def configs(self) -> dict[str, str]:
        return {}


def make_task(path: Path, reader: Reader | None = None, batch: int = 100) -> FileStreamSourceTask:
    task = FileStreamSourceTask()
    task.idle_wait_s = 0.01
    task.initialize(Ctx(reader or Reader()))
    task.start({"file": str(path), "topic": "lines", "batch.size": str(batch)})
    return task


def test_reads_lines_with_offsets_after_each_line(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes("one\r\ntwo\rthré\npartial".encode())
    task = make_task(path)
    records = task.poll()
    assert records is not None
    assert [r.value for r in records] == ["one", "two", "thré"]
    assert [r.source_offset for r in records] == [{"position": 5}, {"position": 9}, {"position": 15}]
    assert all(r.source_partition == {"filename": str(path)} for r in records)
    assert all(r.topic == "lines" and r.value_schema == STRING_SCHEMA and r.timestamp for r in records)
    assert task.poll() is None  # "partial" has no newline yet
    with path.open("ab") as f:
        f.write(b" line\n")
    more = task.poll()
    assert more is not None and [(r.value, r.source_offset) for r in more] == [("partial line", {"position": 28})]
    task.stop()
    assert task.poll() is None


def test_trailing_cr_waits_for_possible_lf(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"a\r")
    task = make_task(path)
    assert task.poll() is None
    with path.open("ab") as f:
        f.write(b"\nb\n")
    got = task.poll()
    assert got is not None and [(r.value, r.source_offset) for r in got] == [
        ("a", {"position": 3}),
        ("b", {"position": 5}),
    ]
    task.stop()


def test_resumes_from_committed_position_and_respects_batch_size(tmp_path: Path) -> None:
    path = tmp_path / "in.txt"
    path.write_bytes(b"l0\nl1\nl2\nl3\nl4\n")
    task = make_task(path, Reader({str(path): {"position": 6}}), batch=2)
    first = task.poll()
    second = task.poll()
    assert first is not None and second is not None
    assert [r.value for r in first] == ["l2", "l3"] and [r.value for r in second] == ["l4"]
    assert second[-1].source_offset == {"position": 15}
    task.stop()


def test_missing_file_waits_and_bad_offset_fails(tmp_path: Path) -> None:
    path = tmp_path / "later.txt"
    task = make_task(path)
    assert task.poll() is None
    path.write_bytes(b"x\n")
    got = task.poll()
    assert got is not None and got[0].value == "x"
    task.stop()
    bad = make_task(path, Reader({str(path): {"position": "12"}}))
    with pytest.raises(ConnectError, match="incorrect type"):
        bad.poll()


def test_connector() -> None:
    c = FileStreamSourceConnector()
    props = {"file": "/tmp/x", "topic": "t", "tasks.max": "4"}
    c.start(props)
    assert c.task_configs(4) == [props]
    assert c.task_class() is FileStreamSourceTask
    assert c.exactly_once_support(props) is ExactlyOnceSupport.SUPPORTED
    assert c.exactly_once_support({"topic": "t"}) is ExactlyOnceSupport.UNSUPPORTED
    with pytest.raises(ConfigError) as e:
        c.start({"file": "/tmp/x"})
    assert e.value.issues[0].key == "topic"
    assert c.alter_offsets(props, [({"filename": "/tmp/x"}, {"position": 3}), ({"filename": "/y"}, None)])
    for bad in ({"position": -1}, {"position": "3"}, {"nope": 1}):
        with pytest.raises(ConnectError):
            c.alter_offsets(props, [({"filename": "/tmp/x"}, bad)])
    with pytest.raises(ConnectError, match="stdin"):
        c.alter_offsets({"topic": "t"}, [])
