"""A report command prints its report only: no log line of ours or of a Kafka client below CRITICAL."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest

from mirror.cli.logging_setup import configure_logging, quiet_unless_debug


@pytest.fixture
def saved_levels() -> Iterator[None]:
    names = ["", "kafka", "librdkafka"]
    levels = {n: logging.getLogger(n).level for n in names}
    yield
    for n, level in levels.items():
        logging.getLogger(n).setLevel(level)


def test_a_report_command_hears_no_kafka_python_warning(saved_levels: None) -> None:
    configure_logging("INFO")
    quiet_unless_debug()
    assert not logging.getLogger("kafka.net.selector").isEnabledFor(logging.WARNING)
    assert not logging.getLogger("librdkafka").isEnabledFor(logging.ERROR)
    assert not logging.getLogger("mirror.driver").isEnabledFor(logging.ERROR)


def test_at_debug_a_report_command_shows_every_line(saved_levels: None) -> None:
    configure_logging("DEBUG")
    quiet_unless_debug()
    assert logging.getLogger("kafka.net.selector").isEnabledFor(logging.DEBUG)
    assert logging.getLogger("mirror.driver").isEnabledFor(logging.DEBUG)
