"""Error handling for the task runtime (Kafka's ``RetryWithToleranceOperator``), the task-side edge table.

============================  =====================================  ===============================
failure                       errors.tolerance=none                  errors.tolerance=all
============================  =====================================  ===============================
RetriableError in a stage     retried with backoff for up to errors.retry.timeout ms (delay 300 ms
                              doubling, capped by errors.retry.delay.max.ms); if still failing:
                              task FAILED                            record skipped and counted
other error in transform /    task FAILED ("Tolerance exceeded")     record skipped and counted
converter stage
producer delivery failure     task FAILED                            record skipped (offset still
                                                                     committed past it)
============================  =====================================  ===============================

One deliberate difference from Java: when retries of a RetriableError run out under
``errors.tolerance=none`` Java drops the record silently; we fail the task, since a replicator
must never lose a record without saying so.

The hot path never calls in here: the task loop runs stages directly and only hands a record to
:meth:`RetryWithToleranceOperator.handle` after a stage raised.
"""

from __future__ import annotations

import enum
import logging
import threading
import time
from collections.abc import Callable
from typing import TypeVar

from connect_core.api.errors import ConnectError, RetriableError
from connect_core.runtime.connector_config import ToleranceType

log = logging.getLogger(__name__)

T = TypeVar("T")

RETRIES_DELAY_MIN_S = 0.3


class Stage(enum.Enum):
    TRANSFORMATION = "TRANSFORMATION"
    KEY_CONVERTER = "KEY_CONVERTER"
    VALUE_CONVERTER = "VALUE_CONVERTER"
    HEADER_CONVERTER = "HEADER_CONVERTER"
    KAFKA_PRODUCE = "KAFKA_PRODUCE"
    TASK_POLL = "TASK_POLL"
    TASK_PUT = "TASK_PUT"
    KAFKA_CONSUME = "KAFKA_CONSUME"


class ToleranceExceededError(ConnectError):
    """The task must fail: an error happened and errors.tolerance does not allow skipping it."""


class _Skip:
    __slots__ = ()

    def __repr__(self) -> str:
        return "SKIP"


#: Returned by :meth:`RetryWithToleranceOperator.handle` when the record is to be dropped.
SKIP = _Skip()


class RetryWithToleranceOperator:
    """Decides, per failed operation, between retry, skip and failing the task; counts what happened."""

    def __init__(
        self,
        retry_timeout_ms: int = 0,
        max_delay_ms: int = 60000,
        tolerance: ToleranceType = ToleranceType.NONE,
        *,
        log_errors: bool = False,
        log_messages: bool = False,
        stop_event: threading.Event | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.retry_timeout_ms = retry_timeout_ms
        self.max_delay_ms = max_delay_ms
        self.tolerance = tolerance
        self.log_errors = log_errors
        self.log_messages = log_messages
        self._stop = stop_event or threading.Event()
        self._clock = clock
        self._lock = threading.Lock()
        self.total_failures = 0
        self.total_skipped = 0
        self.total_retries = 0

    @property
    def tolerates_all(self) -> bool:
        return self.tolerance is ToleranceType.ALL

    def stop(self) -> None:
        """Stop retrying: a pending backoff ends at once and the operation counts as failed."""
        self._stop.set()

    def _backoff(self, attempt: int, deadline: float) -> None:
        delay = RETRIES_DELAY_MIN_S * (1 << min(attempt - 1, 30))
        delay = min(delay, self.max_delay_ms / 1000.0, max(0.0, deadline - self._clock()))
        if delay > 0:
            self._stop.wait(delay)

    def handle(
        self,
        stage: Stage,
        error: BaseException,
        retry: Callable[[], T] | None = None,
        record: object = None,
    ) -> T | _Skip:
        """Handle ``error`` raised by the first attempt of a stage.

        Retriable errors are retried by calling ``retry`` (if given) until it succeeds (its result is
        returned) or the retry timeout passes. Then the failure is tolerated (returns :data:`SKIP`)
        or raises :class:`ToleranceExceededError` chained to the last error.
        """
        last: BaseException = error
        if isinstance(error, RetriableError) and retry is not None and self.retry_timeout_ms != 0:
            start = self._clock()
            deadline = float("inf") if self.retry_timeout_ms < 0 else start + self.retry_timeout_ms / 1000.0
            attempt = 1
            while self._clock() < deadline and not self._stop.is_set():
                self._backoff(attempt, deadline)
                if self._stop.is_set():
                    break
                attempt += 1
                with self._lock:
                    self.total_retries += 1
                try:
                    return retry()
                except RetriableError as e:
                    last = e
                except Exception as e:
                    last = e
                    break
        return self.failed(stage, last, record)

    def failed(self, stage: Stage, error: BaseException, record: object = None) -> _Skip:
        """Count a failure that cannot be retried; SKIP if tolerated, else raise."""
        with self._lock:
            self.total_failures += 1
        if self.log_errors:
            detail = f" record={record!r}" if self.log_messages and record is not None else ""
            log.error("Error encountered in stage %s:%s %s", stage.value, detail, error)
        if self.tolerance is ToleranceType.ALL:
            with self._lock:
                self.total_skipped += 1
            return SKIP
        raise ToleranceExceededError(f"Tolerance exceeded in error handler (stage {stage.value}): {error}") from error
