"""Pure pieces of exactly-once source tasks: the producer they get, fenced errors, boundary requests."""

from __future__ import annotations

from confluent_kafka import KafkaError

from connect_core.runtime.exactly_once_source_task import (
    TRANSACTION_CALL_TIMEOUT_S,
    _TransactionRequests,
    is_fenced,
    transaction_call_timeout_s,
)
from connect_core.runtime.worker import exactly_once_producer_props
from connect_core.runtime.worker_config import SOURCE_PRODUCER_DEFAULTS


def test_the_producer_is_made_transactional_and_its_delivery_bounded_by_the_transaction() -> None:
    props = exactly_once_producer_props({**SOURCE_PRODUCER_DEFAULTS, "transactional.id": "mine"}, "g-c-0")
    assert props["enable.idempotence"] == "true" and props["transactional.id"] == "g-c-0"
    assert props["delivery.timeout.ms"] == "60000"  # librdkafka: message.timeout.ms <= transaction.timeout.ms
    shorter = exactly_once_producer_props({"delivery.timeout.ms": "30000", "transaction.timeout.ms": "90000"}, "t")
    assert shorter["delivery.timeout.ms"] == "30000"
    longer = exactly_once_producer_props({"delivery.timeout.ms": "2147483647", "transaction.timeout.ms": "90000"}, "t")
    assert longer["delivery.timeout.ms"] == "90000"


def test_fenced_errors_are_the_client_s_and_the_broker_s_two() -> None:
    assert is_fenced(KafkaError(KafkaError._FENCED))
    assert is_fenced(KafkaError(KafkaError.PRODUCER_FENCED))
    assert is_fenced(KafkaError(KafkaError.INVALID_PRODUCER_EPOCH))
    assert not is_fenced(KafkaError(KafkaError._MSG_TIMED_OUT))
    assert not is_fenced(None)


def test_requests_are_taken_once_and_an_abort_wins_over_a_commit() -> None:
    requests = _TransactionRequests()
    assert requests.take() == (False, False)
    requests.commit_transaction()
    assert requests.take() == (True, False)
    assert requests.take() == (False, False)
    requests.commit_transaction()
    requests.abort_transaction()
    assert requests.take() == (False, True)


def test_transactional_calls_are_bounded_by_the_producer_s_max_block_ms_as_in_java() -> None:
    assert TRANSACTION_CALL_TIMEOUT_S == 60.0  # Java's default max.block.ms
    assert transaction_call_timeout_s({}) == 60.0
    assert transaction_call_timeout_s({"max.block.ms": "15000"}) == 15.0
    assert transaction_call_timeout_s({"max.block.ms": 90_000}) == 90.0
    assert transaction_call_timeout_s({"max.block.ms": "soon"}) == 60.0  # validation is the config's job
    assert transaction_call_timeout_s({"max.block.ms": "0"}) == 60.0
