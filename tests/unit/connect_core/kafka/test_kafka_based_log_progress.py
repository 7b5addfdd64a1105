"""KafkaBasedLog's start-up read: its timeout bounds a wait without progress, not the whole read."""

from __future__ import annotations

import pytest

from connect_core.kafka.log import KafkaBasedLog


class SlowRead:
    """A read-to-end that needs ``rounds`` timeouts; each one the log moved on by ``step`` records."""

    def __init__(self, log: KafkaBasedLog, rounds: int, step: int) -> None:
        self.log, self.rounds, self.step, self.waits = log, rounds, step, 0

    def result(self, timeout: float) -> None:
        self.waits += 1
        if self.waits > self.rounds:
            return
        self.log._positions[0] = self.log._positions.get(0, 0) + self.step
        raise TimeoutError


def test_a_big_topic_is_read_to_its_end_however_long_it_takes() -> None:
    log = KafkaBasedLog(
        "state", {}, {"bootstrap.servers": "127.0.0.1:1"}, lambda _m: None, read_only=True, start_timeout_s=30
    )
    read = SlowRead(log, rounds=5, step=1000)  # five timeouts' worth of reading, progressing all along
    log._await_progressing(read)  # type: ignore[arg-type]
    assert read.waits == 6


def test_a_stalled_read_times_out() -> None:
    log = KafkaBasedLog(
        "state", {}, {"bootstrap.servers": "127.0.0.1:1"}, lambda _m: None, read_only=True, start_timeout_s=30
    )
    nothing = SlowRead(log, rounds=100, step=0)  # nothing read at all: one timeout
    with pytest.raises(TimeoutError):
        log._await_progressing(nothing)  # type: ignore[arg-type]
    assert nothing.waits == 1

    class StopsAfterTwo(SlowRead):
        def result(self, timeout: float) -> None:
            if self.waits == 2:
                self.step = 0  # the broker stopped answering
            super().result(timeout)

    stuck = StopsAfterTwo(log, rounds=100, step=10)
    with pytest.raises(TimeoutError):
        log._await_progressing(stuck)  # type: ignore[arg-type]
    assert stuck.waits == 3
