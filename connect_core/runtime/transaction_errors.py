"""What an exactly-once source task does when its transactional producer fails (pure logic, no I/O).

Java's producer sorts transactional errors into abortable ones (the transaction is aborted, the
producer lives on) and fatal ones (the producer is unusable); Java's Connect fails the task on both
and leaves the restart to the operator. A fatal error that is not fencing, though, is routine: a
broker restarted without its producer state answers the next produce with OUT_OF_ORDER_SEQUENCE_NUMBER
or UNKNOWN_PRODUCER_ID, and a transaction that timed out against a broker that was down is just as
harmless. So the task classifies what its producer reports:

* ``FENCED``: another instance initialized the same transactional.id (PRODUCER_FENCED,
  INVALID_PRODUCER_EPOCH, librdkafka's _FENCED). This instance is a zombie: it fails, always.
* ``PERMANENT``: a new producer would meet it again (authorization, an unsupported broker, a record
  too large), or it is ambiguous: a time-out (of records or of a transactional call) is also what a
  zombie meets, a task instance frozen past its session whose transactional id a newer instance took
  over (some brokers answer its EndTxn with an error librdkafka retries until the call times out). Restarting
  such an instance would fence the live one, so the task fails at once, with the error, as before.
* ``RECOVERABLE``: everything else the producer reports. The task aborts, drops its producer and is
  restarted in place from its last committed offsets (see :class:`RecoveryBudget` for the bound).
"""

from __future__ import annotations

import enum
from collections import deque

from connect_core.api.errors import ConnectError
from connect_core.kafka.types import KafkaError, KafkaException


class ProducerErrorKind(enum.Enum):
    FENCED = "fenced"
    PERMANENT = "permanent"
    RECOVERABLE = "recoverable"


def _code(name: str, default: int) -> int:
    return int(getattr(KafkaError, name, default))


#: A producer another instance with the same transactional.id took over from (its own code, the broker's two).
FENCED_CODES = frozenset({_code("_FENCED", -144), _code("PRODUCER_FENCED", 90), _code("INVALID_PRODUCER_EPOCH", 47)})

#: Errors a fresh producer would meet again: restarting cannot help, so the task fails with them.
PERMANENT_CODES = frozenset(
    {
        _code("TOPIC_AUTHORIZATION_FAILED", 29),
        _code("GROUP_AUTHORIZATION_FAILED", 30),
        _code("CLUSTER_AUTHORIZATION_FAILED", 31),
        _code("TRANSACTIONAL_ID_AUTHORIZATION_FAILED", 53),
        _code("SASL_AUTHENTICATION_FAILED", 58),
        _code("UNSUPPORTED_VERSION", 35),
        _code("UNSUPPORTED_FOR_MESSAGE_FORMAT", 43),
        _code("_UNSUPPORTED_FEATURE", -165),
        _code("MSG_SIZE_TOO_LARGE", 10),
        _code("RECORD_LIST_TOO_LARGE", 18),
        _code("INVALID_RECORD", 87),
        _code("_INVALID_ARG", -186),
        _code("_AUTHENTICATION", -169),
        # ambiguous: a zombie's end too (see the module docstring)
        _code("_MSG_TIMED_OUT", -192),
        _code("_TIMED_OUT", -185),
        _code("_TIMED_OUT_QUEUE", -166),
        _code("REQUEST_TIMED_OUT", 7),
        _code("_TRANSPORT", -195),
    }
)


def classify_code(code: int | None) -> ProducerErrorKind:
    """The kind of a producer error by its Kafka (or librdkafka) code; an unknown code is recoverable."""
    if code in FENCED_CODES:
        return ProducerErrorKind.FENCED
    if code in PERMANENT_CODES:
        return ProducerErrorKind.PERMANENT
    return ProducerErrorKind.RECOVERABLE


def error_code(error: BaseException | KafkaError | None) -> int | None:
    """The Kafka error code an exception carries: a KafkaException's KafkaError, or a ``code`` attribute."""
    if isinstance(error, KafkaError):
        return int(error.code())
    if isinstance(error, KafkaException) and error.args and isinstance(error.args[0], KafkaError):
        return int(error.args[0].code())
    code = getattr(error, "code", None)
    return code if isinstance(code, int) else None


class TransactionalProducerError(ConnectError):
    """A failure of the task's transactional producer (not of the connector), with its kind."""

    def __init__(self, message: str, kind: ProducerErrorKind) -> None:
        super().__init__(message)
        self.kind = kind


class RecoveryBudget:
    """How many recoveries a task may make: at most ``max_recoveries`` within any ``window_s``.

    A broker restart costs one or two; a task that keeps failing (a broker that loses its producer
    state on every request, a misconfiguration the codes above do not name) exhausts it and fails.
    One budget lives as long as the task's assignment, across the instances its recoveries start.
    """

    def __init__(self, max_recoveries: int, window_s: float) -> None:
        if max_recoveries < 0 or window_s <= 0:
            raise ValueError("max_recoveries must be >= 0 and window_s > 0")
        self.max_recoveries = max_recoveries
        self.window_s = window_s
        self._times: deque[float] = deque()

    def try_spend(self, now: float) -> bool:
        """Take one recovery at ``now`` if the window still has room; False when it is exhausted."""
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) >= self.max_recoveries:
            return False
        self._times.append(now)
        return True

    def describe(self) -> str:
        return f"{self.max_recoveries} recoveries within {self.window_s:g} s"


__all__ = [
    "FENCED_CODES",
    "PERMANENT_CODES",
    "ProducerErrorKind",
    "RecoveryBudget",
    "TransactionalProducerError",
    "classify_code",
    "error_code",
]
