"""Offset key/value format (byte-compatible with Java Connect) and the task-side reader/writer."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future

import pytest

from connect_core.api.errors import ConnectError, DataError
from connect_core.storage.memory import MemoryOffsetBackingStore
from connect_core.storage.offset_storage import (
    OffsetStorageReaderImpl,
    OffsetStorageWriter,
    deserialize_offset_key,
    deserialize_offset_value,
    java_hashmap_order,
    java_string_hash,
    serialize_offset_key,
    serialize_offset_value,
)


def test_java_string_hash_matches_java() -> None:
    # Values printed by Java 17's String.hashCode().
    assert java_string_hash("cluster") == 872092154
    assert java_string_hash("zé€") == 132829
    assert java_string_hash("") == 0
    assert java_string_hash("polygenelubricants") == -2147483648


@pytest.mark.parametrize(
    ("inserted", "java_order"),
    [
        # Orders printed by Java 17 for a HashMap filled in the given order.
        (["topic", "partition", "cluster"], ["cluster", "partition", "topic"]),
        (["group", "topic", "partition"], ["partition", "topic", "group"]),
        (["sourceClusterAlias", "targetClusterAlias"], ["sourceClusterAlias", "targetClusterAlias"]),
        (list("abcdefghijklmnopq"), list("abcdefghijklmnopq")),
        (["filename", "position", "zé"], ["filename", "position", "zé"]),
    ],
)
def test_java_hashmap_order(inserted: list[str], java_order: list[str]) -> None:
    assert java_hashmap_order(inserted) == java_order


def test_mirror_source_key_is_byte_identical_to_java() -> None:
    key = serialize_offset_key("MirrorSourceConnector", {"topic": "t1", "partition": 0, "cluster": "a"})
    assert key == b'["MirrorSourceConnector",{"cluster":"a","partition":0,"topic":"t1"}]'
    assert serialize_offset_value({"offset": 41}) == b'{"offset":41}'
    assert serialize_offset_value(None) is None


def test_non_ascii_is_utf8_not_escaped() -> None:
    assert serialize_offset_key("c", {"k": "é"}) == '["c",{"k":"é"}]'.encode()


def test_key_round_trip_and_malformed_keys() -> None:
    key = serialize_offset_key("conn", {"p": 1})
    assert deserialize_offset_key(key) == ("conn", {"p": 1})
    assert deserialize_offset_key(b'["conn",null]') == ("conn", None)
    for bad in (b"nope", b'{"a":1}', b'["a"]', b"[1,{}]", b'["a",3]', None):
        assert deserialize_offset_key(bad) is None


def test_format_validation() -> None:
    with pytest.raises(DataError):
        serialize_offset_key("c", {"k": [1, 2]})
    with pytest.raises(DataError):
        serialize_offset_value({1: "x"})  # type: ignore[dict-item]
    with pytest.raises(DataError):
        deserialize_offset_value(b"[1]")
    assert deserialize_offset_value(None) is None


def test_reader_returns_offsets_in_order_with_none_for_missing() -> None:
    store = MemoryOffsetBackingStore()
    store.set({serialize_offset_key("c", {"p": 1}): b'{"offset":5}'}).result()
    reader = OffsetStorageReaderImpl(store, "c")
    assert reader.offset({"p": 1}) == {"offset": 5}
    assert reader.offsets([{"p": 2}, {"p": 1}]) == [({"p": 2}, None), ({"p": 1}, {"offset": 5})]
    # Another connector's namespace does not see it.
    assert OffsetStorageReaderImpl(store, "other").offset({"p": 1}) is None
    reader.close()
    with pytest.raises(ConnectError):
        reader.offset({"p": 1})


def test_reader_finds_keys_written_with_other_member_order() -> None:
    store = MemoryOffsetBackingStore()
    store.set({b'["c",{"topic":"t","partition":0}]': b'{"offset":9}'}).result()
    assert OffsetStorageReaderImpl(store, "c").offset({"partition": 0, "topic": "t"}) == {"offset": 9}


def test_writer_flush_cycle() -> None:
    store = MemoryOffsetBackingStore()
    writer = OffsetStorageWriter(store, "c")
    assert writer.begin_flush() is False  # nothing buffered
    writer.offset({"p": 0}, {"offset": 1})
    writer.offset({"p": 0}, {"offset": 2})
    writer.offset({"p": 1}, {"offset": 7})
    assert writer.begin_flush() is True
    results: list[BaseException | None] = []
    fut = writer.do_flush(results.append)
    assert fut is not None
    fut.result(timeout=5)
    assert results == [None]
    reader = OffsetStorageReaderImpl(store, "c")
    assert reader.offsets([{"p": 0}, {"p": 1}]) == [({"p": 0}, {"offset": 2}), ({"p": 1}, {"offset": 7})]
    assert writer.begin_flush() is False


class _ControlledStore(MemoryOffsetBackingStore):
    """Holds writes until the test completes them, so flush ordering can be exercised."""

    def __init__(self) -> None:
        super().__init__()
        self.pending: list[
            tuple[dict[bytes, bytes | None], Callable[[BaseException | None], None] | None, Future[None]]
        ] = []

    def set(
        self,
        values: dict[bytes, bytes | None],
        callback: Callable[[BaseException | None], None] | None = None,
    ) -> Future[None]:
        fut: Future[None] = Future()
        self.pending.append((values, callback, fut))
        return fut

    def complete(self, error: BaseException | None = None) -> None:
        values, callback, fut = self.pending.pop(0)
        if error is None:
            super().set(values).result()
        if callback is not None:
            callback(error)
        if error is None:
            fut.set_result(None)
        else:
            fut.set_exception(error)


def test_only_one_flush_at_a_time() -> None:
    store = _ControlledStore()
    writer = OffsetStorageWriter(store, "c")
    writer.offset({"p": 0}, {"offset": 1})
    assert writer.begin_flush()
    writer.do_flush()
    writer.offset({"p": 0}, {"offset": 2})
    with pytest.raises(ConnectError):
        writer.begin_flush()
    store.complete()
    assert writer.begin_flush()  # the slot is free again and offset 2 is buffered


def test_failed_flush_keeps_offsets_and_newer_values_win() -> None:
    store = _ControlledStore()
    writer = OffsetStorageWriter(store, "c")
    writer.offset({"p": 0}, {"offset": 1})
    writer.offset({"p": 1}, {"offset": 10})
    assert writer.begin_flush()
    errors: list[BaseException | None] = []
    writer.do_flush(errors.append)
    writer.offset({"p": 0}, {"offset": 2})  # arrives during the flush
    store.complete(RuntimeError("broker down"))
    assert isinstance(errors[0], RuntimeError)
    assert writer.begin_flush()
    writer.do_flush()
    store.complete()
    reader = OffsetStorageReaderImpl(store, "c")
    assert reader.offsets([{"p": 0}, {"p": 1}]) == [({"p": 0}, {"offset": 2}), ({"p": 1}, {"offset": 10})]


def test_cancelled_flush_ignores_late_callback() -> None:
    store = _ControlledStore()
    writer = OffsetStorageWriter(store, "c")
    writer.offset({"p": 0}, {"offset": 1})
    assert writer.begin_flush()
    called: list[BaseException | None] = []
    writer.do_flush(called.append)
    writer.cancel_flush()  # e.g. the flush timed out
    assert writer.begin_flush()  # cancelled offsets are back and the slot is free
    store.complete()  # the old write lands late
    assert called == []  # stale callback is not delivered


def test_begin_flush_waits_for_timeout() -> None:
    store = _ControlledStore()
    writer = OffsetStorageWriter(store, "c")
    writer.offset({"p": 0}, {"offset": 1})
    assert writer.begin_flush()
    writer.do_flush()
    writer.offset({"p": 0}, {"offset": 2})
    threading.Timer(0.05, store.complete).start()
    assert writer.begin_flush(timeout=5.0)


def test_unserializable_offset_fails_flush_via_callback() -> None:
    store = MemoryOffsetBackingStore()
    writer = OffsetStorageWriter(store, "c")
    writer.offset({"p": 0}, {"offset": object()})  # type: ignore[dict-item]
    assert writer.begin_flush()
    errors: list[BaseException | None] = []
    assert writer.do_flush(errors.append) is None
    assert isinstance(errors[0], DataError)
