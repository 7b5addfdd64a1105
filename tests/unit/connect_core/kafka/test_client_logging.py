"""Kafka client log lines: re-levelled for operators, one warning per unreachable-broker episode."""

from __future__ import annotations

import logging

import pytest

from connect_core.kafka.client_logging import (
    BrokerEpisodes,
    ClientChatterFilter,
    RdKafkaLogRouter,
    classify_rdkafka,
    quiet_client_chatter,
    report_unreachable,
)

REFUSED = (
    "[thrd:127.0.0.1:9092/bootstrap]: 127.0.0.1:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: "
    "Connection refused (after 0ms in state CONNECT)"
)
DISCONNECTED = (
    "[thrd:127.0.0.1:9092/111]: 127.0.0.1:9092/111: Disconnected: connection closed by peer: "
    "receive 0 after POLLIN (after 5300ms in state UP)"
)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_connection_failure_names_the_broker_and_the_client() -> None:
    line = classify_rdkafka(3, "FAIL", "A->B|task-0|consumer#consumer-1", REFUSED)
    assert line.level == logging.WARNING
    assert line.broker == "127.0.0.1:9092"
    assert line.text.startswith("[A->B|task-0|consumer#consumer-1] 127.0.0.1:9092/bootstrap: Connect to")
    coordinator = classify_rdkafka(
        3,
        "FAIL",
        "c",
        "[thrd:GroupCoordinator]: GroupCoordinator: 10.0.0.7:9093: "
        "Connect to ipv4#10.0.0.7:9093 failed: Connection refused",
    )
    assert coordinator.broker == "10.0.0.7:9093"


def test_disconnects_and_notices_are_chatter_real_warnings_stay() -> None:
    assert classify_rdkafka(6, "FAIL", "c", DISCONNECTED).level == logging.DEBUG
    assert classify_rdkafka(6, "FAIL", "c", DISCONNECTED).broker is None
    assert classify_rdkafka(3, "ERROR", "c", "1/1 brokers are down").level == logging.DEBUG
    # a connection dropped before it worked is a failure (e.g. a TLS listener spoken to in plaintext)
    handshake = classify_rdkafka(
        3,
        "FAIL",
        "c",
        "[thrd:h:9093/bootstrap]: h:9093/bootstrap: Disconnected while "
        "requesting ApiVersion: might be caused by incorrect security.protocol configuration "
        "(after 2ms in state APIVERSION_QUERY)",
    )
    assert (handshake.level, handshake.broker) == (logging.WARNING, "h:9093")
    # the coordinator's logical connection names no broker: its broker thread's line does the reporting
    logical = classify_rdkafka(
        3,
        "FAIL",
        "c",
        "[thrd:GroupCoordinator]: GroupCoordinator: Disconnected: connection "
        "reset by peer (after 0ms in state APIVERSION_QUERY)",
    )
    assert (logical.level, logical.broker) == (logging.DEBUG, None)
    assert classify_rdkafka(5, "GETSUBSCRIPTIONS", "c", "Telemetry client instance id changed").level == logging.DEBUG
    assert classify_rdkafka(4, "CONFWARN", "c", "Configuration property x is ignored").level == logging.WARNING
    assert classify_rdkafka(3, "TXNERR", "c", "Fatal transaction error").level == logging.ERROR


def test_an_episode_is_reported_once_and_again_after_a_quiet_period() -> None:
    clock = Clock()
    episodes = BrokerEpisodes(quiet_s=60, clock=clock)
    assert episodes.first_of_episode("b:1")
    clock.now += 30
    assert not episodes.first_of_episode("b:1")
    assert episodes.first_of_episode("b:2")  # another broker is its own episode
    clock.now += 59
    assert not episodes.first_of_episode("b:1")  # 59 s after the last failure: same episode
    clock.now += 60
    assert episodes.first_of_episode("b:1")  # quiet for 60 s: recovered, this is news again


def test_router_logs_the_first_failure_at_warning_and_repeats_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    logger = logging.getLogger("test.librdkafka")
    router = RdKafkaLogRouter(logger, BrokerEpisodes(quiet_s=60, clock=clock))
    caplog.set_level(logging.DEBUG, logger="test.librdkafka")
    for client in ("producer-1", "consumer-2", "producer-1"):  # confluent-kafka's call: log(level, fmt, fac, name, msg)
        router.log(logging.ERROR, "%s [%s] %s", "FAIL", client, REFUSED)
    router.log(logging.INFO, "%s [%s] %s", "FAIL", "producer-1", DISCONNECTED)
    levels = [(r.levelno, r.getMessage()) for r in caplog.records]
    assert [lvl for lvl, _ in levels] == [logging.WARNING, logging.DEBUG, logging.DEBUG, logging.DEBUG]
    assert levels[0][1].startswith("Kafka broker 127.0.0.1:9092 is unreachable: [producer-1]")
    assert "repeats are logged at DEBUG" in levels[0][1]


def test_router_at_info_shows_one_line_per_episode(caplog: pytest.LogCaptureFixture) -> None:
    router = RdKafkaLogRouter(logging.getLogger("test.librdkafka.info"), BrokerEpisodes(clock=Clock()))
    caplog.set_level(logging.INFO, logger="test.librdkafka.info")
    for _ in range(50):
        router.log(logging.ERROR, "%s [%s] %s", "FAIL", "consumer-1", REFUSED)
        router.log(logging.INFO, "%s [%s] %s", "FAIL", "consumer-1", DISCONNECTED)
    assert [r.levelname for r in caplog.records] == ["WARNING"]


def test_another_client_shares_the_episode_of_a_broker_librdkafka_reported(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    episodes = BrokerEpisodes(quiet_s=60, clock=clock)
    logger = logging.getLogger("test.batches")
    router = RdKafkaLogRouter(logger, episodes)
    caplog.set_level(logging.DEBUG, logger="test.batches")
    report_unreachable("127.0.0.1:9092", "Fetch failed: KafkaConnectionError: socket disconnected", logger, episodes)
    router.log(logging.ERROR, "%s [%s] %s", "FAIL", "consumer-1", REFUSED)  # the same broker, the same outage
    report_unreachable("127.0.0.1:9092", "Cannot reach the Kafka cluster", logger, episodes)
    clock.now += 61  # quiet for longer than an episode: news again
    report_unreachable("127.0.0.1:9092", "Cannot reach the Kafka cluster", logger, episodes)
    levels = [r.levelname for r in caplog.records]
    assert levels == ["WARNING", "DEBUG", "DEBUG", "WARNING"]
    assert (
        caplog.records[0]
        .getMessage()
        .startswith(
            "Kafka broker 127.0.0.1:9092 is unreachable: Fetch failed: KafkaConnectionError: socket disconnected"
        )
    )


def test_kafka_python_bootstrap_retries_and_dropped_set_ups_are_demoted() -> None:
    chatter = ClientChatterFilter()
    retry = _record("kafka.net.manager", logging.WARNING, "Bootstrap bootstrap-0 not ready; waiting 0.43 secs")
    chatter.filter(retry)
    assert retry.levelno == logging.DEBUG
    # a connection the broker dropped while it was being set up (kafka-python logs it with a traceback)
    dropped = _record("kafka.net.connection", logging.ERROR, "Failed to build connection log_prefix")
    chatter.filter(dropped)
    assert dropped.levelno == logging.DEBUG


def test_kafka_python_slow_step_warnings_are_demoted() -> None:
    """A loaded machine makes any step of kafka-python's event loop exceed its 0.1 s watchdog."""
    chatter = ClientChatterFilter()
    slow = _record(
        "kafka.net.selector",
        logging.WARNING,
        "Task <kafka.net.selector.Task object at 0x7f48b633eed0> ran for 0.108s (>0.100s threshold). It is "
        "blocking the event loop -- likely a tight sync loop inside a coroutine. Other pollers will time out.",
    )
    chatter.filter(slow)
    assert slow.levelno == logging.DEBUG


def _record(name: str, level: int, msg: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, None, None)


def test_kafka_python_connection_errors_are_demoted_other_records_untouched() -> None:
    chatter = ClientChatterFilter()
    root = logging.getLogger()
    saved = root.level
    try:
        root.setLevel(logging.INFO)
        refused = _record("kafka.net.manager", logging.ERROR, "Connection failed: KafkaConnectionError: ECONNREFUSED")
        assert not chatter.filter(refused)
        assert refused.levelno == logging.DEBUG
        assert not chatter.filter(_record("kafka.cluster", logging.WARNING, "No node available for metadata refresh"))
        other = _record("kafka.coordinator", logging.ERROR, "Group authorization failed")
        assert chatter.filter(other) and other.levelno == logging.ERROR
        ours = _record("connect_core.herder", logging.ERROR, "Connection lost: KafkaConnectionError")
        assert chatter.filter(ours) and ours.levelno == logging.ERROR  # only kafka-python's records
        root.setLevel(logging.DEBUG)
        assert chatter.filter(_record("kafka.net.manager", logging.ERROR, "Connection failed: ECONNREFUSED"))
    finally:
        root.setLevel(saved)


def test_kafka_python_traceback_of_a_dropped_connection_is_demoted() -> None:
    """A broker restart resets kafka-python's sockets: its ERROR with a traceback is chatter too."""
    chatter = ClientChatterFilter()
    root = logging.getLogger()
    saved = root.level
    try:
        root.setLevel(logging.INFO)
        for exc in (ConnectionResetError(104, "Connection reset by peer"), BrokenPipeError(32, "Broken pipe")):
            reset = _record(
                "kafka.net.transport", logging.ERROR, "<KafkaTCPTransport>: Error receiving network data closing socket"
            )
            reset.exc_info = (type(exc), exc, None)
            assert not chatter.filter(reset)
            assert reset.levelno == logging.DEBUG
        bug = _record("kafka.net.transport", logging.ERROR, "Error receiving network data closing socket")
        bug.exc_info = (ValueError, ValueError("bad frame"), None)
        assert chatter.filter(bug) and bug.levelno == logging.ERROR  # anything else stays an error
    finally:
        root.setLevel(saved)


def test_kafka_python_info_only_at_debug() -> None:
    kafka = logging.getLogger("kafka")
    saved = kafka.level
    try:
        quiet_client_chatter(logging.INFO)
        assert not logging.getLogger("kafka.net.connection").isEnabledFor(logging.INFO)
        assert logging.getLogger("kafka.net.connection").isEnabledFor(logging.WARNING)
        quiet_client_chatter(logging.DEBUG)
        assert kafka.level == logging.NOTSET
    finally:
        kafka.setLevel(saved)
