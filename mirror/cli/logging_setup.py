"""Where ``mm2``'s log lines go: one format on stderr at ``--log-level``, Kafka client chatter below it.

:func:`configure_logging` is what every command gets; ``mm2 demo`` moves the lines to a file
(:func:`log_to_file`) so its own story stays readable, and ``mm2 status`` prints only its report
(:func:`quiet_unless_debug`).
"""

from __future__ import annotations

import logging
from pathlib import Path

from connect_core.kafka.client_logging import (
    KAFKA_PYTHON_LOGGER,
    RDKAFKA_LOGGER,
    ClientChatterFilter,
    quiet_client_chatter,
)

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def _with_filter(handler: logging.Handler) -> logging.Handler:
    if not any(isinstance(f, ClientChatterFilter) for f in handler.filters):
        handler.addFilter(ClientChatterFilter())
    return handler


def configure_logging(level: str | int) -> None:
    """Root logging at ``level`` on stderr; kafka-python's lifecycle lines only at DEBUG."""
    logging.basicConfig(level=level, format=FORMAT)
    root = logging.getLogger()
    root.setLevel(level)
    for handler in root.handlers:
        _with_filter(handler)
    quiet_client_chatter(root.level)


def log_to_file(path: Path) -> None:
    """Every log line from now on goes to ``path`` (same level and format), none to the terminal."""
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(_with_filter(handler))


def quiet_unless_debug() -> None:
    """A report command prints its report only; with ``--log-level DEBUG`` the log lines too."""
    root = logging.getLogger()
    if root.getEffectiveLevel() > logging.DEBUG:
        root.setLevel(logging.CRITICAL)
        logging.getLogger(KAFKA_PYTHON_LOGGER).setLevel(logging.CRITICAL)  # it has a level of its own


def quiet_broker_warnings() -> None:
    """A batch command reports an unreachable cluster as its one error line: the Kafka clients' own
    "broker unreachable" warnings are shown only with ``--log-level DEBUG``."""
    if logging.getLogger().getEffectiveLevel() > logging.DEBUG:
        logging.getLogger(RDKAFKA_LOGGER).setLevel(logging.ERROR)
