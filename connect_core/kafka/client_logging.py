"""Kafka client logs for operators: through Python logging, chatter below INFO, one warning per outage.

librdkafka (confluent-kafka) writes raw ``%3|...|FAIL|...`` lines to stderr unless a client is given a
``logger``; every client built by :mod:`connect_core.kafka.clients` gets :data:`RDKAFKA_LOG`, which
re-levels each line and logs it on the ``librdkafka`` logger, so it follows ``--log-level`` and the
format. kafka-python (the Connect group member) logs its connection lifecycle at INFO and every
failed reconnect at ERROR; :func:`quiet_client_chatter` and :class:`ClientChatterFilter` move that
below the default level.

What an operator still sees at INFO: a broker that cannot be reached is reported once per *episode*
at WARNING (the first failure; the next ones, from any client of the process, go to DEBUG until the
broker has been quiet for :data:`EPISODE_QUIET_S`). Everything is visible with ``--log-level DEBUG``.

librdkafka hands log lines over only inside ``poll()``; producers and consumers are polled by their
owners, admin clients are not, so :func:`watch_admin` polls live admin clients once a second.
"""

from __future__ import annotations

import logging
import re
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

RDKAFKA_LOGGER = "librdkafka"
KAFKA_PYTHON_LOGGER = "kafka"

#: A broker whose failures stop for this long has recovered: its next failure is news again. Longer
#: than librdkafka's longest reconnect backoff (10 s) and its 30 s suppression of identical errors.
EPISODE_QUIET_S = 60.0

#: librdkafka syslog levels (0 emerg .. 7 debug) -> Python levels. NOTICE/INFO lines are client
#: chatter (disconnects, group changes the runtime reports itself): DEBUG.
_SYSLOG_TO_PYTHON = {
    0: logging.CRITICAL,
    1: logging.CRITICAL,
    2: logging.CRITICAL,
    3: logging.ERROR,
    4: logging.WARNING,
    5: logging.DEBUG,
    6: logging.DEBUG,
    7: logging.DEBUG,
}
_PYTHON_TO_SYSLOG = {logging.CRITICAL: 2, logging.ERROR: 3, logging.WARNING: 4, logging.INFO: 6, logging.DEBUG: 7}

# "127.0.0.1:9092/bootstrap: Connect to ipv4#127.0.0.1:9092 failed: ..." or "GroupCoordinator: host:port: ..."
_BROKER = re.compile(r"(?P<addr>\[?[\w.\-:]+?\]?:\d+)(?:/\w+)?:\s")
_THREAD = re.compile(r"^\[thrd:[^\]]*\]:\s*")


@dataclass(frozen=True)
class RdKafkaLine:
    """One librdkafka log line, re-levelled; ``broker`` is set for connection failures (episodes)."""

    level: int
    text: str
    broker: str | None = None


def classify_rdkafka(syslog_level: int, facility: str, client: str, message: str) -> RdKafkaLine:
    """Pure: the Python level and text of a librdkafka line, and which broker failed if it is one.

    A ``FAIL`` line is a connection failure (refused, timed out, dropped during the TLS/SASL or
    ApiVersion handshake) unless a working connection closed ("in state UP": idle close, broker
    restart): librdkafka reconnects by itself, and a broker that stays away shows up as a failure
    to connect right after. A line naming no broker address (the coordinator's logical
    connection) and "N/N brokers are down" repeat what the broker threads' lines say.
    """
    body = _THREAD.sub("", message)
    text = f"[{client}] {body}"
    if facility == "FAIL":
        if "Disconnected" in body and "in state UP" in body:
            return RdKafkaLine(logging.DEBUG, text)
        match = _BROKER.search(body)
        if match is None:  # e.g. "GroupCoordinator: Disconnected": the broker's own thread reports it too
            return RdKafkaLine(logging.DEBUG, text)
        return RdKafkaLine(logging.WARNING, text, match.group("addr"))
    if facility == "ERROR" and "brokers are down" in body:
        return RdKafkaLine(logging.DEBUG, text)
    return RdKafkaLine(_SYSLOG_TO_PYTHON.get(syslog_level, logging.WARNING), text)


class BrokerEpisodes:
    """Which brokers are failing now: the first failure of an episode is news, the repeats are not."""

    def __init__(self, quiet_s: float = EPISODE_QUIET_S, clock: Callable[[], float] = time.monotonic) -> None:
        self._quiet_s = quiet_s
        self._clock = clock
        self._last: dict[str, float] = {}
        self._lock = threading.Lock()

    def first_of_episode(self, broker: str) -> bool:
        now = self._clock()
        with self._lock:
            last = self._last.get(broker)
            self._last[broker] = now
        return last is None or now - last >= self._quiet_s


class RdKafkaLogRouter:
    """What confluent-kafka's ``logger`` setting calls: ``log(level, "%s [%s] %s", fac, name, msg)``.

    confluent-kafka passes librdkafka's syslog level already mapped to a Python level (ERROR for
    syslog 3, INFO for 5 and 6...); that is turned back into syslog terms so NOTICE/INFO can be told
    from real problems.
    """

    def __init__(self, logger: logging.Logger | None = None, episodes: BrokerEpisodes | None = None) -> None:
        self.logger = logger or logging.getLogger(RDKAFKA_LOGGER)
        self.episodes = episodes or BrokerEpisodes()

    def log(self, level: int, msg: str, *args: Any) -> None:
        if len(args) == 3:
            facility, client, message = (str(a) for a in args)
        else:  # not confluent-kafka's usual call: log it as given
            facility, client, message = "", "", (msg % args if args else msg)
        line = classify_rdkafka(_PYTHON_TO_SYSLOG.get(level, 4), facility, client, message)
        level_out = line.level
        text = line.text
        if line.broker is not None:
            if self.episodes.first_of_episode(line.broker):
                text = unreachable_text(line.broker, line.text)
            else:
                level_out = logging.DEBUG
        if self.logger.isEnabledFor(level_out):
            self.logger.log(level_out, "%s", text)


def unreachable_text(broker: str, detail: str) -> str:
    """The one WARNING of a broker's outage, whichever client saw it first."""
    return (
        f"Kafka broker {broker} is unreachable: {detail} (repeats are logged at DEBUG "
        f"until it has been quiet for {EPISODE_QUIET_S:g} s)"
    )


#: The one router every client of this process shares (episodes are per broker, not per client).
RDKAFKA_LOG = RdKafkaLogRouter()


def report_unreachable(
    broker: str, detail: str, logger: logging.Logger, episodes: BrokerEpisodes | None = None
) -> None:
    """A client that is not librdkafka's (the batch fetcher) reports a broker it cannot reach as librdkafka's
    do: WARNING for the first failure of the episode, shared with every other client of the process; DEBUG after."""
    if (episodes or RDKAFKA_LOG.episodes).first_of_episode(broker):
        logger.warning("%s", unreachable_text(broker, detail))
    else:
        logger.debug("Kafka broker %s is unreachable: %s", broker, detail)


# kafka-python's messages about a connection that failed or dropped (it retries by itself).
_KAFKA_PYTHON_CONNECTION = re.compile(
    r"KafkaConnectionError|ECONNREFUSED|Connection (lost|failed|refused)|socket disconnected|"
    r"No node available|Marking the coordinator dead|NodeNotReady|Abort \(|Connection reset|"
    r"Bootstrap \S+ not ready|Failed to build connection",
)
#: kafka-python's own watchdog: a step of its event loop took over 0.1 s of wall time. A busy machine (or
#: another thread holding the GIL) does that; it is a hint for kafka-python's developers, not for operators.
_KAFKA_PYTHON_SLOW_STEP = re.compile(r"ran for \S+ \(>\S+ threshold\)\. It is blocking the event loop")


class ClientChatterFilter(logging.Filter):
    """Handler filter for kafka-python's records: connection errors and its slow-step watchdog become DEBUG
    (shown only at DEBUG).

    A handler filter, not a logger one: kafka-python logs on many module loggers (``kafka.net.*``,
    ``kafka.cluster``, ``kafka.coordinator``...), created when first imported. The broker itself
    is reported once per episode by the librdkafka clients of the same cluster, and the group
    member's own warnings come from ``connect_core.herder.distributed.coordinator``.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        name = record.name
        if name != KAFKA_PYTHON_LOGGER and not name.startswith(KAFKA_PYTHON_LOGGER + "."):
            return True
        if record.levelno >= logging.WARNING and (
            _KAFKA_PYTHON_CONNECTION.search(message := record.getMessage())
            or _KAFKA_PYTHON_SLOW_STEP.search(message)
            or _lost_connection(record)
        ):
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return record.levelno >= logging.WARNING or logging.getLogger().isEnabledFor(record.levelno)


def _lost_connection(record: logging.LogRecord) -> bool:
    """A record carrying a dropped connection as its exception: kafka-python logs a broker that went away
    mid-read ("Error receiving network data closing socket") at ERROR with the whole traceback, on every
    broker restart; it reconnects by itself."""
    exc = record.exc_info[1] if record.exc_info else None
    return isinstance(exc, ConnectionError)


def quiet_client_chatter(level: int) -> None:
    """kafka-python's INFO lines (connections opened/closed, bootstrap, metadata) only at DEBUG."""
    logging.getLogger(KAFKA_PYTHON_LOGGER).setLevel(logging.NOTSET if level <= logging.DEBUG else logging.WARNING)


class _AdminPoller:
    """Polls live admin clients once a second so their queued librdkafka log lines are handed over."""

    def __init__(self, interval_s: float = 1.0) -> None:
        self._interval_s = interval_s
        self._clients: weakref.WeakSet[Any] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def add(self, admin: Any) -> None:
        with self._lock:
            self._clients.add(admin)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kafka-admin-log-poller", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            time.sleep(self._interval_s)
            self._poll_once()

    def _poll_once(self) -> None:
        """One round; every reference it takes (the list, the loop variable) ends with the call, so the
        thread never keeps an abandoned client alive while it sleeps (a client kept alive keeps
        reconnecting to a broker that may be gone)."""
        with self._lock:
            clients = list(self._clients)
        for client in clients:
            try:
                client.poll(0)
            except Exception:  # a client being torn down; nothing to report
                pass


_ADMIN_POLLER = _AdminPoller()


def watch_admin(admin: Any) -> None:
    """Have ``admin``'s log lines handed over (admin clients are never polled by their users)."""
    _ADMIN_POLLER.add(admin)
