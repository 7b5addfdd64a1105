"""TransactionSpan: when a poll boundary's commit may wait for the next poll (batch path, a backlog)."""

from __future__ import annotations

from connect_core.runtime.transaction_span import BACKLOG_POLL_RECORDS, TransactionSpan

FULL = BACKLOG_POLL_RECORDS
MB = 1 << 20


def test_a_full_poll_keeps_the_transaction_open_below_its_bytes_and_age() -> None:
    span = TransactionSpan(32 * MB, 1.0)
    span.dispatched(5 * MB, now=10.0)
    assert span.may_wait(FULL, True, now=10.1)
    span.dispatched(26 * MB, now=10.2)
    assert span.may_wait(FULL, True, now=10.3)  # 31 MB


def test_the_bytes_limit_ends_it() -> None:
    span = TransactionSpan(32 * MB, 1.0)
    span.dispatched(20 * MB, now=0.0)
    span.dispatched(12 * MB, now=0.1)
    assert not span.may_wait(FULL, True, now=0.2)


def test_its_age_ends_it_however_little_it_holds() -> None:
    span = TransactionSpan(32 * MB, 1.0)
    span.dispatched(1024, now=5.0)
    assert span.may_wait(FULL, True, now=5.99)
    assert not span.may_wait(FULL, True, now=6.0)


def test_a_poll_that_is_not_full_means_caught_up_and_commits() -> None:
    span = TransactionSpan(32 * MB, 1.0)
    span.dispatched(MB, now=0.0)
    assert not span.may_wait(FULL - 1, True, now=0.1)
    assert not span.may_wait(0, True, now=0.1)


def test_a_poll_that_reached_the_end_commits_however_full_it_was() -> None:
    span = TransactionSpan(32 * MB, 1.0)
    span.dispatched(MB, now=0.0)
    assert not span.may_wait(10 * FULL, False, now=0.1)


def test_nothing_dispatched_yet_never_waits() -> None:
    assert not TransactionSpan(32 * MB, 1.0).may_wait(FULL, True, now=0.0)


def test_zero_bytes_is_a_transaction_per_poll() -> None:
    span = TransactionSpan(0, 1.0)
    span.dispatched(MB, now=0.0)
    assert not span.may_wait(10 * FULL, True, now=0.0)


def test_a_new_transaction_starts_a_new_span() -> None:
    span = TransactionSpan(32 * MB, 1.0)
    span.dispatched(32 * MB, now=0.0)
    assert not span.may_wait(FULL, True, now=0.5)
    span.ended()
    assert not span.may_wait(FULL, True, now=0.6)  # nothing in the new one yet
    span.dispatched(MB, now=3.0)  # its age counts from its first dispatch, not from the last span's
    assert span.may_wait(FULL, True, now=3.5)
