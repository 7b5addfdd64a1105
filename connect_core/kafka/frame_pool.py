"""Large response frames received into buffers a connection reuses: no new multi-MB buffer per Fetch answer.

kafka-python allocates a fresh zero-filled ``bytearray`` for every response frame; for a Fetch answer of
several MB that is a zero-fill and a page fault per 4 KB, every time (measured on the batch path: about
0.3-0.5 CPU-s per GB copied). Here each connection's parser keeps up to :data:`POOL_BYTES` of buffers
for frames from :data:`POOL_MIN` bytes on, and receives a new large frame into one that nothing views any more.

Why reuse is safe: a fetched batch is handed to the produce path as a view of its frame's buffer, and it
stays one until the target acknowledged the batch (the producer keeps it for retries, kafka-python's send
queue until it is written). A ``bytearray`` knows how many views of it exist; :func:`_unviewed` asks it
(a buffer with views refuses to change its size), and a buffer with any view alive is never handed out:
the connection takes another pooled buffer or, when all are viewed, a fresh one as kafka-python would.

:func:`install` (called by :func:`connect_core.kafka.wire_reads.install`) replaces kafka-python's
``KafkaProtocol.receive_bytes`` with :func:`_receive_bytes`: the same framing, correlation checks and
decoding (kafka-python's ``_process_response``), the frame buffer taken from the pool.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.frame import KafkaBytes  # type: ignore[import-untyped]
from kafka.protocol.parser import KafkaProtocol  # type: ignore[import-untyped]

#: The rest of a frame from this size on is handed to the decoder as a view, not copied (Fetch records).
VIEW_MIN = 64 * 1024
#: Frames from this size on are received into pooled buffers (Fetch answers; other answers are small).
POOL_MIN = VIEW_MIN
#: Bytes of buffers one connection keeps: room for the answers whose batches are still in flight to the target
#: (the batch copy keeps up to 32 MB in flight, and one more answer arrives meanwhile).
POOL_BYTES = 64 * 1024 * 1024
#: Frames above this are received into a buffer of their own (a single huge batch is not worth keeping).
POOL_MAX_FRAME = 64 * 1024 * 1024
#: Pooled buffers are sized in these steps (with some room), so answers of slightly varying size fit.
_STEP = 1024 * 1024

_installed = False


class PooledFrame:
    """One response frame in a pooled buffer: kafka-python's frame interface (read, write, seek, tell, len)
    over the first ``size`` bytes of ``store``."""

    __slots__ = ("_idx", "size", "store")

    def __init__(self, store: bytearray, size: int) -> None:
        self.store = store
        self.size = size
        self._idx = 0

    def __len__(self) -> int:
        return self.size

    def write(self, data: Any) -> None:
        start = self._idx
        end = start + len(data)
        if end > self.size:
            raise ValueError(f"{end - self.size} bytes beyond the frame")
        self.store[start:end] = data
        self._idx = end

    def seek(self, idx: int) -> None:
        self._idx = idx

    def tell(self) -> int:
        return self._idx

    def read(self, nbytes: int | None = None) -> bytes | memoryview:
        """As :func:`connect_core.kafka.wire_reads._frame_read`: a copy of a field, a read-only view of a
        large rest (the Fetch answer's records, which then keep this buffer out of the pool)."""
        start = self._idx
        end = self.size if nbytes is None else min(start + nbytes, self.size)
        self._idx = end
        return read_field(self.store, start, end, nbytes is None)

    def __repr__(self) -> str:
        return f"PooledFrame({self.size})"


def read_field(buffer: bytearray, start: int, end: int, rest: bool) -> bytes | memoryview:
    """Bytes ``start:end`` of a frame's buffer: one copy, or a read-only view when they are the rest of the frame
    (``rest``: what a response's decoder asks for) from :data:`VIEW_MIN` on."""
    if rest and end - start >= VIEW_MIN:
        return memoryview(buffer)[start:end].toreadonly()
    with memoryview(buffer) as view:
        return bytes(view[start:end])


def frame_memory(frame: Any) -> bytearray:
    """The buffer a frame's bytes live in (the frame itself for kafka-python's own frames)."""
    return frame.store if isinstance(frame, PooledFrame) else frame  # type: ignore[no-any-return]


def _unviewed(store: bytearray) -> bool:
    """True when no view of ``store`` exists: only then does a ``bytearray`` change its size (tried by one
    byte out and back: within its allocation, so no copy)."""
    try:
        store.append(0)
    except BufferError:
        return False
    store.pop()
    return True


def _store_size(size: int) -> int:
    return ((size + size // 8) // _STEP + 1) * _STEP


def _new_store(size: int) -> bytearray:
    store = bytearray(_store_size(size))
    _unviewed(store)  # the one reallocation that makes room for the probe happens now, on an empty buffer
    return store


def take_frame(pool: list[bytearray], size: int) -> Any:
    """A frame of ``size`` bytes: in the smallest pooled buffer that fits and is not viewed, in a new pooled
    buffer while the pool has room (or in place of an unviewed one too small), else kafka-python's own."""
    if size < POOL_MIN or size > POOL_MAX_FRAME:
        return KafkaBytes(size)
    best: bytearray | None = None
    free_small = -1
    held = 0
    for i, store in enumerate(pool):
        held += len(store)
        if len(store) >= size:
            if (best is None or len(store) < len(best)) and _unviewed(store):
                best = store
        elif free_small < 0 and _unviewed(store):
            free_small = i
    if best is None:
        wanted = _store_size(size)
        if free_small >= 0 and held - len(pool[free_small]) + wanted <= POOL_BYTES:
            best = pool[free_small] = _new_store(size)
        elif held + wanted <= POOL_BYTES:
            best = _new_store(size)
            pool.append(best)
        else:
            return KafkaBytes(size)  # the pool's buffers still back batches in flight
    return PooledFrame(best, size)


def _receive_bytes(self: Any, data: Any) -> list[Any]:
    """The responses completed by ``data`` (kafka-python's ``receive_bytes``: a 4-byte size, then the frame),
    each frame received into a buffer of :func:`take_frame`."""
    responses: list[Any] = []
    i = 0
    n = len(data)
    while i < n:
        if not self._receiving:
            header = self._header
            take = min(4 - header.tell(), n - i)
            header.write(data[i : i + take])
            i += take
            if header.tell() < 4:
                break
            size = int.from_bytes(header, "big", signed=True)
            self._validate_frame_size(size)
            pool = self.__dict__.get("_mm2_frame_pool")
            if pool is None:
                pool = self._mm2_frame_pool = []
            self._rbuffer = take_frame(pool, size)
            self._receiving = True
        frame = self._rbuffer
        take = min(len(frame) - frame.tell(), n - i)
        if take:
            frame.write(data[i : i + take])
            i += take
        if frame.tell() < len(frame):
            break
        frame.seek(0)
        responses.append(self._process_response(frame))
        self._reset_buffer()
    return responses


def install() -> None:
    """Receive kafka-python's response frames as :func:`_receive_bytes` does; idempotent."""
    global _installed
    if _installed:
        return
    KafkaProtocol.receive_bytes = _receive_bytes
    _installed = True


__all__ = [
    "POOL_BYTES",
    "POOL_MAX_FRAME",
    "POOL_MIN",
    "VIEW_MIN",
    "PooledFrame",
    "frame_memory",
    "install",
    "read_field",
    "take_frame",
]
