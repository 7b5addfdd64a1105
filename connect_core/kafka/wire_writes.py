"""Scatter writes on kafka-python's send path: a request handed on as pieces reaches the socket uncopied.

A batch copy's Produce request is mostly record batches that already sit in memory (the records part of
each fetched batch, a view into the Fetch answer). kafka-python's encoder copies every field into one
buffer and that buffer out again; :class:`WirePieces` lets a request's encoder hand the transport its
pieces instead (framing, headers, views of the records), and :func:`install` teaches kafka-python's
send path to carry them: on plain TCP one ``sendmsg`` writes many pieces (the kernel's copy is the only
one), on TLS the pieces are joined once before encryption. Bytes, order, errors and partial-send handling
are kafka-python's; a plain ``bytes`` request goes the way it always did.

Installed with :mod:`connect_core.kafka.wire_reads` by :func:`connect_core.kafka.raw_fetch.bootstrapped_client`.
"""

from __future__ import annotations

import logging
from collections import deque
from typing import Any

from kafka import errors as kafka_errors
from kafka.net.transport import KafkaSSLTransport, KafkaTCPTransport
from kafka.protocol.parser import KafkaProtocol  # type: ignore[import-untyped]

#: kafka-python's own transport logger: a failed send is its line, handled as its other connection chatter.
log = logging.getLogger("kafka.net.transport")

#: Most buffers one ``sendmsg`` is given (Linux refuses more than IOV_MAX = 1024).
MAX_PIECES = 512
_WOULD_BLOCK = (BlockingIOError, InterruptedError)

_installed = False


class WirePieces(list):  # type: ignore[type-arg]
    """Buffers that are sent one after another as one piece of the stream (a request's bytes, in order)."""

    @property
    def size(self) -> int:
        return sum(len(p) for p in self)


def _flattened(chunks: list[Any]) -> WirePieces:
    out = WirePieces()
    for chunk in chunks:
        if isinstance(chunk, WirePieces):
            out.extend(chunk)
        else:
            out.append(chunk)
    return out


def _send_bytes(self: Any) -> Any:
    """KafkaProtocol.send_bytes that keeps pieces apart (a join would copy them, or fail on a list)."""
    pending = self.bytes_to_send
    if not pending:
        return b""
    self.bytes_to_send = []
    if len(pending) == 1:
        return pending[0]
    if any(isinstance(chunk, WirePieces) for chunk in pending):
        return _flattened(pending)
    return b"".join(pending)


def _tcp_sock_send(self: Any) -> tuple[int, Any]:
    """kafka-python's TCP send, writing up to :data:`MAX_PIECES` queued buffers per ``sendmsg``; what the
    kernel did not take stays queued, front first, for the next writable wake-up."""
    total = 0
    if self._sock is None:
        return total, kafka_errors.KafkaConnectionError("Connection closed during send")
    queue: deque[Any] = self._write_buffer
    while queue:
        views: list[memoryview] = []
        while queue and len(views) < MAX_PIECES:
            chunk = queue.popleft()
            pieces = chunk if isinstance(chunk, WirePieces) else (chunk,)
            for piece in pieces:
                if len(piece):
                    views.append(piece if isinstance(piece, memoryview) else memoryview(piece))
        try:
            sent = self._sock.sendmsg(views)
        except _WOULD_BLOCK:
            queue.appendleft(WirePieces(views))
            return total, None
        except BaseException as e:
            log.exception("%s: Error sending request data: %s", self, e)
            return total, kafka_errors.KafkaConnectionError(e)
        total += sent
        for i, view in enumerate(views):
            if sent < len(view):
                rest = views[i:]
                rest[0] = view[sent:]
                queue.appendleft(WirePieces(rest))
                return total, None  # the socket's buffer is full: wait to be writable again
            sent -= len(view)
    return total, None


_ssl_sock_send_original = KafkaSSLTransport._sock_send


def _ssl_sock_send(self: Any) -> tuple[int, Any]:
    """kafka-python's TLS send, pieces joined first (TLS encrypts a copy anyway)."""
    queue: deque[Any] = self._write_buffer
    if any(isinstance(chunk, WirePieces) for chunk in queue):
        joined = [b"".join(chunk) if isinstance(chunk, WirePieces) else chunk for chunk in queue]
        queue.clear()
        queue.extend(joined)
    return _ssl_sock_send_original(self)  # type: ignore[no-any-return]


def install() -> None:
    """Teach kafka-python's send path to carry :class:`WirePieces` (see the module docstring); idempotent."""
    global _installed
    if _installed:
        return
    KafkaProtocol.send_bytes = _send_bytes
    KafkaTCPTransport._sock_send = _tcp_sock_send
    KafkaSSLTransport._sock_send = _ssl_sock_send
    _installed = True


__all__ = ["MAX_PIECES", "WirePieces", "install"]
