"""The one place librdkafka errors become :mod:`connect_core.api.errors` exceptions.

::

    ConnectError
    ├── KafkaClientError            .code, .name, .retriable, .fatal, .context
    │   └── RetriableKafkaError     also a RetriableError: the worker retries with backoff
    └── ConfigError                 a client property librdkafka rejected (names the key)

librdkafka marks few errors retriable itself (``KafkaError.retriable()`` is mostly False for
errors made locally, e.g. ``_TRANSPORT``), so we decide with Java's list of RetriableException
subclasses plus the local codes that mean "the broker is not reachable right now".
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from confluent_kafka import KafkaError, KafkaException

from connect_core.api.errors import ConfigError, ConnectError, RetriableError

_RETRIABLE_CODES: frozenset[int] = frozenset(
    {
        KafkaError.UNKNOWN_TOPIC_OR_PART,
        KafkaError.LEADER_NOT_AVAILABLE,
        KafkaError.NOT_LEADER_FOR_PARTITION,
        KafkaError.REQUEST_TIMED_OUT,
        KafkaError.NETWORK_EXCEPTION,
        KafkaError.COORDINATOR_LOAD_IN_PROGRESS,
        KafkaError.COORDINATOR_NOT_AVAILABLE,
        KafkaError.NOT_COORDINATOR,
        KafkaError.NOT_ENOUGH_REPLICAS,
        KafkaError.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        KafkaError.KAFKA_STORAGE_ERROR,
        KafkaError.CONCURRENT_TRANSACTIONS,
        KafkaError.THROTTLING_QUOTA_EXCEEDED,
        KafkaError.OFFSET_NOT_AVAILABLE,
        KafkaError.UNSTABLE_OFFSET_COMMIT,
        KafkaError.FETCH_SESSION_ID_NOT_FOUND,
        KafkaError.REBALANCE_IN_PROGRESS,
        KafkaError._TIMED_OUT,
        KafkaError._TRANSPORT,
        KafkaError._ALL_BROKERS_DOWN,
        KafkaError._MSG_TIMED_OUT,
        KafkaError._QUEUE_FULL,
        KafkaError._RESOLVE,
        KafkaError._TIMED_OUT_QUEUE,
        KafkaError._WAIT_COORD,
        KafkaError._UNKNOWN_TOPIC,
    }
)

_BAD_PROPERTY = re.compile(
    r'(?:No such configuration property|Invalid value(?: .*?)? for configuration property):? "?([\w.\-]+)"?'
)


class KafkaClientError(ConnectError):
    """A Kafka client or broker error that carries librdkafka's code and flags."""

    def __init__(
        self,
        message: str,
        *,
        code: int,
        name: str,
        retriable: bool = False,
        fatal: bool = False,
        context: str = "",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.name = name
        self.retriable = retriable
        self.fatal = fatal
        self.context = context


class RetriableKafkaError(KafkaClientError, RetriableError):
    """A transient Kafka error (broker down, leader moving, timeout): retry later."""


def is_retriable(err: KafkaError) -> bool:
    return bool(err.retriable()) or err.code() in _RETRIABLE_CODES


def from_kafka_error(err: KafkaError, context: str = "") -> KafkaClientError:
    """Wrap one ``KafkaError`` (from a future, a delivery report or a message)."""
    code = err.code()
    name = err.name()
    text = err.str()
    message = f"{context}: {text} ({name})" if context else f"{text} ({name})"
    retriable = not err.fatal() and is_retriable(err)
    cls = RetriableKafkaError if retriable else KafkaClientError
    return cls(message, code=code, name=name, retriable=retriable, fatal=bool(err.fatal()), context=context)


def from_exception(exc: BaseException, context: str = "") -> ConnectError:
    """Map any exception a confluent-kafka call raised; non-Kafka exceptions become ConnectError."""
    if isinstance(exc, ConnectError):
        return exc
    if isinstance(exc, KafkaException) and exc.args and isinstance(exc.args[0], KafkaError):
        err = exc.args[0]
        if err.code() == KafkaError._INVALID_ARG:
            m = _BAD_PROPERTY.search(err.str())
            return ConfigError(f"{context + ': ' if context else ''}{err.str()}", key=m.group(1) if m else None)
        return from_kafka_error(err, context)
    if isinstance(exc, KafkaError):
        return from_kafka_error(exc, context)
    text = str(exc)
    m = _BAD_PROPERTY.search(text)
    if m:  # client construction failures come as plain KafkaException(str) too
        return ConfigError(f"{context + ': ' if context else ''}{text}", key=m.group(1))
    return ConnectError(f"{context}: {text}" if context else text)


@contextlib.contextmanager
def map_kafka_errors(context: str = "") -> Iterator[None]:
    """``with map_kafka_errors("creating topic x"): ...`` re-raises client errors as ConnectErrors."""
    try:
        yield
    except KafkaException as e:
        raise from_exception(e, context) from e
