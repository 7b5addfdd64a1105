"""Fewer copies and calls on kafka-python's receive path: what the batch copy's fetches cost per GB.

Profiled on the batch path (one task mirroring 1 KB records): most of the process's CPU went to
kafka-python reading answers of several MB in 4 KB ``recv`` calls (a call, a bytes object and a list
entry per 4 KB, then a join copying them all again) and to its frame buffer handing each field out
through two copies (a bytearray slice, then ``bytes`` of it) - for a Fetch answer that is every batch
copied twice more. kafka-python has no setting for either, so :func:`install` replaces those
functions, once per process, with ones that behave the same (the same bytes, errors and end-of-data
handling): plain TCP reads up to :data:`RECV_CHUNK` into one buffer per connection, TLS reads in
larger pieces, and the frame buffer copies a field once - and a large answer not at all before its
decoder. The Fetch answer's decoder hands a large records field on as a read-only view of the frame
instead of copying it out (:func:`_fetch_field_bytes`): the batch copy splits and produces batches from
that view, so the frame buffer is the only copy of the fetched bytes the process makes.

It is installed by :func:`connect_core.kafka.raw_fetch.bootstrapped_client`, through which every
kafka-python client of ours connects; other kafka-python users in the process get the same functions.
"""

from __future__ import annotations

import builtins
import logging
import ssl
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.protocol.consumer import FetchResponse
from kafka.protocol.frame import KafkaBytes  # type: ignore[import-untyped]

from connect_core.kafka import frame_pool
from connect_core.kafka.frame_pool import VIEW_MIN, read_field

#: kafka-python's own transport logger: the lines below are its lines (a lost connection, at ERROR), and the
#: process's client-log handling (chatter demoted to DEBUG, one WARNING per outage) must treat them as such.
log = logging.getLogger("kafka.net.transport")

#: Bytes asked of the socket per ``recv`` into the connection's buffer (kafka-python: 4 KB). The rest of a
#: large frame bypasses that buffer (:func:`_frame_rest`), so what it carries is small answers and the
#: start of a large one - which the parser copies into its frame: a larger chunk would only copy more.
RECV_CHUNK = VIEW_MIN
#: What ends a read for now without an error (nothing more to read on a non-blocking socket).
_TCP_WOULD_BLOCK = (BlockingIOError, InterruptedError)
_SSL_WOULD_BLOCK = (BlockingIOError, InterruptedError, ssl.SSLWantReadError, ssl.SSLWantWriteError)

_installed = False


def _tcp_sock_recv(self: Any) -> tuple[bytes | memoryview, Any]:
    """One read of up to :data:`RECV_CHUNK` into the connection's own buffer, handed on as a view of it -
    or, inside a large frame, straight into the frame's buffer (see :func:`_frame_rest`).

    The protocol copies what it is given into its frame buffer before the next read (kafka-python's
    ``data_received`` is synchronous), so one buffer per connection serves every read: no bytes object
    per read, no join. What the kernel still holds wakes the selector again (level-triggered)."""
    rest = _frame_rest(self)
    if rest is not None:
        frame, view = rest
        with view:
            n, err = _recv_into(self, view)
        if err is not None or not n:
            return b"", err
        frame._idx += n
        return b"", None  # the parser's frame holds these bytes already: nothing to hand on
    buf = getattr(self, "_mm2_read_buffer", None)
    if buf is None:
        buf = self._mm2_read_buffer = bytearray(RECV_CHUNK)
    n, err = _recv_into(self, buf)
    if err is not None or not n:
        return b"", err
    return memoryview(buf)[:n], None


def _recv_into(self: Any, target: Any) -> tuple[int, Any]:
    """kafka-python's read outcome for one ``recv_into``: (bytes read, None), (0, None) when nothing is
    there, or (0, the connection error) - logged as kafka-python logs it."""
    try:
        n = self._sock.recv_into(target)
    except _TCP_WOULD_BLOCK:
        return 0, None
    except BaseException as e:
        log.exception("%s: Error receiving network data closing socket", self)
        return 0, kafka_errors.KafkaConnectionError(e)
    if not n:
        log.error("%s: socket disconnected", self)
        return 0, kafka_errors.KafkaConnectionError("socket disconnected")
    return n, None


def _frame_rest(self: Any) -> tuple[Any, memoryview] | None:
    """The frame buffer the connection's parser is filling and a view of its unfilled part but the last
    byte, when that part is :data:`VIEW_MIN` or more (a large Fetch answer); None otherwise.

    Reading there lets the kernel's copy be the only one into the frame. The last byte always arrives
    the ordinary way, through the parser, which then completes and decodes the frame as it always did."""
    parser = getattr(self._protocol, "parser", None)
    if parser is None or not parser._receiving:
        return None
    frame = parser._rbuffer
    start = frame.tell()
    end = len(frame) - 1
    if end - start < VIEW_MIN:
        return None
    return frame, memoryview(frame_pool.frame_memory(frame))[start:end]


def _ssl_sock_recv(self: Any) -> tuple[bytes, Any]:
    """kafka-python's TLS read with larger reads: until the socket would block (a TLS read ends at a record
    and may leave decrypted bytes that no selector sees)."""
    chunks: list[bytes] = []
    err = None
    while True:
        try:
            data = self._sock.recv(RECV_CHUNK)
        except _SSL_WOULD_BLOCK:
            break
        except BaseException as e:
            log.exception("%s: Error receiving network data closing socket", self)
            err = kafka_errors.KafkaConnectionError(e)
            break
        if not data:
            log.error("%s: socket disconnected", self)
            err = kafka_errors.KafkaConnectionError("socket disconnected")
            break
        chunks.append(data)
    return b"".join(chunks), err


def _frame_read(self: Any, nbytes: int | None = None) -> bytes | memoryview:
    """KafkaBytes.read with one copy (its own: a bytearray slice, then bytes of it), and none for the rest of
    a large frame (``nbytes`` None, what a response's decoder asks for): a read-only view of it. A frame
    buffer is never resized, and never written again while a view of it exists (frames of this size are
    pooled: :mod:`connect_core.kafka.frame_pool`), so the view stays valid."""
    start = self._idx
    end = len(self) if nbytes is None else min(start + nbytes, len(self))
    self._idx = end
    return read_field(self, start, end, nbytes is None)


def _fetch_field_bytes(value: Any) -> Any:
    """``bytes`` as the Fetch answer's compiled decoder calls it on each bytes field: a view of the frame
    from :data:`VIEW_MIN` on (only a records field is that large), a copy below (ids, small fields).
    The view is read-only, and the frame it shows is not written again while the view exists."""
    if isinstance(value, memoryview) and len(value) >= VIEW_MIN:
        return value.toreadonly()
    return builtins.bytes(value)


def _viewing_fetch_decoders() -> None:
    """Have every Fetch answer decoder kafka-python compiles (one per version, made on first use) call
    :func:`_fetch_field_bytes` for its ``bytes``."""
    struct = FetchResponse._struct
    compile_decoder = struct.compiled_decode_from

    def compiled_decode_from(*args: Any, **kwargs: Any) -> Any:
        decoder = compile_decoder(*args, **kwargs)
        decoder.__globals__["bytes"] = _fetch_field_bytes
        return decoder

    struct.compiled_decode_from = compiled_decode_from


def install() -> None:
    """Replace kafka-python's socket read, frame read and allocation (:mod:`connect_core.kafka.frame_pool`) and
    Fetch records copy (see the module docstring); idempotent."""
    global _installed
    if _installed:
        return
    KafkaTCPTransport._sock_recv = _tcp_sock_recv
    KafkaSSLTransport._sock_recv = _ssl_sock_recv
    KafkaBytes.read = _frame_read
    frame_pool.install()
    _viewing_fetch_decoders()
    _installed = True


__all__ = ["RECV_CHUNK", "VIEW_MIN", "install"]
