"""Pooled frame buffers (:mod:`connect_core.kafka.frame_pool`): a large frame is received into a buffer the
connection had before only when no view of that buffer is left, so a fetched batch handed on as a view keeps
its bytes until it is dropped; frames decode as kafka-python's own do."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import errors as kafka_errors
from kafka.protocol.frame import KafkaBytes  # type: ignore[import-untyped]
from kafka.protocol.parser import KafkaProtocol  # type: ignore[import-untyped]

from connect_core.kafka import frame_pool, wire_reads
from connect_core.kafka.frame_pool import POOL_BYTES, POOL_MIN, PooledFrame, take_frame


class _ViewingParser(KafkaProtocol):  # type: ignore[misc]
    """kafka-python's parser, each completed frame handed back as what a Fetch decoder gets for its records:
    the frame's rest read as one field (a view for a large frame)."""

    def _process_response(self, read_buffer: Any) -> tuple[int, Any]:
        return 0, read_buffer.read()


def _framed(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


def _body(seed: int, size: int) -> bytes:
    return bytes((i * 7 + seed) % 251 for i in range(size))


@pytest.fixture(autouse=True)
def installed() -> None:
    wire_reads.install()


def test_install_replaces_the_frame_loop() -> None:
    assert KafkaProtocol.receive_bytes is frame_pool._receive_bytes


def test_a_viewed_buffer_is_never_reused_and_an_unviewed_one_is() -> None:
    """The proof behind handing fetched batches on as views: while a view of an answer lives (a batch in
    flight to the target), later answers go to other buffers and the view's bytes stay as received; once
    it is dropped, its buffer takes the next answer."""
    parser = _ViewingParser(client_id="t")
    size = 3 * POOL_MIN
    first_body = _body(1, size)
    [(_, first)] = parser.receive_bytes(_framed(first_body))
    assert isinstance(first, memoryview) and first.readonly
    first_store = first.obj
    later: list[Any] = []
    for seed in range(2, 12):  # more answers than the pool holds while the first stays viewed
        body = _body(seed, size)
        [(_, view)] = parser.receive_bytes(_framed(body))
        assert bytes(view) == body
        assert view.obj is not first_store
        assert bytes(first) == first_body
        later.append(view)
    later.clear()
    del view
    stores = {id(s) for s in parser._mm2_frame_pool}
    assert id(first_store) in stores
    del first
    [(_, again)] = parser.receive_bytes(_framed(_body(99, size)))
    assert bytes(again) == _body(99, size)
    assert id(again.obj) in stores  # a pooled buffer taken again: no new allocation


def test_slices_of_a_view_keep_the_buffer_out_of_the_pool() -> None:
    """What the batch path keeps is a slice of a slice of the answer's view (split_batches): that alone
    keeps the buffer viewed."""
    pool: list[bytearray] = []
    frame = take_frame(pool, 2 * POOL_MIN)
    assert isinstance(frame, PooledFrame)
    frame.write(_body(5, 2 * POOL_MIN))
    frame.seek(0)
    rest = frame.read()
    batch = memoryview(rest)[10:20][2:5]
    del rest
    other = take_frame(pool, 2 * POOL_MIN)
    assert other.store is not frame.store
    assert bytes(batch) == _body(5, 2 * POOL_MIN)[12:15]
    del batch
    assert take_frame(pool, 2 * POOL_MIN).store in (frame.store, other.store)


def test_the_pool_keeps_at_most_its_bytes_and_falls_back_to_plain_frames() -> None:
    pool: list[bytearray] = []
    held = []
    size = 4 * 1024 * 1024
    for _ in range(40):
        frame = take_frame(pool, size)
        held.append(memoryview(frame_pool.frame_memory(frame)))
    assert sum(len(s) for s in pool) <= POOL_BYTES
    assert isinstance(frame, KafkaBytes)  # all pooled buffers viewed: a buffer of its own
    held.clear()
    assert isinstance(take_frame(pool, size), PooledFrame)


def test_small_and_huge_frames_are_not_pooled() -> None:
    pool: list[bytearray] = []
    assert isinstance(take_frame(pool, POOL_MIN - 1), KafkaBytes)
    assert isinstance(take_frame(pool, frame_pool.POOL_MAX_FRAME + 1), KafkaBytes)
    assert pool == []


def test_a_free_buffer_too_small_is_replaced_when_the_pool_is_full() -> None:
    pool: list[bytearray] = []
    small = take_frame(pool, POOL_MIN)
    del small
    while sum(len(s) for s in pool) + 8 * 1024 * 1024 <= POOL_BYTES:
        pool.append(bytearray(8 * 1024 * 1024))
    viewed = [memoryview(s) for s in pool[1:]]
    big = take_frame(pool, 6 * 1024 * 1024)
    assert isinstance(big, PooledFrame) and big.store is pool[0] and len(big.store) >= 6 * 1024 * 1024
    assert viewed


@pytest.mark.parametrize("cut", [1, 3, 4, 5, POOL_MIN, 2 * POOL_MIN + 3])
def test_frames_cut_anywhere_decode_as_sent(cut: int) -> None:
    """Small and large frames in one stream, handed over in pieces cut anywhere (inside a size too)."""
    bodies = [b"", b"abc", _body(3, 2 * POOL_MIN + 7), b"x" * 100, _body(4, POOL_MIN)]
    stream = b"".join(_framed(b) for b in bodies)
    parser = _ViewingParser(client_id="t")
    got = []
    for start in range(0, len(stream), cut):
        got.extend(bytes(v) for _, v in parser.receive_bytes(memoryview(stream)[start : start + cut]))
    assert got == bodies
    assert not parser._receiving


def test_a_frame_larger_than_allowed_is_refused() -> None:
    parser = _ViewingParser(client_id="t", receive_message_max_bytes=1000)
    with pytest.raises(kafka_errors.InvalidReceiveError, match="Invalid frame length"):
        parser.receive_bytes(_framed(b"y" * 1001))


def test_writing_past_the_frame_is_refused() -> None:
    frame = take_frame([], POOL_MIN)
    frame.write(b"a" * (POOL_MIN - 1))
    with pytest.raises(ValueError, match="beyond the frame"):
        frame.write(b"bb")
