"""A backfill transaction's bounds and the producer's transaction timeout derived from them."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError
from mirror.jobs.backfill.bounds import (
    DEFAULT_SECONDS,
    TIMEOUT_MARGIN,
    TransactionBounds,
    transaction_bounds,
    with_transaction_timeout,
)


def test_default_bound_sets_the_producers_timeout_with_margin() -> None:
    bounds = transaction_bounds({"bootstrap.servers": "b:9092"}, records=7_000)
    assert bounds == TransactionBounds(records=7_000, seconds=DEFAULT_SECONDS)
    props = with_transaction_timeout({"bootstrap.servers": "b:9092"}, bounds)
    assert props["transaction.timeout.ms"] == str(int(DEFAULT_SECONDS * TIMEOUT_MARGIN * 1000))


def test_a_users_transaction_timeout_is_kept_and_bounds_the_age() -> None:
    props = {"transaction.timeout.ms": "5000"}
    bounds = transaction_bounds(props)
    assert bounds.seconds == pytest.approx(5.0 / TIMEOUT_MARGIN)
    assert with_transaction_timeout(props, bounds)["transaction.timeout.ms"] == "5000"
    # a long timeout does not stretch the age bound: readers of the offsets topic wait for commits
    assert transaction_bounds({"transaction.timeout.ms": "900000"}).seconds == DEFAULT_SECONDS


@pytest.mark.parametrize("value", ["soon", "0", "-5"])
def test_a_bad_transaction_timeout_is_a_config_error(value: str) -> None:
    with pytest.raises(ConfigError, match=r"transaction\.timeout\.ms"):
        transaction_bounds({"transaction.timeout.ms": value})
