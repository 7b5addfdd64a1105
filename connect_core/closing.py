"""Closing several resources where one failure must not keep the others open (Kafka's ``Utils.closeQuietly``)."""

from __future__ import annotations

import logging
from collections.abc import Iterable


def close_quietly(closeables: Iterable[object], log: logging.Logger, level: int = logging.WARNING) -> None:
    """Call ``close()`` on each object that has one (None and objects without it are skipped);
    an exception is logged at ``level`` (with its traceback at DEBUG) and the rest are still closed."""
    for closeable in closeables:
        close = getattr(closeable, "close", None)
        if not callable(close):
            continue
        try:
            close()
        except Exception as e:
            log.log(level, "Error closing %r: %s", closeable, e, exc_info=level <= logging.DEBUG)


__all__ = ["close_quietly"]
