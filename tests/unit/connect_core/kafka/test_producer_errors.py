"""The batch producers' error mapping: fencing is its own class, with the broker's code, and the runtime's
producer-error classification reads it as fencing; retriable codes stay retriable."""

from __future__ import annotations

from types import SimpleNamespace

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.kafka.producer_errors import ProducerFencedError, mapped_error
from connect_core.kafka.transactional_batch_producer import _add_partitions_error
from connect_core.runtime.transaction_errors import ProducerErrorKind, classify_code, error_code


def test_fencing_codes_are_told_apart() -> None:
    for code in (90, 47):
        error = mapped_error(code, "EndTxn")
        assert isinstance(error, ProducerFencedError) and error.code == code
        assert classify_code(error_code(error)) is ProducerErrorKind.FENCED
        assert "EndTxn failed" in str(error)


def test_other_codes() -> None:
    assert type(mapped_error(51, "AddPartitionsToTxn")) is RetriableError  # CONCURRENT_TRANSACTIONS
    assert type(mapped_error(10, "Produce")) is ConnectError  # MESSAGE_TOO_LARGE
    assert not isinstance(mapped_error(53, "InitProducerId"), ProducerFencedError)


def _answer(*codes: int) -> SimpleNamespace:
    partitions = [SimpleNamespace(partition_index=i, partition_error_code=c) for i, c in enumerate(codes)]
    return SimpleNamespace(results_by_topic_v3_and_below=[SimpleNamespace(name="t", results_by_partition=partitions)])


def test_add_partitions_answer_as_a_whole() -> None:
    """Fencing or a coordinator to ask again decides the whole request; per-partition errors do not."""
    assert _add_partitions_error(_answer(0, 0)) == 0
    assert _add_partitions_error(_answer(29, 55)) == 0  # topic authorization, OPERATION_NOT_ATTEMPTED
    assert _add_partitions_error(_answer(0, 51)) == 51
    assert _add_partitions_error(_answer(16, 0)) == 16
    assert _add_partitions_error(_answer(55, 90)) == 90
