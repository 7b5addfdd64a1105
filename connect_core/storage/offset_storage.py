"""Source-offset keys/values as Connect writes them, and the task-facing reader and writer.

Java Connect stores a source offset under the key ``[<connector>, {partition}]`` and the value
``{offset}``, both serialized by ``JsonConverter`` with ``schemas.enable=false``: compact JSON,
UTF-8, object members in the iteration order of the ``java.util.HashMap`` that holds them. Java's
offset stores look keys up by their raw bytes, so to let Java Connect find offsets mm2 wrote (and the
other way round) we emit members in that same HashMap order (:func:`java_hashmap_order`). Our own
stores additionally normalise keys on read (:func:`canonical_key`) so member order never matters to us.

This module imports no Kafka client: the worker, the Spark backfill job and the CLI share it.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from typing import Any

from connect_core.api.errors import ConnectError, DataError
from connect_core.storage.api import OffsetBackingStore

log = logging.getLogger(__name__)

_PRIMITIVES = (str, int, float, bool, bytes)


# ---------------------------------------------------------------------------------------------
# Java HashMap iteration order


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: 31-polynomial over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_hashmap_order(keys: Iterable[str]) -> list[str]:
    """The order a ``HashMap<String, ?>`` filled with ``keys`` (in this order) iterates them.

    Buckets are ``spread(hash) & (capacity - 1)``; capacity starts at 16 and doubles while the
    size exceeds 0.75 * capacity; resizing keeps insertion order inside a bucket. (Treeified bins,
    which need 8+ collisions in one bucket, are not modelled: offsets never have that many keys.)
    """
    ordered = list(keys)
    capacity = 16
    while len(ordered) > capacity * 3 // 4:
        capacity *= 2
    mask = capacity - 1

    def bucket(k: str) -> int:
        h = java_string_hash(k) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask

    # sorted() is stable: equal buckets keep insertion order, as HashMap's chains do.
    return sorted(ordered, key=bucket)


# ---------------------------------------------------------------------------------------------
# JSON as JsonConverter (schemas.enable=false) writes it


def _json_value(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _json_value(value[k]) for k in java_hashmap_order(value)}
    if isinstance(value, list | tuple):
        return [_json_value(v) for v in value]
    if isinstance(value, bytes):
        # JsonConverter writes BYTES as a base64 JSON string (Jackson's binary node).
        import base64

        return base64.b64encode(value).decode("ascii")
    return value


def _dumps(value: Any) -> bytes:
    return json.dumps(_json_value(value), separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def validate_offset_format(data: Any) -> None:
    """Connect's rule for partitions and offsets: a map of string keys to primitive values (or None)."""
    if data is None:
        return
    if not isinstance(data, Mapping):
        raise DataError("Offsets must be specified as a Map")
    for k, v in data.items():
        if not isinstance(k, str):
            raise DataError("Offsets may only use String keys")
        if v is not None and not isinstance(v, _PRIMITIVES):
            raise DataError(
                f"Offsets may only contain primitive types as values, but field {k} contains {type(v).__name__}"
            )


def serialize_offset_key(connector: str, partition: Mapping[str, Any]) -> bytes:
    """``["<connector>",{partition}]`` byte-for-byte as Java Connect writes it."""
    validate_offset_format(partition)
    return _dumps([connector, partition])


def serialize_offset_value(offset: Mapping[str, Any] | None) -> bytes | None:
    """The offset map as JSON, or None (a tombstone) for a None offset."""
    if offset is None:
        return None
    validate_offset_format(offset)
    return _dumps(offset)


def deserialize_offset_key(key: bytes | None) -> tuple[str, dict[str, Any] | None] | None:
    """``(connector, partition)`` or None if ``key`` is not a well-formed Connect offset key.

    A None partition (``["conn",null]``) is returned as ``(conn, None)``, as Java tolerates it.
    """
    if key is None:
        return None
    try:
        parsed = json.loads(key)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(parsed, list) or len(parsed) != 2 or not isinstance(parsed[0], str):
        return None
    if parsed[1] is not None and not isinstance(parsed[1], dict):
        return None
    return parsed[0], parsed[1]


def deserialize_offset_value(value: bytes | None) -> dict[str, Any] | None:
    """The offset map, or None for a tombstone; DataError when it is not a JSON map of primitives."""
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except (ValueError, UnicodeDecodeError) as e:
        raise DataError(f"Offset value is not JSON: {e}") from e
    if parsed is None:
        return None
    validate_offset_format(parsed)
    return dict(parsed)


def canonical_key(key: bytes) -> bytes:
    """A member-order-independent form of an offset key, for lookups (falls back to the raw bytes)."""
    try:
        parsed = json.loads(key)
    except (ValueError, UnicodeDecodeError):
        return key
    return json.dumps(parsed, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def partition_identity(partition: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """A hashable stand-in for a partition map (dicts cannot key a dict)."""
    return tuple(sorted(partition.items()))


# ---------------------------------------------------------------------------------------------
# Reader and writer


class OffsetStorageReaderImpl:
    """Reads the committed offsets of one connector (``namespace``) from an offset backing store."""

    def __init__(self, store: OffsetBackingStore, namespace: str) -> None:
        self._store = store
        self._namespace = namespace
        self._closed = threading.Event()

    def offset(self, partition: dict[str, Any]) -> dict[str, Any] | None:
        return self.offsets([partition])[0][1]

    def offsets(self, partitions: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        if self._closed.is_set():
            raise ConnectError(
                "Offset reader is closed. This is likely because the task has already been scheduled to stop "
                "but has taken longer than the graceful shutdown period to do so."
            )
        keys: list[bytes | None] = []
        for p in partitions:
            try:
                keys.append(serialize_offset_key(self._namespace, p))
            except (DataError, TypeError, ValueError):
                # As Java: an unserializable partition yields no offset rather than failing the task.
                log.error(
                    "Failed to serialize partition key %r of connector %s; no offset returned", p, self._namespace
                )
                keys.append(None)
        try:
            raw = self._store.get([k for k in keys if k is not None])
        except Exception as e:
            raise ConnectError(f"Failed to fetch offsets: {e}") from e
        out: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
        for p, k in zip(partitions, keys, strict=True):
            value: dict[str, Any] | None = None
            if k is not None:
                try:
                    value = deserialize_offset_value(raw.get(k))
                except DataError:
                    log.error("Failed to deserialize the offset of partition %r of connector %s", p, self._namespace)
            out.append((p, value))
        return out

    def close(self) -> None:
        """Further reads fail (the task was asked to stop and overran its grace period)."""
        self._closed.set()


class OffsetStorageWriter:
    """Buffers a task's offsets and flushes them as one snapshot (Kafka's OffsetStorageWriter).

    Protocol: ``offset()`` any time; ``begin_flush()`` snapshots (only one flush at a time); then
    exactly one of ``do_flush(callback)`` or ``cancel_flush()``. A failed write puts the snapshot
    back under any newer offsets, so nothing is lost and newer values win. Callbacks of a flush that
    was cancelled meanwhile are ignored (a newer flush id is current).
    """

    def __init__(self, store: OffsetBackingStore, namespace: str) -> None:
        self._store = store
        self._namespace = namespace
        self._lock = threading.Lock()
        self._flush_slot = threading.Semaphore(1)
        self._data: dict[tuple[tuple[str, Any], ...], tuple[dict[str, Any], dict[str, Any] | None]] = {}
        self._to_flush: dict[tuple[tuple[str, Any], ...], tuple[dict[str, Any], dict[str, Any] | None]] | None = None
        self._flush_id = 0

    def offset(self, partition: Mapping[str, Any], offset: Mapping[str, Any] | None) -> None:
        p = dict(partition)
        with self._lock:
            self._data[partition_identity(p)] = (p, None if offset is None else dict(offset))

    def begin_flush(self, timeout: float = 0.0) -> bool:
        """Snapshot the buffered offsets; False (nothing to do) if there are none.

        Raises ConnectError if the previous flush has not finished within ``timeout`` seconds.
        """
        acquired = (
            self._flush_slot.acquire(timeout=timeout) if timeout > 0 else self._flush_slot.acquire(blocking=False)
        )
        if not acquired:
            raise ConnectError("OffsetStorageWriter is already flushing")
        with self._lock:
            if not self._data:
                self._flush_slot.release()
                return False
            self._to_flush = self._data
            self._data = {}
            return True

    def do_flush(self, callback: Callable[[BaseException | None], None] | None = None) -> Future[None] | None:
        """Write the snapshot; the future completes when the store acknowledged every entry.

        Returns None (after calling ``callback`` with the error) when serialization fails.
        """
        with self._lock:
            if self._to_flush is None:
                raise ConnectError("do_flush() called without a successful begin_flush()")
            flush_id = self._flush_id
            try:
                serialized: dict[bytes, bytes | None] = {}
                for p, o in self._to_flush.values():
                    serialized[serialize_offset_key(self._namespace, p)] = serialize_offset_value(o)
            except (DataError, TypeError, ValueError) as e:
                log.error(
                    "CRITICAL: failed to serialize offsets of connector %s; they cannot be committed until "
                    "the bad partition or offset is overwritten: %s",
                    self._namespace,
                    e,
                )
                if callback is not None:
                    callback(e)
                return None

        def on_done(error: BaseException | None) -> None:
            if self._finish(flush_id, error) and callback is not None:
                callback(error)

        return self._store.set(serialized, on_done)

    def cancel_flush(self) -> None:
        """Abandon the current flush, keeping its offsets (newer ones win) for the next one."""
        with self._lock:
            self._cancel_locked()

    def _cancel_locked(self) -> None:
        if self._to_flush is not None:
            merged = self._to_flush
            merged.update(self._data)
            self._data = merged
            self._to_flush = None
            self._flush_id += 1
            self._flush_slot.release()

    def _finish(self, flush_id: int, error: BaseException | None) -> bool:
        with self._lock:
            if flush_id != self._flush_id:
                return False
            if error is not None:
                self._cancel_locked()
            else:
                self._to_flush = None
                self._flush_id += 1
                self._flush_slot.release()
            return True
