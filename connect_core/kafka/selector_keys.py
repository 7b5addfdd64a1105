"""kafka-python's network loop without per-wait formatting: no socket repr, no trace-level logging calls.

Every wait of kafka-python's network loop registers its socket with the selector, and its check "is this
socket registered already?" asks the standard selector for the socket's key and catches the KeyError.
That error's text is the socket's repr, built eagerly: two system calls (the socket's own and its peer's
address) and enum conversions per wait, on every Fetch answer and every Produce the batch copy makes
(a profile of the batch path showed it among the task thread's top items). :func:`install` gives
kafka-python's selector a registration that looks the key up by file descriptor instead: the same
registrations and the same errors for a socket registered twice for the same event.

The loop also calls its trace logger (level 5, below DEBUG) several times per pass: two Python calls each
even when nothing is logged. Unless level 5 is enabled on kafka-python's selector logger when
:func:`install` runs, those calls become a no-op.
"""

from __future__ import annotations

import logging
import selectors
from typing import Any

from kafka.net import selector as kafka_selector
from kafka.net.selector import NetworkSelector, Task

_installed = False
_original_register_event = NetworkSelector.register_event
#: kafka-python's trace level on its selector logger
_TRACE = 5


def _registered_key(selector: Any, fileobj: Any) -> selectors.SelectorKey | None:
    """The selector's key of ``fileobj``, None when it is not registered; no exception on the way."""
    return selector._fd_to_key.get(selector._fileobj_lookup(fileobj))  # type: ignore[no-any-return]


def _register_event(self: Any, fileobj: Any, event: int, task: Any) -> None:
    """Have ``task`` woken when ``fileobj`` is ready for ``event`` (kafka-python's register_event)."""
    selector = self._selector
    if not isinstance(getattr(selector, "_fd_to_key", None), dict) or not hasattr(selector, "_fileobj_lookup"):
        _original_register_event(self, fileobj, event, task)  # a selector unlike the standard library's
        return
    if not isinstance(task, Task):
        task = Task(task)
    key = _registered_key(selector, fileobj)
    if key is None:
        selector.register(fileobj, event, (task, None) if event == selectors.EVENT_READ else (None, task))
        return
    reader, writer = key.data
    if event == selectors.EVENT_READ:
        if reader:
            raise RuntimeError(f"EVENT_READ already registered for fileobj {fileobj} by {reader} (new: {task})")
        selector.modify(fileobj, key.events | event, (task, writer))
    else:
        if writer:
            raise RuntimeError(f"EVENT_WRITE already registered for fileobj {fileobj} by {writer} (new: {task})")
        selector.modify(fileobj, key.events | event, (reader, task))


def _no_trace(msg: str, *args: Any, **kwargs: Any) -> None:
    """kafka-python's trace line, not logged (see the module docstring)."""


def install() -> None:
    """Replace kafka-python's selector registration and, unless enabled, its trace logging (see the module
    docstring); idempotent."""
    global _installed
    if _installed:
        return
    NetworkSelector.register_event = _register_event
    if not logging.getLogger(kafka_selector.__name__).isEnabledFor(_TRACE):
        kafka_selector.log_trace = _no_trace
    _installed = True


__all__ = ["install"]
