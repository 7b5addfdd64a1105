"""A Produce request built as pieces (:mod:`connect_core.kafka.produce_request`) is, joined, the very bytes
kafka-python's own encoder writes for the same request, in every version it builds, and it hands the
records on as the caller's buffers (no copy)."""

from __future__ import annotations

import pytest
from kafka.protocol.producer import ProduceRequest

from connect_core.kafka.produce_request import PiecesProduceRequest

_Topic = ProduceRequest.TopicProduceData
_Partition = ProduceRequest.TopicProduceData.PartitionProduceData


def _kafka_python_bytes(version: int, transactional_id: str | None) -> bytes:
    request = ProduceRequest(
        transactional_id=transactional_id,
        acks=-1,
        timeout_ms=30_000,
        topic_data=[
            _Topic(
                name="orders", partition_data=[_Partition(index=3, records=b"abc"), _Partition(index=4, records=b"de")]
            ),
            _Topic(name="émoji-topic", partition_data=[_Partition(index=0, records=b"x" * 300)]),
        ],
        max_version=12,
    )
    request.API_VERSION = version
    request.with_header(correlation_id=7, client_id="mm2-test")
    return bytes(request.encode(framed=True, header=True))


@pytest.mark.parametrize("version", [3, 5, 8, 9, 12])
@pytest.mark.parametrize("transactional_id", [None, "mm2-tx-1"])
def test_pieces_join_to_kafka_pythons_encoding(version: int, transactional_id: str | None) -> None:
    records = memoryview(b"d" + b"e")[1:]
    request = PiecesProduceRequest(
        transactional_id,
        -1,
        30_000,
        [("orders", 3, [b"abc"]), ("orders", 4, [b"d", records]), ("émoji-topic", 0, [b"x" * 300])],
        max_version=12,
    )
    request.API_VERSION = version  # what the connection does before encoding
    request.with_header(correlation_id=7, client_id="mm2-test")
    pieces = request.encode(framed=True, header=True)
    assert b"".join(pieces) == _kafka_python_bytes(version, transactional_id)
    assert any(piece is records for piece in pieces)  # the caller's view itself, not a copy
    assert request.header.get_response_class().__name__ == f"ProduceResponse_v{version}"
    assert request.expect_response()


def test_topic_id_versions_are_refused() -> None:
    with pytest.raises(ValueError, match="topic id"):
        PiecesProduceRequest(None, -1, 1000, [], max_version=13)
