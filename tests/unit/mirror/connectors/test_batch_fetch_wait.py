"""The batch path asks the source broker to wait as the record path's consumer does (the flow's
``fetch.max.wait.ms``, at least 100 ms), never the task's own poll wait."""

from __future__ import annotations

import pytest

from connect_core.api.errors import ConfigError
from mirror.connectors.source_task import MIN_FETCH_WAIT_MS, batch_fetch_wait_ms


def test_kafkas_consumer_default_when_the_flow_sets_none() -> None:
    assert batch_fetch_wait_ms({}) == 500


def test_the_flows_setting_with_the_record_paths_floor() -> None:
    assert batch_fetch_wait_ms({"fetch.max.wait.ms": " 2000 "}) == 2000
    assert batch_fetch_wait_ms({"fetch.max.wait.ms": "0"}) == MIN_FETCH_WAIT_MS


def test_a_value_that_is_no_number_is_a_config_error() -> None:
    with pytest.raises(ConfigError) as raised:
        batch_fetch_wait_ms({"fetch.max.wait.ms": "soon"})
    assert "consumer.fetch.max.wait.ms" in str(raised.value)
