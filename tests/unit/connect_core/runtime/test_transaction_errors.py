"""How an exactly-once task sorts its producer's failures, and how often it may recover from them."""

from __future__ import annotations

import pytest
from confluent_kafka import KafkaError, KafkaException

from connect_core.kafka.errors import from_kafka_error
from connect_core.runtime.transaction_errors import ProducerErrorKind, RecoveryBudget, classify_code, error_code


@pytest.mark.parametrize("code", [KafkaError._FENCED, KafkaError.PRODUCER_FENCED, KafkaError.INVALID_PRODUCER_EPOCH])
def test_fencing_is_never_recovered_from(code: int) -> None:
    assert classify_code(code) is ProducerErrorKind.FENCED


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER,  # a broker restarted without its producer state
        KafkaError.UNKNOWN_PRODUCER_ID,
        KafkaError._PURGE_QUEUE,  # what the delivery reports say once the producer failed fatally
        KafkaError.INVALID_TXN_STATE,
        KafkaError._FATAL,
        None,  # no code at all (an unexpected exception of the producer)
    ],
)
def test_what_a_fresh_producer_would_not_meet_again_is_recoverable(code: int | None) -> None:
    assert classify_code(code) is ProducerErrorKind.RECOVERABLE


@pytest.mark.parametrize(
    "code",
    [
        KafkaError.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
        KafkaError.TOPIC_AUTHORIZATION_FAILED,
        KafkaError.MSG_SIZE_TOO_LARGE,
        KafkaError.UNSUPPORTED_VERSION,
        # time-outs are what a thawed zombie meets too: restarting it would fence the live instance
        KafkaError._MSG_TIMED_OUT,
        KafkaError._TIMED_OUT,
        KafkaError.REQUEST_TIMED_OUT,
    ],
)
def test_what_a_fresh_producer_would_meet_again_fails_the_task(code: int) -> None:
    assert classify_code(code) is ProducerErrorKind.PERMANENT


def test_codes_are_read_from_every_shape_the_producer_reports_in() -> None:
    err = KafkaError(KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER)
    assert error_code(err) == KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert error_code(KafkaException(err)) == KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert error_code(from_kafka_error(err, "delivery")) == KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert error_code(RuntimeError("no code")) is None
    assert error_code(None) is None


def test_the_budget_allows_so_many_recoveries_per_window_then_refuses() -> None:
    budget = RecoveryBudget(2, 60.0)
    assert budget.try_spend(0.0) and budget.try_spend(10.0)
    assert not budget.try_spend(20.0)  # a third within the window: the task fails
    assert not budget.try_spend(59.9)
    assert budget.try_spend(60.0)  # the first has left the window
    assert not budget.try_spend(65.0)
    assert budget.try_spend(70.0)  # and now the second
    assert budget.describe() == "2 recoveries within 60 s"


def test_a_refused_recovery_does_not_count() -> None:
    budget = RecoveryBudget(1, 10.0)
    assert budget.try_spend(0.0)
    for t in range(1, 10):
        assert not budget.try_spend(float(t))
    assert budget.try_spend(10.0)


def test_a_nonsense_budget_is_refused() -> None:
    with pytest.raises(ValueError):
        RecoveryBudget(-1, 10.0)
    with pytest.raises(ValueError):
        RecoveryBudget(1, 0.0)
