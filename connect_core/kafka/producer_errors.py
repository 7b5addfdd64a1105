"""Kafka error codes met by the batch producers, as Connect errors a caller can tell apart.

A producer fenced by a newer holder of its transactional id (PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH
from a partition leader) is a zombie: it must stop, never retry, so it gets its own class. It carries the
broker's ``code`` like the record path's errors do, so the runtime's classification of producer errors
(``connect_core.runtime.transaction_errors``) reads it as fencing too.
"""

from __future__ import annotations

from kafka import errors as kafka_errors

from connect_core.api.errors import ConnectError, RetriableError

PRODUCER_FENCED = 90
INVALID_PRODUCER_EPOCH = 47
FENCED_CODES = frozenset({PRODUCER_FENCED, INVALID_PRODUCER_EPOCH})


class ProducerFencedError(ConnectError):
    """Another producer initialised the same transactional id: this one can do nothing more."""

    def __init__(self, message: str, code: int = PRODUCER_FENCED) -> None:
        super().__init__(message)
        self.code = code


def mapped_error(code: int, what: str) -> ConnectError:
    """The Connect error for a broker's error ``code`` answered to ``what`` (retriable where Kafka's is)."""
    error = kafka_errors.for_code(code)
    message = f"{what} failed: {error.__name__} ({code}): {error.description}"
    if code in FENCED_CODES:
        return ProducerFencedError(message, code)
    mapped = RetriableError(message) if error.retriable else ConnectError(message)
    mapped.code = code  # type: ignore[attr-defined]  # read by the runtime's classification of producer errors
    return mapped


__all__ = ["FENCED_CODES", "INVALID_PRODUCER_EPOCH", "PRODUCER_FENCED", "ProducerFencedError", "mapped_error"]
